"""What the importers share: the imported run, reading a source's JSON with errors that name
the place, metric names, and the suite that lets `assay score` and `assay report` read it.

Every problem is an InputError `ERROR: FILE: PLACE: message`, where PLACE is a JSON path
(`results.results[3].score`) or, in JSON that does not parse, the line and column.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, cast, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.core.errors import InputError
from assay.core.jsonl import MAX_DEPTH, nesting_depth, reading
from assay.core.records import Case, Risk, ScoreRow, Trial

M = TypeVar("M", bound=BaseModel)

MAX_PROBLEMS = 20
DEFAULT_RISK: Risk = "medium"
Tool = Literal["promptfoo", "inspect"]


class Source(BaseModel):
    """A part of another tool's output: only the fields assay reads are declared, their JSON
    types are checked (never coerced), and every other field is ignored."""

    model_config = ConfigDict(
        extra="ignore", strict=True, populate_by_name=True, allow_inf_nan=False
    )


@dataclass(slots=True)
class Imported:
    """A run of another harness as assay records: the cases when the source carries the
    inputs, one trial per response, and one score row per scored trial."""

    tool: Tool
    sources: list[Path]
    cases: list[Case] = field(default_factory=list)
    trials: list[Trial] = field(default_factory=list)
    scores: list[ScoreRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    """Where each trial was read (`FILE: JSON path`), in the order of `trials`."""
    incomplete: list[str] = field(default_factory=list)
    """Why the source's run did not finish there (`FILE: status cancelled: 27 of 33
    samples`); empty for a finished run. Written as the suite's `[source]`."""
    source_gate: str | None = None
    """The metric that carries the source's own pass/fail of each test (promptfoo's `pass`),
    which the suite requires of every case of the gated condition; None when the source has
    no per-test verdict (Inspect)."""

    @property
    def conditions(self) -> list[str]:
        """The conditions, in the order they first appear."""
        return list(dict.fromkeys(t.condition for t in self.trials))

    @property
    def metrics(self) -> list[str]:
        """The metrics of the score rows, in the order they first appear."""
        return list(dict.fromkeys(name for row in self.scores for name in metrics_of(row)))

    @property
    def scale(self) -> tuple[float, float]:
        """The range the metrics lie in: [0, 1] widened to hold every value (a scorer may
        report on its own scale)."""
        values = [v for row in self.scores for v in metrics_of(row).values()]
        return (min([0.0, *values]), max([1.0, *values]))


def metrics_of(row: ScoreRow) -> dict[str, float]:
    """A score row's metrics: its numeric extra fields."""
    return {
        name: float(value)
        for name, value in (row.model_extra or {}).items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


# -- places and problems --------------------------------------------------------------------


def place(*parts: str | int) -> str:
    """A JSON path: `results.results[3].gradingResult`."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif text:
            text += f".{part}"
        else:
            text = part
    return text or "(top level)"


def problem(path: Path, where: str, message: str) -> InputError:
    """The InputError for one problem at one place of a source file."""
    return InputError(f"ERROR: {path}: {where}: {message}")


def is_zip(path: Path) -> bool:
    """Whether a file is a zip archive (an Inspect `.eval` log); a file that cannot be read
    is an InputError naming it."""
    with reading(path), path.open("rb") as handle:
        return handle.read(4) == b"PK\x03\x04"


def parse_json(path: Path, text: str | bytes | bytearray, member: str | None = None) -> Any:
    """Parse a source's JSON; invalid JSON names the line and column (of `member`, a file
    inside an archive, when given)."""
    inside = f"{member}:" if member else ""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"ERROR: {path}: {inside}{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"ERROR: {path}: {inside} not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise InputError(f"ERROR: {path}: {inside} invalid JSON: nested too deeply") from None
    except MemoryError:
        where = f"{path}: {member}" if member else f"{path}"
        raise InputError(
            f"ERROR: {where}: too large to parse in the memory available ({len(text):,} bytes)"
        ) from None
    if nesting_depth(value) > MAX_DEPTH:
        raise InputError(f"ERROR: {path}: {inside} JSON nested more than {MAX_DEPTH} levels deep")
    return value


def validate(model: type[M], data: Any, path: Path, *prefix: str | int) -> M:
    """Validate `data` (found at `prefix` in `path`) as `model`; every problem names its
    JSON path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(validation_messages(exc, path, prefix)) from None


def validation_messages(exc: ValidationError, path: Path, prefix: Sequence[str | int]) -> list[str]:
    messages = []
    for err in exc.errors()[:MAX_PROBLEMS]:
        where = place(*prefix, *err["loc"])
        message = "required field is missing" if err["type"] == "missing" else err["msg"]
        messages.append(f"ERROR: {path}: {where}: {message}")
    return messages


def validate_all(model: type[M], items: Sequence[Any], path: Path, *prefix: str | int) -> list[M]:
    """Validate every item of a list (at `prefix`); one InputError lists the problems of
    all of them (the first MAX_PROBLEMS)."""
    valid: list[M] = []
    messages: list[str] = []
    for index, item in enumerate(items):
        try:
            valid.append(model.model_validate(item))
        except ValidationError as exc:
            messages.extend(validation_messages(exc, path, [*prefix, index]))
    if messages:
        raise InputError(messages[:MAX_PROBLEMS])
    return valid


def sniff(data: Any) -> str | None:
    """Which tool wrote a parsed JSON document (promptfoo, inspect), if either did."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("eval"), dict):
        return "inspect"
    results = data.get("results")
    if isinstance(results, dict) and isinstance(results.get("results"), list):
        return "promptfoo"
    return None


def not_this_tool(path: Path, data: Any, tool: str, expected: str) -> InputError:
    """The error for a file the tool did not write: names the tool that did, when known."""
    found = "an Inspect .eval log (a zip archive)" if data is ZIP else None
    other = "inspect" if data is ZIP else sniff(data)
    if other is not None and other != tool:
        found = found or f"{other} output"
        return problem(
            path, place(), f"this is {found}, not {tool} output: use `assay import {other}`"
        )
    keys = ", ".join(list(data)[:8]) if isinstance(data, dict) else type(data).__name__
    return problem(path, place(), f"not {expected}; found: {keys}")


ZIP = object()
"""Stands for a zip archive's content in `not_this_tool`."""


# -- metrics --------------------------------------------------------------------------------

RESERVED = frozenset(ScoreRow.model_fields)


def metric_name(raw: str) -> str:
    """A metric name assay's flags and files take: lower case, `_` for anything but letters,
    digits and dots (`llm-rubric` → `llm_rubric`); a field the score row already declares
    (`confidence`, `notes`, ...) gets `_value` appended."""
    name = re.sub(r"[^0-9a-z_.]+", "_", raw.strip().lower()).strip("_") or "metric"
    return f"{name}_value" if name in RESERVED else name


def unique(names: Iterable[str]) -> list[str]:
    """Names made unique by numbering repeats in order: contains, contains_2, contains_3."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        out.append(name if count == 1 else f"{name}_{count}")
    return out


def number(value: Any) -> float | None:
    """A finite JSON number (booleans are 1/0) as a float, else None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    return None


def text_of(value: Any) -> str:
    """A response or input as text: strings as they are, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def risk_of(metadata: dict[str, Any] | None) -> Risk:
    """The case's risk tier from the source's metadata (`risk`), else medium."""
    risk = (metadata or {}).get("risk")
    for tier in get_args(Risk):
        if risk == tier:
            return cast(Risk, tier)
    return DEFAULT_RISK


def cluster_of(metadata: dict[str, Any] | None) -> str | None:
    """The case's cluster from the source's metadata (`cluster`: a template, a source
    document, a conversation the case shares with others), when it is a non-blank string or
    a whole number; None otherwise (the value then stays in the case's metadata)."""
    cluster = (metadata or {}).get("cluster")
    if isinstance(cluster, int) and not isinstance(cluster, bool):
        return str(cluster)
    if isinstance(cluster, str) and cluster.strip():
        return cluster
    return None


def first_cases(cases: Iterable[Case]) -> list[Case]:
    """One case per id, the first seen (a prompt variant renders the same case differently;
    the case is what the variants share)."""
    kept: dict[str, Case] = {}
    for case in cases:
        kept.setdefault(case.id, case)
    return list(kept.values())


def check_unique(imported: Imported) -> None:
    """Two responses for the same (case, trial, condition) are an error naming both places."""
    seen: dict[tuple[str, int, str], str] = {}
    problems = []
    for trial, here in zip(imported.trials, imported.origins, strict=True):
        key = (trial.case_id, trial.trial, trial.condition)
        if key in seen:
            problems.append(
                f"ERROR: {here}: case {key[0]!r}, trial {key[1]}, condition {key[2]!r} was"
                f" already read from {seen[key]}"
            )
        else:
            seen[key] = here
    if problems:
        raise InputError(problems[:MAX_PROBLEMS])


# -- the suite beside the records -----------------------------------------------------------


def toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=True)


def suite_text(
    imported: Imported,
    *,
    cases: str | None,
    candidate: str | None,
    command: str,
    source_gate: bool = True,
) -> str:
    """The suite that `assay score`, `assay report` and `assay review` read the import with:
    the metrics' scale, the case catalogue, the condition the gate decides for, the source's
    own verdict of each test as a per-case threshold (unless `source_gate` is false) and
    `[source]`: the tool, and whether its run finished."""
    low, high = imported.scale
    lines = [
        f"# Written by {command}: the scale of the imported metrics, the case",
        "# catalogue and the candidate, for assay score / report --suite.",
        f"name = {toml_string(f'{imported.tool} import')}",
    ]
    if cases is not None:
        lines.append(f"cases = {toml_string(cases)}")
    lines += ["", "[scoring]", f"scale = [{low!r}, {high!r}]"]
    gate = imported.source_gate
    if source_gate and gate is not None and gate in imported.metrics:
        lines += [
            "",
            f"# {imported.tool}'s own verdict: a case whose test failed in any trial fails",
            f"# the gate (`{command} --no-source-gate` leaves this out).",
            "[scoring.thresholds]",
            f"{toml_string(gate)} = 1.0",
        ]
    if candidate is not None:
        lines += ["", "[gate]", f"candidate = {toml_string(candidate)}"]
    lines += ["", "[report]", f"title = {toml_string(f'{imported.tool} results')}"]
    lines += [
        "",
        "# The harness the run came from; complete = false: the run did not finish there.",
        "[source]",
        f"tool = {toml_string(imported.tool)}",
        f"complete = {'false' if imported.incomplete else 'true'}",
    ]
    if imported.incomplete:
        lines.append("reasons = [")
        lines += [f"  {toml_string(reason)}," for reason in imported.incomplete]
        lines.append("]")
    return "\n".join([*lines, ""])


def rename(imported: Imported, old: str, new: str) -> None:
    """Rename a condition in every trial and score row."""
    imported.trials = [
        t.model_copy(update={"condition": new}) if t.condition == old else t
        for t in imported.trials
    ]
    imported.scores = [
        s.model_copy(update={"condition": new}) if s.condition == old else s
        for s in imported.scores
    ]


def merge(tool: Tool, parts: Sequence[Imported]) -> Imported:
    """Several sources as one run (the cases first seen win)."""
    merged = Imported(tool=tool, sources=[p for part in parts for p in part.sources])
    for part in parts:
        merged.cases.extend(part.cases)
        merged.trials.extend(part.trials)
        merged.scores.extend(part.scores)
        merged.notes.extend(part.notes)
        merged.origins.extend(part.origins)
        merged.incomplete.extend(part.incomplete)
        merged.source_gate = merged.source_gate or part.source_gate
    merged.cases = first_cases(merged.cases)
    check_unique(merged)
    return merged
