"""The case catalogue: load a JSONL file of cases, reporting every problem in one pass."""

from __future__ import annotations

import hashlib
import itertools
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

from pydantic import ValidationError

from assay.core.errors import InputError
from assay.core.jsonl import (
    MAX_DEPTH,
    format_errors,
    iter_lines,
    iter_objects,
    parse_records,
    reading,
)
from assay.core.records import Case

DEFAULT_CASES = Path("evals/cases.jsonl")

HELD_BYTES = 2 * 2**20
"""A catalogue file up to this size is loaded whole (a few thousand cases: at most tens of MB
as Case objects, parsed once); a larger one is streamed (`CaseFile`), so a run's memory does
not grow with its cases (a Case takes about 1.7 KB, ten times its line)."""

__all__ = [
    "DEFAULT_CASES",
    "HELD_BYTES",
    "Case",
    "CaseFile",
    "case_lines",
    "check_pinned",
    "file_sha256",
    "load_cases",
    "scan_cases",
]


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


class CaseFile(Sequence[Case]):
    """A validated catalogue that is read again from its file each time it is iterated.

    A million cases as Case objects take about 2 GB; a run only walks them in order (its
    id, then its plan), so `scan_cases` validates the file once without keeping a case and
    each iteration streams it again. Indexing walks the file (nothing on the run's path
    indexes)."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = path
        self.size = count

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Case]:
        for number, line in iter_lines(self.path):
            if not line.strip():
                continue
            try:
                yield Case.model_validate_json(line)
            except ValidationError:
                raise InputError(
                    f"ERROR: {self.path}:{number}: the catalogue changed while it was in use"
                ) from None

    @overload
    def __getitem__(self, index: int) -> Case: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Case]: ...

    def __getitem__(self, index: int | slice) -> Case | Sequence[Case]:
        if isinstance(index, slice):
            return list(self)[index]
        position = index + self.size if index < 0 else index
        found = next(itertools.islice(self, position, None), None) if position >= 0 else None
        if found is None:
            raise IndexError(index)
        return found


def scan_cases(path: Path, *, allow_empty: bool = False) -> Sequence[Case]:
    """Validate a catalogue as `load_cases` does; a file over `HELD_BYTES` keeps no case, so
    memory stays flat.

    One streaming pass validates each line and remembers a 64-bit hash of its id; any
    problem (an invalid line, a possibly repeated id) hands the file to `load_cases`, whose
    InputError lists every problem exactly as before. A file of `HELD_BYTES` or less is
    loaded whole (read once, not once per pass); so is what is not a regular file (a pipe,
    /dev/stdin: it can be read only once)."""
    if not path.is_file() or path.stat().st_size <= HELD_BYTES:
        return load_cases(path, allow_empty=allow_empty)
    hashes = array("q")
    for _number, line in iter_lines(path):
        if not line.strip():
            continue
        if line.count("{") + line.count("[") > MAX_DEPTH:
            return _careful(path, allow_empty)
        try:
            case = Case.model_validate_json(line)
        except ValidationError:
            return _careful(path, allow_empty)
        hashes.append(hash(case.id))
    ordered = sorted(hashes)
    if any(a == b for a, b in itertools.pairwise(ordered)):
        return _careful(path, allow_empty)
    if not hashes and not allow_empty:
        raise InputError(f"ERROR: {path}: the catalogue has no cases")
    return CaseFile(path, len(hashes))


def _careful(path: Path, allow_empty: bool) -> CaseFile:
    """The full check: raises the InputError listing every problem (a hash collision of two
    different ids passes, and the file is then used as scanned)."""
    return CaseFile(path, len(load_cases(path, allow_empty=allow_empty)))


def case_lines(path: Path) -> dict[str, int]:
    """Each case id's line in the catalogue (its first, 1-based), for pointing people (and CI
    annotations) at a case; lines that are not a case with an id are passed over."""
    lines: dict[str, int] = {}
    for number, obj in iter_objects(path):
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            lines.setdefault(obj["id"], number)
    return lines


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes, read as a stream (a file of gigabytes is not held
    in memory): what a suite's `cases_sha256` pins, `assay validate --print-sha256` prints
    and `assay import` records of what it wrote (`core/owned.py`)."""
    with reading(path), path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


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
