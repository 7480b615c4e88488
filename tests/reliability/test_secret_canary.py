"""Secrets: with canary API keys in the environment, nothing assay writes or prints contains
them, even when the provider's error body echoes the request's credentials: run, judge,
report (every format) and review export."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from reliability_support import read_jsonl

from assay.core.redact import scrub, scrub_value
from conftest import make_case, write_jsonl


def review_some(trials: Path, cases: Path, store: Path) -> int:
    """Answer the first item in scores mode and in pairwise mode, as a reviewer would."""
    from starlette.testclient import TestClient

    from assay.review import ReviewConfig, ReviewStore, create_app, open_review_set

    saved = 0
    forms: dict[str, dict[str, str]] = {
        "scores": {
            f"r{slot}_{m}": "3"
            for slot in (1, 2)
            for m in ("correctness", "autonomy", "actionability", "safety", "concision")
        },
        "pairwise": {"winner": "1", "notes": "first is better"},
    }
    for mode, form in forms.items():
        review = open_review_set(
            trials_path=trials, cases_path=cases, run_id=None, store_path=store,
            a="baseline", b="candidate", mode=mode,
        )  # fmt: skip
        app = create_app(ReviewConfig(review=review, store=ReviewStore(store), mode=mode))
        with TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False) as client:
            client.get("/?reviewer=ann")
            for index in range(10):  # an errored trial cannot be scored: take the next item
                page = client.get(f"/item/{index}")
                csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
                assert page.status_code == 200 and csrf, page.text[:300]
                posted = client.post(f"/item/{index}", data={"csrf": csrf.group(1), **form})
                if posted.status_code == 303:
                    saved += 1
                    break
    return saved


def canaries() -> dict[str, str]:
    token = uuid.uuid4().hex
    return {
        # One key-shaped, one not: env-value scrubbing must catch what no pattern would.
        "OPENAI_API_KEY": f"sk-canary-{token}",
        "ANTHROPIC_API_KEY": f"canary{token[::-1]}",
    }


def files_containing(root: Path, needles: list[str]) -> list[str]:
    """Every file under root (store, WAL, outputs, logs, temp files) holding a needle."""
    hits = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {n[:10]}..." for n in needles if n.encode() in data]
    return hits


@pytest.mark.parametrize(
    "rates", [{"echo-auth": 0.2, "echo-key": 0.2, "500": 0.1, "truncated": 0.1}]
)
def test_canary_keys_never_reach_a_file_or_the_terminal(
    tmp_path: Path, mock_server: Any, rates: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = canaries()
    server = mock_server(rates=rates, seed=2, retry_after=0.01, judge_reply="schema")
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(20)])
    env = {**os.environ, **keys}
    skill = tmp_path / "skill.md"
    skill.write_text("Answer briefly.\n")
    cmd = [
        sys.executable, "-m", "assay", "run", "--cases", str(cases),
        "--model", "openai:gpt-4o-mini", "--base-url", server.url, "--trials", "2",
        "--retries", "1", "--output", "trials.jsonl",
        "--condition-skill", str(skill),  # baseline and candidate: something to report
        "--json",
    ]  # fmt: skip
    # The default store (.assay/assay.db) under the working directory, scanned with the rest.
    first = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert first.returncode == 3, first.stderr  # 401s are not retried: errors remain
    trials = read_jsonl(tmp_path / "trials.jsonl")
    echoed = [t for t in trials if t["error"] and "invalid credentials" in t["error"]]
    # The server did echo the credentials (so the test can fail), and they were scrubbed.
    assert echoed and all("Bearer [redacted]" in t["error"] for t in echoed)
    # Successful (200) replies that quote the key are stored with the key redacted.
    quoted = [t for t in trials if not t["error"] and "what you sent me" in t["response"]]
    assert quoted and all("Bearer [redacted]" in t["response"] for t in quoted)
    # A second invocation resumes and reads everything back; the text summary prints errors.
    again = subprocess.run(cmd[:-1], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert "ERROR: trial" in again.stderr and "[redacted]" in again.stderr
    # Judge the trials (judge replies quote the key too) and report on them.
    judged = subprocess.run(
        [sys.executable, "-m", "assay", "judge", "--trials", "trials.jsonl", "--cases",
         str(cases), "--judge", "openai:judge-model", "--base-url", server.url,
         "--allow-unmetered", "--retries", "1", "--output", "scores.jsonl", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert judged.returncode in (0, 3), judged.stderr
    scores = read_jsonl(tmp_path / "scores.jsonl")
    # The gate compares paired rows: report on the (case, trial) pairs both conditions have.
    conditions = {(r["case_id"], r["trial"]): set() for r in scores}
    for row in scores:
        conditions[(row["case_id"], row["trial"])].add(row["condition"])
    paired = [r for r in scores if len(conditions[(r["case_id"], r["trial"])]) == 2]
    assert paired
    write_jsonl(tmp_path / "paired.jsonl", paired)
    reported = subprocess.run(
        [sys.executable, "-m", "assay", "report", "--trials", "trials.jsonl", "--cases",
         str(cases), "--scores", "paired.jsonl", "--out", "reports",
         "--format", "md,json,junit,html"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    # a subset of the trials is scored (the paired rows): the verdict is INCOMPLETE, exit 3
    assert reported.returncode in (0, 1, 3), reported.stderr
    written = sorted(p.name for p in (tmp_path / "reports").iterdir())
    assert written == ["report.html", "report.json", "report.junit.xml", "report.md"]
    # Review some trials in the web app (in-process, keys in its environment), then export.
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    store = tmp_path / ".assay" / "assay.db"
    assert review_some(tmp_path / "trials.jsonl", cases, store) == 2
    exported = subprocess.run(
        [sys.executable, "-m", "assay", "review", "export", "--store", str(store),
         "--output", "human.jsonl", "--labels", "labels.jsonl",
         "--comparisons", "human-comparisons.jsonl", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert read_jsonl(tmp_path / "human.jsonl") and read_jsonl(tmp_path / "labels.jsonl")
    assert read_jsonl(tmp_path / "human-comparisons.jsonl")
    needles = list(keys.values())
    assert store.exists()
    assert files_containing(tmp_path, needles) == []
    streams = [first, again, judged, reported, exported]
    for stream in [s for p in streams for s in (p.stdout, p.stderr)]:
        assert not any(n in stream for n in needles)


def test_scrub_catches_echoed_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    shaped = "sk-proj-" + uuid.uuid4().hex
    plain = uuid.uuid4().hex
    echoes = [
        f"Authorization: Bearer {plain}",
        f'{{"x-api-key": "{plain}"}}',
        f"api_key={plain}",
        f"https://user:{plain}@proxy.example/v1",
        f"unexpected key {shaped} in body",
    ]
    for text in echoes:
        assert plain not in scrub(text) and shaped not in scrub(text), text
    monkeypatch.setenv("MY_SERVICE_TOKEN", plain)
    assert scrub(f"anything {plain} anywhere") == "anything [redacted] anywhere"
    assert scrub_value({"url": f"http://x?q={plain}", "k": [plain]}) == {
        "url": "http://x?q=[redacted]",
        "k": ["[redacted]"],
    }


def test_input_errors_are_scrubbed_when_printed(
    cases_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    secret = "canary" + uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    # A key pasted into the wrong flag comes back in the error message: scrubbed.
    result = cli("run", "--cases", cases_file, "--model", "mock", "--case", secret,
                 "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2 and "unknown case id(s): [redacted]" in result.stderr
    assert secret not in result.stderr + result.stdout


def test_model_output_loses_only_the_keys_assay_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.core.redact import secret_values
    from assay.engine.calls import without_secrets
    from assay.models.base import Response

    secret = "canary" + uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    example = 'client = OpenAI(api_key="sk-example-0123456789")  # Bearer abcdefghij'
    reply = Response(f"{example}\nyour key: {secret}", state={"notes": [secret], "k": 1})
    clean = without_secrets(reply, secret_values())
    # The known value goes everywhere; key-shaped text a model writes is content, kept.
    assert clean.text == f"{example}\nyour key: [redacted]"
    assert clean.state == {"notes": ["[redacted]"], "k": 1}
    assert without_secrets(Response(example), secret_values()).text == example
