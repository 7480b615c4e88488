"""`assay import --output DIR` replaces only its own earlier output, and an import that has
nothing to score still gates: an Inspect log whose every sample errored (status error) and a
promptfoo run whose every test errored are INCOMPLETE (exit 3) in `assay report`, never a
missing file; costs beyond what a record holds are exit 2 naming the place, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
INSPECT_A = FIXTURES / "inspect" / "json" / "mock-a.json"
PROMPTFOO = FIXTURES / "promptfoo" / "results.json"
PROMPTFOO_SINGLE = FIXTURES / "promptfoo" / "results-single.json"
WRITTEN = ("cases.jsonl", "trials.jsonl", "scores.jsonl", "suite.toml")


def edited(source: Path, target: Path, change: Any) -> Path:
    data = json.loads(source.read_text(encoding="utf-8"))
    change(data)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def report(cli: Any, folder: Path) -> tuple[int, str, dict[str, Any]]:
    """`assay report` over an import's folder, as the import's hint gives it: exit code,
    stderr and report.json."""
    done = cli(
        "report", "--suite", folder / "suite.toml", "--scores", folder / "scores.jsonl",
        "--trials", folder / "trials.jsonl", "--out", folder / "report", "--format", "json",
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    path = folder / "report" / "report.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return done.code, done.stderr, data


# -- --output never replaces what the import did not write --------------------------------


def test_output_dot_refuses_the_users_own_cases(cli: Any, tmp_path: Path) -> None:
    # the test runs in tmp_path: `--output .` is the folder of the user's own suite
    mine = tmp_path / "cases.jsonl"
    mine.write_text('{"id": "mine", "prompt": "my own case"}\n', encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text('name = "my suite"\n', encoding="utf-8")
    done = cli("import", "promptfoo", PROMPTFOO, "--output", ".")
    assert done.code == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "cases.jsonl: exists and assay import did not write it" in done.stderr
    assert "suite.toml: exists and assay import did not write it" in done.stderr
    assert "--overwrite" in done.stderr
    assert mine.read_text(encoding="utf-8") == '{"id": "mine", "prompt": "my own case"}\n'
    assert suite.read_text(encoding="utf-8") == 'name = "my suite"\n'
    assert not (tmp_path / "trials.jsonl").exists()  # nothing written: not even the others
    assert not (tmp_path / "scores.jsonl").exists()
    assert not (tmp_path / ".assay-import.json").exists()
    # --overwrite says so: the files are replaced
    done = cli("import", "promptfoo", PROMPTFOO, "--output", ".", "--overwrite")
    assert done.code == 0, done.stderr
    assert '"mine"' not in mine.read_text(encoding="utf-8")


def test_an_import_replaces_its_own_earlier_output(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "imported"
    assert cli("import", "promptfoo", PROMPTFOO, "--output", out).code == 0
    manifest = json.loads((out / ".assay-import.json").read_text(encoding="utf-8"))
    assert manifest["written_by"] == "assay import"
    assert sorted(manifest["files"]) == sorted(WRITTEN)
    # importing again (the source ran again) replaces the files it wrote, unchanged since
    again = cli("import", "promptfoo", PROMPTFOO_SINGLE, "--output", out)
    assert again.code == 0, again.stderr
    assert "japan" in (out / "cases.jsonl").read_text(encoding="utf-8")


def test_an_imported_file_changed_since_is_refused(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "imported"
    assert cli("import", "promptfoo", PROMPTFOO, "--output", out).code == 0
    suite = out / "suite.toml"
    edited_text = suite.read_text(encoding="utf-8") + "\n[gate]\nmax_errored = 1\n"
    suite.write_text(edited_text, encoding="utf-8")  # the user tuned the imported suite
    trials = (out / "trials.jsonl").read_bytes()
    done = cli("import", "promptfoo", PROMPTFOO_SINGLE, "--output", out)
    assert done.code == 2 and "Traceback" not in done.stderr
    assert f"ERROR: --output {suite}: was changed since assay import wrote it" in done.stderr
    assert suite.read_text(encoding="utf-8") == edited_text
    assert (out / "trials.jsonl").read_bytes() == trials  # nothing replaced
    with pytest.raises(InputError, match="was changed since"):
        assay.import_results("promptfoo", PROMPTFOO_SINGLE, out, store=None)
    assay.import_results("promptfoo", PROMPTFOO_SINGLE, out, store=None, overwrite=True)
    assert "max_errored" not in suite.read_text(encoding="utf-8")


def test_a_manifest_the_import_did_not_write_is_refused(cli: Any, tmp_path: Path) -> None:
    (tmp_path / ".assay-import.json").write_text('{"files": {}}', encoding="utf-8")
    done = cli("import", "promptfoo", PROMPTFOO, "--output", tmp_path)
    assert done.code == 2
    assert "is not a manifest assay import wrote" in done.stderr
    assert not (tmp_path / "trials.jsonl").exists()


# -- nothing to score: INCOMPLETE, exit 3, with the reason ---------------------------------


def every_sample_errored(data: dict[str, Any]) -> None:
    data["status"] = "error"
    data["error"] = {"message": "RateLimitError: 429", "traceback": ""}
    for sample in data["samples"]:
        sample["error"] = {"message": "RateLimitError: 429", "traceback": ""}
        sample.pop("scores", None)


def test_an_inspect_log_whose_every_sample_errored_gates_incomplete(
    cli: Any, tmp_path: Path
) -> None:
    log = edited(INSPECT_A, tmp_path / "errored.json", every_sample_errored)
    out = tmp_path / "imported"
    done = cli("import", "inspect", log, "--output", out)  # one model: a single system
    assert done.code == 0, done.stderr
    assert f"incomplete: {log}: status error: 6 of 6 samples (6 errored)" in done.stderr
    assert "next: assay report" in done.stdout and "--candidate" not in done.stdout
    assert (out / "scores.jsonl").read_text(encoding="utf-8") == ""  # written, empty
    code, stderr, data = report(cli, out)
    assert "file not found" not in stderr
    assert (code, data["verdict"]) == (3, "INCOMPLETE")
    assert any("status error: 6 of 6 samples (6 errored)" in r for r in data["reasons"])
    # the score rows alone (no trials to say they errored): the suite says the run did not finish
    scored = cli("score", out / "scores.jsonl", "--suite", out / "suite.toml", "--json")
    assert scored.code == 3, scored.stderr
    gate = scored.json()["release_gate"]
    assert gate["verdict"] == "INCOMPLETE"
    assert any("status error: 6 of 6 samples" in r for r in gate["reasons"])
    # an empty score file with nothing to say why stays bad input
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    empty = cli("score", tmp_path / "empty.jsonl")
    assert empty.code == 2 and "empty.jsonl: no score rows" in empty.stderr


def test_a_promptfoo_run_whose_every_test_errored_gates_incomplete(
    cli: Any, tmp_path: Path
) -> None:
    def every_test_errored(data: dict[str, Any]) -> None:
        for result in data["results"]["results"]:
            result.update(failureReason=2, success=False, score=0, error="HTTP 500")
            result["response"] = {"error": "HTTP 500"}
            result.pop("gradingResult", None)

    source = edited(PROMPTFOO_SINGLE, tmp_path / "results.json", every_test_errored)
    out = tmp_path / "imported"
    summary = cli("import", "promptfoo", source, "--output", out, "--json")
    assert summary.code == 0, summary.stderr
    assert (summary.json()["errored"], summary.json()["scores"]) == (10, 0)
    code, stderr, data = report(cli, out)
    assert "file not found" not in stderr
    assert (code, data["verdict"]) == (3, "INCOMPLETE")
    assert data["coverage"]["errored"] == 10


# -- costs beyond a record ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("costs", "message"),
    [
        ((1.7e308, 1.7e308), "less than or equal to 9007199254740992"),
        ((6e15, 6e15), "costs (total_cost, USD) add up to more than 9,007,199,254,740,992"),
        ((-5.0, 1.0), "greater than or equal to 0"),
    ],
)
def test_inspect_costs_beyond_a_record_are_refused_by_place(
    cli: Any, tmp_path: Path, costs: tuple[float, float], message: str
) -> None:
    def two_models(data: dict[str, Any]) -> None:
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}
        data["samples"][1]["model_usage"] = {
            "openai/a": {**usage, "total_cost": costs[0]},
            "openai/b": {**usage, "total_cost": costs[1]},
        }

    log = edited(INSPECT_A, tmp_path / "costly.json", two_models)
    out = tmp_path / "out"
    done = cli("import", "inspect", log, "--output", out)
    assert done.code == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert f"ERROR: {log}: samples[1].model_usage" in done.stderr
    assert message in done.stderr
    assert not out.exists()


def test_an_earlier_imports_file_this_one_does_not_write_is_removed(tmp_path: Path) -> None:
    from assay.core.owned import Owned

    owned = Owned(tmp_path, ".assay-import.json", "assay import")
    for name in ("cases.jsonl", "trials.jsonl"):
        (tmp_path / name).write_text(f"{name} of the first import\n", encoding="utf-8")
    owned.record([tmp_path / "cases.jsonl", tmp_path / "trials.jsonl"])
    owned.check(WRITTEN, "--output", "--overwrite")  # its own, unchanged: nothing refused
    # the next import writes no cases: its earlier cases.jsonl goes, unless changed since
    (tmp_path / "trials.jsonl").write_text("the second import\n", encoding="utf-8")
    owned.record([tmp_path / "trials.jsonl"], stale=["cases.jsonl", "scores.jsonl"])
    assert not (tmp_path / "cases.jsonl").exists()
    assert set(owned.recorded() or {}) == {"trials.jsonl"}
    (tmp_path / "cases.jsonl").write_text("the user's own\n", encoding="utf-8")
    owned.record([tmp_path / "trials.jsonl"], stale=["cases.jsonl"])
    assert (tmp_path / "cases.jsonl").read_text(encoding="utf-8") == "the user's own\n"


def test_an_import_whose_every_trial_errored_is_recorded_incomplete(
    cli: Any, tmp_path: Path
) -> None:
    from assay.store.views import ReadOnlyStore

    log = edited(INSPECT_A, tmp_path / "errored.json", every_sample_errored)
    store = tmp_path / "s.db"
    done = cli("import", "inspect", log, "--output", tmp_path / "out", "--store", store)
    assert done.code == 0 and "recorded without its evaluation" not in done.stderr
    (run,) = ReadOnlyStore(store).runs()
    assert (run.suite, run.verdict) == ("inspect import", "INCOMPLETE")
