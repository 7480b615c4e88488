"""The release gate on data shapes real evaluations have: false PASS, power, coverage, calls.

Every simulated suite goes through the gate's public evaluation, `verdict.pipeline.evaluate`
(what `assay score`, `assay report`, `assay run` and `assay.evaluate` call), so the figures
measure whatever interval method the code has. The fixed design evaluates every case once at
level 0.95; the sequential design takes the cases in `verdict.looks.look_order` (stratified
by protection, risk and category; whole clusters), in looks of `look_size` cases ending at a
cluster's end (`verdict.clusters.unit_ends`), evaluates each look at
`verdict.sequential.look_level` with the look's `Sequential` record (the candidate's rows on
the protected cases from the first look, and on every case before an interim PASS, as its
per-case checks need), and stops when `verdict.sequential.settled` says so, as
`api.sequential` does; calls count the score rows the run needed.

One weighted metric, `quality`, no guarded metric (the gate's check is superiority of the
weighted score: PASS when its interval's lower bound is above 0). Three trials per case
unless the shape says otherwise. Shapes (`--shapes`), each with its true difference (the
mean over cases, or over clusters, of the expected per-case delta):

- `symmetric`: latent quality per case uniform on [2, 4], per-case effect N(0, 1), trial
  noise N(0, 0.8), rounded to 1-5 (gate_simulation.py's model). Truth 0 by symmetry.
- `catastrophe`: 5% of cases broken (the candidate scores the scale's floor, 1, on every
  trial), the rest better by g; continuous scores, a case's quality uniform on [2.5, 4.2],
  trial noise uniform ±0.3. g = 0.1237 makes the truth 0.
- `catastrophe-0.08`: the same with g = 0.0395: truth −0.08.
- `bimodal`: each trial scores 1 or 5; the baseline's chance of 5 per case is Beta(0.5,
  0.5), the candidate's that plus N(0, 0.3), clipped to [0, 1]. Truth 0 by symmetry.
- `clusters`: groups of 10 cases declaring one `cluster`; the per-case mean delta has
  intra-class correlation 0.5 (cluster effect var 0.18, case effect 0.12, trial noise
  0.3 per arm); continuous scores clipped to [1, 5] around 3. Truth 0 by symmetry.
- `clusters-undeclared`: the same cases without the `cluster` field (what the gate did before
  clusters could be declared).
- `uneven`: `symmetric` with 1 to 5 trials per case and arm (uniform), each case planned
  for at least 1. Truth 0.
- `strata`: 10% high-risk cases on which the candidate is +0.3, −0.05 on the rest
  (a case's quality uniform on [2.5, 4], trial noise ±0.3): truth −0.015. High-risk cases
  are protected: a sequential run looks at them first.
- `binary`: pass/fail metric on a 0-1 scale: the baseline's pass chance per case Beta(2, 2),
  the candidate's that plus N(0, 0.15) clipped. Truth 0 by symmetry.
- `ties`: a 1-5 judge that mostly gives 4: each trial 4 ± 1 with the case's chances of +1
  and of −1 each uniform on [0, 0.2] (both arms drawn alike). Truth 0.

The power variant of each shape (`symmetric`, `bimodal`, `clusters`, `binary`, `ties`,
`uneven`, `catastrophe`) moves the candidate up by about +0.3 (exactly for `catastrophe`
and `ties`; where rounding or the scale's ends take some of it, the truth used for coverage
is measured once on 200,000 cases), and reports power (the share of PASS) and,
sequentially, calls to a verdict: the share of the fixed design's calls made before the run
stopped (median, and its Monte-Carlo standard error by bootstrap).

Columns: false PASS (null variant), power (+0.3 variant), coverage (the weighted score's 95%
interval holds the truth, fixed design, null variant, over the simulations that give an
interval), calls (sequential, +0.3 variant), each with its Monte-Carlo standard error.

    PYTHONPATH=src python bench/gate_shapes.py [--sims 100] [--shapes symmetric,clusters]
        [--sizes 10,50,200] [--designs fixed,sequential] [--seed 11]

Prints a table, then a JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from assay.core.records import Case
from assay.core.suite import GateSection
from assay.verdict.checks import Sequential
from assay.verdict.clusters import unit_ends
from assay.verdict.config import EvalConfig
from assay.verdict.coverage import protected
from assay.verdict.looks import look_ends, look_order, look_size
from assay.verdict.pipeline import Evaluation, Inputs, evaluate
from assay.verdict.rows import ScoredTrial
from assay.verdict.sequential import METHOD, look_level, settled

METRIC = "quality"
LEVEL = 0.95
TRIALS = 3
CLUSTER = 10
CONFIG = EvalConfig(weights={METRIC: 1.0}, gate=GateSection(guard={}))
BINARY = EvalConfig(weights={METRIC: 1.0}, gate=GateSection(guard={}), scale=(0.0, 1.0))


@dataclass(slots=True)
class Suite:
    """One simulated suite: per arm, per case, its trials' scores; the cases; the truth."""

    baseline: list[np.ndarray]
    candidate: list[np.ndarray]
    cases: list[Case]
    truth: float | None
    """The true difference when it is exact, else None (`truth_of` measures it)."""
    config: EvalConfig = CONFIG
    planned: int | None = None


Maker = Callable[[np.random.Generator, int, bool], Suite]


def _cases(n: int, risk: Sequence[str] | None = None, cluster: int | None = None) -> list[Case]:
    return [
        Case.model_construct(
            id=f"c{i}",
            category="general",
            prompt="p",
            risk=risk[i] if risk is not None else "medium",
            criteria=["ok"],
            cluster=f"k{i // cluster}" if cluster else None,
        )
        for i in range(n)
    ]


def _split(table: np.ndarray) -> list[np.ndarray]:
    """cases × trials → per case its trials' scores."""
    return list(table)


def _rounded(rng: np.random.Generator, n: int, effect: float, trials: int = TRIALS) -> tuple:
    latent = rng.uniform(2.0, 4.0, size=(n, 1))
    shift = rng.normal(effect, 1.0, size=(n, 1))
    base = np.clip(np.rint(latent + rng.normal(0, 0.8, size=(n, trials))), 1, 5)
    cand = np.clip(np.rint(latent + shift + rng.normal(0, 0.8, size=(n, trials))), 1, 5)
    return base, cand


_TRUTHS: dict[tuple[str, bool], float] = {}
POPULATION = 200_000


def truth_of(shape: str, power: bool, suite: Suite) -> float:
    """The suite's true difference: exact when the shape knows it, else measured once on a
    population of 200,000 cases (the mean over cases of each case's mean delta; Monte-Carlo
    error about 0.002)."""
    if suite.truth is not None:
        return suite.truth
    if (shape, power) not in _TRUTHS:
        big = SHAPES[shape](np.random.default_rng(99), POPULATION, power)
        deltas = [c.mean() - b.mean() for b, c in zip(big.baseline, big.candidate, strict=True)]
        _TRUTHS[shape, power] = float(np.mean(deltas))
    return _TRUTHS[shape, power]


def symmetric(rng: np.random.Generator, n: int, power: bool) -> Suite:
    effect = 0.3 if power else 0.0
    base, cand = _rounded(rng, n, effect)
    return Suite(_split(base), _split(cand), _cases(n), None if power else 0.0)


def uneven(rng: np.random.Generator, n: int, power: bool) -> Suite:
    effect = 0.3 if power else 0.0
    base, cand = _rounded(rng, n, effect, 5)
    keep_b = rng.integers(1, 6, size=n)
    keep_c = rng.integers(1, 6, size=n)
    return Suite(
        [base[i, : keep_b[i]] for i in range(n)],
        [cand[i, : keep_c[i]] for i in range(n)],
        _cases(n),
        None if power else 0.0,
        planned=1,
    )


def _catastrophe(gain: float, truth: float) -> Maker:
    def make(rng: np.random.Generator, n: int, power: bool) -> Suite:
        g = gain + (0.3 / 0.95 if power else 0.0)
        quality = rng.uniform(2.5, 4.2, size=(n, 1))
        base = quality + rng.uniform(-0.3, 0.3, size=(n, TRIALS))
        cand = quality + g + rng.uniform(-0.3, 0.3, size=(n, TRIALS))
        broken = rng.random(n) < 0.05
        cand[broken] = 1.0
        return Suite(_split(base), _split(cand), _cases(n), truth + (0.3 if power else 0.0))

    return make


def bimodal(rng: np.random.Generator, n: int, power: bool) -> Suite:
    p = rng.beta(0.5, 0.5, size=n)
    q = np.clip(p + rng.normal(0, 0.3, size=n), 0, 1)
    if power:  # about +0.3 on the scale: a 0.08 better chance of a 5, where there is room
        q = np.minimum(q + 0.08, 1.0)
    base = 1 + 4 * (rng.random((n, TRIALS)) < p[:, None])
    cand = 1 + 4 * (rng.random((n, TRIALS)) < q[:, None])
    truth = None if power else 0.0
    return Suite(_split(base.astype(float)), _split(cand.astype(float)), _cases(n), truth)


def clusters(rng: np.random.Generator, n: int, power: bool, declared: bool = True) -> Suite:
    k = math.ceil(n / CLUSTER)
    group = np.arange(n) // CLUSTER
    level = 3.0 + rng.normal(0, 0.3, size=k)[group] + rng.normal(0, 0.3, size=n)
    effect = (0.3 if power else 0.0) + rng.normal(0, math.sqrt(0.18), size=k)[group]
    effect = effect + rng.normal(0, math.sqrt(0.12), size=n)
    base = np.clip(level[:, None] + rng.normal(0, 0.3, size=(n, TRIALS)), 1, 5)
    cand = np.clip((level + effect)[:, None] + rng.normal(0, 0.3, size=(n, TRIALS)), 1, 5)
    cases = _cases(n, cluster=CLUSTER if declared else None)
    return Suite(_split(base), _split(cand), cases, None if power else 0.0)


def undeclared(rng: np.random.Generator, n: int, power: bool) -> Suite:
    return clusters(rng, n, power, declared=False)


def strata(rng: np.random.Generator, n: int, power: bool) -> Suite:
    high = rng.random(n) < 0.1
    gain = np.where(high, 0.3, -0.05) + (0.3 if power else 0.0)
    quality = rng.uniform(2.5, 4.0, size=(n, 1))
    base = quality + rng.uniform(-0.3, 0.3, size=(n, TRIALS))
    cand = quality + gain[:, None] + rng.uniform(-0.3, 0.3, size=(n, TRIALS))
    risk = ["high" if h else "medium" for h in high]
    truth = 0.1 * 0.3 - 0.9 * 0.05 + (0.3 if power else 0.0)
    return Suite(_split(base), _split(cand), _cases(n, risk), truth)


def binary(rng: np.random.Generator, n: int, power: bool) -> Suite:
    p = rng.beta(2, 2, size=n)
    q = np.clip(p + rng.normal(0, 0.15, size=n), 0, 1)
    if power:
        q = np.minimum(q + 0.3, 1.0)
    truth = None if power else 0.0
    base = (rng.random((n, TRIALS)) < p[:, None]).astype(float)
    cand = (rng.random((n, TRIALS)) < q[:, None]).astype(float)
    return Suite(_split(base), _split(cand), _cases(n), truth, BINARY)


def ties(rng: np.random.Generator, n: int, power: bool) -> Suite:
    def arm(up_low: float) -> np.ndarray:
        up = rng.uniform(up_low, up_low + 0.2, size=(n, 1))
        down = rng.uniform(0.0, 0.2, size=(n, 1))
        u = rng.random((n, TRIALS))
        return 4.0 + (u < up) - ((u >= up) & (u < up + down))

    base = arm(0.0)
    cand = arm(0.3 if power else 0.0)
    return Suite(_split(base), _split(cand), _cases(n), 0.3 if power else 0.0)


SHAPES: dict[str, Maker] = {
    "symmetric": symmetric,
    "catastrophe": _catastrophe(0.1175 / 0.95, 0.0),
    "catastrophe-0.08": _catastrophe(0.0375 / 0.95, -0.08),
    "bimodal": bimodal,
    "clusters": clusters,
    "clusters-undeclared": undeclared,
    "uneven": uneven,
    "strata": strata,
    "binary": binary,
    "ties": ties,
}
POWER = {"symmetric", "catastrophe", "bimodal", "clusters", "uneven", "binary", "ties"}
"""Shapes with a +0.3 variant (power, calls); `strata` and the undeclared clusters have none."""


def rows_of(suite: Suite) -> dict[str, list[ScoredTrial]]:
    """Per case, its score rows of both arms."""
    rows: dict[str, list[ScoredTrial]] = {}
    for arm, tables in (("baseline", suite.baseline), ("candidate", suite.candidate)):
        for case, scores in zip(suite.cases, tables, strict=True):
            rows.setdefault(case.id, []).extend(
                ScoredTrial(case.id, t + 1, arm, {METRIC: float(v)}) for t, v in enumerate(scores)
            )
    return rows


@dataclass(slots=True)
class Outcome:
    verdict: str
    covered: bool | None = None
    share: float = 1.0
    """Calls made over the fixed design's (sequential)."""


def fixed(suite: Suite, truth: float) -> Outcome:
    rows = [r for case in rows_of(suite).values() for r in case]
    inputs = Inputs(scores=rows, cases={c.id: c for c in suite.cases}, planned_trials=suite.planned)
    result = evaluate(inputs, suite.config)
    interval = result.comparisons["candidate"].get("weighted_score")
    covered = None
    if interval is not None and math.isfinite(interval.ci_low):
        covered = interval.ci_low - 1e-9 <= truth <= interval.ci_high + 1e-9
    return Outcome(result.verdict, covered)


def sequential(suite: Suite, seed: int) -> Outcome:
    """`api.sequential`'s looks on this suite: every condition on the cases looked at, the
    candidate alone on the protected cases from the first look, and before an interim PASS
    on every case (its per-case checks), then the verdict again."""
    by_case = rows_of(suite)
    index = {c.id: c for c in suite.cases}
    order = look_order(suite.cases, seed)
    ends = unit_ends(order, look_ends(len(order), look_size(len(order), None)))
    first = [c.id for c in order if protected(c)]
    total = sum(len(rows) for rows in by_case.values())
    verdict = "INCONCLUSIVE"
    made = total
    for look, end in enumerate(ends, 1):
        ids = [c.id for c in order[:end]]
        last = look == len(ends)
        result, made = _look(suite, by_case, index, ids, [] if last else first, look, ends)
        verdict = result.verdict
        if last:
            break
        done = verdict in ("PASS", "FAIL") and settled(result.checks)
        if done and verdict == "PASS" and end < len(order):
            rest = [c.id for c in order[end:]]
            result, made = _look(suite, by_case, index, ids, rest, look, ends)
            verdict = result.verdict
            done = verdict in ("PASS", "FAIL") and settled(result.checks)
        if done:
            break
    return Outcome(verdict, share=made / total)


def _look(
    suite: Suite,
    by_case: dict[str, list[ScoredTrial]],
    index: dict[str, Case],
    ids: list[str],
    alone: list[str],
    look: int,
    ends: list[int],
) -> tuple[Evaluation, int]:
    """One look's evaluation (`alone`: cases with the candidate's rows only) and the calls
    made so far."""
    looked = set(ids)
    lone = [i for i in alone if i not in looked]
    rows = [r for i in ids for r in by_case[i]]
    rows += [r for i in lone for r in by_case[i] if r.condition == "candidate"]
    made = len(rows)
    shares = [e / len(index) for e in ends[:look]]
    stop = Sequential(
        method=METHOD.name,
        guarantee=METHOD.guarantee(LEVEL),
        look=look,
        looks=len(ends),
        cases=len(ids),
        total_cases=len(index),
        level=look_level(LEVEL, shares),
        stopped_early=False,
        calls_made=made,
        calls_not_made=sum(len(r) for r in by_case.values()) - made,
        checked=len(ids) + len(lone),
        case_ids=ids,
        checked_ids=lone,
    )
    inputs = Inputs(scores=rows, cases=index, planned_trials=suite.planned, sequential=stop)
    return evaluate(inputs, suite.config), made


@dataclass(slots=True)
class Cell:
    shape: str
    size: int
    design: str
    null: list[Outcome] = field(default_factory=list)
    power: list[Outcome] = field(default_factory=list)

    def figures(self, rng: np.random.Generator) -> dict[str, float | int | str | None]:
        out: dict[str, float | int | str | None] = {
            "shape": self.shape,
            "size": self.size,
            "design": self.design,
            "sims": len(self.null),
        }
        out.update(_rate("false_pass", [o.verdict == "PASS" for o in self.null]))
        out.update(_rate("power", [o.verdict == "PASS" for o in self.power]))
        covered = [o.covered for o in self.null if o.covered is not None]
        out.update(_rate("coverage", covered if self.design == "fixed" else []))
        shares = np.array([o.share for o in self.power])
        if self.design == "sequential" and shares.size:
            boot = [np.median(rng.choice(shares, shares.size)) for _ in range(200)]
            out["calls"] = float(np.median(shares))
            out["calls_se"] = float(np.std(boot))
        else:
            out["calls"] = out["calls_se"] = None
        return out


def _rate(name: str, hits: Sequence[bool]) -> dict[str, float | None]:
    if not hits:
        return {name: None, f"{name}_se": None}
    p = sum(hits) / len(hits)
    return {name: p, f"{name}_se": math.sqrt(p * (1 - p) / len(hits))}


def run_cell(
    shape: str, size: int, design: str, sims: int, seed: int, *, power: bool = True
) -> Cell:
    """`sims` suites of `shape` and `size` decided by `design`, the +0.3 variant too when the
    shape has one (and `power`)."""
    maker = SHAPES[shape]
    cell = Cell(shape, size, design)
    salt = sum(map(ord, shape))
    for variant, outcomes in (("null", cell.null), ("power", cell.power)):
        if variant == "power" and (shape not in POWER or not power):
            continue
        rng = np.random.default_rng([seed, salt, size, variant == "power"])
        for sim in range(sims):
            better = variant == "power"
            suite = maker(rng, size, better)
            outcome = (
                fixed(suite, truth_of(shape, better, suite))
                if design == "fixed"
                else sequential(suite, seed + sim)
            )
            outcomes.append(outcome)
    return cell


def _pct(value: float | int | str | None, se: float | int | str | None) -> str:
    if value is None or isinstance(value, str) or se is None or isinstance(se, str):
        return f"{'–':>14}"
    return f"{100 * value:6.1f}% ({100 * se:4.1f})"


def main(argv: Sequence[str] | None = None) -> list[dict[str, float | int | str | None]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sims", type=int, default=100, help="simulated suites per cell")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes")
    parser.add_argument("--sizes", default="10,50,200", help="comma-separated case counts")
    parser.add_argument("--designs", default="fixed,sequential")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        parser.error(f"unknown shape(s) {', '.join(unknown)} (known: {', '.join(SHAPES)})")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    designs = [d for d in args.designs.split(",") if d]
    started = time.perf_counter()
    print(
        f"{args.sims} simulated suites per cell and variant; level 0.95 (nominal false PASS"
        " 2.5%); Monte-Carlo standard errors in brackets"
    )
    print(
        f"{'shape':<20} {'cases':>5} {'design':<10} {'false PASS':>14} {'power +0.3':>14}"
        f" {'coverage':>14} {'calls (median)':>14}"
    )
    rng = np.random.default_rng(args.seed)
    table = []
    for shape in shapes:
        for size in sizes:
            for design in designs:
                cell = run_cell(shape, size, design, args.sims, args.seed)
                figures = cell.figures(rng)
                table.append(figures)
                print(
                    f"{shape:<20} {size:>5} {design:<10}"
                    f" {_pct(figures['false_pass'], figures['false_pass_se'])}"
                    f" {_pct(figures['power'], figures['power_se'])}"
                    f" {_pct(figures['coverage'], figures['coverage_se'])}"
                    f" {_pct(figures['calls'], figures['calls_se'])}",
                    flush=True,
                )
    seconds = round(time.perf_counter() - started, 1)
    print(json.dumps({"sims": args.sims, "rows": table, "seconds": seconds}))
    return table


if __name__ == "__main__":
    main(sys.argv[1:])
