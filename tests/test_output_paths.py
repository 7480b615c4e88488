"""Output paths are proven before the first model call: each can be written (a probe file is
made where it will be written; `os.access` is no proof, root is granted everything it asks
about), and none is one of the command's inputs. Every refusal is exit 2 naming the flag and
the path, with no call made (the store, opened before the first call, does not exist) and
nothing written.

The tests run as root where they can (a CI container): /proc accepts no new file, yet
`os.access("/proc", W_OK)` says yes to root."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import InputError
from conftest import ROOT, Result

QUICKSTART = ROOT / "examples" / "quickstart"
GATE = ROOT / "examples" / "gate" / "suite.toml"
PROMPTFOO = ROOT / "tests" / "fixtures" / "imports" / "promptfoo" / "results.json"
UNWRITABLE = Path("/proc/assay-x.jsonl")
UNWRITABLE_DIR = Path("/proc/assay-x")
as_root = pytest.mark.skipif(
    not (os.geteuid() == 0 and os.access("/proc", os.W_OK)),
    reason="needs root, to whom os.access says /proc is writable",
)


def refused(result: Result, *names: str | Path) -> None:
    """Exit 2 with a plain message naming each of `names`, never a traceback."""
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for name in names:
        assert str(name) in result.stderr, result.stderr


def run_args(tmp_path: Path, *extra: str | Path) -> list[str | Path]:
    return [
        "run", "--cases", QUICKSTART / "cases.jsonl", "--model", "mock", "--trials", "1",
        "--store", tmp_path / "s.db", *extra,
    ]  # fmt: skip


@pytest.fixture
def trials_file(cli: Any, tmp_path: Path) -> Path:
    path = tmp_path / "made" / "trials.jsonl"
    done = cli(
        "run", "--cases", QUICKSTART / "cases.jsonl", "--model", "mock", "--trials", "1",
        "--condition-skill", QUICKSTART / "skill.md", "--output", path,
        "--store", tmp_path / "made" / "made.db",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    return path


def judge_args(tmp_path: Path, trials: Path, *extra: str | Path) -> list[str | Path]:
    return [
        "judge", "--trials", trials, "--cases", QUICKSTART / "cases.jsonl",
        "--judge", "mock:fair", "--store", tmp_path / "judge.db", *extra,
    ]  # fmt: skip


# --- the helper --------------------------------------------------------------------------------


def test_a_probe_leaves_nothing_behind_not_even_the_folders_it_made(tmp_path: Path) -> None:
    from assay.core.writable import Output, check_outputs

    check_outputs(
        [
            Output("--output", tmp_path / "a" / "b" / "trials.jsonl"),
            Output("--out", tmp_path / "c" / "d", folder=True),
        ]
    )
    assert list(tmp_path.iterdir()) == []


def test_an_output_reached_through_a_link_is_still_the_input(tmp_path: Path) -> None:
    from assay.core.writable import Output, check_outputs

    cases = tmp_path / "cases.jsonl"
    cases.write_text("{}\n")
    (tmp_path / "link").symlink_to(tmp_path)
    os.link(cases, tmp_path / "hard.jsonl")
    for path in (tmp_path / "link" / "cases.jsonl", tmp_path / "hard.jsonl"):
        with pytest.raises(InputError, match="the case catalogue"):
            check_outputs([Output("--output", path)], [("the case catalogue (--cases)", cases)])


def test_a_file_a_folder_output_writes_is_compared_with_the_inputs(tmp_path: Path) -> None:
    from assay.core.writable import Output, check_outputs

    check_outputs(
        [Output("--out", tmp_path, folder=True, files=("report.md",))],
        [("the scores (--scores)", tmp_path / "scores.jsonl")],
    )
    with pytest.raises(InputError, match=r"--out .*report\.md: this is the scores"):
        check_outputs(
            [Output("--out", tmp_path, folder=True, files=("report.md",))],
            [("the scores (--scores)", tmp_path / "report.md")],
        )


# --- unwritable paths: refused before any call (as root, where os.access says yes) ------------


@as_root
def test_run_output_under_proc_is_refused_before_any_call(cli: Any, tmp_path: Path) -> None:
    result = cli(*run_args(tmp_path, "--output", UNWRITABLE))
    refused(result, "--output", UNWRITABLE)
    assert not (tmp_path / "s.db").exists()  # no call was made: the store was never opened


@as_root
@pytest.mark.parametrize("where", ["flag", "suite"])
def test_a_suite_output_folder_under_proc_is_refused_before_any_call(
    cli: Any, tmp_path: Path, where: str
) -> None:
    suite = tmp_path / "suite.toml"
    text = GATE.read_text().replace('cases = "cases.jsonl"', f'cases = "{GATE.parent}/cases.jsonl"')
    if where == "suite":
        text = text.replace('name = "gate-example"', f'name = "x"\noutput = "{UNWRITABLE_DIR}"')
    suite.write_text(text)
    extra = ["--out", UNWRITABLE_DIR] if where == "flag" else []
    result = cli("run", suite, "--store", tmp_path / "s.db", *extra)
    refused(result, "--out" if where == "flag" else "the suite's output", UNWRITABLE_DIR)
    assert not (tmp_path / "s.db").exists()


@as_root
@pytest.mark.parametrize("flag", ["--output", "--labels"])
def test_judge_outputs_under_proc_are_refused_before_any_call(
    cli: Any, tmp_path: Path, trials_file: Path, flag: str
) -> None:
    paths = {"--output": tmp_path / "scores.jsonl", "--labels": tmp_path / "labels.jsonl"}
    paths[flag] = UNWRITABLE
    result = cli(*judge_args(tmp_path, trials_file, *(x for p in paths.items() for x in p)))
    refused(result, flag, UNWRITABLE)
    assert not (tmp_path / "judge.db").exists()
    assert not (tmp_path / "scores.jsonl").exists() and not (tmp_path / "labels.jsonl").exists()


@as_root
def test_rubric_output_under_proc_is_refused_before_the_call(cli: Any, tmp_path: Path) -> None:
    result = cli(
        "rubric", "tone", "--description", "How polite the answer is.", "--model", "mock:fair",
        "--output", "/proc/assay-x.yaml", "--store", tmp_path / "s.db",
    )  # fmt: skip
    refused(result, "--output", "/proc/assay-x.yaml")
    assert not (tmp_path / "s.db").exists()


@as_root
def test_review_export_writes_no_file_when_one_cannot_be_written(cli: Any, tmp_path: Path) -> None:
    from assay.review import ReviewStore

    ReviewStore(tmp_path / "s.db")
    result = cli(
        "review", "export", "--store", tmp_path / "s.db", "--output", tmp_path / "scores.jsonl",
        "--labels", UNWRITABLE,
    )  # fmt: skip
    refused(result, "--labels", UNWRITABLE)
    assert not (tmp_path / "scores.jsonl").exists()  # not one file of three


@as_root
def test_report_and_import_folders_under_proc_are_refused(
    cli: Any, tmp_path: Path, trials_file: Path
) -> None:
    result = cli(
        "report", "--trials", trials_file, "--scorer", "contains",
        "--cases", QUICKSTART / "cases.jsonl", "--out", UNWRITABLE_DIR,
    )  # fmt: skip
    refused(result, "--out", UNWRITABLE_DIR)
    refused(cli("import", "promptfoo", PROMPTFOO, "--output", UNWRITABLE_DIR), "--output")


@as_root
@pytest.mark.parametrize("flag", ["--report", "--output"])
def test_judge_bench_outputs_under_proc_are_refused_before_judging(
    cli: Any, tmp_path: Path, flag: str
) -> None:
    data = llmbar(tmp_path, [item(1), item(2)])
    path = "/proc/assay-x.html" if flag == "--report" else UNWRITABLE_DIR
    result = cli("judge-bench", "--judge", "mock:gold", "--data", data, "--set", "llmbar-natural",
                 "--store", tmp_path / "s.db", flag, path)  # fmt: skip
    refused(result, flag, path)
    assert not (tmp_path / "s.db").exists()  # nothing was judged


def test_an_output_that_is_a_pipe_is_refused_not_replaced(cli: Any, tmp_path: Path) -> None:
    """The atomic writer replaces the file: a pipe (or /dev/null) would become a plain file."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    result = cli(*run_args(tmp_path, "--output", pipe))
    refused(result, "--output", pipe, "not a regular file")
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    assert not (tmp_path / "s.db").exists()


# --- an output that is an input: refused, the input kept -----------------------------------------


def test_run_refuses_to_write_its_trials_over_the_store(cli: Any, tmp_path: Path) -> None:
    assert cli(*run_args(tmp_path)).code == 0
    before = (tmp_path / "s.db").read_bytes()
    result = cli(*run_args(tmp_path, "--output", tmp_path / "s.db"))
    refused(result, "--output", "the store (--store)")
    assert (tmp_path / "s.db").read_bytes() == before
    trials = sqlite3.connect(tmp_path / "s.db").execute("SELECT count(*) FROM trials").fetchone()
    assert trials[0] > 0


def test_run_refuses_to_write_its_trials_over_the_cases(cli: Any, tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes((QUICKSTART / "cases.jsonl").read_bytes())
    result = cli(
        "run", "--cases", cases, "--model", "mock", "--trials", "1", "--output", cases,
        "--store", tmp_path / "s.db",
    )  # fmt: skip
    refused(result, "--output", "the case catalogue")
    assert cases.read_bytes() == (QUICKSTART / "cases.jsonl").read_bytes()
    assert not (tmp_path / "s.db").exists()


def test_a_suite_output_folder_may_not_overwrite_the_suites_cases(cli: Any, tmp_path: Path) -> None:
    """The suite's folder receives trials.jsonl: here that is its case catalogue."""
    cases = tmp_path / "trials.jsonl"
    cases.write_bytes((GATE.parent / "cases.jsonl").read_bytes())
    suite = tmp_path / "suite.toml"
    suite.write_text(
        GATE.read_text().replace('cases = "cases.jsonl"', 'cases = "trials.jsonl"\noutput = "."')
    )
    result = cli("run", suite, "--store", tmp_path / "s.db")
    refused(result, "the suite's output", "the case catalogue of the suite")
    assert cases.read_bytes() == (GATE.parent / "cases.jsonl").read_bytes()
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize("flag", ["--output", "--labels"])
def test_judge_refuses_to_write_over_the_trials_it_judges(
    cli: Any, tmp_path: Path, trials_file: Path, flag: str
) -> None:
    before = trials_file.read_bytes()
    other = "--labels" if flag == "--output" else "--output"
    result = cli(
        *judge_args(tmp_path, trials_file, flag, trials_file, other, tmp_path / "other.jsonl")
    )
    refused(result, flag, "the trials (--trials)")
    assert trials_file.read_bytes() == before
    assert not (tmp_path / "judge.db").exists()


def test_judge_refuses_one_file_for_output_and_labels(
    cli: Any, tmp_path: Path, trials_file: Path
) -> None:
    same = tmp_path / "x.jsonl"
    result = cli(*judge_args(tmp_path, trials_file, "--output", same, "--labels", same))
    refused(result, "--labels", "is also --output")
    assert not same.exists() and not (tmp_path / "judge.db").exists()


def test_review_export_refuses_to_write_over_the_store(cli: Any, tmp_path: Path) -> None:
    from assay.review import ReviewStore

    ReviewStore(tmp_path / "s.db")
    before = (tmp_path / "s.db").read_bytes()
    result = cli("review", "export", "--store", tmp_path / "s.db", "--output", tmp_path / "s.db")
    refused(result, "--output", "the store (--store)")
    assert (tmp_path / "s.db").read_bytes() == before


def test_report_refuses_a_folder_whose_report_is_an_input(
    cli: Any, tmp_path: Path, trials_file: Path
) -> None:
    """`--out` writes report.json there: the trials given are that file."""
    trials = tmp_path / "report.json"
    trials.write_bytes(trials_file.read_bytes())
    result = cli(
        "report", "--trials", trials, "--scorer", "contains",
        "--cases", QUICKSTART / "cases.jsonl", "--out", tmp_path,
    )  # fmt: skip
    refused(result, "--out", "the trials (--trials)")
    assert trials.read_bytes() == trials_file.read_bytes()


def test_calibrate_refuses_a_store_that_is_the_labels(cli: Any, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"item_id": f"i{n}", "dimension": "ok", "rater": rater, "value": "PASS"})
            + "\n"
            for n in range(3)
            for rater in ("human:a", "judge:x")
        )
    )
    before = labels.read_bytes()
    result = cli("calibrate", "--labels", labels, "--store", labels)
    refused(result, "--store", "the labels (--labels)")
    assert labels.read_bytes() == before


def test_judge_bench_refuses_a_report_over_the_store(cli: Any, tmp_path: Path) -> None:
    data = llmbar(tmp_path, [item(1), item(2)])
    store = tmp_path / "s.db"
    common = ["judge-bench", "--judge", "mock:gold", "--data", data, "--set", "llmbar-natural"]
    assert cli(*common, "--store", store).code == 0
    before = store.read_bytes()
    result = cli(*common, "--store", store, "--report", store)
    refused(result, "--report", "the store (--store)")
    assert store.read_bytes() == before


def test_import_refuses_a_folder_whose_files_are_the_sources(cli: Any, tmp_path: Path) -> None:
    """The folder receives trials.jsonl: the results file imported is that file."""
    source = tmp_path / "trials.jsonl"
    source.write_bytes(PROMPTFOO.read_bytes())
    result = cli("import", "promptfoo", source, "--output", tmp_path)
    refused(result, "--output", "a file being imported")
    assert source.read_bytes() == PROMPTFOO.read_bytes()


# --- judge-bench: a malformed set file is exit 2 naming file, line and field ------------------


def item(n: int, **changes: Any) -> dict[str, Any]:
    row = {"input": f"Say {n}.", "output_1": f"{n}", "output_2": f"It is {n}.", "label": 1}
    return {k: v for k, v in {**row, **changes}.items() if v is not None}


def llmbar(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    """A data folder with LLMBar's Natural set, one item per line of its dataset.json."""
    folder = tmp_path / "data" / "llmbar" / "Dataset" / "LLMBar" / "Natural"
    folder.mkdir(parents=True)
    body = ",\n".join(f"  {json.dumps(r)}" for r in rows)
    (folder / "dataset.json").write_text(f"[\n{body}\n]\n")
    return tmp_path / "data"


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ([item(1), item(2, label=None)], ":3: label: required field is missing"),
        ([item(1), item(2, label=3)], ":3: label: Input should be 1 or 2"),
        ([item(1, input=None)], ":2: input: required field is missing"),
    ],
)
def test_a_malformed_llmbar_item_names_file_line_and_field(
    cli: Any, tmp_path: Path, rows: list[dict[str, Any]], problem: str
) -> None:
    data = llmbar(tmp_path, rows)
    result = cli("judge-bench", "--judge", "mock:gold", "--data", data, "--set", "llmbar-natural",
                 "--store", tmp_path / "s.db")  # fmt: skip
    refused(result, f"dataset.json{problem}")
    assert not (tmp_path / "s.db").exists()


def test_a_broken_json_set_file_names_its_line(cli: Any, tmp_path: Path) -> None:
    data = llmbar(tmp_path, [item(1), item(2)])
    path = data / "llmbar" / "Dataset" / "LLMBar" / "Natural" / "dataset.json"
    path.write_text(path.read_text().replace('"label": 1}', '"label": 1', 1).replace(",\n", "\n"))
    result = cli("judge-bench", "--judge", "mock:gold", "--data", data, "--set", "llmbar-natural",
                 "--store", tmp_path / "s.db")  # fmt: skip
    refused(result, f"{path}:3: not JSON")


def prd(tmp_path: Path, ratings: list[dict[str, Any]]) -> Path:
    root = tmp_path / "data" / "prd_vicuna80" / "vicuna80"
    for folder in ("prompts", "generations", "ratings-human"):
        (root / folder).mkdir(parents=True)
    (root / "prompts" / "vicuna_questions.jsonl").write_text(
        json.dumps({"question_id": 1, "text": "Why?"}) + "\n"
    )
    for model in ("bard", "claude", "gpt35", "gpt4", "vicuna-13b"):
        (root / "generations" / f"answer_{model}.jsonl").write_text(
            json.dumps({"question_id": 1, "text": f"{model} says so."}) + "\n"
        )
    name = "answer_bard-vs-answer_claude-human-reviewer_threeclass.jsonl"
    (root / "ratings-human" / name).write_text("".join(json.dumps(r) + "\n" for r in ratings))
    return tmp_path / "data"


@pytest.mark.parametrize(
    ("rating", "problem"),
    [
        ({"question_id": 1}, ":2: score: required field is missing"),
        ({"question_id": 1, "score": 7}, ":2: score: Input should be 1, 2 or 3"),
        ({"question_id": 9, "score": 1}, ":2: question_id: 9: not a question of"),
    ],
)
def test_a_malformed_prd_rating_names_file_line_and_field(
    cli: Any, tmp_path: Path, rating: dict[str, Any], problem: str
) -> None:
    data = prd(tmp_path, [{"question_id": 1, "score": 1}, rating])
    result = cli("judge-bench", "--judge", "mock:gold", "--data", data, "--set", "prd-vicuna80",
                 "--store", tmp_path / "s.db")  # fmt: skip
    refused(result, f"threeclass.jsonl{problem}")


def test_a_pandalm_item_without_its_third_annotator_names_the_field(
    cli: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "data" / "pandalm"
    folder.mkdir(parents=True)
    row = {"idx": 0, "instruction": "Say hi.", "input": "", "response1": "hi",
           "response2": True, "annotator1": 1, "annotator2": 1}  # fmt: skip
    (folder / "testset-v1.json").write_text(json.dumps([row], indent=4))
    result = cli("judge-bench", "--judge", "mock:gold", "--data", tmp_path / "data",
                 "--set", "pandalm", "--store", tmp_path / "s.db")  # fmt: skip
    refused(result, "testset-v1.json:2: annotator3: required field is missing")
