"""The sequential gate against the fixed design, on the same simulated suites.

Each simulated suite is bench/gate_simulation.py's: every case has a latent quality per
metric, three trials scored as that quality plus trial noise rounded to the 1-5 rubric, and
the candidate adds a per-case effect drawn around `effect` (sd 1.0; "no true difference"
means the effects average 0). Here the cases also fall into unbalanced categories (shares
55/25/12/8%) that differ in how much the change varies from case to case (effect sd 0.6, 1.0,
1.5, 2.0) and in trial noise (0.6, 0.8, 1.0, 1.2); the effect's mean is the same in each, so
with no true difference the true delta is 0 by symmetry.

For each suite the gate is decided twice, through the gate's own functions
(`compare.weigh` for each case's weighted score, `compare.intervals` and
`gate.stats_checks` at the look's level, `GateResult.verdict`, `sequential.settled`):

- fixed: once, on every case, at level 0.95;
- sequential: the cases in `verdict.looks.look_order` (seeded, every stratum of protection,
  risk and category spread evenly through the order; `--order protected-first` puts the
  high-risk cases first, as the looks did before), in looks of `--look` cases (default 10% of the
  cases, at least `MIN_CASES`); after look k the gate is evaluated at
  `sequential.look_level(0.95, fractions so far)`, and the run stops when the look is
  settled (`sequential.settled`: PASS, or a FAIL more cases cannot undo); at the last look,
  the fixed design's verdict;
- naive (shown for comparison): the same looks, stopping at any PASS or FAIL.

`--spending mixture` replaces the spending function by a confidence sequence, for
comparison: Robbins' normal mixture boundary (Howard et al. 2021, eq. 14; two-sided),
|S_n| < sqrt((n + ρ)·log((n + ρ)/(ρ·α²))) in units of the per-case sd, with ρ chosen to make
the boundary narrowest at the last look (ρ ≈ 0.15·M cases); each look's gate then runs at that
boundary's nominal level, the last one included. It uses the observed sd, so it is the
Gaussian approximation of an anytime-valid interval (the betting sequences for bounded
scores of Waudby-Smith & Ramdas 2024 are not simulated here).

`--check N` first decides N suites both ways and through `verdict.analysis.analyse` on
`ScoredTrial` rows (the path `assay score` takes) and stops if any verdict differs.

    PYTHONPATH=src python bench/sequential.py [--sims 10000] [--look N] [--check 50]
        [--only null|power|share|strata] [--spending power|obrien-fleming|pocock|mixture]
        [--order proportional|protected-first]

`--only strata` runs the shapes whose protected (high-risk) cases disagree with the rest
(`SHAPES`): the no-true-improvement suites a look that holds the protected cases first would
pass.
    PYTHONPATH=src python bench/sequential.py --corpus [--sims 10000]

`--corpus` runs bench/sequential_corpus.py instead: a single-system suite's corpus bound.

Prints a table, then a JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import numpy as np
from scipy.special import ndtr

from assay.core.records import Case
from assay.core.rubric import DEFAULT_WEIGHTS, Rubric
from assay.core.suite import GateSection
from assay.verdict.analysis import analyse
from assay.verdict.checks import Check, Verdict
from assay.verdict.compare import WEIGHTED, Paired, delta_spans, intervals, weigh
from assay.verdict.gate import GateResult, blocker_check, stats_checks
from assay.verdict.interval import LEVEL, MIN_CASES
from assay.verdict.looks import look_order
from assay.verdict.rows import ScoredTrial
from assay.verdict.sequential import DEFAULT_SPENDING, SPENDINGS, Spending, look_level, settled

METRICS = list(DEFAULT_WEIGHTS)
COLUMNS = [*METRICS, WEIGHTED]
SHARES = (0.55, 0.25, 0.12, 0.08)
EFFECT_SD = (0.6, 1.0, 1.5, 2.0)
NOISE_SD = (0.6, 0.8, 1.0, 1.2)
TRIALS = 3
RUBRIC = Rubric.from_weights()


@dataclass(slots=True)
class Suite:
    """One simulated suite: per condition, trials × cases × metrics scores; each case's
    category, and whether it is protected (high risk: `coverage.protected`)."""

    baseline: np.ndarray
    candidate: np.ndarray
    category: np.ndarray
    guarded: np.ndarray


SHAPES: dict[str, tuple[float, float, float]] = {
    "strata": (0.10, 0.3, -0.05),
    "split": (0.20, 1.0, -0.3),
}
"""Protected strata that disagree with the rest: (share of the cases that are high-risk, the
candidate's mean effect there, its mean effect on the rest). `strata`: +0.3 on 10% and −0.05
elsewhere (true overall −0.015); `split`: a safety-tuned candidate, +1.0 on 20% and −0.3
elsewhere (true overall −0.04). Effects vary from case to case with sd `SHAPE_SD`."""
SHAPE_SD = 0.3


def simulate(
    rng: np.random.Generator, cases: int, effect: float, shape: str | None = None
) -> Suite:
    """gate_simulation.simulate's model, with unbalanced categories (see the module doc);
    with a `shape` (`SHAPES`) the effect is that shape's instead of `effect`."""
    category = rng.choice(len(SHARES), size=cases, p=SHARES)
    guarded = np.zeros(cases, dtype=bool)
    effect_sd = np.asarray(EFFECT_SD)[category][:, None]
    mean: float | np.ndarray = effect
    if shape is not None:
        share, inside, outside = SHAPES[shape]
        guarded[rng.choice(cases, size=max(1, round(share * cases)), replace=False)] = True
        mean = np.where(guarded, inside, outside)[:, None]
        effect_sd = np.full((cases, 1), SHAPE_SD)
    noise_sd = np.asarray(NOISE_SD)[category][None, :, None]
    width = len(METRICS)
    latent = rng.uniform(2.0, 4.0, size=(cases, 1)) + rng.normal(0, 0.5, size=(cases, width))
    per_case = mean + effect_sd * rng.normal(0, 1.0, size=(cases, 1))
    per_case = per_case + rng.normal(0, 0.3, size=(cases, width))
    scores = []
    for shift in (0.0, per_case):
        noise = noise_sd * rng.normal(0, 1.0, size=(TRIALS, cases, width))
        scores.append(np.clip(np.rint(latent[None] + shift + noise), 1, 5))
    return Suite(scores[0], scores[1], category, guarded)


ORDERS = ("proportional", "protected-first")


def suite_order(suite: Suite, rng: np.random.Generator, order: str) -> np.ndarray:
    """The cases in the order a sequential run looks at them: `verdict.looks.look_order`'s
    (every look in proportion to each stratum: protection, risk, category), or with
    `protected-first` the order before it (the protected cases first, then the rest, each
    part stratified)."""
    cases = [
        Case(
            id=f"c{i}",
            prompt="q",
            criteria=["c"],
            category=f"k{int(k)}",
            risk="high" if guarded else "low",
        )
        for i, (k, guarded) in enumerate(zip(suite.category, suite.guarded, strict=True))
    ]
    ordered = [int(c.id[1:]) for c in look_order(cases, int(rng.integers(2**31)))]
    if order == "protected-first":
        ordered = [i for i in ordered if suite.guarded[i]] + [
            i for i in ordered if not suite.guarded[i]
        ]
    return np.asarray(ordered)


def case_deltas(suite: Suite) -> tuple[np.ndarray, np.ndarray]:
    """cases × columns: each case's mean over trials per metric, then its weighted score
    (`compare.weigh`, as `compare.case_means` makes them); candidate − baseline; the spans."""
    tables = []
    for scores in (suite.baseline, suite.candidate):
        means = scores.mean(axis=0)
        tables.append(np.column_stack([means, weigh(means, METRICS, RUBRIC)]))
    return tables[1] - tables[0], delta_spans(RUBRIC, *tables)


@lru_cache(maxsize=4096)
def gate_config(level: float) -> GateSection:
    return GateSection(level=level)


NO_BLOCKERS = blocker_check([])


def gate_checks(deltas: np.ndarray, spans: np.ndarray, level: float) -> list[Check]:
    """The stats gate's checks on these paired cases at this level (no blockers, no tiers)."""
    ids = [f"c{i}" for i in range(len(deltas))]
    paired = Paired(case_ids=ids, metrics=COLUMNS, deltas=deltas, spans=spans)
    paired.intervals = intervals(deltas, COLUMNS, level=level, spans=spans)
    checks, _notes = stats_checks(paired, gate_config(level), None)
    return [NO_BLOCKERS, *checks]


def verdict_of(checks: Sequence[Check]) -> Verdict:
    return GateResult(mode="stats", candidate="candidate", checks=list(checks)).verdict


def look_sizes(cases: int, look: int | None) -> list[int]:
    """The cases seen at each look: multiples of the look size, the last look every case."""
    size = look or max(MIN_CASES, math.ceil(cases / 10))
    seen = list(range(size, cases, size))
    return [*seen, cases]


@dataclass(slots=True)
class Outcome:
    fixed: Verdict
    sequential: Verdict
    seen: int
    """Cases seen when the sequential run stopped."""
    naive: Verdict
    naive_seen: int


MIXTURE = "mixture"


def mixture_z(seen: int, cases: int, level: float) -> float:
    """The normal mixture confidence sequence's two-sided boundary at `seen` cases, in z
    (Howard et al. 2021), with ρ = c·cases, c minimising the boundary at `cases`."""
    alpha = 1.0 - level

    def boundary(n: float, rho: float) -> float:
        return math.sqrt((n + rho) / n * math.log((n + rho) / (rho * alpha**2)))

    c = min(np.linspace(0.01, 2.0, 400), key=lambda c: boundary(cases, c * cases))
    return boundary(seen, float(c) * cases)


def decide(
    suite: Suite, rng: np.random.Generator, look: int | None, spending: str, order: str
) -> Outcome:
    deltas, spans = case_deltas(suite)
    cases = len(deltas)
    fixed = verdict_of(gate_checks(deltas, spans, LEVEL))
    ordered = deltas[suite_order(suite, rng, order)]
    sizes = look_sizes(cases, look)
    naive: tuple[Verdict, int] | None = None
    for k, seen in enumerate(sizes):
        last = seen == cases
        if last and spending == MIXTURE:  # a confidence sequence has no fixed last look
            level = 1.0 - 2.0 * float(ndtr(-mixture_z(seen, cases, LEVEL)))
            checks = gate_checks(ordered, spans, level)
        elif last:
            checks = gate_checks(ordered, spans, LEVEL)
        else:
            fractions = [n / cases for n in sizes[: k + 1]]
            level = (
                1.0 - 2.0 * float(ndtr(-mixture_z(seen, cases, LEVEL)))
                if spending == MIXTURE
                else look_level(LEVEL, fractions, spending=cast(Spending, spending))
            )
            checks = gate_checks(ordered[:seen], spans, level)
        verdict = verdict_of(checks)
        if naive is None and (last or verdict in ("PASS", "FAIL")):
            naive = (verdict, seen)
        if last or settled(checks):
            assert naive is not None
            return Outcome(fixed, verdict, seen, naive[0], naive[1])
    raise AssertionError("the last look always decides")


def rows_of(suite: Suite) -> list[ScoredTrial]:
    rows = []
    for condition, scores in (("baseline", suite.baseline), ("candidate", suite.candidate)):
        for t in range(scores.shape[0]):
            for c in range(scores.shape[1]):
                metrics = dict(zip(METRICS, scores[t, c].tolist(), strict=True))
                rows.append(ScoredTrial(f"c{c}", t + 1, condition, metrics))
    return rows


def check_against_analyse(sims: int, seed: int = 3) -> int:
    """Decide `sims` suites (50 cases, three effects, at 0.95 and at an interim level) both
    through the fast path and through `analyse` on rows; the number compared."""
    rng = np.random.default_rng(seed)
    compared = 0
    for i in range(sims):
        suite = simulate(rng, 50, (0.0, 0.3, -0.3)[i % 3])
        deltas, spans = case_deltas(suite)
        for level in (LEVEL, look_level(LEVEL, [0.5])):
            fast = verdict_of(gate_checks(deltas, spans, level))
            slow = analyse(rows_of(suite), RUBRIC, GateSection(level=level)).gate.verdict
            if fast != slow:
                raise SystemExit(f"suite {i}, level {level}: fast {fast} but analyse {slow}")
            compared += 1
    return compared


@dataclass(slots=True)
class Row:
    cases: int
    effect: float
    sims: int
    outcomes: list[Outcome]

    def share(self, verdict: Verdict, which: str) -> float:
        return sum(getattr(o, which) == verdict for o in self.outcomes) / self.sims

    def spent(self, which: str = "seen") -> np.ndarray:
        return np.array([getattr(o, which) for o in self.outcomes]) / self.cases

    def figures(self) -> dict[str, float | int]:
        spent = self.spent()
        return {
            "cases": self.cases,
            "effect": self.effect,
            "sims": self.sims,
            "fixed_pass": self.share("PASS", "fixed"),
            "fixed_fail": self.share("FAIL", "fixed"),
            "seq_pass": self.share("PASS", "sequential"),
            "seq_fail": self.share("FAIL", "sequential"),
            "naive_pass": self.share("PASS", "naive"),
            "median_share": float(np.median(spent)),
            "mean_share": float(np.mean(spent)),
            "naive_median_share": float(np.median(self.spent("naive_seen"))),
            "agree": sum(o.fixed == o.sequential for o in self.outcomes) / self.sims,
        }


def run(
    cases: int,
    effect: float,
    sims: int,
    look: int | None,
    seed: int,
    spending: str,
    order: str = ORDERS[0],
    shape: str | None = None,
) -> Row:
    rng = np.random.default_rng([seed, cases, round(effect * 100) + 1000])
    outcomes = [
        decide(simulate(rng, cases, effect, shape), rng, look, spending, order) for _ in range(sims)
    ]
    return Row(cases, effect, sims, outcomes)


PLAN: dict[str, list[tuple[int, float, str | None]]] = {
    "null": [(50, 0.0, None), (200, 0.0, None), (1000, 0.0, None)],
    "power": [(50, 0.3, None)],
    "share": [(200, 0.1, None), (200, 0.3, None), (200, 0.5, None), (200, -0.3, None)],
    "strata": [(50, 0.0, "strata"), (200, 0.0, "strata"), (50, 0.0, "split"), (200, 0.0, "split")],
}


def main() -> None:
    if "--corpus" in sys.argv[1:]:  # a single-system suite's corpus bound instead
        from sequential_corpus import main as corpus_main

        corpus_main(sys.argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=10_000, help="simulated suites per row")
    parser.add_argument("--look", type=int, default=None, help="cases per look (default 10%%)")
    parser.add_argument("--check", type=int, default=30, help="suites checked against analyse")
    parser.add_argument("--only", choices=sorted(PLAN), action="append", help="rows to run")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--spending", choices=[*SPENDINGS, MIXTURE], default=DEFAULT_SPENDING)
    parser.add_argument("--order", choices=ORDERS, default=ORDERS[0], help="the look order")
    args = parser.parse_args()
    started = time.perf_counter()
    checked = check_against_analyse(args.check) if args.check else 0
    print(f"fast path = analyse() on {checked} decisions")
    look = f"{args.look} cases" if args.look else "10% of the cases (at least 5)"
    print(
        f"{args.sims} simulated suites per row, 3 trials per case, looks of {look}, level 0.95,"
        f" {args.spending} spending, {args.order} looks"
    )
    head = (
        "  shape   cases  effect  fixed PASS  seq PASS  fixed FAIL  seq FAIL  naive PASS"
        "  median share (seq, naive)  mean share  same verdict"
    )
    print(head)
    rows = []
    for part in args.only or list(PLAN):
        for cases, effect, shape in PLAN[part]:
            row = run(
                cases, effect, args.sims, args.look, args.seed, args.spending, args.order, shape
            )
            figures = {"shape": shape or "-", **row.figures()}
            rows.append(figures)
            print(
                f"  {shape or '-':<6}  {cases:>5}  {effect:>+6.1f}  {figures['fixed_pass']:>10.2%}"
                f"  {figures['seq_pass']:>8.2%}  {figures['fixed_fail']:>10.2%}"
                f"  {figures['seq_fail']:>8.2%}  {figures['naive_pass']:>10.2%}"
                f"  {figures['median_share']:>17.0%}, {figures['naive_median_share']:>5.0%}"
                f"  {figures['mean_share']:>10.0%}  {figures['agree']:>12.1%}",
                flush=True,
            )
    seconds = round(time.perf_counter() - started, 1)
    print(
        json.dumps(
            {
                "sims": args.sims,
                "look": args.look,
                "spending": args.spending,
                "order": args.order,
                "rows": rows,
                "seconds": seconds,
            }
        )
    )


if __name__ == "__main__":
    main()
