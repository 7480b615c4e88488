"""The command line's sharp edges: output paths, permissions, duplicate input, runner names,
help texts, the version and the python: runner's signature."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assay.core.jsonl import write_jsonl


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_output_files_respect_the_umask(tmp_path: Path) -> None:
    with umask(0o022):
        write_jsonl(tmp_path / "shared.jsonl", [{"a": 1}])
    with umask(0o077):
        write_jsonl(tmp_path / "private.jsonl", [{"a": 1}])
    assert mode(tmp_path / "shared.jsonl") == 0o644
    assert mode(tmp_path / "private.jsonl") == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_rewritten_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    path.write_text("")
    path.chmod(0o640)
    with umask(0o022):
        write_jsonl(path, [{"a": 1}])
    assert mode(path) == 0o640
    assert path.read_text() == '{"a": 1}\n'
