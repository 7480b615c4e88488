"""The command line's sharp edges: output paths, permissions, duplicate input, runner names,
help texts, the version and the python: runner's signature."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from assay.core.errors import InputError
from assay.core.jsonl import write_jsonl
from conftest import ROOT, Result


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_output_files_respect_the_umask(tmp_path: Path) -> None:
    with umask(0o022):
        write_jsonl(tmp_path / "shared.jsonl", [{"a": 1}])
    with umask(0o077):
        write_jsonl(tmp_path / "private.jsonl", [{"a": 1}])
    assert mode(tmp_path / "shared.jsonl") == 0o644
    assert mode(tmp_path / "private.jsonl") == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_rewritten_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text("")
    path.chmod(0o640)
    with umask(0o022):
        write_jsonl(path, [{"a": 1}])
    assert mode(path) == 0o640
    assert path.read_text() == '{"a": 1}\n'


# --- output paths are checked before the first call ----------------------------------------

QUICKSTART = ROOT / "examples" / "quickstart"


@pytest.fixture
def trials_file(cli, tmp_path: Path) -> Path:
    path = tmp_path / "trials.jsonl"
    done = cli(
        "run", "--cases", QUICKSTART / "cases.jsonl", "--model", "mock", "--trials", "1",
        "--condition-skill", QUICKSTART / "skill.md", "--output", path,
        "--store", tmp_path / "made.db",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    return path


def refused(result: Result, *names: str) -> None:
    """Exit 2 with one plain message naming the path, never a traceback."""
    assert result.code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for name in names:
        assert name in result.stderr, result.stderr


def test_run_output_that_is_a_folder_is_refused_before_any_call(cli, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    store = tmp_path / "s.db"
    result = cli(
        "run", "--cases", QUICKSTART / "cases.jsonl", "--model", "mock", "--trials", "1",
        "--output", tmp_path / "out", "--store", store,
    )  # fmt: skip
    refused(result, "--output", str(tmp_path / "out"), "is a folder")
    assert not store.exists()  # no call was made, nothing was stored


def test_run_output_under_a_file_is_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    store = tmp_path / "s.db"
    result = cli(
        "run", "--cases", QUICKSTART / "cases.jsonl", "--model", "mock", "--trials", "1",
        "--output", tmp_path / "plain" / "trials.jsonl", "--store", store,
    )  # fmt: skip
    refused(result, "--output", "is a file, not a folder")
    assert not store.exists()


def test_suite_output_folder_that_is_a_file_is_refused_before_any_call(cli, tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("")
    store = tmp_path / "s.db"
    result = cli(
        "run", ROOT / "examples" / "gate" / "suite.toml", "--out", tmp_path / "plain",
        "--store", store,
    )  # fmt: skip
    refused(result, "--out", str(tmp_path / "plain"), "is a file")
    assert not store.exists()


@pytest.mark.parametrize("flag", ["--output", "--labels"])
def test_judge_output_that_is_a_folder_is_refused_before_any_call(
    cli, tmp_path: Path, trials_file: Path, flag: str
) -> None:
    (tmp_path / "out").mkdir()
    store = tmp_path / "judge.db"
    paths = {"--output": tmp_path / "scores.jsonl", "--labels": tmp_path / "labels.jsonl"}
    paths[flag] = tmp_path / "out"
    result = cli(
        "judge", "--trials", trials_file, "--cases", QUICKSTART / "cases.jsonl",
        "--judge", "mock:fair", "--output", paths["--output"], "--labels", paths["--labels"],
        "--store", store,
    )  # fmt: skip
    refused(result, flag, str(tmp_path / "out"), "is a folder")
    assert not store.exists()
    assert not (tmp_path / "scores.jsonl").exists()


def test_report_out_that_is_a_file_is_refused(cli, tmp_path: Path, trials_file: Path) -> None:
    (tmp_path / "plain").write_text("keep me")
    result = cli(
        "report", "--trials", trials_file, "--scorer", "contains",
        "--cases", QUICKSTART / "cases.jsonl", "--out", tmp_path / "plain",
    )  # fmt: skip
    refused(result, "--out", str(tmp_path / "plain"), "is a file")
    assert (tmp_path / "plain").read_text() == "keep me"


def test_rubric_output_that_is_a_folder_is_refused_before_the_call(cli, tmp_path: Path) -> None:
    (tmp_path / "rubric.yaml").mkdir()
    store = tmp_path / "s.db"
    result = cli(
        "rubric", "tone", "--description", "How polite the answer is.",
        "--output", tmp_path / "rubric.yaml", "--model", "mock:fair", "--store", store,
    )  # fmt: skip
    refused(result, "--output", "is a folder")
    assert not store.exists()


def test_the_writer_names_a_path_it_cannot_write(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(InputError, match=r"out: cannot write"):
        write_jsonl(tmp_path / "out", [{"a": 1}])
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary file left behind


# --- a trial given twice --------------------------------------------------------------------


def test_judge_refuses_a_repeated_trial_naming_both_lines(
    cli, tmp_path: Path, trials_file: Path
) -> None:
    lines = trials_file.read_text().splitlines()
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join([*lines, lines[1]]) + "\n")
    store = tmp_path / "judge.db"
    result = cli(
        "judge", "--trials", repeated, "--cases", QUICKSTART / "cases.jsonl",
        "--judge", "mock:fair", "--output", tmp_path / "scores.jsonl", "--store", store,
    )  # fmt: skip
    refused(result, f"{repeated}:{len(lines) + 1}:", "duplicate of line 2")
    assert not store.exists() and not (tmp_path / "scores.jsonl").exists()


def test_report_refuses_a_repeated_trial(cli, tmp_path: Path, trials_file: Path) -> None:
    lines = trials_file.read_text().splitlines()
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join([lines[0], *lines]) + "\n")
    result = cli(
        "report", "--trials", repeated, "--scorer", "contains",
        "--cases", QUICKSTART / "cases.jsonl", "--out", tmp_path / "report",
    )  # fmt: skip
    refused(result, f"{repeated}:2:", "duplicate of line 1")


def test_the_api_refuses_repeated_trial_objects(tmp_path: Path, trials_file: Path) -> None:
    import assay
    from assay.core.records import Trial

    trials = [Trial.model_validate_json(line) for line in trials_file.read_text().splitlines()]
    with pytest.raises(InputError, match=r"trials\[3\]: .*duplicate of trials\[0\]"):
        assay.judge(
            [*trials[:3], trials[0]],
            judges=["mock:fair"],
            cases=QUICKSTART / "cases.jsonl",
            store=tmp_path / "api.db",
        )
    assert not (tmp_path / "api.db").exists()


# --- runner names, help, version --------------------------------------------------------------


def test_stub_is_the_mock_runner(cli, tmp_path: Path, trials_file: Path) -> None:
    stub = tmp_path / "stub.jsonl"
    result = cli(
        "run", "--cases", QUICKSTART / "cases.jsonl", "--runner", "stub", "--trials", "1",
        "--condition-skill", QUICKSTART / "skill.md", "--output", stub,
        "--store", tmp_path / "stub.db",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    answers = [json.loads(line)["response"] for line in stub.read_text().splitlines()]
    mock = [json.loads(line)["response"] for line in trials_file.read_text().splitlines()]
    assert answers == mock
    assert "stub" in cli("run", "--help").stdout


def test_run_help_shows_the_defaults_a_run_uses(cli, tmp_path: Path) -> None:
    from assay.api.running import run_request

    request = run_request(cases=QUICKSTART / "cases.jsonl", model="mock")
    settings = request.settings
    text = " ".join(cli("run", "--help").stdout.split())
    for option, shown in [
        ("Trials per case and condition", f"default {request.trials}, or the suite's `trials`"),
        ("Concurrent calls", f"default {settings.concurrency}, or the suite's [run] concurrency"),
        ("Seconds per call", f"default {settings.timeout_s:g}, or the suite's [run] timeout"),
        (
            "Output tokens per call",
            f"default {settings.max_tokens}, or the suite's [run] max_tokens",
        ),
        ("Retries per call", f"default {settings.retries}, or the suite's [run] retries"),
    ]:
        assert f"{option} ({shown})" in text, option


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_names_assay_and_its_store_schema(cli, flag: str) -> None:
    from importlib.metadata import version

    from assay.store.schema import SCHEMA_VERSION

    result = cli(flag)
    assert result.code == 0, result.stderr
    assert result.stdout == f"assay {version('assay')} (store schema version {SCHEMA_VERSION})\n"
    assert "--version" in cli("--help").stdout


def test_jsonl_lines_are_json_dumps_text_and_made_json_is_written_as_is(tmp_path: Path) -> None:
    from assay.core.jsonl import json_line
    from assay.core.records import ScoreRow

    rows = [
        {"text": 'é ü 漢字 \u2028 \x00 "q" \\', "n": [1, 2.5, -0.0, 1e-07, 1e22], "none": None},
        {"nested": {"b": True, "a": float("nan"), "inf": float("inf")}},
    ]
    assert [json_line(r) for r in rows] == [json.dumps(r, ensure_ascii=False) for r in rows]
    score = ScoreRow.model_validate({"case_id": "c", "trial": 1, "condition": "x", "m": 4})
    path = tmp_path / "rows.jsonl"
    assert write_jsonl(path, [*rows, score, score.model_dump_json()]) == 4
    lines = path.read_text(encoding="utf-8").split("\n")  # not at U+2028
    assert lines[:2] == [json.dumps(r, ensure_ascii=False) for r in rows]
    assert lines[2] == lines[3] == score.model_dump_json()
