"""Reading another tool's output within limits, so that no source can exhaust memory or disk.

- One JSON document (a file, or a member of an Inspect `.eval` archive decompressed) is at
  most MAX_DOCUMENT bytes: parsing holds several times its size (a 100 MB promptfoo file
  takes 440 MB to parse).
- One import reads at most MAX_TOTAL bytes of JSON: every file and every archive member it
  reads, decompressed. An archive's members are checked by the sizes its directory declares
  before the first is decompressed, and each is decompressed as a stream that stops at the
  size declared for it (a zstandard frame's own claim of its size is not trusted): a zip bomb
  (5.5 MB that decompress to 5.3 GB) is an InputError naming the file and the member, at
  no cost.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

import zstandard

from assay.core.errors import InputError
from assay.core.jsonl import decode_text, read_bytes

MAX_DOCUMENT = 512 * 2**20
MAX_TOTAL = 2 * 2**30
ZSTD: Final = 93  # the zip compression method Inspect writes .eval members with
CHUNK = 2**20


@dataclass(slots=True)
class Budget:
    """The bytes of JSON one import may still read."""

    total: int = field(default_factory=lambda: MAX_TOTAL)
    used: int = 0

    def take(self, size: int, where: str) -> None:
        """Count `size` more bytes read at `where` (`FILE` or `FILE: MEMBER`); InputError
        when they pass the total."""
        if self.used + size > self.total:
            raise InputError(
                f"ERROR: {where}: more than {self.total:,} bytes of JSON in one import (its"
                " files and archive members, decompressed): the most assay reads"
            )
        self.used += size


def read_document(path: Path, budget: Budget) -> str:
    """A JSON source file's text: at most MAX_DOCUMENT bytes, counted in the import's budget."""
    data = read_bytes(path, limit=MAX_DOCUMENT)
    budget.take(len(data), str(path))
    return decode_text(path, data)


def reserve(path: Path, archive: zipfile.ZipFile, names: Sequence[str], budget: Budget) -> None:
    """Count the members an import will read by the sizes the archive declares, before the
    first is decompressed: InputError naming the member that passes a limit."""
    for name in names:
        info = archive.getinfo(name)
        _check_document(path, info)
        budget.take(info.file_size, f"{path}: {name}")


def _check_document(path: Path, info: zipfile.ZipInfo) -> None:
    if info.file_size > MAX_DOCUMENT:
        raise InputError(
            f"ERROR: {path}: {info.filename}: decompresses to {info.file_size:,} bytes, more"
            f" than the {MAX_DOCUMENT:,} assay reads of one JSON document"
        )


def read_member(path: Path, archive: zipfile.ZipFile, name: str) -> bytearray:
    """A member's bytes, decompressed as a stream that stops at the size the archive declares.
    Python's zipfile reads deflated and stored members; Inspect writes zstandard ones
    (method 93), read here from the raw bytes with `zstandard`."""
    info = archive.getinfo(name)
    _check_document(path, info)
    try:
        if info.compress_type != ZSTD:
            with archive.open(info) as stream:
                return _drain(stream, info.file_size)  # zipfile checks the CRC at the end
        data = _drain(_zstd_stream(path, info), info.file_size)
        if len(data) != info.file_size:
            raise zipfile.BadZipFile(
                f"it decompresses to {len(data):,} bytes, not the {info.file_size:,} the"
                " archive declares"
            )
        if zlib.crc32(data) != info.CRC:
            raise zipfile.BadZipFile("CRC check failed")
        return data
    except MemoryError:
        raise InputError(
            f"ERROR: {path}: {name}: too large to read in the memory available"
            f" ({info.file_size:,} bytes)"
        ) from None
    except (
        zipfile.BadZipFile,
        zlib.error,
        zstandard.ZstdError,
        NotImplementedError,
        EOFError,
        OSError,
    ) as exc:
        raise InputError(f"ERROR: {path}: {name}: cannot read the archive member: {exc}") from None


def _zstd_stream(path: Path, info: zipfile.ZipInfo) -> IO[bytes]:
    """A reader of a zstandard member's decompressed bytes (its compressed bytes are read
    whole: they are no larger than the archive on disk)."""
    with path.open("rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        if local[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("bad local file header")
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        handle.seek(name_length + extra_length, 1)
        raw = handle.read(info.compress_size)
    reader: IO[bytes] = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    return reader


def _drain(stream: IO[bytes], declared: int) -> bytearray:
    """Read a stream to its end, stopping as soon as it passes the `declared` size."""
    data = bytearray()
    while chunk := stream.read(min(CHUNK, declared + 1 - len(data))):
        data += chunk
        if len(data) > declared:
            raise zipfile.BadZipFile(
                f"it decompresses to more than the {declared:,} bytes the archive declares"
            )
    return data
