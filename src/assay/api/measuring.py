"""`assay.bias`, `assay.winrate`, `assay.rank`, `assay.history`: measuring judges and models.

The functions behind the commands of the same names. Each takes files (str or Path) or
records (Comparison, Trial, ScoreRow objects), computes with `assay.measure` and returns a
typed result whose `as_json()` is exactly what the command's `--json` prints. Bad input
raises `InputError` with the message the command prints (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.errors import EXIT_GATE_FAILED, EXIT_OK, InputError
from assay.core.records import Comparison, ScoreRow, Trial
from assay.measure.inputs import (
    TrialKey,
    load_comparisons,
    load_scores,
    load_trial_lengths,
    trial_lengths,
)
from assay.store import DEFAULT_STORE

if TYPE_CHECKING:
    from assay.measure.bradley_terry import Rating
    from assay.measure.winrate import WinRate

Source = str | Path


def _checked(name: str, value: dict[str, Any]) -> dict[str, Any]:
    """The value, after checking it against its output model (`assay schema NAME`)."""
    from assay.api.outputs import OUTPUTS

    OUTPUTS[name].model_validate(value)
    return value


def _label(source: Source | Sequence[Any]) -> str:
    """How an error names an input: its path, or `comparisons` for given objects."""
    return str(source) if isinstance(source, str | Path) else "comparisons"


def _comparisons(comparisons: Source | Sequence[Comparison]) -> list[Comparison]:
    """The comparisons of a JSONL file, or the given objects; none is an error."""
    if isinstance(comparisons, str | Path):
        return [c for _, c in load_comparisons(Path(comparisons))]
    found = list(comparisons)
    if not found:
        raise InputError("ERROR: comparisons: no comparisons given")
    return found


def _lengths(trials: Source | Sequence[Trial] | None) -> dict[TrialKey, int] | None:
    """Response lengths of the trials of a JSONL file or of the given objects."""
    if trials is None:
        return None
    if isinstance(trials, str | Path):
        return load_trial_lengths(Path(trials))
    return trial_lengths(trials)


def _scores(scores: Source | Sequence[ScoreRow] | None) -> list[ScoreRow] | None:
    if scores is None:
        return None
    if isinstance(scores, str | Path):
        return [r for _, r in load_scores(Path(scores))]
    return list(scores)


# -- bias ------------------------------------------------------------------------------------


@dataclass(slots=True)
class BiasAudit:
    """Per judge: position bias (two-order comparisons) and length bias figures."""

    judges: dict[str, dict[str, Any]]

    @property
    def flagged(self) -> list[str]:
        """The judges flagged for position bias, length preference or length bias."""
        return [
            j
            for j, e in self.judges.items()
            if e["flagged"] or e["length_preference_flagged"] or e["length_flagged"]
        ]

    def as_json(self) -> dict[str, Any]:
        """`assay bias --json` (`assay schema bias`)."""
        return _checked("bias", {"judges": self.judges})


def bias(
    comparisons: Source | Sequence[Comparison],
    *,
    scores: Source | Sequence[ScoreRow] | None = None,
    trials: Source | Sequence[Trial] | None = None,
    metric: str | None = None,
) -> BiasAudit:
    """Audit each judge of the comparisons for position bias and length bias.

    With `scores` (which need `trials` for the response lengths) also the Spearman
    correlation between response length and score, per score source; `metric` picks the
    metric to correlate (default: the mean of the numeric metrics)."""
    from assay.measure.bias import audit

    if scores is not None and trials is None:
        raise InputError("ERROR: --scores: needs --trials to know the response lengths")
    from assay.measure.bias import metric_names

    if metric is not None and scores is None:
        raise InputError("ERROR: --metric: only applies with --scores")
    records = _comparisons(comparisons)
    lengths = _lengths(trials)
    rows = _scores(scores)
    if metric is not None and rows is not None:
        known = metric_names(rows)
        if metric not in known:
            raise InputError(
                f"ERROR: --metric: no metric {metric!r} in"
                f" {scores if isinstance(scores, str | Path) else 'the score rows'};"
                f" known: {', '.join(known) or 'none'}"
            )
    return BiasAudit(judges=audit(records, lengths, rows, metric))


# -- winrate ---------------------------------------------------------------------------------


@dataclass(slots=True)
class WinRates:
    """Every model's win rate (percent) against the baseline, raw and length-controlled."""

    baseline: str
    skipped: int  # comparisons that do not involve the baseline
    models: dict[str, WinRate]
    length_controlled: bool = False

    @property
    def unfitted(self) -> dict[str, str]:
        """With length control, the models without an LC win rate → why (lengths missing,
        no other model judged on the same cases, every comparison won or lost)."""
        if not self.length_controlled:
            return {}
        return {
            name: rate.undefined.get("length_controlled_win_rate", "not fitted")
            for name, rate in sorted(self.models.items())
            if rate.length_controlled_win_rate is None
        }

    def as_json(self) -> dict[str, Any]:
        """`assay winrate --json` (`assay schema winrate`)."""
        return _checked(
            "winrate",
            {
                "baseline": self.baseline,
                "skipped": self.skipped,
                "models": {name: asdict(rate) for name, rate in self.models.items()},
            },
        )


def winrate(
    comparisons: Source | Sequence[Comparison],
    *,
    baseline: str,
    length_controlled: bool = False,
    trials: Source | Sequence[Trial] | None = None,
) -> WinRates:
    """Raw win rate (ties half) with its standard error of every model against `baseline`.

    With `length_controlled` also AlpacaEval 2's length-controlled win rate, which needs
    response lengths (len_a/len_b, or `trials`) on every comparison of a model, and two or
    more models compared with the baseline on the same cases (the instructions' difficulty is
    estimated across models): a model without one gets None, with the reason in `unfitted`
    and in its `undefined`."""
    from assay.measure.winrate import win_rates

    records = _comparisons(comparisons)
    lengths = _lengths(trials)
    rates, skipped = win_rates(
        records, baseline, trial_lengths=lengths, length_controlled_rates=length_controlled
    )
    if not rates:
        raise InputError(
            f"ERROR: {_label(comparisons)}: no comparison involves the baseline {baseline!r}"
        )
    return WinRates(baseline, skipped, rates, length_controlled)


# -- rank ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Ranking:
    """Bradley–Terry strengths, strongest first, with bootstrap confidence intervals."""

    games: int
    bootstrap: int
    ratings: list[Rating]

    def as_json(self) -> dict[str, Any]:
        """`assay rank --json` (`assay schema rank`)."""
        return _checked(
            "rank",
            {
                "games": self.games,
                "bootstrap": self.bootstrap,
                "ratings": [asdict(r) for r in self.ratings],
            },
        )


def rank(
    comparisons: Source | Sequence[Comparison], *, bootstrap: int = 200, seed: int = 0
) -> Ranking:
    """Rank every model or condition by Bradley–Terry strength (each comparison is one game,
    scored as `winrate` scores it: its `preference` when it has one, a panel's share of the
    votes, else its verdict, a tie half a win each; judges pooled); `bootstrap` resamples
    (0: none) give the CIs."""
    from assay.measure.bradley_terry import rank as bradley_terry

    if bootstrap < 0:
        raise InputError(f"ERROR: --bootstrap: must be 0 or more, got {bootstrap}")
    from assay.measure.inputs import prob_b_wins

    games = [(c.a, c.b, prob_b_wins(c)) for c in _comparisons(comparisons)]
    try:
        ratings = bradley_terry(games, bootstrap=bootstrap, seed=seed)
    except ValueError as exc:
        raise InputError(f"ERROR: {_label(comparisons)}: cannot rank: {exc}") from None
    return Ranking(games=len(games), bootstrap=bootstrap, ratings=ratings)


# -- history ---------------------------------------------------------------------------------


@dataclass(slots=True)
class History:
    """Per judge configuration (`source@prompt-hash`): its runs, agreement with human spot
    checks, score drift, calibrations and alerts."""

    judges: dict[str, dict[str, Any]]
    settings: dict[str, Any]
    fail_on_alert: bool = False
    store: Path = DEFAULT_STORE

    @property
    def alerts(self) -> list[str]:
        """Every alert of every judge configuration."""
        return [a for j in self.judges.values() for a in j["alerts"]]

    @property
    def exit_code(self) -> int:
        """The command's: 1 with `fail_on_alert` and any alert, else 0."""
        return EXIT_GATE_FAILED if self.fail_on_alert and self.alerts else EXIT_OK

    def as_json(self) -> dict[str, Any]:
        """`assay history --json` (`assay schema history`)."""
        return _checked("history", {"judges": self.judges, "settings": self.settings})


def history(
    store: Source = DEFAULT_STORE,
    *,
    add_scores: Source | Sequence[ScoreRow] | None = None,
    run: str | None = None,
    trials: Source | Sequence[Trial] | None = None,
    metric: str | None = None,
    window: int = 100,
    min_checks: int = 10,
    tolerance: float = 0.5,
    min_agreement: float = 0.7,
    drift_p: float = 0.01,
    fail_on_alert: bool = False,
) -> History:
    """Monitor each judge configuration across the runs recorded in `store`.

    `add_scores` (with the `run` they belong to, and `trials` for response lengths) are
    recorded first. Per configuration: rolling agreement with human spot checks (`window`
    checks, shown from `min_checks`, agreeing within `tolerance`), score drift between runs
    (KS test), length bias, and alerts (agreement below `min_agreement`, drift p below
    `drift_p`)."""
    from assay.measure.history import Settings
    from assay.measure.history import history as monitor
    from assay.store import Store
    from assay.store.calibrations import latest_calibrations
    from assay.store.history import judge_scores, save_score_rows

    if add_scores is None and (run is not None or trials is not None):
        raise InputError("ERROR: --run/--trials: only apply with --add-scores")
    if add_scores is not None and not run:
        raise InputError("ERROR: --add-scores: needs --run to name the run the rows belong to")
    for option, value, least in (("window", window, 1), ("min-checks", min_checks, 1)):
        if value < least:
            raise InputError(f"ERROR: --{option}: must be at least {least}, got {value}")
    if tolerance < 0:
        raise InputError(f"ERROR: --tolerance: must be 0 or more, got {tolerance}")
    rows = _scores(add_scores)
    lengths = _lengths(trials)
    handle = Store(Path(store))
    try:
        if rows is not None and run:
            save_score_rows(handle, run, rows, lengths, metric)
        settings = Settings(window, min_checks, tolerance, min_agreement, drift_p)
        report = monitor(judge_scores(handle), latest_calibrations(handle), settings)
    finally:
        handle.close()
    return History(report["judges"], report["settings"], fail_on_alert, Path(store))
