"""A run's inputs as flags and suite files give them: `--param` values, a suite loaded or
given, its corpus thresholds and base URL overridden for the run, and the outputs proven
writable (and not one of the inputs) before any call."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.errors import InputError
from assay.core.suite import Suite, Threshold, load_suite
from assay.core.writable import Output, check_outputs
from assay.engine import RunRequest

if TYPE_CHECKING:
    from assay.verdict.checks import JudgeStatus


def parse_params(items: Sequence[str] | None, flag: str = "--param") -> dict[str, Any]:
    """`--param KEY=VALUE` pairs; a VALUE that is valid JSON is taken as JSON, else as text."""
    params: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"ERROR: {flag}: expected KEY=VALUE, got {item!r}")
        try:
            params[key.strip()] = json.loads(value)
        except ValueError:
            params[key.strip()] = value
    return params


def load(suite: str | Path | Suite | None) -> Suite | None:
    """A suite from its path (or as given)."""
    if suite is None or isinstance(suite, Suite):
        return suite
    return load_suite(Path(suite))


def with_corpus(suite: Suite, corpus: Sequence[str] | Mapping[str, Threshold]) -> Suite:
    """A copy of the suite with these corpus thresholds (`--corpus` texts, or thresholds by
    metric), each replacing the suite's [scoring.corpus] bound of its metric."""
    from assay.verdict.config import resolve

    scoring = suite.scoring.model_copy(
        update={"corpus": dict(resolve(suite, corpus=corpus).corpus)}
    )
    return suite.model_copy(update={"scoring": scoring})


def with_run_base_url(suite: Suite, base_url: str | None, max_reply_bytes: int) -> Suite:
    """The suite with the run's base URL (`--base-url`, else its [run] base_url) as its
    [run] base_url, which its judges inherit when [judge] names none (`judge_options`): what
    the judges' key check reads is what they are built with. The run's cap on replies
    (`--max-reply-bytes`) is its judges' too."""
    update = {"base_url": base_url, "max_reply_bytes": max_reply_bytes}
    if all(getattr(suite.run, key) == value for key, value in update.items()):
        return suite
    return suite.model_copy(update={"run": suite.run.model_copy(update=update)})


def check_run_outputs(
    suite: Suite | None, request: RunRequest, out: str | Path | None, store: str | Path
) -> None:
    """Refuse, before any call, a trials file or a suite output folder that cannot be
    written or that would overwrite one of the run's inputs (`assay.core.writable`)."""
    from assay.reports.files import SUITE_FILES

    folder = None
    if suite is not None:
        from assay.verdict.config import output_dir

        folder = (
            Output("--out", Path(out), folder=True, files=SUITE_FILES)
            if out is not None
            else Output("the suite's output", output_dir(suite), folder=True, files=SUITE_FILES)
        )
    inputs: list[tuple[str, Path | None]] = [
        ("the store (--store)", Path(store)),
        *(suite.inputs() if suite is not None else []),  # first: named as the suite names them
        ("the case catalogue (--cases)", request.catalogue),
        *((f"the skill of condition {c.name}", c.skill_path) for c in request.conditions),
    ]
    output = Output("--output", request.output) if request.output is not None else None
    check_outputs([output, folder], inputs)


def check_evaluation_inputs(suite: Suite, judge: JudgeStatus | None) -> None:
    """Refuse before any call what the suite's evaluation after the run would refuse once
    the run's calls are paid for: a viewer address the reports cannot link to
    (`ASSAY_VIEW_URL`), and an enabled judge that cannot be metered (no price known, and
    `[judge] allow_unmetered` not set) or whose settings do not hold together."""
    from assay.api.viewing import view_base_url

    view_base_url(suite.report.view_url)
    if judge is None or judge.status != "enabled" or not suite.judge.judges:
        return
    from assay.engine.session import check_metered
    from assay.scorers.judge.config import build_judge_models, config_from_suite, validate_config

    config = config_from_suite(suite)
    validate_config(config)
    check_metered(build_judge_models(config), config.allow_unmetered, config.metering)


def in_looks(suite: Suite | None, sequential: bool | None) -> bool:
    """Whether the run goes in looks: `sequential` when given (--sequential/--no-sequential),
    else the suite's `[gate] sequential`. Only a suite's stats gate can stop a run."""
    if sequential is None:
        return suite is not None and suite.gate.sequential
    if sequential and suite is None:
        raise InputError(
            "ERROR: --sequential: needs a suite file (its [gate] decides when the run stops)"
        )
    if sequential and suite is not None and suite.gate.mode == "seed":
        raise InputError(
            f'ERROR: --sequential: {suite.file}: [gate] mode = "seed" has no error rates to'
            ' stop on; use mode = "stats"'
        )
    return sequential
