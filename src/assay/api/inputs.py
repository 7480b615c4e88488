"""Reading what a command is given: trials from a file, from objects or from a run in the store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.core.errors import InputError
from assay.core.jsonl import format_errors, load_records, repeats
from assay.core.records import Trial, stored_trials
from assay.store import Store, damaged_store, store_fault

__all__ = [
    "damaged_store",
    "load_trials",
    "store_fault",
    "trial_key",
]  # for the command line: the store errors

Source = str | Path


def trial_key(trial: Trial) -> tuple[str, int, str]:
    """What identifies a trial: one answer per case, trial number and condition."""
    return trial.case_id, trial.trial, trial.condition


def _repeated(trial: Trial, earlier: str) -> str:
    case, number, condition = trial_key(trial)
    return f"(case_id, trial, condition): duplicate of {earlier} ({case}, {number}, {condition})"


def load_trials(
    trials: Source | Sequence[Trial] | None,
    run: str | None,
    store: Store | Path,
    *,
    required: bool = False,
) -> list[Trial]:
    """The trials of a JSONL file (or given objects), or of run `run` in the store.

    Giving both is an error; giving neither is one when `required`, else no trials."""
    if (trials is not None and run is not None) or (required and trials is None and run is None):
        raise InputError("ERROR: give exactly one of --trials FILE or --run RUN_ID")
    if isinstance(trials, str | Path):
        records = load_records(Path(trials), Trial)
        if not records:
            raise InputError(f"ERROR: {trials}: no trials in the file")
        twice = repeats((line, trial_key(t)) for line, t in records)
        if twice:
            by_line = {line: t for line, t in records}
            raise InputError(
                format_errors(
                    Path(trials),
                    [(line, _repeated(by_line[line], f"line {first}")) for line, first in twice],
                )
            )
        return [record for _, record in records]
    if trials is not None:
        given = list(trials)
        twice = repeats((i, trial_key(t)) for i, t in enumerate(given))
        if twice:
            raise InputError(
                [
                    f"ERROR: trials[{i}]: {_repeated(given[i], f'trials[{first}]')}"
                    for i, first in twice
                ]
            )
        return given
    if run is None:
        return []
    if isinstance(store, Path) and not store.exists():  # never create a store to look in it
        raise InputError(f"ERROR: --run: {run!r} is not in the store {store} (no such file)")
    handle = store if isinstance(store, Store) else Store(store)
    try:
        if run not in {r for r, _, _ in handle.runs()}:
            raise InputError(f"ERROR: --run: {run!r} is not in the store {handle.path}")
        return stored_trials(handle.trial_records(run), run)
    finally:
        if handle is not store:
            handle.close()
