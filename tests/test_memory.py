"""Memory per case: a run keeps no case of a large catalogue in memory, with or without a
suite (issue 29's scale item: a million cases through the mock model under 400 MB)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from assay import api
from assay.core.cases import HELD_BYTES

CASES = 6_000  # about 3.4 MB of catalogue; held as Case objects, about 18 MB
BOUND = 10 * 2**20  # what the run allocates beyond the cases: about 5 MB


def _catalogue(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            case = {
                "id": f"case-{i}",
                "category": "billing",
                "risk": ("low", "medium", "high")[i % 3],
                "prompt": f"Customer {i} asks about a refund for order {i * 7}.",
                "criteria": [f"criterion {k} of case {i}: answers the question" for k in range(8)],
                "tags": ["scale", f"t{i % 5}"],
            }
            handle.write(json.dumps(case) + "\n")
    return path


def _peak(tmp_path: Path, suite: Path | None, cases: Path) -> int:
    """The most the run allocated at once beyond what was allocated before it (tracemalloc)."""
    api.run(suite, cases=cases, model="mock", trials=1, store=tmp_path / "warm.db",
            case_ids=["case-0"], out=tmp_path / "warm")  # fmt: skip  # imports done before
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        outcome = api.run(suite, cases=cases, model="mock", trials=1, concurrency=64,
                          store=tmp_path / "assay.db", out=tmp_path / "out")  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert outcome.run.answered == CASES
    return peak


@pytest.mark.parametrize("form", ["suite", "cases"])
def test_a_run_holds_no_case_of_a_large_catalogue(tmp_path: Path, form: str) -> None:
    cases = _catalogue(tmp_path / "cases.jsonl", CASES)
    assert cases.stat().st_size > HELD_BYTES
    suite = None
    if form == "suite":  # a suite that only runs (nothing to score: no evaluation after)
        suite = tmp_path / "suite.toml"
        suite.write_text('name = "scale"\ncases = "cases.jsonl"\nmodel = "mock"\n')
    peak = _peak(tmp_path, suite, cases)
    assert peak < BOUND, f"{peak / 2**20:.1f} MiB for {CASES} cases"


def _outputs(folder: Path) -> dict[str, list[object]]:
    """The suite's output files, timings and run ids aside (the store differs)."""
    volatile = {"latency_s", "created_at", "run_id"}
    found: dict[str, list[object]] = {}
    for name in ("trials.jsonl", "deterministic.jsonl", "scores.jsonl"):
        rows = [json.loads(line) for line in (folder / name).read_text().splitlines()]
        found[name] = [{k: v for k, v in r.items() if k not in volatile} for r in rows]
    summary = json.loads((folder / "summary.json").read_text())
    found["gate"] = [summary["release_gate"]]
    return found


@pytest.mark.parametrize("pinned", [False, True])
@pytest.mark.parametrize("ids", [None, ["case-3", "case-1"]])
def test_a_streamed_catalogue_is_evaluated_as_a_held_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pinned: bool, ids: list[str] | None
) -> None:
    """A suite over a catalogue too large to hold is judged, scored, gated and reported
    exactly as when it is held (its pinned golden set too, also when --case ran some)."""
    import hashlib

    from assay.core import cases as catalogue

    path = tmp_path / "cases.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for i in range(5):
            case = {"id": f"case-{i}", "category": ("a", "b")[i % 2], "risk": "high",
                    "prompt": f"Question {i}?", "criteria": ["answers"],
                    "expect": {"contains": ["Answer"] if i % 2 else ["nowhere"]},
                    "metadata": {"pad": "x" * (HELD_BYTES // 4)}}  # fmt: skip
            handle.write(json.dumps(case) + "\n")
    pin = f'cases_sha256 = "{hashlib.sha256(path.read_bytes()).hexdigest()}"\n' if pinned else ""
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f'name = "streamed"\ncases = "cases.jsonl"\n{pin}trials = 2\nmodel = "mock"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        'system = "Be brief."\n[judge]\njudges = ["mock:fair"]\n'
        '[scoring]\nscorers = ["contains"]\n[report]\nformats = ["json"]\n'
    )
    found = {}
    for form, held in (("streamed", HELD_BYTES), ("held", 2**40)):
        monkeypatch.setattr(catalogue, "HELD_BYTES", held)
        api.run(suite, store=tmp_path / f"{form}.db", out=tmp_path / form, case_ids=ids)
        found[form] = _outputs(tmp_path / form)
    assert found["streamed"] == found["held"]
    assert len(found["held"]["trials.jsonl"]) == 2 * 2 * (len(ids) if ids else 5)
