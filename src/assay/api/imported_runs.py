"""An imported run (`assay import promptfoo|inspect`) recorded in the store as a run of its
own, so `assay view` lists it beside assay's runs: its trials, and when its suite can be
gated, the evaluation `api/recording.py` records for every suite run (one writer)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from assay.api.recording import record_results
from assay.core.errors import InputError
from assay.core.jsonl import model_line
from assay.core.suite import Suite
from assay.importers.common import Imported
from assay.store import Store


def imported_run_id(imported: Imported) -> str:
    """The same import always gets the same run id (importing it again replaces it)."""
    digest = hashlib.sha256(imported.tool.encode())
    for trial in imported.trials:
        digest.update(model_line(trial).encode())
    return f"{imported.tool}-{digest.hexdigest()[:12]}"


def record_import(store: Path, imported: Imported, suite: Suite) -> tuple[str, str | None]:
    """Record the imported run in `store`: (its run id, why its evaluation was not recorded,
    None when it was)."""
    from assay.api.evaluation import evaluate

    run_id = imported_run_id(imported)
    trials = max((t.trial for t in imported.trials), default=1)
    config = {
        "conditions": [
            {"name": c, "model": f"{imported.tool} import"} for c in imported.conditions
        ],
        "trials": trials,
        "cases": len({t.case_id for t in imported.trials}),
        "imported": {"tool": imported.tool, "sources": [str(p) for p in imported.sources]},
    }
    handle = Store(store)
    try:
        handle.save_run(run_id, config)
        for seq, trial in enumerate(imported.trials):
            record = trial.model_dump(mode="json", exclude_none=True)
            record["run_id"] = run_id
            record.setdefault("error", None)
            key = f"{trial.case_id}|{trial.condition}|{trial.trial}"
            handle.queue_trial(run_id, key, seq, record)
        handle.flush()
        try:
            result = evaluate(
                suite,
                trials=imported.trials,
                scores=imported.scores,
                cases=imported.cases or None,
                formats=[],
            )
        except InputError as exc:
            return run_id, exc.messages[0] if exc.messages else str(exc)
        record_results(
            handle,
            run_id,
            suite.name,
            imported.cases,
            result.evaluation,
            result.report,
            imported.scores,
        )
    finally:
        handle.close()
    return run_id, None
