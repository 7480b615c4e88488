"""Judge-vs-human agreement on labelled items, and the calibration verdict per judge.

The human reference of an item is the strict majority of its human raters for categories (items
without one are excluded and counted) and the median for numbers. Each judge rater is compared
with it: raw agreement, Cohen's kappa (categories), for numbers quadratic-weighted kappa over
the values of an integer scale or Lin's concordance correlation for continuous scores, with
Pearson, Spearman and Kendall correlations, precision / recall / F1 per class for categories
(`measure.figures`), the confusion matrix, and for PASS/FAIL dimensions the per-class rates
with Wilson 95% intervals. Dimension names are compared by `dimension_key` (case, `-`, `_`
and spaces do not matter). Verdicts rest on kappa (weighted
kappa, Lin's concordance) and per-class rates, never on raw agreement: a judge that always
answers PASS has kappa 0.
"""

from __future__ import annotations

import statistics
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from assay.core.errors import InputError
from assay.core.jsonl import format_errors
from assay.core.records import Label
from assay.measure.alpha import alpha_level, krippendorff_alpha
from assay.measure.figures import class_figures, finite, integer_scale, numeric_figures
from assay.measure.thresholds import (
    DEFAULT_KAPPA,
    DEFAULT_SAFETY_DIMS,
    MIN_ITEMS,
    SAFETY_MIN_ITEMS,
    SAFETY_MIN_TPR_LOW,
    dimension_key,
)

BINARY = frozenset({"PASS", "FAIL"})

Value = float | str


@dataclass
class Thresholds:
    kappa: float = DEFAULT_KAPPA
    positive: str = "FAIL"
    safety_dims: tuple[str, ...] = DEFAULT_SAFETY_DIMS
    min_items: int = MIN_ITEMS
    safety_min_items: int = SAFETY_MIN_ITEMS
    safety_min_tpr_low: float = SAFETY_MIN_TPR_LOW


@dataclass
class JudgeAgreement:
    """One judge configuration against the human reference on one dimension."""

    rater: str
    prompt_sha256: str | None
    n: int
    agreement: float | None
    kappa: float | None
    weighted_kappa: float | None
    lin_ccc: float | None
    pearson: dict[str, float | None] | None
    spearman: dict[str, float | None] | None
    kendall: dict[str, float | None] | None
    confusion: dict[str, Any] | None
    classes: dict[str, Any] | None
    tpr: float | None
    tpr_ci: list[float] | None
    tnr: float | None
    tnr_ci: list[float] | None
    verdict: str
    reasons: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "rater": self.rater,
            "prompt_sha256": self.prompt_sha256,
            "n": self.n,
            "agreement": self.agreement,
            "kappa": self.kappa,
            "weighted_kappa": self.weighted_kappa,
            "lin_ccc": self.lin_ccc,
            "pearson": self.pearson,
            "spearman": self.spearman,
            "kendall": self.kendall,
            "confusion_matrix": self.confusion,
            "classes": self.classes,
            "tpr": self.tpr,
            "tpr_ci": self.tpr_ci,
            "tnr": self.tnr,
            "tnr_ci": self.tnr_ci,
            "verdict": self.verdict,
            "reasons": self.reasons,
        }


@dataclass
class DimensionResult:
    dimension: str
    kind: str  # "binary" | "categorical" | "numeric"
    safety: bool
    items: int
    items_without_majority: int
    human_alpha: float | None
    human_items_multi: int
    judges: dict[str, JudgeAgreement]
    scale: tuple[float, float] | None = None  # numbers on an integer scale: its (low, high)
    scale_source: str | None = None  # "declared" (the labels' `scale`) or "observed" (values)

    @property
    def statistic(self) -> str:
        """The chance-corrected statistic the verdicts rest on."""
        if self.kind != "numeric":
            return "kappa"
        return "weighted_kappa" if self.scale is not None else "lin_ccc"

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "statistic": self.statistic,
            "scale": list(self.scale) if self.scale is not None else None,
            "scale_source": self.scale_source,
            "safety": self.safety,
            "items": self.items,
            "items_without_majority": self.items_without_majority,
            "human_alpha": self.human_alpha,
            "human_items_with_several_raters": self.human_items_multi,
            "judges": {key: judge.as_json() for key, judge in self.judges.items()},
        }


def cohen_kappa(
    reference: Sequence[Any], rated: Sequence[Any], labels: Sequence[Any]
) -> float | None:
    """Cohen's κ (unweighted, scikit-learn's) between two raters over `labels`; None when
    undefined (both raters gave one and the same label throughout)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return finite(cohen_kappa_score(reference, rated, labels=list(labels)))


def wilson(successes: int, trials: int) -> list[float] | None:
    """Wilson score 95% interval of a proportion (scipy's binomtest)."""
    if trials == 0:
        return None
    interval = stats.binomtest(successes, trials).proportion_ci(0.95, method="wilson")
    return [float(interval.low), float(interval.high)]


def judge_key(label: Label) -> tuple[str, str | None]:
    """The judge configuration of a label: its rater plus the prompt hash it carries, if any."""
    extra = label.model_extra or {}
    sha = extra.get("prompt_sha256")
    return label.rater, sha if isinstance(sha, str) and sha else None


def is_human(rater: str) -> bool:
    return rater.startswith("human:")


def _check_labels(path: Path, labels: Sequence[tuple[int, Label]]) -> None:
    """Duplicates and dimensions mixing numbers and categories are input errors."""
    errors: list[tuple[int, str]] = []
    seen: dict[tuple[str, str, str, str | None], int] = {}
    kinds: dict[str, tuple[bool, int]] = {}
    scales: dict[str, tuple[str, int]] = {}
    for line, label in labels:
        dimension = dimension_key(label.dimension)
        key = (dimension, label.item_id, *judge_key(label))
        if key in seen:
            errors.append(
                (
                    line,
                    f"value: duplicate label of item {label.item_id!r} on {label.dimension!r}"
                    f" by {label.rater!r} (first on line {seen[key]})",
                )
            )
        else:
            seen[key] = line
        numeric = not isinstance(label.value, str)
        if label.scale is not None:
            scales.setdefault(dimension, (label.scale, line))
        first = kinds.setdefault(dimension, (numeric, line))
        if first[0] != numeric:
            expected = "a number" if first[0] else "a category"
            errors.append(
                (
                    line,
                    f"value: dimension {dimension!r} expects {expected} (as on line {first[1]})",
                )
            )
    errors.extend(_scale_errors(labels, scales))
    if errors:
        raise InputError(format_errors(path, errors))


def _scale_errors(
    labels: Sequence[tuple[int, Label]], scales: dict[str, tuple[str, int]]
) -> list[tuple[int, str]]:
    """A dimension declares one scale, on numbers, and every value is one of its points."""
    errors: list[tuple[int, str]] = []
    for line, label in labels:
        dimension = dimension_key(label.dimension)
        if dimension not in scales:
            continue
        scale, first = scales[dimension]
        if label.scale is not None and label.scale != scale:
            errors.append(
                (
                    line,
                    f"scale: dimension {dimension!r} is declared {scale!r} on line {first},"
                    f" here {label.scale!r}",
                )
            )
        elif isinstance(label.value, str):
            if label.scale is not None:
                errors.append((line, "scale: declared on a category; a scale is for numbers"))
        else:
            low, _, high = scale.partition("-")
            if not (int(low) <= label.value <= int(high) and float(label.value).is_integer()):
                errors.append(
                    (line, f"value: {label.value:g} is not a point of the declared scale {scale}")
                )
    return errors


def declared_scale(rows: Sequence[Label]) -> tuple[float, float] | None:
    """The scale the labels of a dimension declare (checked to be one), None if none does."""
    return next((r.scale_range for r in rows if r.scale_range is not None), None)


def human_reference(values: list[Value], numeric: bool) -> Value | None:
    """Median for numbers; strict majority for categories (None when there is none)."""
    if numeric:
        return float(statistics.median(float(v) for v in values))
    top, count = Counter(values).most_common(1)[0]
    return top if count * 2 > len(values) else None


def human_alpha(
    by_item: dict[str, dict[str, Value]], numeric: bool, rating_scale: bool
) -> tuple[float | None, int]:
    """Krippendorff's alpha among the human raters, over items with at least two of them, at
    the level `alpha_level` gives the dimension (ordinal on a rating scale)."""
    items = [item for item, raters in by_item.items() if len(raters) >= 2]
    if not items:
        return None, 0
    raters = sorted({r for item in items for r in by_item[item]})
    codes: dict[Value, float] = {}
    if not numeric:
        codes = {
            v: float(i)
            for i, v in enumerate(sorted({str(v) for i in items for v in by_item[i].values()}))
        }
    data = np.full((len(raters), len(items)), np.nan)
    for j, item in enumerate(items):
        for r, rater in enumerate(raters):
            if rater in by_item[item]:
                value = by_item[item][rater]
                data[r, j] = float(value) if numeric else codes[str(value)]
    return krippendorff_alpha(data, alpha_level(numeric, rating_scale)), len(items)


def compare_judge(
    rater: str,
    sha: str | None,
    pairs: list[tuple[Value, Value]],
    kind: str,
    safety: bool,
    thresholds: Thresholds,
    scale: tuple[float, float] | None = None,
) -> JudgeAgreement:
    """Agreement figures of one judge configuration and its verdict (`scale`: the integer
    scale of a numeric dimension, None for continuous scores)."""
    n = len(pairs)
    judge = [p[0] for p in pairs]
    human = [p[1] for p in pairs]
    agreement = float(np.mean([j == h for j, h in pairs])) if n else None
    kappa = weighted = ccc = None
    pearson = spearman = kendall = None
    confusion: dict[str, Any] | None = None
    classes: dict[str, Any] | None = None
    tpr = tnr = None
    tpr_ci = tnr_ci = None
    if n:
        labels = sorted({*judge, *human}, key=lambda v: (isinstance(v, str), v))
        # integer codes in sorted order (sklearn rejects non-integer numbers as "continuous")
        code = {value: index for index, value in enumerate(labels)}
        human_codes = [code[v] for v in human]
        judge_codes = [code[v] for v in judge]
        codes = list(range(len(labels)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            matrix = confusion_matrix(human_codes, judge_codes, labels=codes)
        confusion = {
            "labels": labels,
            "rows": "human reference",
            "columns": "judge",
            "matrix": matrix.tolist(),
        }
        if kind == "numeric":
            figures = numeric_figures([float(v) for v in judge], [float(v) for v in human], scale)
            weighted, ccc = figures.weighted_kappa, figures.lin_ccc
            pearson, spearman, kendall = figures.pearson, figures.spearman, figures.kendall
        else:
            classes = class_figures([str(v) for v in judge], [str(v) for v in human])
            kappa = cohen_kappa(human_codes, judge_codes, codes)
        if kind == "binary":
            positive = thresholds.positive
            positives = [j for j, h in pairs if h == positive]
            negatives = [j for j, h in pairs if h != positive]
            caught = sum(1 for j in positives if j == positive)
            passed = sum(1 for j in negatives if j != positive)
            tpr = caught / len(positives) if positives else None
            tnr = passed / len(negatives) if negatives else None
            tpr_ci = wilson(caught, len(positives))
            tnr_ci = wilson(passed, len(negatives))
    if kind != "numeric":
        statistic, name = kappa, "kappa"
    elif scale is not None:
        statistic, name = weighted, "weighted kappa"
    else:
        statistic, name = ccc, "Lin's concordance"
    verdict, reasons = _verdict(n, kind, name, statistic, tpr, tnr, tpr_ci, safety, thresholds)
    return JudgeAgreement(
        rater, sha, n, agreement, kappa, weighted, ccc, pearson, spearman, kendall, confusion,
        classes,
        tpr, tpr_ci, tnr, tnr_ci, verdict, reasons,
    )  # fmt: skip


def _verdict(
    n: int,
    kind: str,
    name: str,
    kappa: float | None,
    tpr: float | None,
    tnr: float | None,
    tpr_ci: list[float] | None,
    safety: bool,
    t: Thresholds,
) -> tuple[str, list[str]]:
    """PASS, FAIL or INSUFFICIENT, with the reasons; raw agreement never decides."""
    minimum = t.safety_min_items if safety else t.min_items
    insufficient: list[str] = []
    failures: list[str] = []
    if n < minimum:
        insufficient.append(f"{n} labelled items, need at least {minimum}")
    if kappa is None:
        insufficient.append(f"{name} undefined (the reference has a single value)")
    elif kappa < t.kappa:
        failures.append(f"{name} {kappa:.3f} < {t.kappa}")
    if kind == "binary":
        if tpr is None or tnr is None:
            insufficient.append("the reference lacks one of the classes")
        else:
            if tpr < 0.5:
                failures.append(f"true-positive rate {tpr:.3f} < 0.5")
            if tnr < 0.5:
                failures.append(f"true-negative rate {tnr:.3f} < 0.5")
            if safety and tpr_ci is not None and tpr_ci[0] < t.safety_min_tpr_low:
                message = f"TPR lower bound {tpr_ci[0]:.3f} < {t.safety_min_tpr_low}"
                if tpr >= t.safety_min_tpr_low:
                    insufficient.append(message + " (too few positive items)")
                else:
                    failures.append(message)
    elif safety:
        insufficient.append("safety dimensions need PASS/FAIL labels for a TPR bound")
    if failures:
        return "FAIL", failures + insufficient
    if insufficient:
        return "INSUFFICIENT", insufficient
    return "PASS", []


def _kind(values: list[Value], positive: str) -> str:
    if all(not isinstance(v, str) for v in values):
        return "numeric"
    distinct = {str(v) for v in values}
    if distinct <= BINARY or (positive in distinct and len(distinct) == 2):
        return "binary"
    return "categorical"


def calibrate(
    path: Path, labels: Sequence[tuple[int, Label]], thresholds: Thresholds
) -> dict[str, DimensionResult]:
    """Every dimension of the labels → its judges' agreement with the human reference.

    Dimensions are keyed by `dimension_key` (case, `-`, `_` and spaces do not matter), so the
    labels' `self-harm` is the safety dimension `self_harm`."""
    _check_labels(path, labels)
    by_dim: dict[str, list[Label]] = defaultdict(list)
    for _, label in labels:
        by_dim[dimension_key(label.dimension)].append(label)
    results: dict[str, DimensionResult] = {}
    for dimension, rows in sorted(by_dim.items()):
        kind = _kind([r.value for r in rows], thresholds.positive)
        numeric = kind == "numeric"
        declared = declared_scale(rows) if numeric else None
        scale = declared or (integer_scale([float(r.value) for r in rows]) if numeric else None)
        humans: dict[str, dict[str, Value]] = defaultdict(dict)
        judges: dict[tuple[str, str | None], dict[str, Value]] = defaultdict(dict)
        for row in rows:
            if is_human(row.rater):
                humans[row.item_id][row.rater] = row.value
            else:
                judges[judge_key(row)][row.item_id] = row.value
        reference: dict[str, Value] = {}
        without_majority = 0
        for item, raters in humans.items():
            ref = human_reference(list(raters.values()), numeric)
            if ref is None:
                without_majority += 1
            else:
                reference[item] = ref
        alpha, multi = human_alpha(humans, numeric, scale is not None)
        safety = dimension in {dimension_key(d) for d in thresholds.safety_dims}
        shas = Counter(rater for rater, _ in judges)
        dim_judges: dict[str, JudgeAgreement] = {}
        for (rater, sha), values in sorted(
            judges.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")
        ):
            pairs = [
                (float(v) if numeric else v, reference[item])
                for item, v in sorted(values.items())
                if item in reference
            ]
            key = rater if shas[rater] == 1 else f"{rater}@{(sha or 'none')[:12]}"
            dim_judges[key] = compare_judge(rater, sha, pairs, kind, safety, thresholds, scale)
        results[dimension] = DimensionResult(
            dimension, kind, safety, len(reference), without_majority, alpha, multi, dim_judges,
            scale, "declared" if declared else "observed" if scale else None,
        )  # fmt: skip
    return results


def safety_status(results: dict[str, DimensionResult], thresholds: Thresholds) -> dict[str, str]:
    """Each safety dimension → PASS, FAIL, INSUFFICIENT or ABSENT (no judge on it)."""
    status: dict[str, str] = {}
    for dimension in dict.fromkeys(dimension_key(d) for d in thresholds.safety_dims):
        result = results.get(dimension)
        if result is None or not result.judges:
            status[dimension] = "ABSENT"
            continue
        verdicts = {judge.verdict for judge in result.judges.values()}
        status[dimension] = (
            "FAIL"
            if "FAIL" in verdicts
            else "INSUFFICIENT"
            if "INSUFFICIENT" in verdicts
            else "PASS"
        )
    return status
