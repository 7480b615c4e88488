"""Reading and writing JSONL files with line-accurate errors and atomic output."""

from __future__ import annotations

import gc
import json
import os
import secrets
import stat
from collections.abc import Hashable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay.core.errors import InputError

M = TypeVar("M", bound=BaseModel)

MAX_ERRORS = 200
MAX_DEPTH = 64  # deeper values validate but cannot be serialised again (and are never real)


def nesting_depth(value: Any) -> int:
    """How deeply lists and objects nest in a JSON value (iterative: no recursion limit)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """Turn an error reading `path` into one clear InputError (missing, a folder, unreadable)."""
    try:
        yield
    except FileNotFoundError:
        raise InputError(f"ERROR: {path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"ERROR: {path}: is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(f"ERROR: {path}: cannot read: {exc.strerror}") from None


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """Read a file's bytes or raise one clear InputError (missing, a folder, unreadable, or
    more than `limit` bytes: a file's size is checked before it is read, and a pipe or a
    device is read no further than the limit)."""
    with reading(path):
        if limit is None:
            return path.read_bytes()
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        raise InputError(
            f"ERROR: {path}: larger than {limit:,} bytes, the most assay reads of one file"
        )
    return data


def read_text(path: Path) -> str:
    """Read a UTF-8 file (a BOM is tolerated) or raise one clear InputError."""
    return decode_text(path, read_bytes(path))


def decode_text(path: Path, data: bytes) -> str:
    """A file's bytes as UTF-8 text (a BOM is tolerated); InputError naming the line of the
    first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"ERROR: {path}:{line}: file is not valid UTF-8 (byte {exc.start})"
        ) from None


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, read from the file as it goes (flat memory).

    The lines and their numbers are `read_text(path).splitlines()`'s; a file that is not
    valid UTF-8 raises read_text's InputError."""
    try:
        handle = path.open("rb")
    except OSError:
        read_bytes(path)  # raises the clear InputError
        raise
    number = 0
    with handle:
        for raw in handle:
            try:
                text = raw.decode("utf-8-sig" if number == 0 else "utf-8")
            except UnicodeDecodeError:
                read_text(path)  # raises the InputError naming the line and byte
                raise
            for line in text.splitlines():
                number += 1
                yield number, line


def iter_objects(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """Yield (line number, object) for each non-blank line, or (line, error message)."""
    return _objects(read_text(path).splitlines())


def _objects(lines: list[str]) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"invalid JSON: {exc.msg} (column {exc.colno})"
            continue
        except RecursionError:
            yield number, "invalid JSON: nested too deeply"
            continue
        if not isinstance(value, dict):
            yield number, f"expected a JSON object, got {type(value).__name__}"
            continue
        if nesting_depth(value) > MAX_DEPTH:
            yield number, f"invalid record: nested more than {MAX_DEPTH} levels deep"
            continue
        yield number, value


def describe_validation_error(exc: ValidationError) -> list[str]:
    """Turn a pydantic error into `field: message` strings."""
    out = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(record)"
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "required field is missing"
        out.append(f"{field}: {msg}")
    return out


@contextmanager
def paused_gc() -> Iterator[None]:
    """Build many long-lived objects without the cyclic garbage collector.

    Each collection walks every tracked object, and a million records trigger thousands of
    them: reading 1M rows took two to three times as long. Records hold no cycles, so
    nothing is left for the collector; it runs again as before once the block ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_records(path: Path, model: type[M]) -> tuple[list[tuple[int, M]], list[tuple[int, str]]]:
    """Validate every line of a JSONL file as `model`: (line, record) pairs and (line, error).

    A valid file takes the fast path (pydantic validates each line straight from JSON); at
    the first problem the whole file goes through the careful path for its messages.
    """
    lines = read_text(path).splitlines()
    with paused_gc():
        fast = _parse_fast(lines, model)
    if fast is not None:
        return fast, []
    records: list[tuple[int, M]] = []
    errors: list[tuple[int, str]] = []
    for number, obj in _objects(lines):
        if isinstance(obj, str):
            errors.append((number, obj))
        else:
            try:
                records.append((number, model.model_validate(obj)))
            except ValidationError as exc:
                errors.extend((number, m) for m in describe_validation_error(exc))
        if len(errors) >= MAX_ERRORS:
            errors.append((number, f"stopped after {MAX_ERRORS} errors"))
            break
    return records, errors


def _parse_fast(lines: list[str], model: type[M]) -> list[tuple[int, M]] | None:
    """Every line validated from JSON, or None when any line needs the careful path."""
    records: list[tuple[int, M]] = []
    validate = model.__pydantic_validator__.validate_json  # model_validate_json, sans wrapper
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if line.count("{") + line.count("[") > MAX_DEPTH:  # possibly too deep: check it
            return None
        try:
            records.append((number, validate(line)))
        except ValidationError:
            return None
    return records


def format_errors(path: Path, errors: list[tuple[int, str]]) -> list[str]:
    """Render (line, message) pairs as `ERROR: PATH:LINE: message`, in line order."""
    return [f"ERROR: {path}:{line}: {msg}" for line, msg in sorted(errors, key=lambda e: e[0])]


def repeats(keyed: Iterable[tuple[int, Hashable]]) -> list[tuple[int, int]]:
    """(position, earlier position) of every key that repeats an earlier one's."""
    first: dict[Hashable, int] = {}
    found = []
    for position, key in keyed:
        earlier = first.setdefault(key, position)
        if earlier != position:
            found.append((position, earlier))
    return found


def load_records(path: Path, model: type[M]) -> list[tuple[int, M]]:
    """Validate every line of a JSONL file as `model`; raise InputError listing all errors."""
    records, errors = parse_records(path, model)
    if errors:
        raise InputError(format_errors(path, errors))
    return records


def _temporary_beside(path: Path) -> tuple[int, Path]:
    """Create a new temporary file next to `path`, open for writing.

    Its mode is what `open` would give a new file (0o666 less the umask; reports are meant to
    be shared), or the mode of the file it replaces, where `tempfile.mkstemp` always gives 0o600.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = None
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            os.fchmod(fd, mode)
        return fd, tmp


@contextmanager
def atomic_writer(path: Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """Write a file atomically: readers see the old file or the whole new one (text in
    UTF-8, or bytes with `binary`).

    A path that cannot be written is an InputError naming it (`assay.core.writable` catches
    these before any work; this is the last line of defence)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary_beside(path)
    except OSError as exc:
        raise InputError(f"ERROR: {path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise InputError(f"ERROR: {path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (readers see no file, the old one or the whole new
    one); a path that cannot be written is an InputError naming it."""
    try:
        with atomic_writer(path, binary=True) as handle:
            handle.write(data)
    except OSError as exc:
        raise InputError(f"ERROR: {path}: cannot write: {exc.strerror or exc}") from None


json_line = json.JSONEncoder(ensure_ascii=False).encode
"""`json.dumps(value, ensure_ascii=False)`: the same text from one encoder made once, not
one per call (a few microseconds per row of a JSONL file of thousands)."""


def model_line(model: BaseModel) -> str:
    """A record's JSONL line as `write_jsonl` writes its JSON data (`model_dump(mode="json")`,
    e.g. trials.jsonl's)."""
    return json_line(model.model_dump(mode="json"))


def write_jsonl(path: Path, rows: Iterable[BaseModel | dict[str, Any] | str]) -> int:
    """Write rows as JSONL atomically; return how many were written. A row given as a string
    is JSON made already (a model's `model_dump_json()`), written as it is."""
    count = 0
    with atomic_writer(path) as handle:
        for row in rows:
            if isinstance(row, str):
                handle.write(row)
            elif isinstance(row, BaseModel):
                handle.write(row.model_dump_json())
            else:
                handle.write(json_line(row))
            handle.write("\n")
            count += 1
    return count
