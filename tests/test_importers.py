"""`assay import`: real promptfoo results and Inspect AI logs (tests/fixtures/imports, made by
the tools themselves; see the README there) become cases, trials and score rows that
`assay score`, `assay report` and `assay review` read; bad input is exit 2 naming the place."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

import assay
from assay.core.cases import load_cases
from assay.core.errors import InputError
from assay.core.jsonl import load_records
from assay.core.records import ScoreRow, Trial
from assay.core.suite import load_suite
from assay.importers.inspect_ai import score_values

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
PROMPTFOO = FIXTURES / "promptfoo" / "results.json"
PROMPTFOO_PROMPTS = FIXTURES / "promptfoo" / "results-prompts.json"
INSPECT_EVAL = FIXTURES / "inspect" / "eval"
INSPECT_JSON = FIXTURES / "inspect" / "json"
VARIANT = FIXTURES / "inspect" / "variant" / "mock-a-brief.json"
MOCK_A = "openai-api/mocka/mock-a"
MOCK_B = "openai-api/mockb/mock-b"


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def imported(cli: Any, out: Path, tool: str, *args: str | Path) -> Any:
    done = cli("import", tool, *args, "--output", out, "--json")
    assert done.code == 0, done.stderr
    return done.json()


def metric(scores: list[dict[str, Any]], condition: str, name: str) -> list[float]:
    return [r[name] for r in scores if r["condition"] == condition and name in r]


# -- every fixture converts ---------------------------------------------------------------


def test_promptfoo_providers_become_conditions_repeats_trials(cli: Any, tmp_path: Path) -> None:
    summary = imported(cli, tmp_path, "promptfoo", PROMPTFOO)
    assert summary["conditions"] == ["baseline", "candidate"]  # the providers' labels
    assert (summary["cases"], summary["trials"], summary["scores"]) == (3, 12, 12)
    assert summary["baseline"] == "baseline" and summary["candidate"] == "candidate"
    assert summary["metrics"] == [
        "pass", "score", "contains", "llm_rubric", "not_icontains", "icontains", "javascript"
    ]  # fmt: skip
    trials = [t for _, t in load_records(tmp_path / "trials.jsonl", Trial)]
    assert sorted({t.trial for t in trials}) == [1, 2]  # --repeat 2
    candidate = next(t for t in trials if t.condition == "candidate")
    assert candidate.runner == "promptfoo:openai:chat:mock-b"
    assert candidate.response.startswith("I believe the capital is Lyon")
    assert candidate.error is None  # a failed assertion is not an error
    scores = rows(tmp_path / "scores.jsonl")
    assert metric(scores, "candidate", "contains") == [0.0, 0.0]
    assert metric(scores, "baseline", "contains") == [1.0, 1.0]
    assert metric(scores, "candidate", "llm_rubric") == [0.8] * 4  # the grader's score
    assert set(metric(scores, "candidate", "pass")) == {0.0}
    assert any("Expected output to contain" in e for r in scores for e in r.get("evidence", []))
    cases = {c.id: c for c in load_cases(tmp_path / "cases.jsonl")}
    assert set(cases) == {"capital of France", "no wrong city", "one sentence"}
    assert cases["one sentence"].category == "format"  # the test's metadata
    assert cases["capital of France"].criteria == [
        "contains: Paris", "llm-rubric: names the capital correctly"
    ]  # fmt: skip
    assert cases["capital of France"].prompt == (
        "Answer in one sentence: What is the capital of France?"
    )
    suite = load_suite(tmp_path / "suite.toml")
    assert suite.scoring.scale == [0.0, 1.0] and suite.gate.candidate == "candidate"


def test_promptfoo_ids_name_unlabelled_providers_and_prompts_split_them(
    cli: Any, tmp_path: Path
) -> None:
    summary = imported(cli, tmp_path, "promptfoo", PROMPTFOO_PROMPTS)
    assert summary["conditions"] == [
        "openai:chat:mock-a/prompt-1",
        "openai:chat:mock-a/brief",  # the prompt's own label
        "openai:chat:mock-b/prompt-1",
        "openai:chat:mock-b/brief",
    ]
    assert summary["baseline"] is None and summary["candidate"] is None
    assert any("--baseline" in note for note in summary["notes"])
    # tests without descriptions are numbered; a named metric keeps its name
    assert [c.id for c in load_cases(tmp_path / "cases.jsonl")] == ["test-1", "test-2"]
    assert "mentions_country" in summary["metrics"]


@pytest.mark.parametrize("logs", [INSPECT_EVAL, INSPECT_JSON], ids=["eval", "json"])
def test_inspect_models_become_conditions_epochs_trials(
    cli: Any, tmp_path: Path, logs: Path
) -> None:
    summary = imported(cli, tmp_path, "inspect", logs, "--baseline", MOCK_A)
    assert summary["conditions"] == ["baseline", MOCK_B]
    assert summary["candidate"] == MOCK_B
    assert (summary["cases"], summary["trials"], summary["scores"]) == (3, 12, 12)
    assert summary["metrics"] == ["includes", "model_graded_qa"]
    trials = [t for _, t in load_records(tmp_path / "trials.jsonl", Trial)]
    assert sorted({t.trial for t in trials}) == [1, 2]  # --epochs 2
    baseline = [t for t in trials if t.condition == "baseline"]
    assert {t.runner for t in baseline} == {f"inspect:{MOCK_A}"}  # the original name is kept
    assert all(t.usage is not None and t.usage.output_tokens > 0 for t in trials)
    scores = rows(tmp_path / "scores.jsonl")
    assert set(metric(scores, "baseline", "model_graded_qa")) == {1.0}  # GRADE: C
    assert set(metric(scores, MOCK_B, "model_graded_qa")) == {0.0}  # GRADE: I
    assert sorted(metric(scores, MOCK_B, "includes")) == [0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    cases = {c.id: c for c in load_cases(tmp_path / "cases.jsonl")}
    assert list(cases) == ["france", "france-2", "capital"]  # the dataset's order
    assert cases["france"].category == "geography" and cases["france-2"].category == "capitals"
    assert cases["france"].reference == "Paris"
    assert cases["france"].prompt == "What is the capital of France?"


def test_the_eval_and_json_logs_of_one_run_give_the_same_records(tmp_path: Path) -> None:
    a = assay.import_results("inspect", INSPECT_EVAL, tmp_path / "a").imported
    b = assay.import_results("inspect", INSPECT_JSON, tmp_path / "b").imported
    assert a.cases == b.cases
    assert a.conditions == b.conditions and a.metrics == b.metrics
    keys = [(t.case_id, t.trial, t.condition, t.response) for t in a.trials]
    assert keys == [(t.case_id, t.trial, t.condition, t.response) for t in b.trials]


def test_inspect_task_variants_become_conditions(cli: Any, tmp_path: Path) -> None:
    summary = imported(cli, tmp_path, "inspect", INSPECT_JSON / "mock-a.json", VARIANT)
    assert summary["conditions"] == [f"{MOCK_A}[style=plain]", f"{MOCK_A}[style=brief]"]


# -- score, report and review work on the result ------------------------------------------


@pytest.mark.parametrize(
    ("tool", "source", "extra"),
    [("promptfoo", PROMPTFOO, []), ("inspect", INSPECT_EVAL, ["--baseline", MOCK_A])],
)
def test_score_report_and_review_read_the_import(
    cli: Any, tmp_path: Path, tool: str, source: Path, extra: list[str]
) -> None:
    out = tmp_path / "imported"
    done = cli("import", tool, source, "--output", out, *extra)
    assert done.code == 0, done.stderr
    assert "next: assay score" in done.stdout
    suite = out / "suite.toml"
    scored = cli("score", out / "scores.jsonl", "--suite", suite, "--json")
    assert scored.code == 1, scored.stderr  # the candidate is worse: FAIL
    summary = scored.json()
    assert summary["release_gate"]["verdict"] == "FAIL"
    report = cli(
        "report", "--suite", suite, "--scores", out / "scores.jsonl",
        "--trials", out / "trials.jsonl", "--out", out / "report", "--format", "md,json,html",
    )  # fmt: skip
    assert report.code == 1, report.stderr
    markdown = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert "FAIL" in markdown and "baseline" in markdown
    assert (out / "report" / "report.html").is_file()

    from assay.review import ReviewConfig, ReviewStore, create_app, open_review_set

    candidate = load_suite(suite).gate.candidate
    review = open_review_set(
        trials_path=out / "trials.jsonl",
        cases_path=out / "cases.jsonl",
        run_id=None,
        store_path=tmp_path / "review.db",
        a="baseline",
        b=candidate,
        mode="pairwise",
    )
    assert len(review.items) == 6  # 3 cases x 2 trials
    config = ReviewConfig(
        review=review, store=ReviewStore(tmp_path / "review.db"), mode="pairwise", token=None
    )
    client = TestClient(create_app(config), base_url="http://127.0.0.1:8765")
    page = client.get("/item/0?reviewer=ann")
    assert page.status_code == 200


def test_import_json_matches_its_schema(cli: Any, tmp_path: Path) -> None:
    schema = cli("schema", "import-summary").json()
    Draft202012Validator.check_schema(schema)
    summary = imported(cli, tmp_path, "inspect", INSPECT_EVAL)
    assert not list(Draft202012Validator(schema).iter_errors(summary))


def test_python_api(tmp_path: Path) -> None:
    result = assay.import_results("promptfoo", PROMPTFOO, tmp_path, candidate="candidate")
    assert isinstance(result, assay.ImportResult)
    assert [p.name for p in result.written] == [
        "cases.jsonl", "trials.jsonl", "scores.jsonl", "suite.toml"
    ]  # fmt: skip
    evaluation = assay.evaluate(tmp_path / "suite.toml", scores=tmp_path / "scores.jsonl")
    assert evaluation.verdict == "FAIL"


# -- errors: exit 2 naming the file and the place, nothing written -------------------------


def edited(source: Path, target: Path, change: Any) -> Path:
    data = json.loads(source.read_text(encoding="utf-8"))
    change(data)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def refused(cli: Any, tmp_path: Path, tool: str, *args: str | Path) -> str:
    out = tmp_path / "out"
    done = cli("import", tool, *args, "--output", out)
    assert done.code == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert not out.exists(), "nothing is written when the input is bad"
    return str(done.stderr)


def test_invalid_json_names_the_line(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "results.json"
    bad.write_text('{"results": {"version": 3,\n  "results": [1,\n', encoding="utf-8")
    assert f"ERROR: {bad}: 3: invalid JSON" in refused(cli, tmp_path, "promptfoo", bad)


def test_wrong_types_name_every_json_path(cli: Any, tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        results = data["results"]["results"]
        results[3]["score"] = "high"
        results[5]["gradingResult"]["componentResults"][0]["pass"] = "yes"

    bad = edited(PROMPTFOO, tmp_path / "results.json", change)
    err = refused(cli, tmp_path, "promptfoo", bad)
    assert f"ERROR: {bad}: results.results[3].score: Input should be a valid number" in err
    assert f"{bad}: results.results[5].gradingResult.componentResults[0].pass:" in err


def test_inspect_problems_name_the_sample(cli: Any, tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        del data["samples"][0]["input"]
        data["samples"][1]["epoch"] = 0

    bad = edited(INSPECT_JSON / "mock-b.json", tmp_path / "log.json", change)
    err = refused(cli, tmp_path, "inspect", bad)
    assert f"ERROR: {bad}: samples[0].input: required field is missing" in err
    assert f"ERROR: {bad}: samples[1].epoch:" in err

    def grade(data: dict[str, Any]) -> None:
        data["samples"][2]["scores"]["includes"]["value"] = "maybe"

    bad = edited(INSPECT_JSON / "mock-b.json", tmp_path / "log.json", grade)
    err = refused(cli, tmp_path, "inspect", bad)
    assert f"ERROR: {bad}: samples[2].scores.includes.value: score 'maybe' is not a number" in err


def test_a_broken_eval_archive_names_the_member(cli: Any, tmp_path: Path) -> None:
    source = INSPECT_EVAL / "mock-b.eval"
    data = bytearray(source.read_bytes())
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo("samples/france_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for offset in range(start + 20, start + 60):  # inside the compressed data
        data[offset] ^= 0xFF
    bad = tmp_path / "broken.eval"
    bad.write_bytes(bytes(data))
    err = refused(cli, tmp_path, "inspect", bad)
    assert f"ERROR: {bad}: samples/france_epoch_1.json: cannot read the archive member" in err

    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(source.read_bytes()[:3000])
    assert "not an Inspect .eval log" in refused(cli, tmp_path, "inspect", truncated)


def test_a_bad_member_of_an_eval_archive_names_member_and_line(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "log.eval"
    with zipfile.ZipFile(bad, "w") as archive:
        header = json.loads((INSPECT_JSON / "mock-a.json").read_text(encoding="utf-8"))
        samples = header.pop("samples")
        archive.writestr("header.json", json.dumps(header))
        archive.writestr("samples/france_epoch_1.json", json.dumps(samples[1]))
        archive.writestr("samples/capital_epoch_1.json", '{"id": "capital",\n "epoch": }')
    err = refused(cli, tmp_path, "inspect", bad)
    assert f"ERROR: {bad}: samples/capital_epoch_1.json:2: invalid JSON" in err


@pytest.mark.parametrize(
    ("tool", "source", "expected"),
    [
        ("promptfoo", INSPECT_JSON / "mock-a.json", "this is inspect output, not promptfoo output"),
        ("promptfoo", INSPECT_EVAL / "mock-a.eval", "this is an Inspect .eval log (a zip archive)"),
        ("inspect", PROMPTFOO, "this is promptfoo output, not inspect output"),
    ],
)
def test_the_other_tools_output_is_named(
    cli: Any, tmp_path: Path, tool: str, source: Path, expected: str
) -> None:
    assert expected in refused(cli, tmp_path, tool, source)


@pytest.mark.parametrize("tool", ["promptfoo", "inspect"])
def test_unknown_format_is_refused(cli: Any, tmp_path: Path, tool: str) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"rows": []}', encoding="utf-8")
    err = refused(cli, tmp_path, tool, other)
    assert f"ERROR: {other}: (top level): not a" in err and "found: rows" in err
    text = tmp_path / "notes.txt"
    text.write_text("not json at all", encoding="utf-8")
    assert f"ERROR: {text}: 1: invalid JSON" in refused(cli, tmp_path, tool, text)


def test_old_promptfoo_results_are_refused_with_the_version(cli: Any, tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["results"]["version"] = 2

    bad = edited(PROMPTFOO, tmp_path / "results.json", change)
    assert "results.version: promptfoo results version 2 is not supported" in refused(
        cli, tmp_path, "promptfoo", bad
    )


def test_unknown_tool_and_bad_conditions_are_usage_errors(cli: Any, tmp_path: Path) -> None:
    done = cli("import", "deepeval", PROMPTFOO, "--output", tmp_path / "out")
    assert done.code == 2 and "deepeval" in done.stderr
    with pytest.raises(InputError, match="unknown tool"):
        assay.import_results("deepeval", PROMPTFOO, tmp_path / "out")
    assert "not a condition of the import" in refused(
        cli, tmp_path, "inspect", INSPECT_EVAL, "--baseline", "openai/gpt-4o"
    )
    assert "already has a condition named baseline" in refused(
        cli, tmp_path, "promptfoo", PROMPTFOO, "--baseline", "candidate"
    )
    assert "not a condition besides baseline" in refused(
        cli, tmp_path, "promptfoo", PROMPTFOO, "--candidate", "baseline"
    )
    assert "case 'france', trial 1" in refused(
        cli, tmp_path, "inspect", INSPECT_JSON / "mock-a.json", INSPECT_EVAL / "mock-a.eval"
    )  # the same run twice: two answers to one case, trial and condition


def test_a_failed_import_leaves_earlier_files_alone(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("import", "promptfoo", PROMPTFOO, "--output", out).code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = edited(PROMPTFOO, tmp_path / "bad.json", lambda d: d["results"]["results"].append(7))
    done = cli("import", "promptfoo", bad, "--output", out)
    assert done.code == 2 and "results.results[12]" in done.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


# -- what other tools' values become -------------------------------------------------------


def test_provider_errors_become_trial_errors(tmp_path: Path) -> None:
    result = assay.import_results(
        "promptfoo", FIXTURES / "promptfoo" / "results-error.json", tmp_path
    )
    (errored,) = [t for t in result.imported.trials if t.error]
    assert errored.condition == "candidate" and errored.response == ""
    assert errored.error is not None and "HTTP 404 Not Found" in errored.error
    assert result.summary().errored == 1
    # promptfoo gives it pass 0 and score 0, but nothing answered: no score row
    assert {r["condition"] for r in rows(tmp_path / "scores.jsonl")} == {"baseline"}


def test_inspect_errored_samples_have_no_score_row(cli: Any, tmp_path: Path) -> None:
    summary = imported(cli, tmp_path, "inspect", FIXTURES / "inspect" / "error" / "mock-c.eval")
    assert (summary["trials"], summary["errored"], summary["scores"]) == (3, 3, 0)
    assert any("every trial errored: the gate says INCOMPLETE" in n for n in summary["notes"])
    trials = [t for _, t in load_records(tmp_path / "trials.jsonl", Trial)]
    assert {t.error for t in trials} == {"Error code: 404"}
    assert (tmp_path / "scores.jsonl").read_text(encoding="utf-8") == ""  # report reads it
    assert load_suite(tmp_path / "suite.toml").scoring.scale == [0.0, 1.0]


def test_inspect_values_as_metrics(tmp_path: Path) -> None:
    where = tmp_path / "log.json"
    assert score_values(where, "v", "match", "C") == {"match": 1.0}
    assert score_values(where, "v", "match", "P") == {"match": 0.5}
    assert score_values(where, "v", "match", "N") == {"match": 0.0}
    assert score_values(where, "v", "f1", 0.25) == {"f1": 0.25}
    assert score_values(where, "v", "ok", True) == {"ok": 1.0}
    assert score_values(where, "v", "ok", "Yes") == {"ok": 1.0}
    assert score_values(where, "v", "rating", "7") == {"rating": 7.0}
    assert score_values(where, "v", "Judge-Score", {"a": "C", "b": 0.5, "c": None}) == {
        "judge_score_a": 1.0,
        "judge_score_b": 0.5,
    }
    assert score_values(where, "v", "confidence", 0.9) == {"confidence_value": 0.9}
    with pytest.raises(InputError, match=r"log.json: v\[1\]: score 'x'"):
        score_values(where, "v", "pair", [1, "x"])


def test_a_scale_beyond_one_is_declared(tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        for sample in data["samples"]:
            sample["scores"]["includes"]["value"] = 7

    log = edited(INSPECT_JSON / "mock-a.json", tmp_path / "log.json", change)
    imported = assay.import_results("inspect", log, tmp_path / "out")
    assert load_suite(tmp_path / "out" / "suite.toml").scoring.scale == [0.0, 7.0]
    assert imported.summary().scale == [0.0, 7.0]
    rows_ = [r for _, r in load_records(tmp_path / "out" / "scores.jsonl", ScoreRow)]
    assert {r.model_extra["includes"] for r in rows_ if r.model_extra} == {7}


def test_a_folder_without_logs_is_refused(cli: Any, tmp_path: Path) -> None:
    empty = tmp_path / "logs"
    empty.mkdir()
    assert "no Inspect logs" in refused(cli, tmp_path, "inspect", empty)
    shutil.copy(VARIANT, empty / "variant.json")
    assert imported(cli, tmp_path / "ok", "inspect", empty)["trials"] == 6


def test_an_unfinished_eval_log_is_read_from_its_journal(tmp_path: Path) -> None:
    from assay.importers.reading import read_member

    source = INSPECT_EVAL / "mock-a.eval"
    unfinished = tmp_path / "running.eval"
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(unfinished, "w") as out:
        for name in archive.namelist():  # a running log: no header.json yet
            if name == "_journal/start.json" or name.startswith("samples/"):
                out.writestr(name, read_member(source, archive, name), zipfile.ZIP_DEFLATED)
    result = assay.import_results("inspect", unfinished, tmp_path / "out")
    assert len(result.imported.trials) == 6
    assert result.summary().reasons == [f"{unfinished}: status started: 6 of 6 samples"]
