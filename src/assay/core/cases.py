"""The case catalogue: load a JSONL file of cases, reporting every problem in one pass."""

from __future__ import annotations

import hashlib
from pathlib import Path

from assay.core.errors import InputError
from assay.core.jsonl import format_errors, iter_objects, parse_records, read_bytes
from assay.core.records import Case

DEFAULT_CASES = Path("evals/cases.jsonl")

__all__ = ["DEFAULT_CASES", "Case", "case_lines", "check_pinned", "file_sha256", "load_cases"]


def load_cases(path: Path, *, allow_empty: bool = False) -> list[Case]:
    """Load and validate a catalogue; raise InputError listing every problem found."""
    records, errors = parse_records(path, Case)
    ids = [(number, case.id) for number, case in records]
    if errors:  # a line with other problems may still repeat an id: check the raw objects
        ids = [
            (number, obj["id"])
            for number, obj in iter_objects(path)
            if isinstance(obj, dict) and isinstance(obj.get("id"), str) and obj["id"].strip()
        ]
    first_line: dict[str, int] = {}
    for number, case_id in ids:
        first = first_line.setdefault(case_id, number)
        if first != number:
            errors.append((number, f"id: duplicate id {case_id!r} (first on line {first})"))
    if errors:
        raise InputError(format_errors(path, errors))
    if not records and not allow_empty:
        raise InputError(f"ERROR: {path}: the catalogue has no cases")
    return [case for _, case in records]


def case_lines(path: Path) -> dict[str, int]:
    """Each case id's line in the catalogue (its first, 1-based), for pointing people (and CI
    annotations) at a case; lines that are not a case with an id are passed over."""
    lines: dict[str, int] = {}
    for number, obj in iter_objects(path):
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            lines.setdefault(obj["id"], number)
    return lines


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes: what a suite's `cases_sha256` pins and
    `assay validate --print-sha256` prints."""
    return hashlib.sha256(read_bytes(path)).hexdigest()


def check_pinned(path: Path, expected: str, pinned_by: object) -> None:
    """A pinned golden set: InputError (exit 2) naming the file and both hashes unless the
    file's SHA-256 is `expected` (`pinned_by` names where the pin is written)."""
    actual = file_sha256(path)
    if actual != expected.lower():
        raise InputError(
            f"ERROR: {path}: not the pinned golden set: {pinned_by} expects"
            f" cases_sha256 = {expected.lower()}, the file's sha256 is {actual}; if the change"
            f" is intended, pin the new hash (assay validate --cases {path} --print-sha256)"
        )
