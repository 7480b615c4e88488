"""Bad input, property-based: whatever a file holds, every command that reads it exits 0 or
2 — with 2, every message names the file (and the line, when one line is at fault) — never
prints a traceback, and leaves no output file or store behind.

TARGETS is a table of (command, file kind); KINDS says how to make bad files of a kind. The
trials/scores/comparisons/labels commands join by adding rows (JSONL kinds reuse
`jsonl_files` with a valid record of their own).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import invoke, make_case

EXAMPLES = 30
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


def corrupt_lines(valid: dict[str, Any]) -> st.SearchStrategy[tuple[bytes, str]]:
    """One bad line (without its newline) and what is wrong with it."""
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
            lambda b: (json.dumps({**valid, "id": "X"}).encode()[:-1] + b', "x": "' + b + b'"}',
                       "invalid UTF-8")),
        st.integers(100_000, 400_000).map(lambda n: (b"{" + b'"' + b"x" * n, "huge broken line")),
        st.just((json.dumps({**valid, "id": ""}).encode(), "empty id")),
    )  # fmt: skip


def jsonl_files(valid_record: Callable[[int], dict[str, Any]]) -> st.SearchStrategy[BadFile]:
    """A few valid records with one bad line among them, or random bytes for the whole file."""

    @st.composite
    def one_bad_line(draw: st.DrawFn) -> BadFile:
        good = draw(st.integers(0, 3))
        at = draw(st.integers(0, good))
        bad, what = draw(corrupt_lines(valid_record(99)))
        lines = [json.dumps(valid_record(i)).encode() for i in range(good)]
        lines.insert(at, bad)
        return BadFile(b"\n".join(lines) + b"\n", at + 1, what)

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


# -- the table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A command that reads a file of `kind`; argv(file, workdir) are its arguments."""

    command: str
    kind: str
    argv: Callable[[Path, Path], list[str | Path]]
    writes: tuple[str, ...] = ()  # files in workdir that must not exist after a failure


RUN_OUT = ("out.jsonl", "store.db")


def run_flags(workdir: Path) -> list[str | Path]:
    return ["--model", "mock", "--trials", "1", "--store", workdir / "store.db",
            "--output", workdir / "out.jsonl"]  # fmt: skip


KINDS: dict[str, st.SearchStrategy[BadFile]] = {
    "cases": jsonl_files(lambda i: make_case(f"case-{i}")),
    "suite": suite_files(),
}
FILE_NAMES = {"cases": "cases.jsonl", "suite": "suite.toml"}

TARGETS = [
    Target("validate", "cases", lambda f, wd: ["validate", "--cases", f]),
    Target("run", "cases", lambda f, wd: ["run", "--cases", f, *run_flags(wd)], RUN_OUT),
    Target("run", "suite", lambda f, wd: ["run", f, *run_flags(wd)], RUN_OUT),
]

_counter = itertools.count()


def check(target: Target, bad: BadFile, root: Path) -> None:
    workdir = root / f"ex{next(_counter)}"
    workdir.mkdir()
    path = workdir / FILE_NAMES[target.kind]
    path.write_bytes(bad.data)
    if target.kind == "suite":  # the suite's catalogue, valid, so the suite is what is tested
        (workdir / "cases.jsonl").write_text(json.dumps(make_case("ok")) + "\n")
    result = invoke(*target.argv(path, workdir))  # an uncaught exception fails the test here
    context = f"{target.command} {target.kind} ({bad.what}): {result.stderr[:500]!r}"
    assert "Traceback" not in result.stderr + result.stdout, context
    assert result.code in (0, 2), context
    if result.code == 0:
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
