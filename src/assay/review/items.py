"""What reviewers review: one item per case × trial, pairing condition a with condition b, or
showing one condition's response alone (a == b: labelling one system's responses, e.g. for
calibration; scores only, there is nothing to compare)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.core.jsonl import load_records, read_text
from assay.core.records import Case, Trial, stored_trials
from assay.store import Store
from assay.store.review import MODES, ItemKey, Mode
from assay.verdict.rows import BASELINE

CANDIDATE = "candidate"  # the default condition compared with the baseline


def parse_mode(text: str) -> Mode:
    """`scores` or `pairwise`; anything else is a usage error."""
    for mode in MODES:
        if text == mode:
            return mode
    raise InputError(f"ERROR: --mode: must be one of {', '.join(MODES)}, got {text!r}")


@dataclass(frozen=True)
class ReviewItem:
    """One case × trial with the two conditions' trials (either may be missing)."""

    index: int
    key: ItemKey
    case: Case | None
    trial_a: Trial | None
    trial_b: Trial | None

    @property
    def single(self) -> bool:
        """One condition's response alone (a == b): no pair, no preference."""
        return self.key.a == self.key.b

    def trial_of(self, condition: str) -> Trial | None:
        return self.trial_a if condition == self.key.a else self.trial_b

    def scorable(self, condition: str) -> bool:
        """A condition's response can be scored: it exists and did not error."""
        trial = self.trial_of(condition)
        return trial is not None and trial.error is None

    def answerable(self, mode: Mode) -> bool:
        """Whether the item asks anything of a reviewer in this mode."""
        a_ok, b_ok = self.scorable(self.key.a), self.scorable(self.key.b)
        return (a_ok and b_ok) if mode == "pairwise" else (a_ok or b_ok)


@dataclass(frozen=True)
class ReviewSet:
    """Items loaded for one review session; `dataset` keys answers in the store."""

    dataset: str
    items: list[ReviewItem]
    conditions: list[str]
    a: str = BASELINE
    b: str = CANDIDATE

    @property
    def single(self) -> bool:
        """The responses of one condition alone (a == b)."""
        return self.a == self.b


def build_items(
    trials: Iterable[Trial], cases: Iterable[Case], a: str, b: str, source: str
) -> tuple[list[ReviewItem], list[str]]:
    """Pair the trials of conditions a and b per case × trial, in catalogue order.

    Returns the items and every condition seen. Duplicate trials are an input error.
    """
    by_key: dict[tuple[str, int, str], Trial] = {}
    seen_conditions: list[str] = []
    pairs: list[tuple[str, int]] = []
    for trial in trials:
        key = (trial.case_id, trial.trial, trial.condition)
        if key in by_key:
            raise InputError(
                f"ERROR: {source}: duplicate trial {trial.trial} of case {trial.case_id!r}"
                f" under condition {trial.condition!r}"
            )
        by_key[key] = trial
        if trial.condition not in seen_conditions:
            seen_conditions.append(trial.condition)
        if trial.condition in (a, b) and (trial.case_id, trial.trial) not in pairs:
            pairs.append((trial.case_id, trial.trial))
    case_list = list(cases)
    case_by_id = {c.id: c for c in case_list}
    rank = {c.id: i for i, c in enumerate(case_list)}
    pairs.sort(key=lambda p: (rank.get(p[0], len(rank)), p[0], p[1]))
    items = [
        ReviewItem(
            index=i,
            key=ItemKey(case_id, number, a, b),
            case=case_by_id.get(case_id),
            trial_a=by_key.get((case_id, number, a)),
            trial_b=by_key.get((case_id, number, b)),
        )
        for i, (case_id, number) in enumerate(pairs)
    ]
    return items, seen_conditions


def choose_conditions(conditions: list[str], a: str | None, b: str | None) -> tuple[str, str]:
    """The conditions to review, (a, b); a == b reviews that condition alone.

    Neither given: baseline and candidate, or the only condition the trials hold (a
    single-condition run). One given: it and the other's default (baseline, candidate), or
    it alone when the trials hold no trial of that default. Both given: as given."""
    if a is None and b is None:
        if len(conditions) == 1:
            return conditions[0], conditions[0]
        return BASELINE, CANDIDATE
    if a is None:
        assert b is not None
        return (BASELINE, b) if BASELINE in conditions else (b, b)
    if b is None:
        return (a, CANDIDATE) if CANDIDATE in conditions else (a, a)
    return a, b


def check_conditions(conditions: list[str], a: str, b: str, mode: Mode, source: str) -> None:
    """Pairwise needs two different conditions, both present; scoring needs at least one of
    them present (the one, when a == b)."""
    present = ", ".join(conditions) or "none"
    if a == b:
        if mode == "pairwise":
            raise InputError(
                f"ERROR: --a/--b: pairwise compares two conditions, both are {a!r}; give two"
                f" different ones (conditions present: {present}), or --mode scores to score"
                f" {a!r} alone"
            )
        if a not in conditions:
            raise InputError(
                f"ERROR: {source}: no trials of condition {a!r} (conditions present:"
                f" {present}); pick it with --a"
            )
        return
    missing = [c for c in (a, b) if c not in conditions]
    if mode == "pairwise" and missing:
        raise InputError(
            f"ERROR: {source}: no trials of condition {missing[0]!r} to compare"
            f" (conditions present: {present}); pick them with --a and --b"
        )
    if len(missing) == 2:
        raise InputError(
            f"ERROR: {source}: no trials of condition {a!r} or {b!r}"
            f" (conditions present: {present}); pick them with --a and --b"
        )


def file_dataset(path: Path, trials: list[Trial]) -> str:
    """The run id the trials share, else a digest of the file (answers key on it)."""
    run_ids = {t.run_id for t in trials}
    if len(run_ids) == 1 and None not in run_ids:
        return str(next(iter(run_ids)))
    digest = hashlib.sha256(read_text(path).encode("utf-8")).hexdigest()[:16]
    return f"file:{digest}"


def load_run_trials(records: Iterable[dict[str, Any]], run_id: str) -> list[Trial]:
    """Validate the store's trial records of a run (`stored_trials`); none is an error."""
    trials = stored_trials(records, run_id)
    if not trials:
        raise InputError(f"ERROR: --run: run {run_id!r} has no trials in the store")
    return trials


def load_trials_file(path: Path) -> list[Trial]:
    trials = [trial for _, trial in load_records(path, Trial)]
    if not trials:
        raise InputError(f"ERROR: {path}: the file has no trials")
    return trials


def open_review_set(
    *,
    trials_path: Path | None,
    cases_path: Path,
    run_id: str | None,
    store_path: Path,
    a: str | None,
    b: str | None,
    mode: str,
) -> ReviewSet:
    """Load the trials (a file, or a run in the store) and the cases into review items: the
    pairs of conditions a and b, or one condition alone (see `choose_conditions`)."""
    from assay.core.cases import load_cases

    checked = parse_mode(mode)
    if (trials_path is None) == (run_id is None):
        raise InputError("ERROR: give either --trials FILE (with --cases) or --run RUN_ID")
    cases = load_cases(cases_path)
    if run_id is not None:
        store = Store(store_path)
        try:
            trials = load_run_trials(store.trial_records(run_id), run_id)
        finally:
            store.close()
        dataset, source = run_id, f"run {run_id}"
    else:
        assert trials_path is not None
        trials = load_trials_file(trials_path)
        dataset, source = file_dataset(trials_path, trials), str(trials_path)
    present = list(dict.fromkeys(t.condition for t in trials))
    a, b = choose_conditions(present, a, b)
    items, conditions = build_items(trials, cases, a, b, source)
    check_conditions(conditions, a, b, checked, source)
    return ReviewSet(dataset=dataset, items=items, conditions=conditions, a=a, b=b)
