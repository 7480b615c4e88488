"""What would stop a suite run after its paid calls is refused before the first one: an
unpriced judge (its price is needed to bound the judges' spend) and a viewer address the
reports cannot link to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import make_case, write_jsonl


def _suite(tmp_path: Path, judge: str) -> Path:
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(3)])
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "early"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock:answer"\n'
        'output = "out"\n[run]\nprice = "1000,1000"\n'
        '[[conditions]]\nname = "baseline"\n'
        '[[conditions]]\nname = "candidate"\nsystem = "Be brief."\n'
        f'[judge]\njudges = ["{judge}"]\nbase_url = "http://127.0.0.1:9/v1"\n',
        encoding="utf-8",
    )
    return suite


def _no_trials(store: Path) -> bool:
    if not store.exists():
        return True
    from assay.store import Store

    handle = Store(store)
    try:
        return all(next(handle.trial_texts(run_id), None) is None for run_id, _, _ in handle.runs())
    finally:
        handle.close()


def test_an_unpriced_judge_is_refused_before_the_runs_calls(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's calls were made (and paid) first; the judge's missing price ended it after."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    suite, store = _suite(tmp_path, "openai:judge-without-a-price"), tmp_path / "s.db"
    done = cli("run", suite, "--store", store)
    assert done.code == 2, done.stdout + done.stderr
    assert "no price is known" in done.stderr and "Traceback" not in done.stderr
    assert "trials:" not in done.stdout + done.stderr
    assert _no_trials(store)


def test_a_bad_viewer_address_is_refused_before_the_runs_calls(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_VIEW_URL", "javascript:alert(1)")
    suite, store = _suite(tmp_path, "mock:fair"), tmp_path / "s.db"
    done = cli("run", suite, "--store", store)
    assert done.code == 2, done.stdout + done.stderr
    assert "ASSAY_VIEW_URL" in done.stderr
    assert _no_trials(store)
