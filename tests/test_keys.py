"""API keys checked before the first call: a judge without its key is disabled (or, when
required, exit 2); the system under test without its key is always exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.models.registry import ModelOptions, missing_key, required_env
from conftest import make_case, write_jsonl

KEY_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)
JUDGE = "anthropic:claude-haiku-4-5"


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key and no base URL, as in a pull request from a fork."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def write_suite(folder: Path, conditions: list[str], extra: str = "") -> Path:
    """Cases whose answers the `contains` scorer checks, and a suite over `conditions`
    (name=model pairs) with `extra` appended."""
    cases = [
        make_case(f"k{i}", prompt=f"How do I do thing {i}?", expect={"contains": ["actionable"]})
        for i in range(6)
    ]
    write_jsonl(folder / "cases.jsonl", cases)
    text = 'name = "keys"\ncases = "cases.jsonl"\ntrials = 1\noutput = "out"\n'
    for pair in conditions:
        name, model = pair.split("=")
        text += f'[[conditions]]\nname = "{name}"\nmodel = "{model}"\n'
    path = folder / "suite.toml"
    path.write_text(text + extra, encoding="utf-8")
    return path


JUDGED = """
[scoring]
scorers = ["contains"]
weights = { correctness = 2, contains = 1 }

[scoring.thresholds]
contains = { min = 1.0 }
correctness = { min = 3 }

[judge]
judges = ["anthropic:claude-haiku-4-5"]

[report]
formats = ["md", "json", "junit", "html"]
"""


def test_providers_declare_the_key_they_need(monkeypatch: pytest.MonkeyPatch) -> None:
    assert required_env("openai:gpt-4o-mini") == ("OPENAI_API_KEY",)
    local = ModelOptions(base_url="http://127.0.0.1:8000/v1")
    assert required_env("openai:gpt-4o-mini", local) == ()
    assert required_env(JUDGE) == ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    assert required_env("mock:answer") == required_env("stub") == ()
    missing = missing_key(JUDGE)
    assert missing is not None and str(missing) == "ANTHROPIC_API_KEY is not set"
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token")
    assert missing_key(JUDGE) is None
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")
    assert required_env(JUDGE) == ()


def test_missing_judge_key_disables_the_judge_and_every_report_says_so(
    cli: Any, tmp_path: Path
) -> None:
    """The run goes on with the deterministic scorers; the gate runs on them; the judge-only
    threshold is a skipped check, its weight is not applied; every report says why."""
    suite = write_suite(tmp_path, ["baseline=mock:echo", "candidate=mock:answer"], JUDGED)
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code == 0, result.stderr
    assert "WARNING: LLM judge disabled: ANTHROPIC_API_KEY is not set" in result.stderr
    assert "thresholds skipped: correctness" in result.stderr
    summary = result.json()
    assert summary["judge"] == {
        "status": "disabled",
        "reason": "ANTHROPIC_API_KEY is not set",
        "judges": [JUDGE],
        "skipped": ["correctness"],
        "skipped_corpus": [],
        "standins": [],
    }
    assert summary["answered"] == 12
    out = tmp_path / "out"
    headline = "LLM judge disabled: ANTHROPIC_API_KEY is not set"
    markdown = (out / "report.md").read_text(encoding="utf-8").splitlines()
    assert markdown[0] == "## ✅ keys: PASS"
    assert headline in markdown[2]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.index(headline) < html.index('class="verdict')
    junit = (out / "report.junit.xml").read_text(encoding="utf-8")
    assert f'<property name="llm_judge" value="{headline}" />' in junit
    assert '<skipped message="correctness: threshold skipped' in junit
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["judge"]["status"] == "disabled"
    assert report["judge"]["reason"] == "ANTHROPIC_API_KEY is not set"
    assert report["weights"] == {"contains": 1.0}
    skipped = [c for c in report["checks"] if c["status"] == "skipped"]
    assert [(c["name"], c["metric"]) for c in skipped] == [("thresholds", "correctness")]
    assert any("weights on correctness not applied" in n for n in report["notes"])
    assert not (out / "scores.jsonl").exists()  # no judge row was made


def test_a_disabled_judge_still_gates_on_the_deterministic_checks(cli: Any, tmp_path: Path) -> None:
    """The exit code is the gate's: a candidate that misses a deterministic threshold fails."""
    suite = write_suite(tmp_path, ["baseline=mock:answer", "candidate=mock:echo"], JUDGED)
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code == 1, result.stderr
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("## ❌ keys: FAIL\n\n> **LLM judge disabled: ANTHROPIC_API_KEY")
    assert "per-case threshold miss(es)" in markdown


@pytest.mark.parametrize("how", ["suite", "flag"])
def test_a_required_judge_without_its_key_is_exit_2_with_zero_calls(
    cli: Any, tmp_path: Path, mock_server: Any, how: str
) -> None:
    server = mock_server()
    extra = JUDGED.replace("[judge]\n", "[judge]\nrequired = true\n") if how == "suite" else JUDGED
    suite = write_suite(tmp_path, ["baseline=openai:base", "candidate=openai:cand"], extra)
    flags = ["--require-judge"] if how == "flag" else []
    store = tmp_path / "s.db"
    result = cli(
        "run", suite, "--store", store, "--base-url", server.url, "--allow-unmetered", *flags
    )
    assert result.code == 2, result.stderr
    assert f"judge {JUDGE} needs ANTHROPIC_API_KEY, which is not set" in result.stderr
    assert server.stats()["requests"] == 0
    assert not store.exists() and not (tmp_path / "out").exists()


def test_a_system_under_test_without_its_key_is_exit_2_with_zero_calls(
    cli: Any, tmp_path: Path, mock_server: Any
) -> None:
    """Whatever [judge] says: the condition and the variable are named, nothing is called."""
    server = mock_server()
    suite = write_suite(
        tmp_path, ["baseline=openai:base", "candidate=anthropic:claude-haiku-4-5"], JUDGED
    )
    store = tmp_path / "s.db"
    result = cli("run", suite, "--store", store, "--base-url", server.url, "--allow-unmetered")
    assert result.code == 2, result.stderr
    assert (
        "ERROR: condition 'candidate': model anthropic:claude-haiku-4-5 needs"
        " ANTHROPIC_API_KEY, which is not set"
    ) in result.stderr
    assert "baseline" not in result.stderr
    assert server.stats()["requests"] == 0
    assert not store.exists()


def test_assay_judge_without_the_judge_key_is_exit_2_before_anything(
    cli: Any, tmp_path: Path
) -> None:
    """There the judge is the command: it cannot be disabled."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("k1")])
    trials = write_jsonl(
        tmp_path / "trials.jsonl",
        [
            {
                "case_id": "k1",
                "trial": 1,
                "condition": "baseline",
                "runner": "mock",
                "response": "Hi.",
            }
        ],
    )
    store = tmp_path / "j.db"
    result = cli(
        "judge", "--judge", JUDGE, "--trials", trials, "--cases", cases,
        "--output", tmp_path / "judged.jsonl", "--store", store,
    )  # fmt: skip
    assert result.code == 2, result.stderr
    assert f"ERROR: --judge {JUDGE}: ANTHROPIC_API_KEY is not set" in result.stderr
    assert not store.exists() and not (tmp_path / "judged.jsonl").exists()


def test_an_enabled_judge_is_reported_as_enabled(cli: Any, tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path,
        ["baseline=mock:echo", "candidate=mock:answer"],
        '[scoring]\nscorers = ["contains"]\n[judge]\njudges = ["mock:fair"]\n',
    )
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code in (0, 1), result.stderr
    assert result.json()["judge"] == {
        "status": "enabled",
        "reason": None,
        "judges": ["mock:fair"],
        "skipped": [],
        "skipped_corpus": [],
        "standins": [],
    }
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["judge"]["status"] == "enabled"
    assert "LLM judge" not in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


def test_a_grounding_model_without_its_key_disables_it_and_grounding_stays_lexical(
    cli: Any, tmp_path: Path
) -> None:
    """A model-backed scorer's model is a judge too: without its key the scorer checks
    lexically (each row says `lexical`), and the report says the judge is disabled."""
    context = [{"id": "d1", "text": "Thing 1 is done from the settings page of the account."}]
    cases = [
        make_case(f"k{i}", prompt="Thing 1 is done from the settings page of the account.",
                  context=context)
        for i in range(3)
    ]  # fmt: skip
    suite = write_suite(
        tmp_path,
        ["baseline=mock:echo", "candidate=mock:answer"],
        '[scoring]\nscorers = [{ name = "groundedness", options = { judge = "openai:gpt-4o" } }]\n',
    )
    write_jsonl(tmp_path / "cases.jsonl", cases)
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code in (0, 1), result.stderr
    judge = result.json()["judge"]
    assert judge["status"] == "disabled" and judge["reason"] == "OPENAI_API_KEY is not set"
    assert judge["judges"] == ["openai:gpt-4o"]
    rows = (tmp_path / "out" / "deterministic.jsonl").read_text(encoding="utf-8").splitlines()
    assert rows and all(json.loads(r)["scorer"] == "groundedness" for r in rows)
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["judge"]["status"] == "disabled"


def test_a_suite_with_only_a_disabled_judge_says_nothing_was_gated(
    cli: Any, tmp_path: Path
) -> None:
    suite = write_suite(
        tmp_path,
        ["baseline=mock:echo", "candidate=mock:answer"],
        f'[judge]\njudges = ["{JUDGE}"]\n',
    )
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code == 0, result.stderr
    assert result.json()["judge"]["status"] == "disabled"
    assert (
        "note: the suite names no scorers besides its disabled judge, so nothing is scored or gated"
    ) in result.stderr


def test_the_python_api_disables_or_requires_the_judge_alike(tmp_path: Path) -> None:
    import assay
    from assay.core.errors import InputError

    suite = write_suite(tmp_path, ["baseline=mock:echo", "candidate=mock:answer"], JUDGED)
    store = tmp_path / "api.db"
    with pytest.raises(InputError, match="ANTHROPIC_API_KEY, which is not set"):
        assay.run(suite, store=store, require_judge=True)
    assert not store.exists()
    result = assay.evaluate(suite, store=store)
    assert result.passed
    assert result.report.judge is not None
    assert result.report.judge.headline == "LLM judge disabled: ANTHROPIC_API_KEY is not set"
    assert [c.metric for c in result.checks if c.status == "skipped"] == ["correctness"]


GROUNDED = """
[scoring]
scorers = ["contains", "faithfulness"]

[scoring.thresholds]
contains = { min = 1.0 }

[scoring.corpus]
faithfulness = { min = 0.99 }

[judge]
judges = ["anthropic:claude-haiku-4-5"]
"""


def test_report_with_a_suite_whose_judge_key_is_missing_disables_its_grounding_judge(
    cli: Any, tmp_path: Path
) -> None:
    """`assay report --suite` (and `score`) treat a missing judge key as `assay run` does:
    the grounding scorers check lexically, the corpus threshold on the judged figure is
    skipped, and the report says so — not "set ANTHROPIC_API_KEY" and no report."""
    suite = write_suite(tmp_path, ["agent=mock:answer"], GROUNDED)
    trials = tmp_path / "trials.jsonl"
    ran = cli("run", suite, "--store", tmp_path / "s.db", "--output", trials)
    assert ran.code == 0, ran.stderr
    out = tmp_path / "report"
    result = cli(
        "report", "--trials", trials, "--suite", suite, "--out", out, "--format", "md,json"
    )
    assert result.code == 0, result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["judge"]["status"] == "disabled"
    assert report["judge"]["skipped_corpus"] == ["faithfulness"]
    (corpus,) = [c for c in report["checks"] if c["name"].startswith("corpus:")]
    assert corpus["status"] == "skipped"
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "LLM judge disabled: ANTHROPIC_API_KEY is not set" in markdown
    typo = cli(
        "report", "--trials", trials, "--suite", suite, "--out", tmp_path / "typo",
        "--corpus", "faithfulnes>=0.5",
    )  # fmt: skip
    assert typo.code == 2 and "did you mean faithfulness?" in typo.stderr


def test_a_suite_without_judges_is_checked_without_the_judges_modules(tmp_path: Path) -> None:
    """No [judge] model and no scorer naming one: nothing to check, and `assay run SUITE`
    does not import the judges' modules before its first call for it."""
    import subprocess
    import sys

    suite = write_suite(tmp_path, ["baseline=mock"], '[scoring]\nscorers = ["contains"]\n')
    code = (
        "import sys\nfrom assay.api.keys import judge_status\nfrom assay.core.suite import"
        f" load_suite\nfrom pathlib import Path\nprint(judge_status(load_suite(Path({str(suite)!r}))),"
        " 'assay.scorers.judge.config' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["None", "False"]


def test_a_lexical_stand_in_for_a_judged_grounding_figure_is_never_weighed(
    cli: Any, tmp_path: Path
) -> None:
    """With the grounding judge disabled, groundedness is checked lexically: the figure is
    reported and compared, but neither the suite's weight on it nor the implied equal weights
    put it into the weighted score (or the category tables made from it)."""
    context = [{"id": "d1", "text": "Thing 1 is done from the settings page of the account."}]
    cases = [
        make_case(f"k{i}", prompt="Thing 1 is done from the settings page of the account.",
                  context=context, expect={"contains": ["actionable"]})
        for i in range(3)
    ]  # fmt: skip
    grounding = '{ name = "groundedness", options = { judge = "openai:gpt-4o" } }'
    for weights in ("", "weights = { groundedness = 1, contains = 1 }\n"):
        suite = write_suite(
            tmp_path,
            ["baseline=mock:echo", "candidate=mock:answer"],
            f'[scoring]\nscorers = ["contains", {grounding}]\n{weights}',
        )
        write_jsonl(tmp_path / "cases.jsonl", cases)
        result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
        assert result.code in (0, 1), result.stderr
        report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
        assert report["weights"] == {"contains": 1.0}, weights
        assert report["judge"]["standins"] == ["groundedness"]
