"""A suite's judges when their API keys are not set: disabled, or exit 2 before any call.

Which environment variable a model needs is the provider's knowledge
(`assay.models.registry.required_env`); this module decides what a missing key means for a
suite run. A missing key of the system under test is always exit 2 (`engine.session
.check_keys`). A missing key of an LLM judge — the [judge] judges, the screen judge, or the
model of a model-backed scorer (grounding's `judge` option) — disables the judge by default,
so a CI lane without secrets still runs: the run goes on with the deterministic scorers, the
gate runs on them, thresholds (per-case and corpus) on the metrics of a judge or of a
model-backed scorer are skipped — a lexical fallback figure never stands in for a judged one;
that covers `[scoring.thresholds]`, `[scoring.corpus]` with `--corpus`, and a scorer's
`threshold` option — a scorer that cannot score without its judge (a DeepEval or RAGAS
metric) is left out, and every report says
"LLM judge disabled: ANTHROPIC_API_KEY is not set". `[judge] required = true` (or
`--require-judge`) turns the missing key into exit 2 instead, before any call.

A key is checked with the settings the model is built with, so a judge on a local server
(a base_url from [judge], [run], `--base-url` or OPENAI_BASE_URL) needs none.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from assay.core.errors import InputError
from assay.core.suite import ScorerEntry, Suite
from assay.models.registry import MissingKey, missing_keys, unset_text
from assay.scorers.base import model_options
from assay.scorers.runner import build_scorers
from assay.verdict.checks import JudgeStatus
from assay.verdict.thresholds import scorer_corpus

MODEL_OPTION = "judge"
"""The scorer option that names a model-backed scorer's model (grounding's `judge`)."""


def judge_status(
    suite: Suite, require: bool = False, carried: Collection[str] = ()
) -> JudgeStatus | None:
    """Whether the suite's LLM judges can run, decided before any call: None when the suite
    configures none; `enabled`; or `disabled` naming the unset key(s). InputError instead of
    `disabled` when `require` or the suite's `[judge] required` is set. `carried`: metrics
    score rows already give (judged earlier), whose thresholds still apply.

    Each model's key is checked with the settings it is built with: the judges with the
    [judge] section's (`judge_options`: its base_url, else [run]'s), a scorer's model with
    its own (`scorers.base.model_options`); a model on a local server needs no key."""
    section = suite.judge
    # No [judge] setting that could fail and no scorer naming a model: nothing to check, and
    # the judges' modules are not needed.
    unset = (section.judges, section.screen, section.rubric, section.price)
    if not any(unset) and not any(s.models for s in build_scorers(suite.scoring.scorers)):
        return None
    from assay.scorers.judge.config import (
        config_from_suite,
        judge_missing_keys,
        judge_specs,
        suite_judge,
    )

    config = config_from_suite(suite)
    scorers = build_scorers(suite.scoring.scorers, *suite_judge(suite))
    specs = list(dict.fromkeys([*judge_specs(config), *(m for s in scorers for m in s.models)]))
    if not specs:
        return None
    missing = list(
        dict.fromkeys(
            [
                *judge_missing_keys(config),
                *(m for s in scorers for m in missing_keys(s.models, model_options(s))),
            ]
        )
    )
    if not missing:
        return JudgeStatus(status="enabled", judges=specs)
    if require or suite.judge.required:
        raise InputError([_required_error(m) for m in missing])
    without_models(suite.scoring.scorers)  # a scorer that cannot run without its model: exit 2
    # A metric a model-backed scorer makes is the judge's: its lexical stand-in is no figure
    # for the thresholds written for it.
    deterministic = {*carried} | produced(
        [e for e, s in zip(suite.scoring.scorers, scorers, strict=True) if not s.models]
    )
    corpus = {**scorer_corpus(scorers), **suite.scoring.corpus}
    backed = {m for s in scorers if s.models for m in s.metrics}
    return JudgeStatus(
        status="disabled",
        reason=unset_text(missing),
        judges=specs,
        skipped=[m for m in suite.scoring.thresholds if m not in deterministic],
        skipped_corpus=[m for m in corpus if m not in deterministic],
        standins=sorted(backed - deterministic),
    )


def _required_error(missing: MissingKey) -> str:
    hint = f" ({missing.hint})" if missing.hint else ""
    return (
        f"ERROR: [judge] required (or --require-judge): judge {missing.spec} needs"
        f" {missing.variable}, which is not set{hint}; without `required` the judge is"
        " disabled and the run goes on with the deterministic scorers"
    )


def without_models(entries: Sequence[ScorerEntry]) -> list[ScorerEntry]:
    """The scorer entries as run with the judge disabled: their model option removed
    (grounding checks lexically), those that cannot score without a judge (`needs_judge`: a
    DeepEval or RAGAS metric) left out; InputError for a scorer that calls a model of its own
    whatever its options say."""
    kept = []
    for entry in entries:
        options = {k: v for k, v in entry.options.items() if k != MODEL_OPTION}
        kept.append(entry.model_copy(update={"options": options}))
    built = build_scorers(kept)
    for scorer in built:
        if scorer.models:
            raise InputError(
                f"ERROR: scorer {scorer.name!r} calls {', '.join(scorer.models)}, whose API key"
                " is not set, and cannot run without it"
            )
    return [e for e, s in zip(kept, built, strict=True) if not getattr(s, "needs_judge", False)]


def produced(entries: Sequence[ScorerEntry]) -> set[str]:
    """Every metric the scorers of these entries produce."""
    return {m for scorer in build_scorers(entries) for m in scorer.metrics}


def without_judge(
    suite: Suite, status: JudgeStatus, carried: Collection[str] = ()
) -> tuple[Suite, list[str]]:
    """The suite as evaluated with its judge disabled, and notes on what changed: no judges
    (so no judge rubric), scorers without their models, the skipped thresholds removed
    (`status.checks()` lists them), and weights kept only on metrics the remaining scorers
    produce as they would with the judge (none left: the default weights): a lexical
    stand-in (`status.standins`) is never weighed. The loaded suite is not changed."""
    scoring = suite.scoring
    entries = without_models(scoring.scorers)
    deterministic = ({*carried} | produced(entries)) - set(status.standins)
    notes = []
    weights = scoring.weights
    if weights is not None:
        dropped = [m for m in weights if m not in deterministic]
        if dropped:
            notes.append(f"weights on {', '.join(dropped)} not applied: {status.headline}")
        weights = {m: w for m, w in weights.items() if m in deterministic} or None
    evaluated = suite.model_copy(
        update={
            "judge": suite.judge.model_copy(update={"judges": [], "screen": None, "rubric": None}),
            "scoring": scoring.model_copy(
                update={
                    "scorers": entries,
                    "weights": weights,
                    "thresholds": {
                        m: t for m, t in scoring.thresholds.items() if m not in status.skipped
                    },
                    "corpus": {
                        m: t for m, t in scoring.corpus.items() if m not in status.skipped_corpus
                    },
                }
            ),
        }
    )
    return evaluated, notes
