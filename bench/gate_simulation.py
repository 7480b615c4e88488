"""How often each gate passes a candidate that is no better, and how often the stats gate
detects a real +0.3 weighted improvement.

Simulated judge scores: each case has a latent quality per metric; every trial's score is
that quality plus trial noise, rounded to the 1-5 rubric. The candidate shares the cases'
latent quality (paired) and adds to every metric a per-case effect drawn around `effect`
(sd 1.0: a change helps some cases and hurts others), so "no true difference" means the
effects average to zero, not that every case is unchanged. Prints the pass rates, then a
JSON object as the last line.

With `--sweep`, for each case count from 2 to 200 (3 trials each, no true difference): how
often the stats gate passes (must be <= 5% at every count) and how often the weighted
score's 95% interval holds the true delta, 0 (>= 93% from 5 cases up). Below 5 cases the
gate never passes (`verdict.interval.MIN_CASES`); the interval's coverage is still shown.

With `--corpus`, a corpus threshold (`correctness >= 4`, no baseline) on a system whose true
mean score is 3.9 (and one at 4.3, which should pass), at 1, 5, 10, 50 and 200 cases (3
trials each): how often it passes decided on the estimate (the mean alone, `decide =
"estimate"`) and on the interval over cases (the default), and how often the interval
decision FAILs or is INCONCLUSIVE. Each case has a latent quality (sd 0.7 around a centre
set so the expected score is the true mean); every trial's score is that plus trial noise
(sd 0.8), rounded to the 1-5 scale.

    PYTHONPATH=src python bench/gate_simulation.py [--sims 200] [--sweep [--sweep-sims 1000]]
    PYTHONPATH=src python bench/gate_simulation.py --corpus [--corpus-sims 2000]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from assay.core.rubric import DEFAULT_WEIGHTS, Rubric
from assay.core.suite import GateSection, Threshold
from assay.verdict.analysis import analyse
from assay.verdict.corpus import corpus_checks
from assay.verdict.rows import ScoredTrial

METRICS = list(DEFAULT_WEIGHTS)


def simulate(
    rng: np.random.Generator, cases: int, effect: float, trials: int = 3
) -> list[ScoredTrial]:
    latent = rng.uniform(2.0, 4.0, size=(cases, 1)) + rng.normal(0, 0.5, size=(cases, len(METRICS)))
    per_case = rng.normal(effect, 1.0, size=(cases, 1)) + rng.normal(
        0, 0.3, size=(cases, len(METRICS))
    )
    rows = []
    for condition, shift in (("baseline", 0.0), ("candidate", per_case)):
        noise = rng.normal(0, 0.8, size=(trials, cases, len(METRICS)))
        scores = np.clip(np.rint(latent[None] + shift + noise), 1, 5)
        for t in range(trials):
            for c in range(cases):
                metrics = dict(zip(METRICS, scores[t, c].tolist(), strict=True))
                rows.append(ScoredTrial(f"c{c}", t + 1, condition, metrics))
    return rows


def pass_rate(mode: str, cases: int, effect: float, sims: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    rubric = Rubric.from_weights()
    config = GateSection(mode=mode)  # type: ignore[arg-type]
    passed = 0
    for _ in range(sims):
        analysis = analyse(simulate(rng, cases, effect), rubric, config)
        passed += analysis.gate.passed
    return passed / sims


SWEEP = (2, 3, 4, 5, 7, 10, 20, 50, 100, 200)


def sweep(sims: int, seed: int = 5) -> dict[str, dict[str, float]]:
    """Per case count: false-PASS rate and the weighted score interval's coverage of 0."""
    rubric = Rubric.from_weights()
    config = GateSection()
    out = {}
    for cases in SWEEP:
        rng = np.random.default_rng([seed, cases])
        passed = covered = 0
        for _ in range(sims):
            analysis = analyse(simulate(rng, cases, 0.0), rubric, config)
            passed += analysis.gate.passed
            weighted = analysis.paired["candidate"].intervals["weighted_score"]
            covered += weighted.ci_low <= 0.0 <= weighted.ci_high
        out[str(cases)] = {"false_pass": passed / sims, "coverage": covered / sims}
    return out


CORPUS_COUNTS = (1, 5, 10, 50, 200)
CORPUS_BOUND = {"correctness": Threshold(min=4.0)}


def corpus_scores(
    rng: np.random.Generator, cases: int, centre: float, trials: int = 3
) -> np.ndarray:
    """trials × cases judge scores: a latent quality per case plus trial noise, on 1-5."""
    latent = centre + rng.normal(0, 0.7, size=cases)
    return np.clip(np.rint(latent[None] + rng.normal(0, 0.8, size=(trials, cases))), 1, 5)


def centre_for(mean: float) -> float:
    """The latent centre whose expected score is `mean` (bisection on 2,000,000 draws)."""
    rng = np.random.default_rng(0)
    latent = rng.normal(0, 0.7, size=2_000_000) + rng.normal(0, 0.8, size=2_000_000)
    low, high = 1.0, 6.0
    for _ in range(50):
        centre = (low + high) / 2
        if np.clip(np.rint(centre + latent), 1, 5).mean() < mean:
            low = centre
        else:
            high = centre
    return (low + high) / 2


def corpus_rates(true_mean: float, sims: int, seed: int = 11) -> dict[str, dict[str, float]]:
    """Per case count: the share of simulated runs whose corpus bound passes decided on the
    estimate, and passes / fails / is inconclusive decided on the interval."""
    centre = centre_for(true_mean)
    out = {}
    for cases in CORPUS_COUNTS:
        rng = np.random.default_rng([seed, cases])
        counts = {"estimate_pass": 0, "interval_pass": 0, "interval_fail": 0, "inconclusive": 0}
        for _ in range(sims):
            scores = corpus_scores(rng, cases, centre)
            rows = [
                ScoredTrial(f"c{c}", t + 1, "prod", {"correctness": float(scores[t, c])})
                for t in range(scores.shape[0])
                for c in range(cases)
            ]
            [estimate] = corpus_checks([], CORPUS_BOUND, "prod", rows, decide="estimate")
            [interval] = corpus_checks([], CORPUS_BOUND, "prod", rows)
            counts["estimate_pass"] += estimate.status == "pass"
            counts["interval_pass"] += interval.status == "pass"
            counts["interval_fail"] += interval.status == "fail"
            counts["inconclusive"] += interval.status == "inconclusive"
        out[str(cases)] = {k: v / sims for k, v in counts.items()}
    return out


def corpus_report(sims: int) -> None:
    started = time.perf_counter()
    figures: dict[str, object] = {"corpus_sims": sims, "bound": "correctness >= 4"}
    for true_mean in (3.9, 4.3):
        rates = corpus_rates(true_mean, sims)
        figures[f"true_mean_{true_mean}"] = rates
        print(
            f"true mean {true_mean} against correctness >= 4, 3 trials per case,"
            f" {sims} simulated runs per count:"
        )
        print("  cases  pass (estimate)  pass (interval)  fail (interval)  inconclusive")
        for cases, row in rates.items():
            print(
                f"  {cases:>5}  {row['estimate_pass']:>15.1%}  {row['interval_pass']:>15.1%}"
                f"  {row['interval_fail']:>15.1%}  {row['inconclusive']:>12.1%}"
            )
    figures["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(figures))


def observed_effect(effect: float, seed: int) -> float:
    rows = simulate(np.random.default_rng(seed), 4000, effect)
    rubric = Rubric.from_weights()
    means = {}
    for condition in ("baseline", "candidate"):
        values = [rubric.weighted(r.metrics) for r in rows if r.condition == condition]
        means[condition] = float(np.mean([v for v in values if v is not None]))
    return means["candidate"] - means["baseline"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200, help="simulated runs per figure")
    parser.add_argument("--sweep", action="store_true", help="false PASS and coverage, 2-200")
    parser.add_argument("--sweep-sims", type=int, default=1000, help="simulated runs per count")
    parser.add_argument("--corpus", action="store_true", help="corpus bound: 3.9 vs >= 4")
    parser.add_argument("--corpus-sims", type=int, default=2000, help="simulated runs per count")
    args = parser.parse_args()
    if args.corpus:
        corpus_report(args.corpus_sims)
        return
    if args.sweep:
        started = time.perf_counter()
        figures = sweep(args.sweep_sims)
        print(f"no true difference, 3 trials per case, {args.sweep_sims} simulated runs each:")
        print("  cases  gate passes  95% interval holds 0")
        for cases, row in figures.items():
            print(f"  {cases:>5}  {row['false_pass']:>11.1%}  {row['coverage']:>20.1%}")
        seconds = round(time.perf_counter() - started, 1)
        print(json.dumps({"sweep_sims": args.sweep_sims, "sweep": figures, "seconds": seconds}))
        return
    started = time.perf_counter()
    null_cases = 100
    figures = {
        "sims": args.sims,
        "null_cases": null_cases,
        "null_stats_pass_rate": pass_rate("stats", null_cases, 0.0, args.sims, 1),
        "null_seed_pass_rate": pass_rate("seed", null_cases, 0.0, args.sims, 1),
        "effect": 0.3,
        "observed_weighted_effect": round(observed_effect(0.3, 9), 3),
        "power_50_cases": pass_rate("stats", 50, 0.3, args.sims, 2),
        "power_200_cases": pass_rate("stats", 200, 0.3, args.sims, 3),
    }
    figures["seconds"] = round(time.perf_counter() - started, 1)
    print(f"no true difference, {null_cases} cases x 3 trials, {args.sims} simulated runs:")
    print(f"  stats gate passes {figures['null_stats_pass_rate']:.1%} (must be <= 5%)")
    print(f"  seed rule passes  {figures['null_seed_pass_rate']:.1%} (about half)")
    print(
        f"+0.3 on every metric (observed weighted effect {figures['observed_weighted_effect']:+.3f}):"
    )
    print(f"  stats gate power at  50 cases: {figures['power_50_cases']:.1%}")
    print(f"  stats gate power at 200 cases: {figures['power_200_cases']:.1%}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
