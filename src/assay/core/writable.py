"""A command's output paths, proven before its first model call (or any heavy work).

`check_outputs` refuses, as an InputError (exit 2) naming the flag and the path:
- an output that is one of the command's inputs (the store, the case catalogue, the trials
  or scores being read, the suite file, its knowledge base, ...), or two outputs that are
  the same file: writing one would destroy the other;
- an output that cannot be written. Asking `os.access` is not proof (root is granted every
  permission it asks about, yet cannot create a file under /proc or on a read-only mount),
  so a probe file is created and removed where each output will be written, creating the
  missing folders as the write would (and removing them again, so a refused command leaves
  nothing behind).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import InputError


@dataclass(frozen=True, slots=True)
class Output:
    """A path a command writes: a file, or a `folder` it writes `files` into."""

    flag: str
    """How the user named it (`--output`), or what it is (`the suite's output`)."""
    path: Path
    folder: bool = False
    files: tuple[str, ...] = ()
    """A folder's files the command may write (each must not be an input)."""

    def targets(self) -> list[Path]:
        """The files this output writes."""
        return [self.path / name for name in self.files] if self.folder else [self.path]


Inputs = Iterable[tuple[str, str | Path | None]]
"""(what it is, path) of each file a command reads, e.g. ("the store (--store)", path);
a None path is an option not given."""


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: `os.path.samefile` when both exist (links, `..`),
    else their resolved paths compared."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        pass
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return a.absolute() == b.absolute()


def check_output(path: Path, flag: str, *, folder: bool = False) -> None:
    """`check_outputs` for one output path and no inputs."""
    check_outputs([Output(flag, path, folder)])


def check_outputs(outputs: Iterable[Output | None], inputs: Inputs = ()) -> None:
    """Refuse (InputError) an output that is an input or another output, or that cannot be
    written (see the module docstring). None outputs are options not given."""
    chosen = [o for o in outputs if o is not None]
    read = [(flag, Path(path)) for flag, path in inputs if path is not None]
    for index, output in enumerate(chosen):
        for target in output.targets():
            for flag, path in read:
                if same_file(target, path):
                    raise InputError(
                        f"ERROR: {output.flag} {target}: this is {flag}, which the command"
                        " reads: writing it would destroy that input; give another path"
                    )
            for other in chosen[:index]:
                if any(same_file(target, theirs) for theirs in other.targets()):
                    raise InputError(
                        f"ERROR: {output.flag} {target}: is also {other.flag}; each needs its"
                        " own file"
                    )
    for output in chosen:
        prove_writable(output)


def prove_writable(output: Output) -> None:
    """Create and remove a probe file where `output` will be written (InputError if not)."""
    path, where = output.path, f"ERROR: {output.flag} {output.path}"
    try:
        if path.is_dir() and not output.folder:
            raise InputError(f"{where}: is a folder; give a file name")
        if not output.folder and path.exists() and not path.is_file():
            # The atomic writer replaces the file: a device (/dev/null) or a pipe would be
            # replaced by a regular file, not written to.
            raise InputError(
                f"{where}: is not a regular file (a device or a pipe); give a file name"
            )
        if output.folder and path.exists() and not path.is_dir():
            raise InputError(f"{where}: is a file; give a folder")
        folder = path if output.folder else path.parent
        made = _make_folders(folder, where)
        try:
            _probe(folder, where)
        finally:
            for created in reversed(made):
                # something put there meanwhile is not ours to remove
                with contextlib.suppress(OSError):
                    created.rmdir()
    except OSError as exc:
        raise InputError(f"{where}: cannot use this path: {exc.strerror or exc}") from None


def _make_folders(folder: Path, where: str) -> list[Path]:
    """Create `folder` and its missing parents (as the write would); return those created."""
    missing: list[Path] = []
    nearest = folder
    while not nearest.exists() and nearest != nearest.parent:
        missing.append(nearest)
        nearest = nearest.parent
    if not nearest.is_dir():
        raise InputError(f"{where}: {nearest} is a file, not a folder")
    made: list[Path] = []
    for part in reversed(missing):
        try:
            part.mkdir()
        except FileExistsError:
            continue  # made meanwhile by someone else
        except OSError as exc:
            for created in reversed(made):
                created.rmdir()
            raise InputError(
                f"{where}: cannot create the folder {part}: {exc.strerror or exc}"
            ) from None
        made.append(part)
    return made


def _probe(folder: Path, where: str) -> None:
    """Create and remove an empty file in `folder`, as the atomic writer's temporary file is."""
    probe = folder / f".assay-probe.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise InputError(
            f"{where}: cannot write in the folder {folder}: {exc.strerror or exc}"
        ) from None
    os.close(fd)
    probe.unlink()
