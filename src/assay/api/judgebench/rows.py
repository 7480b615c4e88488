"""The rows of the public sets' files, validated: a malformed file is an InputError naming
the file, the line and the field (`ERROR: FILE:LINE: field: message`), never a KeyError.

Only the fields assay reads are declared; every other field is ignored. A JSON file of the
set (an array of objects) is read element by element (`json.JSONDecoder.raw_decode`), so each
row's line is known; a JSONL file is read by `assay.core.jsonl.parse_records`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.core.errors import InputError
from assay.core.jsonl import describe_validation_error, format_errors, parse_records, read_text

R = TypeVar("R", bound="Row")
GAP = re.compile(r"\s*")
Text = str | int | float | bool
"""An output text: PandaLM stores a few as JSON `true` (read as their Python text)."""


class Row(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class LLMBarRow(Row):
    """An item of LLMBar's `dataset.json`: label 1 prefers output_1, 2 output_2."""

    input: str
    output_1: Text
    output_2: Text
    label: Literal[1, 2]


class PRDQuestion(Row):
    """A line of PRD's `prompts/vicuna_questions.jsonl`."""

    question_id: int
    text: str


class PRDAnswer(Row):
    """A line of PRD's `generations/answer_<model>.jsonl`."""

    question_id: int
    text: Text


class PRDRating(Row):
    """A line of a PRD ratings file: score 1 prefers the first model, 2 the second, 3 tie."""

    question_id: int
    score: Literal[1, 2, 3]


class PandaLMRow(Row):
    """An item of PandaLM's `testset-v1.json`: each annotator says 1, 2 or 0 (similar)."""

    idx: int | str
    instruction: str
    input: str
    response1: Text
    response2: Text
    annotator1: Literal[0, 1, 2]
    annotator2: Literal[0, 1, 2]
    annotator3: Literal[0, 1, 2]


def missing(path: Path) -> InputError:
    return InputError(f"ERROR: --data: {path} not found (expected the set's public layout)")


def json_rows(path: Path, model: type[R]) -> list[tuple[int, R]]:
    """(line, row) of each element of the JSON array in `path`, validated as `model`."""
    if not path.is_file():
        raise missing(path)
    text = read_text(path)
    decoder = json.JSONDecoder()
    found: list[tuple[int, object]] = []
    try:
        at = _gap(text, 0)
        if text[at : at + 1] != "[":
            raise InputError(f"ERROR: {path}:{_line(text, at)}: expected a JSON array of items")
        at = _gap(text, at + 1)
        line, counted = 1, 0
        while text[at : at + 1] != "]":
            line, counted = line + text.count("\n", counted, at), at
            value, at = decoder.raw_decode(text, at)
            found.append((line, value))
            at = _gap(text, at)
            if text[at : at + 1] == ",":
                at = _gap(text, at + 1)
            elif text[at : at + 1] != "]":
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        if _gap(text, at + 1) != len(text):
            raise json.JSONDecodeError("Extra data", text, at + 1)
    except json.JSONDecodeError as error:
        raise InputError(f"ERROR: {path}:{error.lineno}: not JSON: {error.msg}") from None
    rows: list[tuple[int, R]] = []
    errors: list[tuple[int, str]] = []
    for number, value in found:
        try:
            rows.append((number, model.model_validate(value)))
        except ValidationError as exc:
            errors.extend((number, m) for m in describe_validation_error(exc))
    if errors:
        raise InputError(format_errors(path, errors))
    return rows


def jsonl_rows(path: Path, model: type[R]) -> list[tuple[int, R]]:
    """(line, row) of each line of the JSONL file `path`, validated as `model`."""
    if not path.is_file():
        raise missing(path)
    rows, errors = parse_records(path, model)
    if errors:
        raise InputError(format_errors(path, errors))
    return rows


def _gap(text: str, at: int) -> int:
    match = GAP.match(text, at)
    return match.end() if match else at


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1
