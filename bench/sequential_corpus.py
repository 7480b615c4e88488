"""The sequential gate on a single-system suite's corpus bound, against the fixed design.

`bench/sequential.py --corpus` runs this (or `python bench/sequential_corpus.py`). Each
simulated suite is one system on M cases × 3 trials with a deterministic scorer's pass/fail
metric: case i passes each trial with its own chance p_i, drawn from a Beta distribution of
mean `mean` whose spread differs by category (unbalanced categories, shares 55/25/12/8%,
Beta concentrations 20, 5, 2 and 1: from cases that all pass about as often to cases that
almost always or almost never pass), so the cases are clustered (the three trials of a case
share its p_i) and the true corpus mean is exactly `mean` in every category. The suite has
one corpus bound, `min = BOUND` (0.8), decided on its interval (`verdict/corpus.py`).

Each suite is decided twice through the gate's own functions (`interval.paired_intervals`
over the case means, `corpus.corpus_check`, `GateResult.verdict`, `sequential.settled`):

- fixed: on every case at level 0.95;
- sequential: the cases in a random order stratified by category, in looks of 10% of the
  cases (at least 5); after look k the bound is checked at `look_level(0.95, fractions)`
  on the wider of the t interval and Hall's skewness-corrected one (`corpus.figure_of`;
  `--t-only`: the t interval alone), and the run stops when the look is settled (PASS: the lower end of the interval at or
  above the bound; FAIL: its upper end below it); the last look is the fixed design.

With the true mean at the bound (`mean = 0.8`) a PASS is a false PASS: the interval rule
allows 2.5% (one side of a two-sided 95% interval), the issue asks at most 5%.

`--check N` first decides N suites through `corpus.corpus_checks` on Score objects (the
path a run takes) and stops if any verdict differs from the fast path's.

    PYTHONPATH=src python bench/sequential.py --corpus [--sims 10000] [--check 30]

Prints a table, then a JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assay.core.suite import Threshold
from assay.scorers.base import Score
from assay.verdict.checks import Check, Verdict
from assay.verdict.corpus import corpus_check, corpus_checks, figure_of
from assay.verdict.gate import GateResult, blocker_check
from assay.verdict.interval import LEVEL, MIN_CASES
from assay.verdict.sequential import look_level, settled

SHARES = (0.55, 0.25, 0.12, 0.08)
CONCENTRATION = (20.0, 5.0, 2.0, 1.0)
TRIALS = 3
BOUND = 0.8
METRIC = "passed"
NO_BLOCKERS = blocker_check([])


def simulate(rng: np.random.Generator, cases: int, mean: float) -> tuple[np.ndarray, np.ndarray]:
    """Each case's mean over its trials (the share of its 3 trials that passed) and its
    category (see the module's docstring)."""
    category = rng.choice(len(SHARES), size=cases, p=SHARES)
    kappa = np.asarray(CONCENTRATION)[category]
    chance = rng.beta(mean * kappa, (1.0 - mean) * kappa)
    return rng.binomial(TRIALS, chance) / TRIALS, category


def stratified_order(category: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random order in which each category's cases are spread evenly (as the looks do)."""
    key = np.empty(category.size)
    for value in np.unique(category):
        members = np.flatnonzero(category == value)
        rng.shuffle(members)
        key[members] = (np.arange(members.size) + rng.uniform(size=members.size)) / members.size
    return np.argsort(key, kind="stable")


def bound_checks(values: np.ndarray, level: float, interim: bool = False) -> list[Check]:
    """The gate's checks on these case means at this level (`interim`: a look before the
    last, `corpus.figure_of`): no blockers, the corpus bound."""
    figure = figure_of(
        values.tolist(), METRIC, "scorer:contains", "prod", (0.0, 1.0), level=level, interim=interim
    )
    return [NO_BLOCKERS, corpus_check(figure, "min", BOUND, "interval", level)]


def verdict_of(checks: Sequence[Check]) -> Verdict:
    return GateResult(mode="stats", candidate="prod", checks=list(checks), compared=False).verdict


def look_sizes(cases: int) -> list[int]:
    size = max(MIN_CASES, math.ceil(cases / 10))
    return [*range(size, cases, size), cases]


@dataclass(slots=True)
class Outcome:
    fixed: Verdict
    sequential: Verdict
    seen: int


def decide(
    values: np.ndarray, category: np.ndarray, rng: np.random.Generator, interim: bool = True
) -> Outcome:
    cases = len(values)
    fixed = verdict_of(bound_checks(values, LEVEL))
    ordered = values[stratified_order(category, rng)]
    sizes = look_sizes(cases)
    for k, seen in enumerate(sizes):
        last = seen == cases
        level = LEVEL if last else look_level(LEVEL, [n / cases for n in sizes[: k + 1]])
        checks = bound_checks(ordered[:seen], level, interim=not last and interim)
        if last or settled(checks):
            return Outcome(fixed, verdict_of(checks), seen)
    raise AssertionError("the last look always decides")


def check_against_corpus_checks(sims: int, seed: int = 5) -> int:
    """Decide `sims` suites (50 cases; means 0.8, 0.9, 0.7) through the fast path and
    through `corpus_checks` on Score rows, at 0.95 and at an interim level; the count."""
    rng = np.random.default_rng(seed)
    compared = 0
    bound: dict[str, Threshold] = {METRIC: Threshold(min=BOUND)}
    for i in range(sims):
        values, _ = simulate(rng, 50, (0.8, 0.9, 0.7)[i % 3])
        scores = []
        for c, value in enumerate(values.tolist()):
            passed = round(value * TRIALS)
            for t in range(TRIALS):
                metric = {METRIC: 1.0 if t < passed else 0.0}
                scores.append(Score(f"c{c}", t + 1, "prod", "contains", metric))
        for level, interim in ((LEVEL, False), (look_level(LEVEL, [0.5]), True)):
            fast = verdict_of(bound_checks(values, level, interim))
            found = corpus_checks(scores, bound, "prod", level=level, interim=interim)
            slow = verdict_of([NO_BLOCKERS, *found])
            if fast != slow:
                raise SystemExit(f"suite {i}, level {level}: fast {fast} but corpus_checks {slow}")
            compared += 1
    return compared


PLAN = [(50, 0.8), (200, 0.8), (1000, 0.8), (50, 0.9), (200, 0.85), (200, 0.9), (200, 0.7)]


def run(
    cases: int, mean: float, sims: int, seed: int, interim: bool = True
) -> dict[str, float | int]:
    rng = np.random.default_rng([seed, cases, round(mean * 1000)])
    outcomes = [decide(*simulate(rng, cases, mean), rng, interim) for _ in range(sims)]
    spent = np.array([o.seen for o in outcomes]) / cases

    def share(verdict: Verdict, which: str) -> float:
        return sum(getattr(o, which) == verdict for o in outcomes) / sims

    return {
        "cases": cases,
        "mean": mean,
        "bound": BOUND,
        "sims": sims,
        "fixed_pass": share("PASS", "fixed"),
        "seq_pass": share("PASS", "sequential"),
        "fixed_fail": share("FAIL", "fixed"),
        "seq_fail": share("FAIL", "sequential"),
        "median_share": float(np.median(spent)),
        "mean_share": float(np.mean(spent)),
        "agree": sum(o.fixed == o.sequential for o in outcomes) / sims,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="store_true", help="(as bench/sequential.py takes it)")
    parser.add_argument("--sims", type=int, default=10_000, help="simulated suites per row")
    parser.add_argument("--check", type=int, default=30, help="suites checked both ways")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument(
        "--t-only",
        action="store_true",
        help="interim looks on the t interval alone (without Hall's correction), to compare",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    checked = check_against_corpus_checks(args.check) if args.check else 0
    print(f"fast path = corpus_checks() on {checked} decisions")
    print(
        f"{args.sims} simulated single-system suites per row, 3 trials per case, corpus bound"
        f" min {BOUND} on a pass share, looks of 10% of the cases (at least 5), level 0.95"
    )
    print(
        "  cases  true mean  fixed PASS  seq PASS  fixed FAIL  seq FAIL  median share"
        "  mean share  same verdict"
    )
    rows = []
    for cases, mean in PLAN:
        figures = run(cases, mean, args.sims, args.seed, not args.t_only)
        rows.append(figures)
        print(
            f"  {cases:>5}  {mean:>9.2f}  {figures['fixed_pass']:>10.2%}  {figures['seq_pass']:>8.2%}"
            f"  {figures['fixed_fail']:>10.2%}  {figures['seq_fail']:>8.2%}"
            f"  {figures['median_share']:>12.0%}  {figures['mean_share']:>10.0%}"
            f"  {figures['agree']:>12.1%}",
            flush=True,
        )
    seconds = round(time.perf_counter() - started, 1)
    interim = "t" if args.t_only else "t+hall"
    print(
        json.dumps(
            {
                "sims": args.sims,
                "corpus": True,
                "interim": interim,
                "rows": rows,
                "seconds": seconds,
            }
        )
    )


if __name__ == "__main__":
    main()
