"""Win rates against a baseline: raw (ties half) and AlpacaEval 2's length-controlled form.

The length-controlled win rate (Dubois et al. 2024, AlpacaEval's `length_controlled_v1`) fits,
per model, a logistic GLM of P(model beats baseline) on

    θ_ng + θ_len·tanh(std_delta_len) + φ·difficulty(instruction)

where std_delta_len = (len(baseline) − len(model)) / sd(len(baseline) − len(model)) (per model,
sample sd, not centred), with soft labels (each row counted as a win with weight y and as a loss
with weight 1 − y). It predicts with the length term at zero: LC = 100·mean_i σ(θ_ng + φ·d_i).

Instruction difficulty d_i is estimated jointly from every model in the input: one logistic GLM
with a bias and a length slope per model and an effect per instruction, under an L2 penalty
(scikit-learn C = 1; negligible for the per-model terms, it keeps the effect of an instruction
that every model wins, or loses, finite). Like upstream without its gamed-baseline
regularisation, the fit cannot separate quality from length for a model that is longer (or
shorter) than the baseline on nearly every instruction. The public AlpacaEval fit also
regularises towards two "gamed" baselines whose annotations are not public, so its figures
differ slightly from this one.

Difficulty needs other models judged on the same instructions: a model with fewer than half
of its cases shared with another model of known lengths gets no LC figure (`NEEDS_SHARED`).
Fitted alone, without the difficulty term, the length slope absorbs the instructions'
difficulty and the prediction at length zero extrapolates: on AlpacaEval 2's annotations,
each model fitted on its own file is 6.65 points off the leaderboard on average and up to 28
(gpt-3.5-turbo-1106: 37.80 against 19.30). With other models in the file
(`bench/lc_models_per_file.py`, the 47 non-gamed models, 120 random files per size) the
figures are on average 1.34 points off with two models per file (median 0.90, 95th
percentile 5.0, up to 11.4: claude-2 beside FuseChat-Llama-3.2-3B, a much stronger and
longer model, whose outcomes then fix the instructions' difficulty), 1.28 with five (up to
13.3), 1.19 with ten (up to 10.7) and 0.92 with all 47 (up to 4.5). Nor is there an LC figure (or a standard error) when every comparison went the same
way: the likelihood has no maximum and any printed rate would be a clamp. Each missing figure
carries its reason in `WinRate.undefined`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.core.records import Comparison
from assay.measure.inputs import TrialKey, comparison_lengths, prob_b_wins

DIFFICULTY_C = 1.0  # inverse L2 strength of the joint difficulty fit
MAX_ITER = 10_000
NEEDS_SHARED = 0.5  # share of a model's cases another model must have been judged on
MAX_LOGIT = 30.0  # a fitted |logit| beyond this is a likelihood without a maximum (σ = 1e-13)


@dataclass
class ModelOutcomes:
    """One model's results against the baseline, column-wise."""

    name: str
    cases: list[str] = field(default_factory=list)
    y: list[float] = field(default_factory=list)  # P(model beats baseline)
    len_model: list[int | None] = field(default_factory=list)
    len_baseline: list[int | None] = field(default_factory=list)


@dataclass
class WinRate:
    """The figures `assay winrate` reports for one model."""

    win_rate: float | None
    standard_error: float | None
    n: int
    n_wins: int
    n_losses: int
    n_draws: int
    avg_length: int | None
    length_controlled_win_rate: float | None = None
    lc_standard_error: float | None = None
    undefined: dict[str, str] = field(default_factory=dict)
    """Why a figure is None: field name → reason (`all 30 comparisons won`)."""


def collect_outcomes(
    comparisons: Sequence[Comparison],
    baseline: str,
    trial_lengths: dict[TrialKey, int] | None = None,
) -> tuple[dict[str, ModelOutcomes], int]:
    """Group the comparisons involving the baseline by the other side; records with the
    baseline as `b` are flipped. Returns the outcomes and how many records were skipped."""
    models: dict[str, ModelOutcomes] = {}
    skipped = 0
    for comparison in comparisons:
        p_b = prob_b_wins(comparison)
        len_a, len_b = comparison_lengths(comparison, trial_lengths)
        if comparison.a == baseline and comparison.b != baseline:
            name, y, len_model, len_base = comparison.b, p_b, len_b, len_a
        elif comparison.b == baseline and comparison.a != baseline:
            name, y, len_model, len_base = comparison.a, 1.0 - p_b, len_a, len_b
        else:
            skipped += 1
            continue
        outcomes = models.setdefault(name, ModelOutcomes(name))
        outcomes.cases.append(comparison.case_id)
        outcomes.y.append(y)
        outcomes.len_model.append(len_model)
        outcomes.len_baseline.append(len_base)
    return models, skipped


def _sem(values: np.ndarray) -> float | None:
    """Standard error of the mean, sample sd (ddof = 1) / √n — AlpacaEval's definition
    (numpy rather than scipy.stats.sem: importing scipy.stats costs a second per call)."""
    if len(values) < 2:
        return None
    return float(np.std(values, ddof=1) / np.sqrt(len(values)))


def one_outcome(y: np.ndarray) -> str | None:
    """Why outcomes have no spread (every comparison won, lost or tied alike), else None."""
    if len(y) < 2 or not np.all(y == y[0]):
        return None
    what = {1.0: "won", 0.0: "lost", 0.5: "tied"}.get(float(y[0]), f"at {float(y[0]):g}")
    return f"all {len(y)} comparisons {what}"


def raw_win_rate(outcomes: ModelOutcomes) -> WinRate:
    """Raw win rate in percent (ties count half) with its standard error and counts; the
    standard error is undefined from one comparison, or when all went the same way (a
    standard error of 0 would claim certainty from a sample without spread)."""
    y = np.asarray(outcomes.y, dtype=float)
    lengths = [n for n in outcomes.len_model if n is not None]
    sem = _sem(y)
    undefined: dict[str, str] = {}
    if sem is None:
        undefined["standard_error"] = f"{len(y)} comparison"
    elif (why := one_outcome(y)) is not None:
        sem = None
        undefined["standard_error"] = why
    return WinRate(
        win_rate=100.0 * float(y.mean()) if len(y) else None,
        standard_error=None if sem is None else 100.0 * sem,
        n=len(y),
        n_wins=int((y > 0.5).sum()),
        n_losses=int((y < 0.5).sum()),
        n_draws=int((y == 0.5).sum()),
        avg_length=int(np.mean(lengths)) if lengths else None,
        undefined=undefined,
    )


def _length_feature(outcomes: ModelOutcomes) -> np.ndarray | None:
    """tanh of the standardised length difference (baseline − model), or None when unknown."""
    if any(n is None for n in outcomes.len_model) or any(n is None for n in outcomes.len_baseline):
        return None
    delta = np.asarray(outcomes.len_baseline, dtype=float) - np.asarray(
        outcomes.len_model, dtype=float
    )
    sd = float(np.std(delta, ddof=1)) if len(delta) > 1 else 0.0
    if not math.isfinite(sd) or sd == 0.0:
        return np.zeros(len(delta))
    return np.asarray(np.tanh(delta / sd), dtype=float)


def _soft_fit(x: Any, y: np.ndarray, c: float | None) -> np.ndarray:
    """Coefficients of a no-intercept logistic GLM with soft labels y ∈ [0, 1]: each row is
    counted as a positive with weight y and as a negative with weight 1 − y."""
    # imported here: the raw win rate never needs scipy or scikit-learn, slow to import
    from scipy import sparse
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    n = x.shape[0]
    stacked = sparse.vstack([x, x]).tocsr() if sparse.issparse(x) else np.vstack([x, x])
    labels = np.concatenate([np.ones(n), np.zeros(n)])
    weights = np.concatenate([y, 1.0 - y])
    keep = weights > 0
    model = LogisticRegression(
        C=np.inf if c is None else c,
        fit_intercept=False,
        solver="lbfgs",
        max_iter=MAX_ITER,
        tol=1e-10,
    )
    if len(np.unique(labels[keep])) < 2:  # every row won (or lost): the MLE is at infinity
        raise ValueError("every comparison went the same way: the fit has no maximum")
    # small problems: one BLAS thread is faster than many contending ones
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        model.fit(stacked[keep], labels[keep], sample_weight=weights[keep])
    return np.asarray(model.coef_[0], dtype=float)


def instruction_difficulty(
    models: dict[str, tuple[np.ndarray, list[str], np.ndarray]],
) -> dict[str, float]:
    """Per-instruction effects from one joint fit: bias and length slope per model, effect per
    instruction. `models` maps name → (length feature, case ids, y)."""
    from scipy import sparse

    names = sorted(models)
    instructions = sorted({case for _, cases, _ in models.values() for case in cases})
    index = {case: i for i, case in enumerate(instructions)}
    n_models = len(names)
    rows, cols, vals, ys = [], [], [], []
    row = 0
    for m, name in enumerate(names):
        feature, cases, y = models[name]
        for k, case in enumerate(cases):
            rows += [row, row, row]
            cols += [m, n_models + m, 2 * n_models + index[case]]
            vals += [1.0, float(feature[k]), 1.0]
            row += 1
        ys.append(y)
    x = sparse.csr_matrix((vals, (rows, cols)), shape=(row, 2 * n_models + len(instructions)))
    coef = _soft_fit(x, np.concatenate(ys), DIFFICULTY_C)
    effects = coef[2 * n_models :]
    return {case: float(effects[i]) for case, i in index.items()}


def _shared(cases: list[str], others: list[set[str]]) -> int:
    """How many of the cases another model was judged on too."""
    return sum(1 for case in set(cases) if any(case in other for other in others))


def length_controlled(
    models: dict[str, ModelOutcomes],
) -> dict[str, tuple[float, float | None] | str]:
    """Per model: its LC win rate and standard error (percent), or why it has none."""
    results: dict[str, tuple[float, float | None] | str] = {}
    usable: dict[str, tuple[np.ndarray, list[str], np.ndarray]] = {}
    for name, outcomes in models.items():
        feature = _length_feature(outcomes)
        y = np.asarray(outcomes.y, dtype=float)
        if feature is None:
            results[name] = "response lengths missing"
        elif len(y) and (np.all(y == 1.0) or np.all(y == 0.0)):
            results[name] = f"{one_outcome(y) or 'every comparison went one way'}: no finite fit"
        else:
            usable[name] = (feature, outcomes.cases, y)
    case_sets = {name: set(cases) for name, (_, cases, _) in usable.items()}
    fitted: dict[str, tuple[np.ndarray, list[str], np.ndarray]] = {}
    for name, entry in usable.items():
        distinct = len(case_sets[name])
        shared = _shared(entry[1], [c for n, c in case_sets.items() if n != name])
        if shared < NEEDS_SHARED * distinct:
            results[name] = (
                f"{shared} of its {distinct} cases judged for another model: instruction"
                " difficulty needs two or more models compared with the baseline on the same cases"
            )
        else:
            fitted[name] = entry
    if not fitted:
        return results
    difficulty = instruction_difficulty(fitted)
    for name, (feature, cases, y) in fitted.items():
        d = np.asarray([difficulty[case] for case in cases])
        x = np.column_stack([np.ones_like(feature), feature, d])
        theta = _soft_fit(x, y, None)
        # predict over the model's instructions, once each, with the length term at zero
        unique = np.asarray([difficulty[case] for case in sorted(set(cases))])
        logits = theta[0] + theta[2] * unique
        if not np.all(np.isfinite(logits)) or np.max(np.abs(logits)) > MAX_LOGIT:
            results[name] = "the outcomes are separated by length or difficulty: no finite fit"
            continue
        p = 1.0 / (1.0 + np.exp(-logits))
        sem = _sem(p)
        results[name] = (100.0 * float(p.mean()), None if sem is None else 100.0 * sem)
    return results


def win_rates(
    comparisons: Sequence[Comparison],
    baseline: str,
    *,
    trial_lengths: dict[TrialKey, int] | None = None,
    length_controlled_rates: bool = False,
) -> tuple[dict[str, WinRate], int]:
    """Every model compared with the baseline → its WinRate; plus the count of skipped records."""
    models, skipped = collect_outcomes(comparisons, baseline, trial_lengths)
    rates = {name: raw_win_rate(outcomes) for name, outcomes in sorted(models.items())}
    if length_controlled_rates:
        for name, figures in length_controlled(models).items():
            rate = rates[name]
            if isinstance(figures, str):
                rate.undefined["length_controlled_win_rate"] = figures
                rate.undefined["lc_standard_error"] = figures
                continue
            rate.length_controlled_win_rate, rate.lc_standard_error = figures
            if figures[1] is None:
                rate.undefined["lc_standard_error"] = "one case"
    return rates, skipped
