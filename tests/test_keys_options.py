"""Key checks read the whole model configuration (a local judge needs no key), and a corpus
threshold on a judge-only metric is never checked on a lexical stand-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import make_case, write_jsonl

JUDGE = "openai:gpt-4o-mini"
KEY_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
SOURCE = "Thing 1 is done from the settings page of the account."


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key and no base URL in the environment, as in a pull request from a fork."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def grounded_suite(folder: Path, scoring: str, judge: str = "") -> Path:
    """Three cases with one context document each, two mock conditions, `scoring` (the
    [scoring] section's body) and `judge` appended to the [judge] section."""
    context = [{"id": "d1", "text": SOURCE}]
    write_jsonl(
        folder / "cases.jsonl",
        [make_case(f"k{i}", prompt=SOURCE, context=context) for i in range(3)],
    )
    text = (
        'name = "keys"\ncases = "cases.jsonl"\ntrials = 1\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\nmodel = "mock:echo"\n'
        '[[conditions]]\nname = "candidate"\nmodel = "mock:answer"\n'
        f"[scoring]\n{scoring}\n[judge]\njudges = [{JUDGE!r}]\n{judge}"
    )
    path = folder / "suite.toml"
    path.write_text(text, encoding="utf-8")
    return path


def report_json(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "report.json").read_text(encoding="utf-8")))


def rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "deterministic.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.parametrize("where", ["judge", "run", "flag", "environment"])
def test_a_judge_on_a_local_server_needs_no_key(
    cli: Any, tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The base URL from [judge], [run], --base-url or OPENAI_BASE_URL: the grounding scorer
    that inherits the suite's judge is judged on the local server, not disabled."""
    server = mock_server(judge_reply="schema")
    section = {"judge": f'base_url = "{server.url}"\n'}.get(where, "")
    suite = grounded_suite(tmp_path, 'scorers = ["groundedness"]', section)
    if where == "run":
        text = suite.read_text(encoding="utf-8")
        suite.write_text(text.replace("[scoring]", f'[run]\nbase_url = "{server.url}"\n[scoring]'))
    if where == "environment":
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    flags = ["--base-url", server.url] if where == "flag" else []
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json", *flags)
    assert result.code in (0, 1), result.stderr
    assert "LLM judge disabled" not in result.stderr
    assert result.json()["judge"]["status"] == "enabled"
    found = rows(tmp_path / "out")
    assert found and {r["method"] for r in found} == {f"judge:{JUDGE}"}
    assert server.stats()["requests"] > 0


def test_judge_status_reads_the_options_the_scorer_is_built_with(tmp_path: Path) -> None:
    """The key check and the scorer's model factory read one definition of its options."""
    from assay.api.keys import judge_status
    from assay.core.suite import load_suite
    from assay.scorers.base import model_options
    from assay.scorers.judge.config import suite_judge
    from assay.scorers.runner import build_scorers

    local = "http://127.0.0.1:9/v1"
    suite = load_suite(
        grounded_suite(tmp_path, 'scorers = ["groundedness"]', f'base_url = "{local}"\n')
    )
    (scorer,) = build_scorers(suite.scoring.scorers, *suite_judge(suite))
    assert model_options(scorer).base_url == local
    status = judge_status(suite)
    assert status is not None and status.status == "enabled"


def test_a_deepeval_metric_with_a_local_judge_is_judged(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """`deepeval:FaithfulnessMetric` inherits [judge] judges and its base_url: it runs on the
    local server (not exit 2 "set [judge] judges")."""
    pytest.importorskip("deepeval")
    server = mock_server(judge_reply="schema")
    suite = grounded_suite(
        tmp_path, 'scorers = ["deepeval:FaithfulnessMetric"]', f'base_url = "{server.url}"\n'
    )
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code in (0, 1), result.stderr
    assert result.json()["judge"]["status"] == "enabled"
    found = rows(tmp_path / "out")
    assert found and {r["scorer"] for r in found} == {"deepeval:faithfulness"}
    assert {r["method"] for r in found} == {f"judge:{JUDGE}"}


def test_a_deepeval_metric_whose_judge_key_is_missing_is_skipped_not_an_error(
    cli: Any, tmp_path: Path
) -> None:
    """With the judge disabled the library metric cannot run: it is left out, its corpus
    threshold is skipped and listed, and the gate runs on the deterministic scorers."""
    pytest.importorskip("deepeval")
    scoring = (
        'scorers = [{ name = "groundedness", options = { judge = false } },'
        ' "deepeval:FaithfulnessMetric"]\n'
        '[scoring.corpus]\n"deepeval:faithfulness" = { min = 0.5 }\n'
    )
    suite = grounded_suite(tmp_path, scoring)
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code in (0, 1), result.stderr
    judge = result.json()["judge"]
    assert judge["status"] == "disabled" and judge["reason"] == "OPENAI_API_KEY is not set"
    assert judge["skipped_corpus"] == ["deepeval:faithfulness"]
    report = report_json(tmp_path / "out")
    corpus = [c for c in report["checks"] if c["name"].startswith("corpus:")]
    assert [(c["name"], c["status"]) for c in corpus] == [
        ("corpus:deepeval:faithfulness", "skipped")
    ]
    assert {r["scorer"] for r in rows(tmp_path / "out")} == {"groundedness"}


HALLUCINATION = 'scorers = ["hallucination"]'


def only_corpus(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in report["checks"] if c["name"].startswith("corpus:")]


def test_a_corpus_flag_on_a_judge_only_metric_is_skipped_once_when_the_judge_is_disabled(
    cli: Any, tmp_path: Path
) -> None:
    """`--corpus hallucination<=0.05` with no key: one skipped check, never the lexical
    figure checked — in `assay run` and in `assay report --suite`."""
    suite = grounded_suite(tmp_path, HALLUCINATION)
    trials = tmp_path / "trials.jsonl"
    ran = cli(
        "run", suite, "--store", tmp_path / "s.db", "--output", trials,
        "--corpus", "hallucination<=0.05",
    )  # fmt: skip
    assert ran.code in (0, 1), ran.stderr
    reported = tmp_path / "report"
    again = cli(
        "report", "--trials", trials, "--suite", suite, "--out", reported,
        "--corpus", "hallucination<=0.05", "--format", "md,json",
    )  # fmt: skip
    assert again.code in (0, 1), again.stderr
    for folder in (tmp_path / "out", reported):
        report = report_json(folder)
        assert report["judge"]["skipped_corpus"] == ["hallucination"]
        (check,) = only_corpus(report)
        assert check["name"] == "corpus:hallucination" and check["status"] == "skipped"
    assert {r["method"] for r in rows(tmp_path / "out")} == {"lexical"}


def test_a_scorer_threshold_on_a_judged_metric_is_skipped_when_the_judge_is_disabled(
    cli: Any, tmp_path: Path
) -> None:
    """A grounding scorer's `threshold` option is a corpus bound like any other."""
    scoring = 'scorers = [{ name = "hallucination", options = { threshold = 0.05 } }]'
    suite = grounded_suite(tmp_path, scoring)
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code in (0, 1), result.stderr
    assert result.json()["judge"]["skipped_corpus"] == ["hallucination"]
    (check,) = only_corpus(report_json(tmp_path / "out"))
    assert check["status"] == "skipped"


def test_each_corpus_check_names_the_method_of_its_figure(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """`judge:<model>` for the judged figure, `lexical` for word overlap: in the check's
    `method`, its reason and the Markdown report's line."""
    server = mock_server(judge_reply="schema")
    scoring = (
        'scorers = ["hallucination", { name = "groundedness", options = { judge = false } }]\n'
        'corpus_decide = "estimate"\n'  # 3 cases: decided on the interval, nothing passes
        "[scoring.corpus]\nhallucination = { max = 1.0 }\ngroundedness = { min = 0.0 }\n"
    )
    suite = grounded_suite(tmp_path, scoring, f'base_url = "{server.url}"\n')
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code in (0, 1), result.stderr
    checks = {c["metric"]: c for c in only_corpus(report_json(tmp_path / "out"))}
    assert checks["hallucination"]["method"] == f"judge:{JUDGE}"
    assert f"(judge:{JUDGE})" in checks["hallucination"]["reason"]
    assert checks["groundedness"]["method"] == "lexical"
    assert "(lexical)" in checks["groundedness"]["reason"]
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"| corpus:hallucination:max | judge:{JUDGE} | estimate | pass |" in markdown
    assert "| corpus:groundedness:min | lexical | estimate | pass |" in markdown
