"""`assay.api.entry`: the API from async code (a running loop, the async twins, which check
their arguments too), and what `dir()`/`help()` show of the lazily imported names."""

from __future__ import annotations

import asyncio
import pydoc
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.errors import InputError
from conftest import contains_case, contains_suite, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def _suite(tmp_path: Path) -> Path:
    write_jsonl(
        tmp_path / "cases.jsonl",
        [contains_case(f"c{i}", "actionable") for i in range(4)],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(contains_suite("loops"), encoding="utf-8")
    return suite


def test_the_sync_api_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    """As in Jupyter or pytest-asyncio: a loop runs in the caller's thread."""
    suite = _suite(tmp_path)
    cases = tmp_path / "cases.jsonl"

    async def main() -> tuple[Any, Any, Any]:
        outcome = assay.run(cases=cases, model="mock:answer", trials=1, store=tmp_path / "r.db")
        judged = assay.judge(
            run=outcome.run.run_id,
            judges=["mock:fair"],
            cases=cases,
            store=tmp_path / "r.db",
            allow_unmetered=True,
        )
        result = assay.evaluate(suite, store=tmp_path / "s.db", out=tmp_path / "out")
        return outcome, judged, result

    outcome, judged, result = asyncio.run(main())
    assert outcome.exit_code == 0 and outcome.run.answered == 4
    assert judged.exit_code == 0 and len(judged.rows) == 4
    assert result.verdict == "PASS" and (tmp_path / "out" / "summary.json").exists()


def test_the_async_twins_give_the_same_results_and_leave_the_loop_free(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    cases = tmp_path / "cases.jsonl"
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    async def main() -> tuple[Any, Any, Any]:
        beat = asyncio.create_task(ticker())
        outcome = await assay.arun(
            cases=cases, model="mock:answer,latency=0.05", trials=2, store=tmp_path / "r.db"
        )
        judged = await assay.ajudge(
            run=outcome.run.run_id,
            judges=["mock:fair"],
            cases=cases,
            store=tmp_path / "r.db",
            allow_unmetered=True,
        )
        result = await assay.aevaluate(suite, store=tmp_path / "s.db", out=tmp_path / "out")
        beat.cancel()
        return outcome, judged, result

    outcome, judged, result = asyncio.run(main())
    assert outcome.exit_code == 0 and outcome.run.answered == 8
    assert judged.exit_code == 0 and len(judged.rows) == 8
    assert result.verdict == "PASS"
    assert ticks > 5  # the caller's loop went on while the run's calls were made
    sync = assay.evaluate(suite, store=tmp_path / "s.db", out=tmp_path / "again")
    assert sync.summary() == result.summary()


def test_the_async_twins_check_their_arguments_too() -> None:
    with pytest.raises(InputError, match=r"assay\.run: trials: expected int"):
        asyncio.run(assay.arun(trials="3"))
    with pytest.raises(InputError, match=r"assay\.evaluate: scores"):
        asyncio.run(assay.aevaluate(scores=42))


def test_dir_and_help_list_the_api() -> None:
    names = set(dir(assay))
    assert {"evaluate", "run", "judge", "aevaluate", "arun", "ajudge", "Result"} <= names
    assert names >= set(assay.__all__)
    assert {"evaluate", "aevaluate", "RunOutcome"} <= set(dir(assay.api))
    text = pydoc.render_doc(assay, renderer=pydoc.plaintext)
    for name in ("evaluate(", "aevaluate(", "run(", "judge(", "class Result"):
        assert name in text, name
    assert "async twin" in (assay.aevaluate.__doc__ or "")
    with pytest.raises(AttributeError):
        assay.aResult  # noqa: B018  (twins are for functions only)


def test_the_package_says_it_is_typed() -> None:
    assert (ROOT / "src" / "assay" / "py.typed").is_file()


def test_the_docs_async_example_runs(tmp_path: Path) -> None:
    section = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "aevaluate" in b]
    assert len(blocks) == 1, "the page has one async example"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    done = subprocess.run(
        [sys.executable, "-c", blocks[0]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["20 trials; 20 judged; PASS", "PASS"], done.stdout
