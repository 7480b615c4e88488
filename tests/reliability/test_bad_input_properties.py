"""Bad input, property-based: whatever a file holds, every command that reads it exits 0 or
2 — with 2, every message names the file (and the line, when one line is at fault) — never
prints a traceback, and leaves no output file or store behind.

TARGETS is a table of (command, file kind); KINDS says how to make bad files of a kind (JSONL
kinds reuse `jsonl_files` with a valid record of their own): cases, suite files, trials,
score rows, comparisons and labels, for every command that reads them.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from assay.core.records import Case, Comparison, Label, ScoreRow, Trial
from conftest import invoke, make_case

# A modest default keeps the suite fast; ASSAY_FUZZ_EXAMPLES=300 digs deeper (same sequence).
EXAMPLES = int(os.environ.get("ASSAY_FUZZ_EXAMPLES", "30"))
PROFILE = settings(
    max_examples=EXAMPLES,
    derandomize=True,  # a fixed sequence of examples: the same on every run and machine
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass(frozen=True)
class BadFile:
    """File content and, when a single line is at fault, that line's number."""

    data: bytes
    line: int | None
    what: str


# -- JSON Lines files --------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def wrong_type(value: Any) -> st.SearchStrategy[Any]:
    """Any JSON value of a different type than `value`."""
    kind = type(value)
    return json_values.filter(
        lambda v: type(v) is not kind and not (kind is float and type(v) is int)
    )


def corrupt_lines(valid: dict[str, Any], key: str) -> st.SearchStrategy[tuple[bytes, str]]:
    """One bad line (without its newline) and what is wrong with it; `key` is the record's
    identifying field (`id`, `case_id`, `item_id`)."""
    field = st.sampled_from(sorted(valid))
    return st.one_of(
        field.flatmap(lambda f: wrong_type(valid[f]).map(
            lambda v: (json.dumps({**valid, f: v}).encode(), f"wrong type for {f}"))),
        field.map(lambda f: (json.dumps({k: v for k, v in valid.items() if k != f}).encode(),
                             f"missing {f}")),
        st.sampled_from([70, 300, 600, 900, 5000]).map(lambda n: (
            json.dumps({**valid, "metadata": {"x": "PLACEHOLDER"}}).encode().replace(
                b'"PLACEHOLDER"', b"[" * n + b"]" * n), f"nested {n} deep")),
        st.integers(1, 3000).map(lambda n: (b"[" * n, f"unclosed nesting {n}")),
        json_values.filter(lambda v: not isinstance(v, dict)).map(
            lambda v: (json.dumps(v).encode(), "not an object")),
        st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b and b.strip() != b"").map(
            lambda b: (b, "random bytes on a line")),
        st.sampled_from([b"\xff\xfe", b"\xc3\x28", b"ok \xed\xa0\x80", b"\x80"]).map(
            lambda b: (json.dumps({**valid, key: "X"}).encode()[:-1] + b', "x": "' + b + b'"}',
                       "invalid UTF-8")),
        st.integers(100_000, 400_000).map(lambda n: (b"{" + b'"' + b"x" * n, "huge broken line")),
        st.just((json.dumps({**valid, key: ""}).encode(), f"empty {key}")),
    )  # fmt: skip


def still_valid(line: bytes, model: type[BaseModel]) -> bool:
    """Whether a "corrupted" line is in fact a valid record (an optional field dropped, a
    value of another type the field also accepts): then no line is at fault, though the
    file as a whole may still be refused (e.g. unpaired conditions), naming the file."""
    try:
        model.model_validate_json(line)
    except ValueError:
        return False
    return True


def jsonl_files(
    valid_record: Callable[[int], dict[str, Any]], model: type[BaseModel], key: str = "id"
) -> st.SearchStrategy[BadFile]:
    """A few valid records with one bad line among them, or random bytes for the whole file."""

    @st.composite
    def one_bad_line(draw: st.DrawFn) -> BadFile:
        good = draw(st.integers(0, 3))
        at = draw(st.integers(0, good))
        bad, what = draw(corrupt_lines(valid_record(99), key))
        lines = [json.dumps(valid_record(i)).encode() for i in range(good)]
        lines.insert(at, bad)
        valid = not what.startswith("nested") and still_valid(bad, model)
        line = None if valid else at + 1
        return BadFile(b"\n".join(lines) + b"\n", line, what)

    whole = st.one_of(
        st.binary(max_size=200).map(lambda b: BadFile(b, None, "random bytes")),
        st.just(BadFile(b"", None, "empty file")),
        st.just(BadFile(b"\n \n\t\n", None, "blank lines only")),
    )
    return st.one_of(one_bad_line(), whole)


# -- TOML suite files --------------------------------------------------------------------------

VALID_SUITE = 'name = "s"\nmodel = "mock"\ntrials = 1\n\n[run]\nconcurrency = 2\n'


@st.composite
def suite_files(draw: st.DrawFn) -> BadFile:
    choice = draw(
        st.sampled_from(
            ["bytes", "utf8", "syntax", "type", "unknown", "nesting", "huge", "conditions"]
        )
    )
    if choice == "bytes":
        return BadFile(draw(st.binary(min_size=1, max_size=200)), None, "random bytes")
    if choice == "utf8":
        return BadFile(VALID_SUITE.encode() + b'description = "\xff\xfe"\n', None, "invalid UTF-8")
    if choice == "syntax":
        junk = draw(st.sampled_from(["= 1", "a = ", "[run", "x = [1,", 'y = "open', "[[]]"]))
        return BadFile(f"{VALID_SUITE}{junk}\n".encode(), None, "TOML syntax")
    if choice == "type":
        key, value = draw(
            st.sampled_from(
                [
                    ("trials", '"3"'),
                    ("trials", "0"),
                    ("model", "3"),
                    ("cases", "[1]"),
                    ("run.concurrency", '"x"'),
                    ("run.timeout", "-1"),
                    ("run.executor", '"dask"'),
                    ("run.budget_usd", "true"),
                    ("run", "5"),
                    ("conditions", "7"),
                ]
            )
        )
        if key.startswith("run."):
            text = VALID_SUITE.replace("[run]\n", f"[run]\n{key[4:]} = {value}\n")
        elif key == "run":
            text = f'run = {value}\nmodel = "mock"\n'
        else:
            text = VALID_SUITE.replace('name = "s"\n', f'name = "s"\n{key} = {value}\n', 1)
            text = text.replace("trials = 1\n", "", 1) if key == "trials" else text
            text = text.replace('model = "mock"\n', "", 1) if key == "model" else text
        return BadFile(text.encode(), None, f"wrong type for {key}")
    if choice == "unknown":
        key = draw(
            st.from_regex(r"[a-z_]{3,12}", fullmatch=True).filter(
                lambda k: (
                    k
                    not in {
                        "name",
                        "model",
                        "trials",
                        "cases",
                        "output",
                        "description",
                        "run",
                        "conditions",
                        "scoring",
                        "gate",
                        "judge",
                        "report",
                    }
                )
            )
        )
        return BadFile(f"{key} = 1\n{VALID_SUITE}".encode(), 1, f"unknown key {key}")
    if choice == "nesting":
        n = draw(st.integers(2000, 20000))
        return BadFile(f"{VALID_SUITE}[gate]\nx = {'[' * n}{']' * n}\n".encode(), None, "deep")
    if choice == "huge":
        n = draw(st.integers(100_000, 400_000))
        return BadFile(f'{VALID_SUITE}description = "{"x" * n}\n'.encode(), None, "huge line")
    conditions = draw(
        st.sampled_from(
            [
                "[[conditions]]\n",
                "[[conditions]]\nname = 3\n",
                '[[conditions]]\nname = "a"\nextra = 1\n',
                "conditions = []\n",
            ]
        )
    )
    return BadFile(f"{VALID_SUITE}{conditions}".encode(), None, "bad conditions")  # fmt: skip


# -- rubric files (YAML) --------------------------------------------------------------------------

VALID_RUBRIC: dict[str, Any] = {
    "name": "helpfulness",
    "description": "How well it solves the problem",
    "scale": "1-3",
    "levels": [
        {"score": n, "label": f"level {n}", "description": f"meets {n} of 3",
         "characteristics": [f"trait {n}"]}
        for n in (1, 2, 3)
    ],
}  # fmt: skip


@st.composite
def rubric_files(draw: st.DrawFn) -> BadFile:
    valid = yaml.safe_dump(VALID_RUBRIC, sort_keys=False)
    choice = draw(
        st.sampled_from(["bytes", "utf8", "syntax", "not a mapping", "type", "levels", "deep"])
    )
    if choice == "bytes":
        return BadFile(draw(st.binary(min_size=1, max_size=200)), None, "random bytes")
    if choice == "utf8":
        return BadFile(valid.encode() + b'domain: "\xff\xfe"\n', None, "invalid UTF-8")
    if choice == "syntax":
        junk = draw(st.sampled_from(["levels: [", "name: 'open", ": :", "\t- x", "{"]))
        return BadFile(f"{valid}{junk}\n".encode(), None, "YAML syntax")
    if choice == "not a mapping":
        value = draw(json_values.filter(lambda v: not isinstance(v, dict)))
        return BadFile(yaml.safe_dump(value).encode(), None, "not a mapping")
    if choice == "type":
        key = draw(st.sampled_from(sorted(VALID_RUBRIC)))
        value = draw(wrong_type(VALID_RUBRIC[key]))
        return BadFile(yaml.safe_dump({**VALID_RUBRIC, key: value}).encode(), None, f"type {key}")
    if choice == "levels":
        levels = VALID_RUBRIC["levels"][: draw(st.integers(0, 2))]
        return BadFile(yaml.safe_dump({**VALID_RUBRIC, "levels": levels}).encode(), None, "levels")
    n = draw(st.integers(2000, 20000))
    return BadFile(f"{valid}edge_cases: {'[' * n}{']' * n}\n".encode(), None, "deep nesting")


# -- the table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A command that reads a file of `kind`; argv(file, workdir) are its arguments."""

    command: str
    kind: str
    argv: Callable[[Path, Path], list[str | Path]]
    writes: tuple[str, ...] = ()  # files in workdir that must not exist after a failure
    ok: tuple[int, ...] = (0,)  # exit codes of a file that is (by chance) still valid


GATED = (0, 1)  # commands that gate: valid input may PASS or FAIL

RUN_OUT = ("out.jsonl", "store.db")


def run_flags(workdir: Path) -> list[str | Path]:
    return ["--model", "mock", "--trials", "1", "--store", workdir / "store.db",
            "--output", workdir / "out.jsonl"]  # fmt: skip


def valid_trial(i: int) -> dict[str, Any]:
    return {
        "case_id": f"case-{i % 2}", "trial": i // 4 + 1,
        "condition": "baseline" if i % 4 < 2 else "candidate", "runner": "mock",
        "response": f"An answer {i}.", "usage": {"input_tokens": 3, "output_tokens": 4},
        "cost_usd": 0.0, "model": "mock", "latency_s": 0.1, "error": None, "state": None,
    }  # fmt: skip


def valid_score(i: int) -> dict[str, Any]:
    return {
        "case_id": f"case-{i % 2}", "trial": i // 4 + 1,
        "condition": "baseline" if i % 4 < 2 else "candidate",
        "correctness": 1 + i % 5, "safety": 5, "blocker": False, "notes": None,
    }  # fmt: skip


def valid_comparison(i: int) -> dict[str, Any]:
    return {
        "case_id": f"case-{i % 2}", "trial": i // 2 + 1, "a": "baseline", "b": "candidate",
        "judge": "mock", "verdict": "ab"[i % 2], "confidence": 0.8, "consistent": True,
        "passes": [{"order": "ab", "winner": "ab"[i % 2]}, {"order": "ba", "winner": "a"}],
        "len_a": 10, "len_b": 12,
    }  # fmt: skip


def valid_label(i: int) -> dict[str, Any]:
    return {
        "item_id": f"item-{i // 2}", "dimension": "correctness",
        "rater": "human:ann" if i % 2 else "judge:mock", "value": 1 + i % 5,
    }  # fmt: skip


KINDS: dict[str, st.SearchStrategy[BadFile]] = {
    "cases": jsonl_files(lambda i: make_case(f"case-{i}"), Case),
    "suite": suite_files(),
    "trials": jsonl_files(valid_trial, Trial, "case_id"),
    "scores": jsonl_files(valid_score, ScoreRow, "case_id"),
    "comparisons": jsonl_files(valid_comparison, Comparison, "case_id"),
    "labels": jsonl_files(valid_label, Label, "item_id"),
    "rubric": rubric_files(),
}
FILE_NAMES = {
    "cases": "cases.jsonl",
    "suite": "suite.toml",
    "trials": "trials.jsonl",
    "scores": "scores.jsonl",
    "comparisons": "comparisons.jsonl",
    "labels": "labels.jsonl",
    "rubric": "rubric.yaml",
}

TARGETS = [
    Target("validate", "cases", lambda f, wd: ["validate", "--cases", f]),
    Target("run", "cases", lambda f, wd: ["run", "--cases", f, *run_flags(wd)], RUN_OUT),
    Target("run", "suite", lambda f, wd: ["run", f, *run_flags(wd)], RUN_OUT),
    Target("judge", "trials", lambda f, wd: [
        "judge", "--trials", f, "--cases", wd / "cases.jsonl", "--judge", "mock:fair",
        "--allow-unmetered", "--output", wd / "out.jsonl", "--store", wd / "store.db",
    ], RUN_OUT),
    Target("report", "trials", lambda f, wd: [
        "report", "--trials", f, "--cases", wd / "cases.jsonl", "--scorer", "refusal",
        "--out", wd / "reports",
    ], ("reports",), GATED),
    Target("score", "scores", lambda f, wd: ["score", f, "--cases", wd / "cases.jsonl"],
           (), GATED),
    Target("report", "scores", lambda f, wd: [
        "report", "--scores", f, "--cases", wd / "cases.jsonl", "--out", wd / "reports",
    ], ("reports",), GATED),
    Target("winrate", "comparisons", lambda f, wd: [
        "winrate", "--comparisons", f, "--baseline", "baseline", "--length-controlled"]),
    Target("rank", "comparisons", lambda f, wd: [
        "rank", "--comparisons", f, "--bootstrap", "20"]),
    Target("bias", "comparisons", lambda f, wd: ["bias", "--comparisons", f]),
    Target("calibrate", "labels", lambda f, wd: [
        "calibrate", "--labels", f, "--store", wd / "store.db"], ("store.db",)),
]  # fmt: skip

VALID = {"trials": valid_trial, "scores": valid_score, "comparisons": valid_comparison}


def valid_file(workdir: Path, kind: str) -> Path:
    """A valid file of `kind` beside the bad one (the other input of a two-file command)."""
    path = workdir / f"valid-{kind}.jsonl"
    path.write_text("".join(json.dumps(VALID[kind](i)) + "\n" for i in range(4)))
    return path


def judge_argv(workdir: Path, *extra: str | Path) -> list[str | Path]:
    return ["judge", "--judge", "mock:fair", "--allow-unmetered", "--output",
            workdir / "out.jsonl", "--store", workdir / "store.db", *extra]  # fmt: skip


TARGETS += [
    Target("history", "scores", lambda f, wd: [
        "history", "--add-scores", f, "--run", "run-1", "--store", wd / "store.db"],
        ("store.db",), (0, 1)),
    Target("bias", "scores", lambda f, wd: [
        "bias", "--comparisons", valid_file(wd, "comparisons"), "--scores", f,
        "--trials", valid_file(wd, "trials")]),
    Target("report", "comparisons", lambda f, wd: [
        "report", "--scores", valid_file(wd, "scores"), "--weights", "correctness=1,safety=1",
        "--comparisons", f,
        "--out", wd / "reports"], ("reports",), GATED),
    Target("report", "labels", lambda f, wd: [
        "report", "--scores", valid_file(wd, "scores"), "--weights", "correctness=1,safety=1",
        "--labels", f,
        "--out", wd / "reports"], ("reports",), GATED),
    Target("judge", "cases", lambda f, wd: judge_argv(
        wd, "--cases", f, "--trials", valid_file(wd, "trials")), RUN_OUT),
    Target("judge", "rubric", lambda f, wd: judge_argv(
        wd, "--rubric", f, "--cases", wd / "cases.jsonl", "--trials", valid_file(wd, "trials")),
        RUN_OUT),
]  # fmt: skip

_counter = itertools.count()


def check(target: Target, bad: BadFile, root: Path) -> None:
    workdir = root / f"ex{next(_counter)}"
    workdir.mkdir()
    path = workdir / FILE_NAMES[target.kind]
    path.write_bytes(bad.data)
    if target.kind == "suite":  # the suite's catalogue, valid, so the suite is what is tested
        (workdir / "cases.jsonl").write_text(json.dumps(make_case("ok")) + "\n")
    elif target.kind != "cases":  # the catalogue the records refer to
        rows = [make_case(f"case-{i}") for i in range(2)]
        (workdir / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = invoke(*target.argv(path, workdir))  # an uncaught exception fails the test here
    context = f"{target.command} {target.kind} ({bad.what}): {result.stderr[:500]!r}"
    assert "Traceback" not in result.stderr + result.stdout, context
    assert result.code in (*target.ok, 2), context
    if result.code in target.ok:
        return
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR: ")]
    assert errors, context
    assert all(line.startswith(f"ERROR: {path}") for line in errors), context
    if bad.line is not None:
        assert re.search(rf"^ERROR: {re.escape(str(path))}:{bad.line}:", result.stderr, re.M), (
            context
        )
    for name in target.writes:
        assert not (workdir / name).exists(), f"{context}: left {name} behind"
    assert not [p for p in workdir.iterdir() if p.name.endswith(".tmp")], context


@pytest.mark.parametrize("target", TARGETS, ids=[f"{t.command}-{t.kind}" for t in TARGETS])
def test_bad_files_exit_2_naming_file_and_line(target: Target, tmp_path: Path) -> None:
    @PROFILE
    @given(bad=KINDS[target.kind])
    def prop(bad: BadFile) -> None:
        check(target, bad, tmp_path)

    prop()
