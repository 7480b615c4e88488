"""How often the stats gate's interval checks pass, on data shapes the t interval got wrong.

Each simulated suite is n independent cases, each with one per-case value on a known scale
(what `verdict.interval` takes: a case's mean delta against baseline, or a case's mean for a
corpus bound). The shapes (`SHAPES`), each at a true mean `effect` exactly:

- `catastrophe`: 5% of cases broken at the 1-5 scale's floor (delta −3.5), the rest a little
  better (normal, mean +0.184 + effect/0.95, sd 0.3): true delta `effect`;
- `bimodal`: 1-5 scores of 1 or 5 in both arms (delta −4, 0 or +4), the candidate's 5s more
  likely by effect/4;
- `ties`: a ties-heavy 1-5 judge: 60% of cases tie, the rest ±1 (effect/2 more +1s);
- `binary`: a pass/fail metric (delta −1, 0, +1 on [−1, 1]): 5% of cases lose a pass, 5% +
  effect gain one;
- `skewed`: rare large losses: 4·(0.1 − B), B ~ Beta(0.5, 4.5), plus effect;
- `symmetric`: normal(effect, 1) clipped to ±4.

`--gate`: the superiority check (`gate.superiority` on `compare.intervals`) at effect 0
(false PASS: nominal 2.5% one-sided) and at +0.3 (power), fixed and sequential (looks of 10%
of the cases at `sequential.look_level`, stopping at the first PASS or a settled FAIL: the
alpha-spending design), and with `--cs` also the anytime-valid design (one betting confidence
sequence in the looks' order, bets sized for all the cases, every look at the fixed level;
needs `interval.lower_bound`). Calls: the median share of the cases looked at when the run
stops, at +0.3.

`--corpus`: a corpus `min` bound at the true mean of case values (false PASS, nominal 2.5%):
pass rates (3 trials of a 0.9 pass rate: values 0, 1/3, 2/3, 1), a bimodal 1-5 metric (1 or 5,
mean 4.2), a skewed share (Beta(0.5, 4.5)), at each size.

`--margins M`: a guarded metric's non-inferiority check at margin M (0: the high-risk tier's
default) on per-case deltas of a 1-5 metric: every case equal, one case worse by 1, a
ties-heavy judge with no true difference, rare regressions (2.5% of cases at −2, true −0.05),
a ties-heavy regression (true −0.1), and improvements of +0.3: how often it passes.

Monte-Carlo standard errors in brackets. Prints a table, then a JSON object as the last line.

    PYTHONPATH=src python bench/interval_shapes.py --gate [--sims 2000] [--sizes 5,10,20,50]
    PYTHONPATH=src python bench/interval_shapes.py --corpus [--sims 4000]
    PYTHONPATH=src python bench/interval_shapes.py --margins 0 [--sims 2000]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable

import numpy as np

from assay.verdict.compare import intervals
from assay.verdict.corpus import corpus_check, figure_of
from assay.verdict.gate import superiority
from assay.verdict.interval import LEVEL
from assay.verdict.sequential import look_level, settled

Shape = Callable[[np.random.Generator, int, float], np.ndarray]


def catastrophe(rng: np.random.Generator, n: int, effect: float) -> np.ndarray:
    broken = rng.random(n) < 0.05
    rest = rng.normal(3.5 * 0.05 / 0.95 + effect / 0.95, 0.3, n)
    return np.where(broken, -3.5, rest)


def bimodal(rng: np.random.Generator, n: int, effect: float) -> np.ndarray:
    base = np.where(rng.random(n) < 0.5, 5.0, 1.0)
    cand = np.where(rng.random(n) < 0.5 + effect / 4, 5.0, 1.0)
    return cand - base


def ties(rng: np.random.Generator, n: int, effect: float) -> np.ndarray:
    u = rng.random(n)
    up = 0.2 + effect / 2
    return np.where(u < up, 1.0, np.where(u < 0.4, -1.0, 0.0))


def binary(rng: np.random.Generator, n: int, effect: float) -> np.ndarray:
    u = rng.random(n)
    return np.where(u < 0.05, -1.0, np.where(u < 0.10 + effect, 1.0, 0.0))


def skewed(rng: np.random.Generator, n: int, effect: float) -> np.ndarray:
    return 4.0 * (0.1 - rng.beta(0.5, 4.5, n)) + effect


def symmetric(rng: np.random.Generator, n: int, effect: float) -> np.ndarray:
    return np.clip(rng.normal(effect, 1.0, n), -4.0, 4.0)


SHAPES: dict[str, tuple[Shape, float]] = {
    "catastrophe": (catastrophe, 4.0),
    "bimodal": (bimodal, 4.0),
    "ties": (ties, 4.0),
    "binary": (binary, 1.0),
    "skewed": (skewed, 4.0),
    "symmetric": (symmetric, 4.0),
}


def passes(values: np.ndarray, span: float, level: float) -> tuple[bool, bool]:
    """(PASS, settled) of the superiority check on these per-case deltas at this level."""
    interval = intervals(values[:, None], ["weighted_score"], level=level, spans=np.array([span]))
    check = superiority(interval["weighted_score"], level)
    return check.status == "pass", settled([check])


def fixed(values: np.ndarray, span: float) -> bool:
    return passes(values, span, LEVEL)[0]


def sequential(values: np.ndarray, span: float) -> tuple[bool, float]:
    """The alpha-spending design: (PASS, share of cases looked at)."""
    n = len(values)
    size = max(5, math.ceil(0.1 * n))
    ends = [*range(size, n, size), n]
    for k, end in enumerate(ends):
        last = end == n
        level = LEVEL if last else look_level(LEVEL, [e / n for e in ends[: k + 1]])
        ok, done = passes(values[:end], span, level)
        if last or done:
            return ok, end / n
    raise AssertionError


def confidence_sequence(values: np.ndarray, span: float) -> tuple[bool, float]:
    """The anytime-valid design: one betting capital process in the looks' order, bets
    sized for all n cases, a PASS at the first look whose lower bound is above 0."""
    from assay.verdict.interval import lower_bound

    n = len(values)
    size = max(5, math.ceil(0.1 * n))
    ends = [*range(size, n, size), n]
    x = (values + span) / (2 * span)
    side = (1 - LEVEL) / 2
    for end in ends:
        low = -span + 2 * span * lower_bound(x[:end], side, plan=n, orders=0)
        high = span - 2 * span * lower_bound(1 - x[:end], side, plan=n, orders=0)
        if low > 1e-9 and end >= 5:
            return True, end / n
        if high < 0:
            return False, end / n
    return False, 1.0


def rate(hits: int, sims: int) -> tuple[float, float]:
    p = hits / sims
    return round(100 * p, 2), round(100 * math.sqrt(max(p * (1 - p), 1e-12) / sims), 2)


def gate(sizes: list[int], sims: int, seed: int, cs: bool) -> dict[str, object]:
    results: dict[str, object] = {}
    designs: dict[str, Callable[[np.ndarray, float], tuple[bool, float]]] = {
        "fixed": lambda v, s: (fixed(v, s), 1.0),
        "sequential": sequential,
    }
    if cs:
        designs["cs"] = confidence_sequence
    for name, (shape, span) in SHAPES.items():
        for n in sizes:
            rng = np.random.default_rng([seed, n, len(name)])
            row: dict[str, object] = {}
            for effect in (0.0, 0.3):
                data = [shape(rng, n, effect) for _ in range(sims)]
                for design, run in designs.items():
                    outcomes = [run(v, span) for v in data]
                    hit = sum(ok for ok, _ in outcomes)
                    key = "false_pass" if effect == 0.0 else "power"
                    row[f"{design}_{key}"] = rate(hit, sims)
                    if effect > 0 and design != "fixed":
                        row[f"{design}_calls"] = round(
                            float(np.median([c for _, c in outcomes])), 3
                        )
            results[f"{name}:{n}"] = row
            print(name, n, json.dumps(row), flush=True)
    return results


CORPUS: dict[
    str, tuple[Callable[[np.random.Generator, int], np.ndarray], float, tuple[float, float]]
] = {
    "pass-rate": (lambda rng, n: rng.binomial(3, 0.9, n) / 3, 0.9, (0.0, 1.0)),
    "bimodal": (lambda rng, n: np.where(rng.random(n) < 0.8, 5.0, 1.0), 4.2, (1.0, 5.0)),
    "skewed-share": (lambda rng, n: rng.beta(0.5, 4.5, n), 0.1, (0.0, 1.0)),
}


def corpus(sizes: list[int], sims: int, seed: int) -> dict[str, object]:
    results: dict[str, object] = {}
    for name, (draw, bound, limits) in CORPUS.items():
        for n in sizes:
            rng = np.random.default_rng([seed, n, len(name)])
            hit = 0
            for _ in range(sims):
                figure = figure_of(
                    draw(rng, n).tolist(), "m", "scorer:x", "prod", limits, level=LEVEL
                )
                hit += corpus_check(figure, "min", bound, "interval", LEVEL).status == "pass"
            results[f"{name}:{n}"] = {"false_pass": rate(hit, sims)}
            print(name, n, results[f"{name}:{n}"], flush=True)
    return results


MARGIN_CASES: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "equal": lambda rng, n: np.zeros(n),
    "one-worse": lambda rng, n: np.r_[np.zeros(n - 1), -1.0],
    "ties-null": lambda rng, n: ties(rng, n, 0.0),
    "rare-regression": lambda rng, n: np.where(rng.random(n) < 0.025, -2.0, 0.0),
    "regression": lambda rng, n: ties(rng, n, -0.1),
    "ties+0.3": lambda rng, n: ties(rng, n, 0.3),
    "symmetric+0.3": lambda rng, n: symmetric(rng, n, 0.3),
}


def margins(sizes: list[int], sims: int, seed: int, margin: float) -> dict[str, object]:
    """A guarded metric's non-inferiority check (`gate.non_inferiority`) at `margin` on a
    1-5 metric's per-case deltas: how often it passes."""
    from assay.verdict.gate import non_inferiority

    results: dict[str, object] = {}
    for name, draw in MARGIN_CASES.items():
        for n in sizes:
            rng = np.random.default_rng([seed, n, len(name)])
            hit = 0
            for _ in range(sims):
                deltas = draw(rng, n)[:, None]
                interval = intervals(deltas, ["safety"], spans=np.array([4.0]))["safety"]
                hit += non_inferiority("safety", interval, margin, LEVEL).status == "pass"
            results[f"{name}:{n}"] = {"pass": rate(hit, sims)}
            print(name, n, results[f"{name}:{n}"], flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gate", action="store_true")
    parser.add_argument("--corpus", action="store_true")
    parser.add_argument("--cs", action="store_true", help="also the confidence-sequence design")
    parser.add_argument(
        "--margins", type=float, default=None, help="non-inferiority at this margin"
    )
    parser.add_argument("--sims", type=int, default=2000)
    parser.add_argument("--sizes", default="5,10,20,50,100,200,1000")
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    out: dict[str, object] = {"sims": args.sims}
    if args.gate:
        out["gate"] = gate(sizes, args.sims, args.seed, args.cs)
    if args.corpus:
        out["corpus"] = corpus(sizes, args.sims, args.seed)
    if args.margins is not None:
        out["margins"] = margins(sizes, args.sims, args.seed, args.margins)
    out["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
