"""`assay view --export DIR` never deletes or overwrites what it did not write: the store, its
folder and every folder above it, the default store, the current folder and a folder of
someone else's files are refused even with --force, which replaces only an earlier export;
a write that fails (a file-size limit, a full disk, a folder that cannot be renamed) is an
error naming the path and the cause, with no traceback and nothing half-written left."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from view_store import make_store

from assay.core.errors import InputError
from conftest import ROOT, invoke

MARKER = ".assay-export.json"  # the manifest an export writes (view/target.py)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def leftovers(folder: Path) -> list[str]:
    """Work folders an export left beside its target (`.NAME.xxxx`)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".site"))


@pytest.fixture
def results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `results/` folder holding the store and a file of the user's, the current folder
    being `tmp_path`, which also holds the default store `.assay/assay.db`."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "results"
    folder.mkdir()
    make_store(folder / "assay.db", 3).close()
    (folder / "notes.md").write_text("the user's own notes")
    (tmp_path / ".assay").mkdir()
    make_store(tmp_path / ".assay" / "assay.db", 2).close()
    return folder


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("results", "holds the store (--store)"),  # the store's folder
        ("results/assay.db", "is the store (--store)"),
        (".assay", "holds the default store"),
        (".", "is the current folder"),
        ("..", "holds the current folder"),
        ("results/..", "is the current folder"),
    ],
)
def test_force_never_replaces_the_store_its_folders_or_the_current_folder(
    results: Path, target: str, said: str
) -> None:
    here = results.parent
    before = snapshot(here)
    done = invoke("view", "--store", "results/assay.db", "--export", target, "--force")
    assert done.code == 2, done.stdout + done.stderr
    assert said in done.stderr and f"--export {target}" in done.stderr
    assert "Traceback" not in done.stderr
    assert snapshot(here) == before  # the stores and the user's file untouched
    assert [p.name for p in here.iterdir() if p.name.startswith(".") and p.name != ".assay"] == []


def test_force_replaces_only_an_earlier_export(results: Path) -> None:
    here = results.parent
    store = ["view", "--store", "results/assay.db"]
    mine = here / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("not an export")
    refused = invoke(*store, "--export", "mine", "--force")
    assert refused.code == 2 and "is not an earlier export" in refused.stderr
    assert snapshot(mine) == {"keep.txt": b"not an export"}

    first = invoke(*store, "--export", "site")
    assert first.code == 0, first.stderr
    assert (here / "site" / MARKER).is_file() and (here / "site" / "index.html").is_file()
    again = invoke(*store, "--export", "site")
    assert again.code == 2 and "holds an earlier export (pass --force" in again.stderr
    replaced = invoke(*store, "--export", "site", "--force")
    assert replaced.code == 0, replaced.stderr

    # a file put into the earlier export since is not the export's to delete
    (here / "site" / "runs" / "notes.txt").write_text("added by hand")
    (here / "site" / "extra").mkdir()
    before = snapshot(here / "site")
    foreign = invoke(*store, "--export", "site", "--force")
    assert foreign.code == 2, foreign.stdout
    assert "holds 2 file(s) the earlier export did not write or that changed since" in (
        foreign.stderr
    )
    assert "(extra/, runs/notes.txt)" in foreign.stderr
    assert snapshot(here / "site") == before
    (here / "site" / "runs" / "notes.txt").unlink()
    (here / "site" / "extra").rmdir()
    # a page edited since is the user's writing now
    (here / "site" / "index.html").write_text("my own notes on the runs")
    edited = invoke(*store, "--export", "site", "--force")
    assert edited.code == 2 and "(index.html)" in edited.stderr
    assert (here / "site" / "index.html").read_text() == "my own notes on the runs"
    # an empty folder is taken as it is
    (here / "empty").mkdir()
    assert invoke(*store, "--export", "empty").code == 0
    assert leftovers(here) == []


def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_file_size_limit_is_an_error_and_leaves_the_earlier_export_whole(
    results: Path,
) -> None:
    here = results.parent
    long = here / "long.db"  # a case page of 100 KB
    make_store(long, 3, response=lambda i, c: f"{c}: " + "word " * 20_000).close()
    assert invoke("view", "--store", "long.db", "--export", "site").code == 0
    before = snapshot(here / "site")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "assay", "view"),
            "--store",
            "long.db",
            "--export",
            "site",
            "--force",
        ],
        cwd=here,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        # 64 KB: the store's reader has room for its 32 KB shared-memory file, a page not
        preexec_fn=lambda: _limited(65536),
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "--export site: cannot write" in done.stderr and "File too large" in done.stderr
    assert f"{here / 'site'}/" in done.stderr  # the file, as it would have been named
    assert snapshot(here / "site") == before  # the earlier export as it was
    assert leftovers(here) == []  # the partial export removed


def test_a_full_disk_and_a_folder_that_cannot_be_renamed_leave_nothing_behind(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.api.viewing import export_view

    here = results.parent
    opened = 0
    real_open = Path.open

    def full(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        nonlocal opened
        if "w" in mode:
            opened += 1
            if opened > 5:  # a disk full after the fifth file
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(self, mode, *args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(Path, "open", full)
        with pytest.raises(InputError) as full_disk:
            export_view(results / "assay.db", here / "site")
    message = str(full_disk.value)
    assert "No space left on device" in message and "nothing was exported" in message
    assert f"cannot write {here / 'site'}/" in message
    assert not (here / "site").exists() and leftovers(here) == []

    export_view(results / "assay.db", here / "site")
    before = snapshot(here / "site")
    real_rename = os.rename

    def busy(source: Any, target: Any) -> None:
        if Path(source) == here / "site":
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(source))
        real_rename(source, target)

    with monkeypatch.context() as patched:
        patched.setattr(os, "rename", busy)
        with pytest.raises(InputError) as mounted:
            export_view(results / "assay.db", here / "site", force=True)
    assert "cannot put the export in place: Device or resource busy" in str(mounted.value)
    assert snapshot(here / "site") == before and leftovers(here) == []
