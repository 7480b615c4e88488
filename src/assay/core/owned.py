"""Files a command writes into a folder the user names, replaced only when the command wrote
them: `assay import --output DIR` (cases.jsonl, trials.jsonl, scores.jsonl, suite.toml), and
`assay view --export DIR` (a whole folder tree, replaced only when nothing else is in it:
`foreign`).

The command records what it wrote in a manifest beside the files (`.assay-import.json`: each
file's SHA-256). A later run replaces a file only when the manifest names it with the hash the
file still has: an earlier run's output, unchanged. Any other file in its way (the user's own
cases.jsonl in `--output .`, or an imported suite.toml edited since) is refused before anything
is read or written, as an InputError naming each file, unless the user asks to overwrite.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.core.cases import file_sha256
from assay.core.errors import InputError
from assay.core.jsonl import read_bytes, write_bytes_atomic

MAX_MANIFEST = 2**20


@dataclass(frozen=True, slots=True)
class Owned:
    """A folder's files written by one command, as its manifest records them."""

    folder: Path
    manifest: str
    """The manifest's file name in the folder (`.assay-import.json`)."""
    writer: str
    """The command that writes the files (`assay import`), as the manifest and errors say."""

    @property
    def path(self) -> Path:
        return self.folder / self.manifest

    def recorded(self) -> dict[str, str] | None:
        """File name → SHA-256 of what the command last wrote here; {} when there is no
        manifest, None when the manifest file is not one this command wrote."""
        if not self.path.exists() and not self.path.is_symlink():
            return {}
        try:
            data = json.loads(read_bytes(self.path, limit=MAX_MANIFEST))
        except (InputError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("written_by") != self.writer:
            return None
        files = data.get("files")
        if not isinstance(files, dict):
            return None
        return {str(k): str(v) for k, v in files.items() if isinstance(v, str)}

    def check(self, names: Sequence[str], flag: str, overwrite_flag: str) -> None:
        """Refuse (InputError, one line per file) each of `names` that exists in the folder
        and is not the command's own unchanged output; so is a manifest file that is not the
        command's."""
        recorded = self.recorded()
        problems = []
        if recorded is None:
            problems.append(
                f"ERROR: {flag} {self.path}: exists and is not a manifest {self.writer} wrote"
            )
            recorded = {}
        for name in names:
            path = self.folder / name
            if not path.exists() and not path.is_symlink():
                continue
            if not path.is_file():
                problems.append(f"ERROR: {flag} {path}: exists and is not a file")
                continue
            expected = recorded.get(name)
            if expected is None:
                problems.append(f"ERROR: {flag} {path}: exists and {self.writer} did not write it")
            elif file_sha256(path) != expected:
                problems.append(f"ERROR: {flag} {path}: was changed since {self.writer} wrote it")
        if problems:
            problems.append(
                f"ERROR: {flag} {self.folder}: {self.writer} replaces only its own earlier output:"
                f" give a new or empty folder, or {overwrite_flag} to replace these files"
            )
            raise InputError(problems)

    def record(self, written: Iterable[Path], stale: Sequence[str] = ()) -> None:
        """Record `written` (files in the folder) in the manifest, and remove the files of
        `stale` (names) an earlier run wrote and this one did not, when still unchanged."""
        recorded = self.recorded() or {}
        for name in stale:
            path = self.folder / name
            expected = recorded.pop(name, None)
            if expected is not None and path.is_file() and file_sha256(path) == expected:
                with contextlib.suppress(OSError):
                    path.unlink()
        files = {self._key(path): file_sha256(path) for path in written}
        data = {"written_by": self.writer, "files": dict(sorted(files.items()))}
        write_bytes_atomic(self.path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))

    def _key(self, path: Path) -> str:
        """A written file's name in the manifest: its path under the folder."""
        try:
            return path.relative_to(self.folder).as_posix()
        except ValueError:
            return path.name

    def foreign(self) -> list[str] | None:
        """What the folder holds (its sub-folders walked, links not followed) that the manifest
        does not record as written and unchanged: paths under the folder, a folder with a
        trailing `/`; None when the folder has no manifest of this command's."""
        recorded = self.recorded() if self.path.is_file() else None
        if not recorded:
            return None
        folders = {p.as_posix() for name in recorded for p in Path(name).parents}
        found = []
        for name, is_folder in entries(self.folder):
            if name == self.manifest:
                continue
            if is_folder:
                if name not in folders:
                    found.append(name + "/")
            elif (self.folder / name).is_symlink():
                found.append(name)  # the command writes no link
            elif recorded.get(name) != file_sha256(self.folder / name):
                found.append(name)
        return sorted(found)


def entries(folder: Path, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """(path under `folder`, is a folder) of everything in it, links not followed."""
    with os.scandir(folder) as listing:
        for entry in listing:
            name = prefix + entry.name
            if entry.is_dir(follow_symlinks=False):
                yield name, True
                yield from entries(Path(entry.path), name + "/")
            else:
                yield name, False
