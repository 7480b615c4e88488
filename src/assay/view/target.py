"""The folder `assay view --export DIR` writes: proven safe to replace before any work, and
put in place whole.

An export never deletes or overwrites what it did not write. DIR is refused (InputError,
exit 2, before the store is read) when it:
- is, or holds, the store being exported or the default store (`.assay/assay.db`): its
  folder or any folder above it (a store's `-wal`/`-shm` files live beside it);
- is, or holds, the current folder;
- is a file, not a folder;
- is not empty and is not an earlier export, even with `force`;
- is an earlier export (its manifest, MARKER, lists every file it wrote with its SHA-256) but
  holds anything else, or a file changed since (named in the error), even with `force`;
- is an earlier export and `force` is not given.

The export is written into a new folder beside DIR, marked last (`mark`), then renamed into
place (`put_in_place`: the earlier export moved aside first and removed after, moved back if
the rename fails), so DIR is the earlier export or the whole new one, never a mix. A write
that fails (a full disk, a file-size limit, a folder that cannot be renamed such as a mount
point) removes the new folder and is an InputError naming the path and the cause
(`write_error`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from assay.core.errors import InputError
from assay.core.owned import Owned, entries
from assay.store import DEFAULT_STORE

MARKER = ".assay-export.json"
"""The manifest an export writes last (`core/owned.py`): every file it wrote, by its path in
the export, with its SHA-256."""
WRITER = "assay view --export"

Protected = Sequence[tuple[str, Path]]
"""(what it is, path) of each file an export must not delete, e.g. ("the store", path)."""


def protected_paths(store: Path | None) -> list[tuple[str, Path]]:
    """The files no export may replace: the store it reads, and the default store."""
    found = [("the store (--store)", store)] if store is not None else []
    return [*found, ("the default store", DEFAULT_STORE)]


def check_target(folder: Path, force: bool, protected: Protected = ()) -> Path:
    """The resolved folder the export will replace, once proven safe to (see the module
    docstring); InputError naming the folder and the reason otherwise."""
    where = f"ERROR: --export {folder}"
    try:
        target = folder.resolve()
        here = Path.cwd().resolve()
        held = [(what, path, path.resolve()) for what, path in protected]
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise InputError(f"{where}: cannot use this path: {exc}") from None
    if target == here or target in here.parents:
        what = "is the current folder" if target == here else f"holds the current folder {here}"
        raise InputError(
            f"{where}: {what}: an export replaces its folder whole; give a new folder for it"
        )
    for what, path, resolved in held:
        if target == resolved or target in resolved.parents:
            relation = "is" if target == resolved else "holds"
            raise InputError(
                f"{where}: {relation} {what} {path}: replacing it would delete the store;"
                " give a folder the store is not in"
            )
    try:
        if target.exists() and not target.is_dir():
            raise InputError(f"{where}: not a folder")
        if target.is_dir() and any(target.iterdir()):
            _check_earlier_export(target, force, where)
    except OSError as exc:
        raise InputError(f"{where}: cannot read the folder: {exc.strerror or exc}") from None
    return target


def _check_earlier_export(target: Path, force: bool, where: str) -> None:
    foreign = earlier_export(target).foreign()
    if foreign is None:
        raise InputError(
            f"{where}: the folder is not empty and is not an earlier export (no {MARKER} in"
            " it): an export replaces only a folder it wrote, even with --force; give a new"
            " or empty folder"
        )
    if not force:
        raise InputError(f"{where}: holds an earlier export (pass --force to replace it)")
    if foreign:
        shown = ", ".join(foreign[:3]) + (
            f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        )
        raise InputError(
            f"{where}: holds {len(foreign)} file(s) the earlier export did not write or that"
            f" changed since ({shown}): an export replaces only what it wrote, even with"
            " --force; move them or give another folder"
        )


def earlier_export(folder: Path) -> Owned:
    """The files an export wrote in `folder`, as its manifest records them."""
    return Owned(folder, MARKER, WRITER)


def work_folder(target: Path, folder: Path) -> Path:
    """A new, empty folder beside `target` to write the export in; InputError when the
    parent cannot be written."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as exc:
        raise InputError(
            f"ERROR: --export {folder}: cannot write there: {exc.strerror or exc}"
        ) from None


def mark(root: Path) -> None:
    """Record every file under `root` with its SHA-256 in the manifest, the export's last
    file (`core/owned.py`, as `assay import` records what it wrote)."""
    earlier_export(root).record([root / name for name, folder in entries(root) if not folder])


def put_in_place(work: Path, target: Path, folder: Path) -> None:
    """Rename the finished export `work` to `target`: an earlier export there is moved aside
    first and removed after, or moved back when the rename fails (InputError)."""
    aside = None
    try:
        if target.exists():
            aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.rename(target, aside / "export")
        os.rename(work, target)
    except OSError as exc:
        if aside is not None:
            if (aside / "export").exists() and not target.exists():
                os.rename(aside / "export", target)
            if not (aside / "export").exists():
                shutil.rmtree(aside, ignore_errors=True)
        raise InputError(
            f"ERROR: --export {folder}: cannot put the export in place: {exc.strerror or exc}"
            " (a mount point cannot be replaced: give a folder inside it); nothing was changed"
        ) from None
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


def write_error(exc: OSError, work: Path, target: Path, folder: Path) -> InputError:
    """A failed write of the export (a full disk, a file-size limit) as an InputError naming
    the file as it would have been in `target` and the cause."""
    name = Path(exc.filename) if isinstance(exc.filename, str) else None
    shown = target
    if name is not None:
        try:
            shown = target / name.relative_to(work)
        except ValueError:
            shown = name
    return InputError(
        f"ERROR: --export {folder}: cannot write {shown}: {exc.strerror or exc}; nothing was"
        " exported (the partial export was removed)"
    )
