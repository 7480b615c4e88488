"""Judge monitoring: agreement with human spot checks, drift, length bias — pure functions.

The inputs are rows, not a database: the recorded score rows (`JudgeScore`, read from the
store's `judge_scores` table by store/history.py) and the latest calibration verdict per judge
configuration and dimension (store/calibrations.py, written by `assay calibrate`).

Per judge configuration (source + prompt hash), with runs in the order they were recorded:
- rolling agreement with human spot checks: a check is a trial of the same run scored by the
  judge and a human; they agree when the scores differ by at most `tolerance`. The rate over the
  last `window` (100) checks is reported at each run once at least `min_checks` (10) exist;
- drift: a two-sample Kolmogorov–Smirnov test (scipy `ks_2samp`) of the score distribution of
  each run against the previous run;
- length–score Spearman correlation per run;
- alerts: agreement below `min_agreement`, drift with p < `drift_p`, length bias (ρ > 0.3 with
  p < 0.05) in the latest run, a latest calibration that is not PASS.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from assay.core.records import ScoreRow
from assay.measure.bias import P_FLAG, RHO_FLAG
from assay.measure.inputs import TrialKey


@dataclass
class Settings:
    window: int = 100
    min_checks: int = 10
    tolerance: float = 0.5
    min_agreement: float = 0.7
    drift_p: float = 0.01
    min_drift_rows: int = 10


def prompt_hash(row: ScoreRow) -> str:
    """The judge prompt hash a score row carries ('' for none): `judge_prompt_sha256` as
    `assay judge` stamps it, else an extra `prompt_sha256` field."""
    if row.judge_prompt_sha256:
        return row.judge_prompt_sha256
    sha = (row.model_extra or {}).get("prompt_sha256")
    return sha if isinstance(sha, str) else ""


@dataclass(frozen=True)
class JudgeScore:
    """One recorded score row: who scored which trial of which run, how much, how long."""

    run_id: str
    source: str
    sha: str  # the prompt hash, '' for none
    key: TrialKey
    score: float | None
    length: int | None


class CalibrationVerdict(Protocol):
    """The latest calibration of a judge configuration on one dimension (as stored)."""

    judge: str
    prompt_sha256: str | None
    dimension: str
    verdict: str
    n: int
    kappa: float | None
    created_at: str


def _spearman(lengths: list[float], scores: list[float]) -> tuple[float | None, float | None]:
    x, y = np.asarray(lengths, dtype=float), np.asarray(scores, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, None
    from scipy import stats  # here, not at import: see measure/bias.py binomial_z

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test = stats.spearmanr(x, y)
    return float(test.statistic), float(test.pvalue)


def history(
    rows: Sequence[JudgeScore],
    calibrations: Iterable[CalibrationVerdict] = (),
    settings: Settings | None = None,
) -> dict[str, Any]:
    """The monitoring report of every judge configuration: rows in recorded order."""
    s = settings or Settings()
    human: dict[tuple[str, TrialKey], list[float]] = defaultdict(list)
    for row in rows:
        if row.source.startswith("human:") and row.score is not None:
            human[(row.run_id, row.key)].append(row.score)
    configs: dict[tuple[str, str], list[JudgeScore]] = defaultdict(list)
    for row in rows:
        if not row.source.startswith("human:"):
            configs[(row.source, row.sha)].append(row)
    verdicts: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for c in calibrations:
        verdicts[(c.judge, c.prompt_sha256 or "")].append(
            {
                "dimension": c.dimension,
                "verdict": c.verdict,
                "n": c.n,
                "kappa": c.kappa,
                "created_at": c.created_at,
            }
        )
    report: dict[str, Any] = {}
    for key in sorted(set(configs) | set(verdicts)):
        source, sha = key
        name = source + (f"@{sha[:12]}" if sha else "")
        report[name] = _config_report(
            source, sha, configs.get(key, []), human, verdicts.get(key, []), s
        )
    return {"judges": report, "settings": s.__dict__}


def _config_report(
    source: str,
    sha: str,
    rows: list[JudgeScore],
    human: dict[tuple[str, TrialKey], list[float]],
    calibration: list[dict[str, Any]],
    s: Settings,
) -> dict[str, Any]:
    by_run: dict[str, list[JudgeScore]] = {}
    for row in rows:
        by_run.setdefault(row.run_id, []).append(row)
    checks: list[bool] = []
    runs: list[dict[str, Any]] = []
    alerts: list[str] = []
    previous: np.ndarray | None = None
    previous_run: str | None = None
    for run_id, run_rows in by_run.items():
        scores = np.asarray([r.score for r in run_rows if r.score is not None], dtype=float)
        for r in run_rows:
            spot = human.get((run_id, r.key))
            if spot and r.score is not None:
                checks.append(abs(r.score - float(np.median(spot))) <= s.tolerance)
        window = checks[-s.window :]
        rolling = float(np.mean(window)) if len(window) >= s.min_checks else None
        drift = None
        if (
            previous is not None
            and len(previous) >= s.min_drift_rows
            and len(scores) >= s.min_drift_rows
        ):
            from scipy import stats

            test = stats.ks_2samp(previous, scores)
            ks, p_drift = float(test.statistic), float(test.pvalue)
            drift = {"against": previous_run, "ks": ks, "p": p_drift}
            if p_drift < s.drift_p:
                alerts.append(
                    f"score distribution drifted in run {run_id} against {previous_run}"
                    f" (KS {ks:.3f}, p={p_drift:.2g})"
                )
        pairs = [
            (float(r.length), r.score)
            for r in run_rows
            if r.length is not None and r.score is not None
        ]
        rho, p = _spearman([a for a, _ in pairs], [b for _, b in pairs])
        runs.append(
            {
                "run_id": run_id,
                "rows": len(run_rows),
                "mean_score": float(scores.mean()) if len(scores) else None,
                "checks": len(checks),
                "rolling_agreement": rolling,
                "drift": drift,
                "length_score_rho": rho,
                "length_score_p": p,
            }
        )
        if rolling is not None and rolling < s.min_agreement:
            alerts.append(
                f"agreement with human spot checks {rolling:.2f} < {s.min_agreement} at run {run_id}"
                f" (last {len(window)} checks)"
            )
        if len(scores):
            previous, previous_run = scores, run_id
    if runs:
        last = runs[-1]
        rho, p = last["length_score_rho"], last["length_score_p"]
        if rho is not None and p is not None and rho > RHO_FLAG and p < P_FLAG:
            alerts.append(f"length bias in run {last['run_id']}: Spearman {rho:.2f} (p={p:.2g})")
    for c in calibration:
        if c["verdict"] != "PASS":
            alerts.append(f"latest calibration on {c['dimension']!r} is {c['verdict']}")
    window = checks[-s.window :]
    return {
        "judge": source,
        "prompt_sha256": sha or None,
        "runs": runs,
        "checks": len(checks),
        "rolling_agreement": float(np.mean(window)) if len(window) >= s.min_checks else None,
        "calibration": calibration,
        "alerts": alerts,
    }
