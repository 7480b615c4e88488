"""`assay.import_results`: promptfoo results and Inspect AI logs as assay records.

The run another harness made is written to a folder as cases.jsonl (when the source carries
the inputs), trials.jsonl and scores.jsonl, with a suite.toml that gives the metrics' scale,
the catalogue, the candidate, the source's own verdict of each test (promptfoo's `pass`, a
per-case threshold) and `[source]` (the tool, and whether its run finished), so that
`assay score`, `assay report` and `assay review` gate, report and review it like a run of
assay's own. Everything is converted and checked
before the first file is written; each file is written atomically. The import replaces only
its own earlier output in the folder (`.assay-import.json` records what it wrote,
`core/owned.py`): any other file in the way is refused unless `overwrite` is given.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from assay.api.outputs import ImportSummary
from assay.core.errors import InputError
from assay.core.jsonl import atomic_writer, write_jsonl
from assay.core.owned import Owned
from assay.core.suite import Suite
from assay.core.writable import Output, check_outputs
from assay.importers import reader
from assay.importers.common import Imported, rename, suite_text
from assay.store import DEFAULT_STORE
from assay.verdict.rows import BASELINE

Source = str | Path

CASES = "cases.jsonl"
TRIALS = "trials.jsonl"
SCORES = "scores.jsonl"
SUITE = "suite.toml"
WRITTEN = (CASES, TRIALS, SCORES, SUITE)
MANIFEST = ".assay-import.json"


@dataclass
class ImportResult:
    """What an import wrote: the records (`imported`), the files, and the conditions the
    gate compares (`baseline`, `candidate`)."""

    imported: Imported
    output: Path
    written: list[Path] = field(default_factory=list)
    candidate: str | None = None
    source_gate: str | None = None
    notes: list[str] = field(default_factory=list)
    run_id: str | None = None
    """The run recorded in the store (`api/imported_runs.py`), for `assay view`."""

    @property
    def has_baseline(self) -> bool:
        return BASELINE in self.imported.conditions

    def summary(self) -> ImportSummary:
        """`assay import --json` (`assay schema import-summary`)."""
        imported = self.imported
        low, high = imported.scale
        return ImportSummary(
            tool=imported.tool,
            sources=[str(p) for p in imported.sources],
            output=str(self.output),
            files=[str(p) for p in self.written],
            cases=len(imported.cases),
            trials=len(imported.trials),
            errored=sum(1 for t in imported.trials if t.error is not None),
            scores=len(imported.scores),
            conditions=imported.conditions,
            metrics=imported.metrics,
            scale=[low, high],
            baseline=BASELINE if self.has_baseline else None,
            candidate=self.candidate,
            complete=not imported.incomplete,
            reasons=list(imported.incomplete),
            source_gate=self.source_gate,
            run_id=self.run_id,
            notes=[*imported.notes, *self.notes],
        )


def import_results(
    tool: str,
    sources: Source | Sequence[Source],
    output: Source,
    *,
    baseline: str | None = None,
    candidate: str | None = None,
    source_gate: bool = True,
    store: Source | None = DEFAULT_STORE,
    overwrite: bool = False,
) -> ImportResult:
    """Convert another harness's run and write it to the folder `output`.

    `tool` is `promptfoo` (results files of `promptfoo eval --output results.json`) or
    `inspect` (Inspect AI `.eval` or `.json` logs, or folders of them). `baseline` names the
    condition the others are compared with: it is written as the condition `baseline`
    (its runner keeps the original name). `candidate` is the condition the suite's gate
    decides for (default: the one condition besides baseline, when there is one).
    `source_gate=False` leaves the source's own verdict of each test (promptfoo's `pass`)
    out of the suite's per-case thresholds; a run that did not finish in the source (an
    Inspect log not `success`) is written as `[source] complete = false` either way.
    Malformed or unknown input is an InputError naming the file and the place; nothing is
    written then. So is a file in `output` the import would replace that is not its own
    unchanged earlier output (the user's cases.jsonl in `output="."`), unless `overwrite`.
    The run is recorded in `store` (None: not), so `assay view` lists it.
    """
    paths = [Path(sources)] if isinstance(sources, str | Path) else [Path(s) for s in sources]
    if not paths:
        raise InputError(f"ERROR: import {tool}: give at least one file to import")
    twice = [p for i, p in enumerate(paths) if p.resolve() in {q.resolve() for q in paths[:i]}]
    if twice:
        raise InputError(f"ERROR: {twice[0]}: given twice")
    out = Path(output)
    check_outputs(
        [Output("--output", out, folder=True, files=(*WRITTEN, MANIFEST))],
        [("a file being imported", path) for path in paths],
    )
    owned = Owned(out, MANIFEST, "assay import")
    if not overwrite:
        owned.check(WRITTEN, "--output", "--overwrite")
    imported = reader(tool)(paths)
    result = ImportResult(imported=imported, output=out)
    _choose_baseline(result, baseline)
    result.candidate = _choose_candidate(imported.conditions, candidate)
    if not result.has_baseline:
        result.notes.append(
            f"no condition is named {BASELINE}: give --baseline CONDITION to compare the others"
            f" with one (conditions: {', '.join(imported.conditions)})"
        )
    if not imported.scores and all(t.error is not None for t in imported.trials):
        result.notes.append("no trial has scores, every trial errored: the gate says INCOMPLETE")
    elif not imported.scores:
        result.notes.append("no trial has scores: there is nothing to gate, only to review")
    text = suite_text(
        imported,
        cases=CASES if imported.cases else None,
        candidate=result.candidate,
        command=f"assay import {tool}",
        source_gate=source_gate,
    )
    suite = Suite.model_validate(tomllib.loads(text))  # what is written must load
    result.source_gate = next(iter(suite.scoring.thresholds), None)
    _write(result, text)
    owned.record(result.written, stale=[n for n in WRITTEN if out / n not in result.written])
    if store is not None:
        from assay.api.imported_runs import record_import

        result.run_id, why = record_import(Path(store), imported, suite)
        if why is not None:
            result.notes.append(f"run {result.run_id} recorded without its evaluation: {why}")
    return result


def _choose_baseline(result: ImportResult, baseline: str | None) -> None:
    conditions = result.imported.conditions
    if baseline is None or (baseline == BASELINE and BASELINE in conditions):
        return
    if baseline not in conditions:
        raise InputError(
            f"ERROR: --baseline {baseline!r}: not a condition of the import (conditions:"
            f" {', '.join(conditions)})"
        )
    if BASELINE in conditions:
        raise InputError(
            f"ERROR: --baseline {baseline!r}: the import already has a condition named"
            f" {BASELINE}; leave --baseline out to compare with it"
        )
    rename(result.imported, baseline, BASELINE)
    result.notes.append(f"condition {baseline!r} is written as {BASELINE}")


def _choose_candidate(conditions: list[str], candidate: str | None) -> str | None:
    others = [c for c in conditions if c != BASELINE]
    if candidate is None:
        return others[0] if len(others) == 1 and BASELINE in conditions else None
    if candidate not in others:
        raise InputError(
            f"ERROR: --candidate {candidate!r}: not a condition besides {BASELINE} (conditions:"
            f" {', '.join(conditions)})"
        )
    return candidate


def _write(result: ImportResult, suite: str) -> None:
    imported, out = result.imported, result.output
    files: list[tuple[str, Sequence[BaseModel]]] = [
        (CASES, imported.cases),
        (TRIALS, imported.trials),
        (SCORES, imported.scores),
    ]
    for name, rows in files:
        # scores.jsonl even when empty (every trial errored): `assay report --scores` reads
        # it and says INCOMPLETE with the reason, where a missing file is an input error
        if rows or name == SCORES:
            path = out / name
            write_jsonl(path, rows)
            result.written.append(path)
    path = out / SUITE
    with atomic_writer(path) as handle:
        handle.write(suite)
    result.written.append(path)
