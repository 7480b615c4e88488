"""Every metric a user names must be one that something configured produces.

Metrics are named in the suite (`[scoring.weights]`, `[scoring.thresholds]`, the gate's
`[gate.guard]`) and on the command line (`--weights`). A name nothing produces would be
silently ignored — a threshold never checked, a guard skipped — so it is an input error
(exit 2) before any model call, naming where it was written, suggesting the nearest known
metric and listing them all (`EvalConfig.places` holds what the user wrote).

The known metrics (`known_metrics`):
- every configured scorer's declared `metrics` (option-dependent ones included, e.g.
  `recall@5` for `retrieval` with k = 5);
- with judges in direct mode, the criteria they score: the `[judge] rubric`'s criteria, else
  the five default metrics, plus `concision` with `[judge] concision = true`;
- the criteria of the suite's `[judge] rubric` file (its weights are the suite's default);
- when score rows are read (`assay score`, `assay report --scores`): the metrics the rows
  carry, from judges or human review (the review app scores the default rubric's criteria).
Only names the user wrote are checked: the default guards (correctness, safety) are skipped
with a note when nothing scores them.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping, Sequence

from assay.core.errors import InputError
from assay.core.rubric import load_rubric, resolve_criteria
from assay.core.suite import Suite
from assay.scorers.base import Scorer
from assay.scorers.runner import build_scorers
from assay.verdict.config import EvalConfig


def judge_metrics(suite: Suite) -> set[str]:
    """The metrics the suite's judges and its rubric file produce (no model is built)."""
    section = suite.judge
    rubric = load_rubric(suite.path(section.rubric)) if section.rubric else None
    names = {c.name for c in rubric.judged_criteria()} if rubric is not None else set()
    if section.judges and section.mode == "direct":
        criteria, _ = resolve_criteria(rubric, section.scale, concision=section.concision)
        names.update(c.name for c in criteria)
    return names


def known_metrics(
    config: EvalConfig,
    scorers: Sequence[Scorer] | None = None,
    carried: Iterable[str] = (),
) -> set[str]:
    """Every metric the configuration produces (see the module docstring), plus `carried`:
    the metrics of the score rows read. `scorers` are the config's, when already built."""
    built = build_scorers(config.scorers) if scorers is None else scorers
    known = {m for scorer in built for m in getattr(scorer, "metrics", ())}
    if config.suite is not None:
        known |= judge_metrics(config.suite)
    if config.judge is not None:  # a disabled judge's metrics: known, their checks skipped
        known.update(config.judge.skipped, config.judge.skipped_corpus)
    known.update(carried)
    return known


def check_metric_names(places: Mapping[str, Iterable[str]], known: Collection[str]) -> None:
    """InputError (exit 2) listing every name in `places` (where it was written → the names)
    that is not in `known`, each with the nearest known metric, then the known metrics."""
    listing = ", ".join(sorted(known)) or "none (no scorer, judge or rubric is configured)"
    problems = []
    for place, names in places.items():
        for name in names:
            if name in known:
                continue
            near = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            problems.append(
                f"ERROR: {place} {name}: unknown metric: no configured scorer, judge, rubric"
                f" or score row produces it{hint}"
            )
    if problems:
        raise InputError([*problems, f"ERROR: known metrics: {listing}"])


def check_config_metrics(
    config: EvalConfig,
    scorers: Sequence[Scorer] | None = None,
    carried: Iterable[str] = (),
) -> None:
    """Check every metric the user named in `config` against what it produces (plus
    `carried`, the metrics of the score rows read)."""
    if config.places:
        check_metric_names(config.places, known_metrics(config, scorers, carried))
