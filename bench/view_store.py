"""A run store made up for `assay view`'s tests and bench: N cases × two conditions, some
errored trials, recorded results (cases, score rows, cells, a report), written through the
store's own functions, as a suite run records them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.store import Store
from assay.store.results import CaseEntry, Cell, ScoreEntry, save_results


def make_store(
    path: Path,
    cases: int = 20,
    *,
    run_id: str = "run000000001",
    suite: str = "demo",
    conditions: tuple[str, ...] = ("baseline", "candidate"),
    errored: Callable[[int], bool] = lambda i: i % 7 == 3,
    case_id: Callable[[int], str] = lambda i: f"case-{i:05d}",
    prompt: Callable[[int], str] = lambda i: f"How do I reset device {i}?",
    response: Callable[[int, str], str] = lambda i, c: (
        f"{c} says: press the reset button on device {i} for five seconds.\nThen wait."
    ),
    verdict: str = "FAIL",
    trajectory: Callable[[int, str], list[dict[str, Any]] | None] = lambda i, c: None,
    ran: Callable[[int], bool] = lambda i: True,
    report_extra: dict[str, Any] | None = None,
) -> Store:
    """Write one run of `cases` cases into a store at `path` (left open: close it): the
    first condition is the baseline, the last the candidate (one condition: both); cases
    `ran` says no to have no trial; `report_extra` is merged into the recorded report."""
    store = Store(path)
    base, cand = conditions[0], conditions[-1]
    store.save_run(
        run_id,
        {
            "conditions": [{"name": c, "model": "mock"} for c in conditions],
            "trials": 1,
            "cases": cases,
        },
    )
    seq = 0
    case_rows, scores, cells, checks = [], [], [], []
    totals: dict[str, list[float]] = {c: [] for c in conditions}
    for i in range(cases):
        cid = case_id(i)
        record: dict[str, Any] = {
            "id": cid,
            "category": ["billing", "devices", "safety"][i % 3],
            "prompt": prompt(i),
            "risk": ["low", "medium", "high"][i % 3],
            "criteria": ["answers the question"],
            "tags": ["smoke"] if i % 2 else [],
        }
        case_rows.append(CaseEntry(cid, record["category"], record["risk"], json.dumps(record)))
        if not ran(i):
            continue
        for condition in conditions:
            failed = condition == cand and errored(i)
            trial = {
                "case_id": cid,
                "condition": condition,
                "trial": 1,
                "runner": "mock",
                "response": "" if failed else response(i, condition),
                "usage": {"input_tokens": 9, "output_tokens": 14},
                "cost_usd": 0.0,
                "model": "mock",
                "latency_s": 0.01,
                "error": "mock failure (injected)" if failed else None,
                "run_id": run_id,
            }
            steps = trajectory(i, condition)
            if steps is not None:
                trial["trajectory"] = steps
            store.queue_trial(
                run_id, f"{cid}|{condition}", seq, trial, "detail" if failed else None
            )
            seq += 1
            if failed:
                continue
            value = 1.0 if condition == base or i % 4 else 0.0
            scores.append(
                ScoreEntry(
                    "scorer",
                    cid,
                    1,
                    condition,
                    json.dumps(
                        {
                            "case_id": cid,
                            "trial": 1,
                            "condition": condition,
                            "scorer": "contains",
                            "metrics": {"contains": value},
                            "evidence": f"looked for 'reset' in {cid}",
                        }
                    ),
                )
            )
            cells.append(Cell(cid, condition, value, condition == cand and i % 9 == 5))
            totals[condition].append(value)
        passed = bool(i % 4) and not errored(i)
        checks.append({"case_id": cid, "check": "contains", "passed": passed, "message": "m"})
    store.flush()
    report = {
        "verdict": verdict,
        "mode": "seed",
        "baseline": base,
        "candidate": cand,
        "reasons": ["made up for a test"],
        "checks": [],
        "case_checks": checks,
        "conditions": [
            {
                "name": c,
                "rows": len(values),
                "means": {"contains": sum(values) / len(values) if values else None},
                "weighted_score": sum(values) / len(values) if values else None,
                "blocking_findings": 0,
            }
            for c, values in totals.items()
        ],
        "comparisons": [
            {
                "condition": cand,
                "deltas": [{"metric": "contains", "delta": -0.2, "ci_low": -0.3, "ci_high": -0.1}],
            }
        ],
    }
    report.update(report_extra or {})
    save_results(
        store,
        run_id,
        suite=suite,
        verdict=verdict,
        report=json.dumps(report),
        cases=case_rows,
        scores=scores,
        cells=cells,
    )
    return store
