"""The one scorer protocol, its Score record and the scorer registry.

Every scorer — a deterministic check, a grounding scorer, an LLM judge, a panel, the
cascade — reads a `ScoreContext` (the case, the trial, the knowledge base and the run's call
machinery) and returns one `Score`, or None when the case gives it nothing to check (a
skipped case is never scored 1.0). A scorer that calls models does so only through
`ctx.caller`, so its calls share the run's cache, budget, retries and concurrency.

A scorer declares up front the metric names it produces (`metrics`, so a suite's metric
names can be checked before any call), the ones that feed the release gate (`primary`) and
the models it will call (`models`, empty for deterministic checks). `aggregate` turns the
per-trial metrics of a corpus into corpus figures. Scorers register by name so a suite can
select them, and plugins can add more through the `assay.scorers` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from assay.core.bounded import LimitExceeded
from assay.core.errors import InputError
from assay.core.records import Case, ScoreRow, Trial

if TYPE_CHECKING:
    from assay.engine.calls import Caller
    from assay.models.base import Model
    from assay.models.registry import ModelOptions

Metrics = dict[str, float]
BLOCKER = "blocker"
"""A metric named `blocker` with a value above 0 is a blocking finding on that trial."""
IDENTITY = ("case_id", "trial", "condition")


@dataclass(slots=True)
class ScoreContext:
    """What a scorer sees: the case, its trial(s) (two for a pair scorer), the knowledge-base
    documents by id, and the run's call machinery (None when the caller has none)."""

    case: Case
    trials: tuple[Trial, ...]
    documents: dict[str, str] = field(default_factory=dict)
    caller: Caller | None = None

    @classmethod
    def of(
        cls,
        case: Case,
        *trials: Trial,
        documents: Mapping[str, str] | None = None,
        caller: Caller | None = None,
    ) -> ScoreContext:
        """A context for one trial (or a pair), e.g. `ScoreContext.of(case, trial)`."""
        if not trials:
            raise ValueError("a score context needs at least one trial")
        return cls(case, tuple(trials), dict(documents or {}), caller)

    @property
    def trial(self) -> Trial:
        """The trial scored (the first of a pair)."""
        return self.trials[0]


def _number(value: float) -> float | int:
    """A metric as written in a Score row: integral values as integers (a judge's 4, not 4.0)."""
    return int(value) if float(value).is_integer() else value


@dataclass(slots=True)
class Score:
    """One scorer's result on one trial: the record every scorer produces.

    `metrics` are the numbers (rubric criteria, deterministic metrics); `fields` are the
    annotations of the documented Score row, in the order they are written (a judge's
    overall, blocker, notes, source, confidence, evidence, ..., tier, judge_model,
    judge_prompt_sha256, scale; a grounding scorer's `method`). `replies` keeps the raw
    model replies behind the score (stored with a judgment, never written in the row).
    """

    case_id: str
    trial: int
    condition: str
    scorer: str
    metrics: Metrics
    fields: dict[str, Any] = field(default_factory=dict)
    replies: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, trial: Trial, scorer: str, metrics: Metrics, **fields: Any) -> Score:
        return cls(trial.case_id, trial.trial, trial.condition, scorer, metrics, dict(fields))

    @property
    def blocker(self) -> bool:
        """A blocking finding: a judge's `blocker` flag or a `blocker` metric above 0."""
        flagged = self.fields.get(BLOCKER)
        if isinstance(flagged, bool):
            return flagged
        return self.metrics.get(BLOCKER, 0.0) > 0

    def key(self) -> tuple[str, int, str]:
        return (self.case_id, self.trial, self.condition)

    def as_json(self) -> dict[str, Any]:
        """The `deterministic.jsonl` line: case, trial, condition, scorer and metrics, then
        the scorer's annotations when it has any (a grounding scorer's `method`, and a
        judged one's `judge_prompt_sha256` and `evidence`)."""
        return {
            "case_id": self.case_id,
            "trial": self.trial,
            "condition": self.condition,
            "scorer": self.scorer,
            "metrics": self.metrics,
            **self.fields,
        }

    def row(self) -> dict[str, Any]:
        """The documented Score row as JSON data, keys in written order (judge files and
        stored judgments are byte-identical to what assay always wrote)."""
        row: dict[str, Any] = {
            "case_id": self.case_id,
            "trial": self.trial,
            "condition": self.condition,
        }
        for name, value in self.metrics.items():
            if name != BLOCKER or BLOCKER in self.fields:
                row[name] = _number(value)
        if BLOCKER not in self.fields and BLOCKER in self.metrics:
            row[BLOCKER] = self.blocker
        row.update(self.fields)
        return row

    def to_row(self) -> ScoreRow:
        """The validated Score row (`ScoreRow`)."""
        return ScoreRow.model_validate(self.row())

    @classmethod
    def from_row(cls, row: Mapping[str, Any], metrics: Sequence[str], scorer: str) -> Score:
        """The Score a row was written from (e.g. a stored judgment): `metrics` names the
        numeric fields that are metrics; every other field is kept, in order."""
        names = set(metrics)
        values: Metrics = {}
        fields: dict[str, Any] = {}
        for key, value in row.items():
            if key in IDENTITY:
                continue
            if key in names and isinstance(value, int | float) and not isinstance(value, bool):
                values[key] = float(value)
            else:
                fields[key] = value
        return cls(
            str(row["case_id"]), int(row["trial"]), str(row["condition"]), scorer, values, fields
        )


class Scorer(Protocol):
    """One scorer; `name` is its registry key (and the `scorer` of its Scores)."""

    @property
    def name(self) -> str:
        """The scorer's name."""
        ...

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric name the scorer can produce, known before any call."""
        ...

    @property
    def primary(self) -> tuple[str, ...]:
        """The metrics that feed the release gate."""
        ...

    @property
    def models(self) -> tuple[str, ...]:
        """The model specs the scorer calls through `ctx.caller` (empty: none)."""
        ...

    async def score(self, ctx: ScoreContext) -> Score | None:
        """The trial's Score, or None when there is nothing to check."""
        ...

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        """Corpus figures over the trials that were scored."""
        ...


def mean_aggregate(rows: Sequence[Metrics]) -> Metrics:
    """The default corpus aggregate: the mean of each metric over the rows that have it."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in rows:
        for key, value in row.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    return {key: sums[key] / counts[key] for key in sums}


def model_options(scorer: object) -> ModelOptions:
    """The settings a scorer's models are built with: its `judge_options` (the suite's
    [judge] settings, given by `build_scorers`), else the defaults. The one definition the
    scorer's model factory and the key check before any call (`assay.api.keys`) both read, so
    a judge on a local server (its `base_url`) is never taken for one that needs a key."""
    from assay.models.registry import ModelOptions

    options = getattr(scorer, "judge_options", None)
    return options if isinstance(options, ModelOptions) else ModelOptions()


class JudgeBacked:
    """Base of a scorer that asks a judge model (`judge`; None: it scores without one) through
    the run's Caller: the model is built on first use (with `model_options`) and released by
    `aclose`, and `suite_judge` lets `build_scorers` give it the suite's judge when its
    options name none. `needs_judge`: it cannot score without one (a library metric), so
    with the judge disabled it is left out rather than run without it."""

    suite_judge: ClassVar[bool] = True
    needs_judge: ClassVar[bool] = False
    judge: str | None = None
    judge_options: ModelOptions | None = None
    _model: Model | None = None

    @property
    def models(self) -> tuple[str, ...]:
        return (self.judge,) if self.judge else ()

    def _judge_model(self) -> Model:
        from assay.models.registry import create_model

        if self._model is None:
            assert self.judge is not None
            self._model = create_model(self.judge, model_options(self))
        return self._model

    async def aclose(self) -> None:
        """Release the judge model's connections (the runner calls this when done)."""
        if self._model is not None:
            model, self._model = self._model, None
            await model.aclose()


class CheckScorer:
    """Base of the deterministic checks: a sync `check` wrapped into the async protocol.

    Subclasses set `name`, `metrics` (every metric `check` can return) and `primary`, and
    implement `check(ctx) -> Metrics | None`; they call no model. A check that runs past a
    limit (`LimitExceeded`: a regular expression or JSON Schema on the response,
    core/bounded.py) gives an error row: no figure, the `error` saying which limit, which
    fails the gate (verdict/deterministic.py `error_checks`).
    """

    name: ClassVar[str]
    metrics: ClassVar[tuple[str, ...]] = ()
    primary: ClassVar[tuple[str, ...]] = ()
    models: ClassVar[tuple[str, ...]] = ()

    def check(self, ctx: ScoreContext) -> Metrics | None:
        """Per-trial metrics, or None when there is nothing to check."""
        raise NotImplementedError

    async def score(self, ctx: ScoreContext) -> Score | None:
        try:
            metrics = self.check(ctx)
        except LimitExceeded as exc:
            return Score.of(ctx.trial, self.name, {}, error=str(exc))
        return None if metrics is None else Score.of(ctx.trial, self.name, metrics)

    def aggregate(self, rows: Sequence[Metrics]) -> Metrics:
        return mean_aggregate(rows)


S = TypeVar("S")
SCORERS: dict[str, Callable[..., Any]] = {}
PREFIXES: dict[str, Callable[[str], Callable[..., Any]]] = {}
"""`library:` name prefixes (`deepeval:`, `ragas:`) → a resolver from the full name to its
scorer factory, so a library's metrics are looked up (and the library imported) only when a
suite names one."""


def register(name: str) -> Callable[[type[S]], type[S]]:
    """Class decorator: make a scorer selectable by `name`."""

    def decorate(cls: type[S]) -> type[S]:
        SCORERS[name] = cls
        return cls

    return decorate


def _load_plugins() -> None:
    for entry in entry_points(group="assay.scorers"):
        if entry.name not in SCORERS:
            SCORERS[entry.name] = entry.load()


def scorer_factory(name: str) -> Callable[..., Any]:
    """The factory of the scorer `name`: registered, a `library:metric` name of a prefix
    in `PREFIXES` (the resolver raises InputError for a metric the library lacks), or a
    plugin's; InputError listing the known scorers when none has it."""
    prefix, colon, _ = name.partition(":")
    if colon and prefix in PREFIXES and name not in SCORERS:
        return PREFIXES[prefix](name)
    if name not in SCORERS:
        _load_plugins()
    if name not in SCORERS:
        known = [*sorted(SCORERS), *(f"{p}:<metric>" for p in sorted(PREFIXES))]
        raise InputError(f"ERROR: scorer {name!r}: unknown (known: {', '.join(known)})")
    return SCORERS[name]


def create_scorer(name: str, /, **options: Any) -> Scorer:
    """Build a registered scorer with its options (from the suite file)."""
    factory = scorer_factory(name)
    try:
        scorer: Scorer = factory(**options)
    except TypeError as exc:
        raise InputError(f"ERROR: scorer {name!r}: bad options: {exc}") from None
    return scorer
