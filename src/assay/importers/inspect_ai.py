"""Inspect AI logs (`.eval` archives and `.json` logs, log format version 2) as assay records.

- One log is one task run on one model. A condition is the log's model; when the logs read
  together differ in task or task arguments (`-T style=brief`), those are added:
  `capitals/openai/gpt-4o[style=brief]`.
- A case is a sample (its `id`); epochs become trials.
- Score rows: one metric per scorer, named by the scorer (`includes`, `model_graded_qa`),
  valued as Inspect's `value_to_float` does (C 1, P 0.5, I and N 0, yes/true 1, no/false 0,
  numbers as they are); a scorer that returns a dict or list gives one metric per entry
  (`scorer_key`, `scorer_1`). A sample that errored has a trial with its error and no row,
  whatever scores it holds.
- A trial's usage and cost are the sample's `model_usage` summed over its models (Inspect's
  own per-sample total; the cost only when every model's usage is priced), else the output's.
  A cost is a number from 0 to 2^53 USD, and so is its sum (as token counts are).
- A log whose status is not `success` (error, cancelled, or started: the run was killed)
  makes the import incomplete, with the samples it holds against those the run was to make
  (the dataset's sample ids × epochs): `logs/a.eval: status cancelled: 27 of 33 samples`.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import Field

from assay.core.errors import InputError
from assay.core.records import MAX_INT, Case, Count, ScoreRow, Trial, TrialNumber, Usage
from assay.importers.common import (
    MAX_PROBLEMS,
    Imported,
    Source,
    cluster_of,
    is_zip,
    merge,
    metric_name,
    not_this_tool,
    number,
    parse_json,
    place,
    problem,
    risk_of,
    sniff,
    text_of,
    validate,
    validate_all,
)
from assay.importers.reading import Budget, read_document, read_member, reserve

TOOL: Final = "inspect"
FORMAT_VERSION = 2
EXPECTED = "an Inspect AI log (a log holds `eval` (the task, model and settings) and `samples`)"
NOT_LOGS = ("logs.json", "eval-set.json")  # what Inspect keeps beside the logs of a folder
GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


class Dataset(Source):
    name: str | None = None
    samples: int | None = Field(default=None, ge=0)
    sample_ids: list[str | int] | None = None


class EvalConfig(Source):
    epochs: int | None = Field(default=None, ge=1)


class EvalSpec(Source):
    task: str
    model: str
    task_args: dict[str, Any] = Field(default_factory=dict)
    run_id: str | None = None
    eval_id: str | None = None
    created: str | None = None
    dataset: Dataset | None = None
    config: EvalConfig | None = None

    @property
    def expected(self) -> int | None:
        """The samples the run was to make: the dataset's samples (after `--limit`) × epochs."""
        ids = self.dataset.sample_ids if self.dataset else None
        count = len(ids) if ids is not None else (self.dataset.samples if self.dataset else None)
        if count is None:
            return None
        return count * ((self.config.epochs if self.config else None) or 1)


class Header(Source):
    version: int = FORMAT_VERSION
    status: str = "success"
    eval: EvalSpec
    samples: list[Any] | None = None


class ContentPart(Source):
    type: str
    text: str | None = None


class Message(Source):
    role: str
    content: str | list[ContentPart]


class ModelUsage(Source):
    input_tokens: Count = 0
    output_tokens: Count = 0
    input_tokens_cache_write: Count | None = None
    input_tokens_cache_read: Count | None = None
    total_cost: float | None = Field(default=None, ge=0, le=MAX_INT)

    @property
    def input_total(self) -> int:
        """Every input token: Inspect counts cache reads and writes apart from `input_tokens`."""
        return (
            self.input_tokens
            + (self.input_tokens_cache_write or 0)
            + (self.input_tokens_cache_read or 0)
        )


class Output(Source):
    model: str | None = None
    completion: str = ""
    usage: ModelUsage | None = None
    time: float | None = None


class Score(Source):
    value: Any
    explanation: str | None = None


class SampleError(Source):
    message: str


class Sample(Source):
    id: str | int
    epoch: TrialNumber = 1
    input: str | list[Message]
    target: str | list[str] = ""
    output: Output | None = None
    scores: dict[str, Score] | None = None
    metadata: dict[str, Any] | None = None
    error: SampleError | None = None
    started_at: str | None = None
    model_usage: dict[str, ModelUsage] | None = None


@dataclass(slots=True)
class Log:
    """One log: its spec and its samples, each with the place it was read from."""

    path: Path
    status: str
    spec: EvalSpec
    samples: list[tuple[str, Sample]]


def read(paths: Sequence[Path]) -> Imported:
    """Read Inspect logs (files, or folders of `.eval` and `.json` logs) as one run."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p
                for p in path.iterdir()
                if p.suffix in (".eval", ".json") and p.name not in NOT_LOGS
            )
            if not found:
                raise InputError(f"ERROR: {path}: no Inspect logs (.eval or .json) in the folder")
            files.extend(found)
        else:
            files.append(path)
    budget = Budget()
    logs = [read_log(path, budget) for path in files]
    names = _conditions([log.spec for log in logs])
    imported = merge(TOOL, [_convert(log, name) for log, name in zip(logs, names, strict=True)])
    if not imported.trials:
        raise InputError(
            [
                f"ERROR: {reason}: the log holds no samples (the run stopped before it logged one)"
                for reason in imported.incomplete
            ]
        )
    return imported


def read_log(path: Path, budget: Budget) -> Log:
    """One log, `.eval` (zip) or `.json` by its content, its size counted in the import's
    `budget`; InputError naming file and place."""
    if is_zip(path):
        return _read_eval(path, budget)
    data = parse_json(path, read_document(path, budget))
    header = _header(path, data, "")
    samples = data.get("samples") if isinstance(data, dict) else None
    if not isinstance(samples, list):
        samples = []
    valid = validate_all(Sample, samples, path, "samples")
    return Log(
        path, header.status, header.eval, [(place("samples", i), s) for i, s in enumerate(valid)]
    )


def _header(path: Path, data: Any, member: str) -> Header:
    if sniff(data) != TOOL:
        if member:
            raise problem(path, member, f"not {EXPECTED}")
        raise not_this_tool(path, data, TOOL, EXPECTED)
    version = data.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version < FORMAT_VERSION:
        raise problem(
            path,
            f"{member}: version" if member else "version",
            f"Inspect log format version {version} is not supported: assay reads version"
            f" {FORMAT_VERSION} (`inspect log convert` rewrites old logs)",
        )
    fields = {k: v for k, v in data.items() if k != "samples"}
    return validate(Header, fields, path, *([member] if member else []))


def _read_eval(path: Path, budget: Budget) -> Log:
    """An `.eval` log: a zip archive of header.json (or, while it runs, the journal's
    start.json) and one samples/ID_epoch_N.json per sample."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(
            f"ERROR: {path}: not an Inspect .eval log (not a zip archive: {exc})"
        ) from None
    with archive:
        names = archive.namelist()
        head = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
        if head is None:
            raise InputError(
                f"ERROR: {path}: not an Inspect .eval log (the archive has no header.json)"
            )
        members = [n for n in names if n.startswith("samples/") and n.endswith(".json")]
        reserve(path, archive, [head, *members], budget)
        header = _header(path, parse_json(path, read_member(path, archive, head), head), head)
        samples = []
        problems: list[str] = []
        for name in members:
            data = parse_json(path, read_member(path, archive, name), name)
            try:
                samples.append((name, validate(Sample, data, path, name)))
            except InputError as exc:
                problems.extend(exc.messages)
        if problems:
            raise InputError(problems[:MAX_PROBLEMS])
    status = header.status if head == "header.json" else "started"
    return Log(path, status, header.eval, samples)


def _args_text(args: dict[str, Any]) -> str:
    return ",".join(
        f"{k}={v if isinstance(v, str) else text_of(v)}" for k, v in sorted(args.items())
    )


def _conditions(specs: list[EvalSpec]) -> list[str]:
    """Each log's condition: its model, with the task and its arguments when they vary."""
    tasks = {spec.task for spec in specs}
    arguments = {_args_text(spec.task_args) for spec in specs}
    names = []
    for spec in specs:
        name = f"{spec.task}/{spec.model}" if len(tasks) > 1 else spec.model
        if len(arguments) > 1:
            name += f"[{_args_text(spec.task_args)}]"
        names.append(name)
    return names


def _input_text(value: str | list[Message]) -> str:
    if isinstance(value, str):
        return value
    texts = []
    for message in value:
        if isinstance(message.content, str):
            text = message.content
        else:
            text = "\n".join(
                p.text if p.text is not None else f"[{p.type}]" for p in message.content
            )
        texts.append(text if len(value) == 1 else f"{message.role}: {text}")
    return "\n\n".join(texts)


def score_values(path: Path, where: str, name: str, value: Any) -> dict[str, float]:
    """One scorer's value as metrics (Inspect's `value_to_float`; dicts and lists give one
    metric per entry). A value that is not a number, a grade or yes/no is an error."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if item is not None:
                out.update(score_values(path, f"{where}.{key}", f"{name}_{key}", item))
        return out
    if isinstance(value, list):
        out = {}
        for index, item in enumerate(value, start=1):
            out.update(score_values(path, f"{where}[{index - 1}]", f"{name}_{index}", item))
        return out
    found = number(value)
    if found is None and isinstance(value, str):
        text = value.strip()
        found = GRADES.get(text, WORDS.get(text.lower()))
        if found is None:
            try:
                found = number(float(text))
            except ValueError:
                found = None
    if found is None:
        raise problem(
            path,
            where,
            f"score {value!r} is not a number, a grade (C, P, I, N) or yes/no",
        )
    return {metric_name(name): found}


def incomplete(log: Log) -> str | None:
    """Why a log is not a finished run (`FILE: status cancelled: 27 of 33 samples`), or None:
    its status is not success, or it holds fewer samples than the run was to make."""
    present, expected = len(log.samples), log.spec.expected
    if log.status == "success" and (expected is None or present >= expected):
        return None
    counted = f"{present} of {expected} samples" if expected is not None else f"{present} samples"
    errored = sum(1 for _, sample in log.samples if sample.error is not None)
    if errored:
        counted += f" ({errored} errored)"
    return f"{log.path}: status {log.status}: {counted}"


def _usage(path: Path, where: str, sample: Sample) -> tuple[Usage | None, float | None]:
    """A sample's tokens and cost: its `model_usage` summed over the models it called (the
    cost only when every one is priced), else its output's usage. Sums beyond what a record
    holds are an InputError naming the sample's usage."""
    usages = list((sample.model_usage or {}).values())
    if not usages and sample.output is not None and sample.output.usage is not None:
        usages = [sample.output.usage]
    if not usages:
        return None, None
    costs = [u.total_cost for u in usages if u.total_cost is not None]
    totals = {
        "input tokens": sum(u.input_total for u in usages),
        "output tokens": sum(u.output_tokens for u in usages),
        "costs (total_cost, USD)": math.fsum(costs),  # each at most MAX_INT: no overflow
    }
    for kind, total in totals.items():
        if total > MAX_INT:
            raise problem(
                path,
                place(where, "model_usage" if sample.model_usage else "output"),
                f"{kind} add up to more than {MAX_INT:,}",
            )
    usage = Usage(
        input_tokens=int(totals["input tokens"]), output_tokens=int(totals["output tokens"])
    )
    cost = totals["costs (total_cost, USD)"] if len(costs) == len(usages) else None
    return usage, cost


def _convert(log: Log, condition: str) -> Imported:
    path, spec = log.path, log.spec
    imported = Imported(tool=TOOL, sources=[path])
    reason = incomplete(log)
    if reason is not None:
        imported.incomplete.append(reason)
    if not log.samples:
        if reason is not None:
            return imported  # a run stopped before it logged a sample: nothing but the reason
        raise InputError(
            f"ERROR: {path}: samples: the log holds no samples (was it run with --no-log-samples?)"
        )
    order = {
        str(s): i for i, s in enumerate((spec.dataset.sample_ids if spec.dataset else None) or [])
    }
    ordered = sorted(
        log.samples, key=lambda ws: (order.get(str(ws[1].id), len(order)), ws[1].epoch)
    )
    for where, sample in ordered:
        case_id = str(sample.id)
        imported.cases.append(_case(path, where, spec, sample))
        output = sample.output
        usage, cost = _usage(path, where, sample)
        imported.trials.append(
            Trial(
                case_id=case_id,
                trial=sample.epoch,
                condition=condition,
                runner=f"{TOOL}:{spec.model}",
                response=output.completion if output else "",
                usage=usage,
                cost_usd=cost,
                model=spec.model,
                latency_s=output.time if output else None,
                error=sample.error.message if sample.error else None,
                run_id=spec.run_id or spec.eval_id,
                created_at=sample.started_at or spec.created,
            )
        )
        imported.origins.append(f"{path}: {where}")
        if sample.error is not None or not sample.scores:
            continue  # an errored sample is an errored trial, never partly scored
        metrics: dict[str, float] = {}
        reasons = []
        for name, score in sample.scores.items():
            metrics.update(
                score_values(path, place(where, "scores", name, "value"), name, score.value)
            )
            if score.explanation:
                reasons.append(f"{name}: {score.explanation}")
        imported.scores.append(
            ScoreRow.model_validate(
                {
                    "case_id": case_id,
                    "trial": sample.epoch,
                    "condition": condition,
                    "source": TOOL,
                    "evidence": reasons or None,
                    **metrics,
                }
            )
        )
    return imported


def _case(path: Path, where: str, spec: EvalSpec, sample: Sample) -> Case:
    metadata = dict(sample.metadata or {})
    category = metadata.pop("category", None)
    metadata.pop("risk", None)
    cluster = cluster_of(metadata)
    if cluster is not None:
        metadata.pop("cluster")
    targets = [sample.target] if isinstance(sample.target, str) else list(sample.target)
    targets = [t for t in targets if t.strip()]
    try:
        return Case(
            id=str(sample.id),
            category=category if isinstance(category, str) and category.strip() else spec.task,
            prompt=_input_text(sample.input) or "(empty input)",
            risk=risk_of(sample.metadata),
            criteria=[f"matches the target: {t}" for t in targets]
            or [f"passes the {spec.task} scorers"],
            reference="\n".join(targets) or None,
            metadata=metadata or None,
            cluster=cluster,
        )
    except ValueError as exc:  # a blank sample id
        raise problem(path, place(where, "id"), str(exc).splitlines()[-1].strip()) from None
