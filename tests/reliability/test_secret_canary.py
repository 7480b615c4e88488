"""Secrets: with canary API keys in the environment, nothing assay writes or prints contains
them, even when the provider's error body echoes the request's credentials."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from reliability_support import read_jsonl

from assay.redact import scrub, scrub_value
from conftest import make_case, write_jsonl


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


@pytest.mark.parametrize("rates", [{"echo-auth": 0.3, "500": 0.1, "truncated": 0.1}])
def test_canary_keys_never_reach_a_file_or_the_terminal(
    tmp_path: Path, mock_server: Any, rates: dict[str, float]
) -> None:
    keys = canaries()
    server = mock_server(rates=rates, seed=2, retry_after=0.01)
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(20)])
    env = {**os.environ, **keys}
    cmd = [
        sys.executable, "-m", "assay", "run", "--cases", str(cases),
        "--model", "openai:gpt-4o-mini", "--base-url", server.url, "--trials", "2",
        "--retries", "1", "--output", "trials.jsonl", "--json",
    ]  # fmt: skip
    # The default store (.assay/assay.db) under the working directory, scanned with the rest.
    first = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert first.returncode == 3, first.stderr  # 401s are not retried: errors remain
    trials = read_jsonl(tmp_path / "trials.jsonl")
    echoed = [t for t in trials if t["error"] and "invalid credentials" in t["error"]]
    # The server did echo the credentials (so the test can fail), and they were scrubbed.
    assert echoed and all("Bearer [redacted]" in t["error"] for t in echoed)
    # A second invocation resumes and reads everything back; the text summary prints errors.
    again = subprocess.run(cmd[:-1], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert "ERROR: trial" in again.stderr and "[redacted]" in again.stderr
    needles = list(keys.values())
    assert (tmp_path / ".assay" / "assay.db").exists()
    assert files_containing(tmp_path, needles) == []
    for stream in (first.stdout, first.stderr, again.stdout, again.stderr):
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
