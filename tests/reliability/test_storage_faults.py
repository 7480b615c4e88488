"""A store this user cannot write, and a full disk: the command exits 2 (read-only: nothing
was sent) or 3 (full: free space and run it again) with one message naming the store, never a
SQLite traceback; the store keeps what it held, and the rerun on a disk with room recovers
every row."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability_support import read_jsonl

import assay as assay_package
from conftest import make_case, write_jsonl

NOBODY = 65534

# Run as root, the command is run as `nobody` (os.setuid in the child, as `su nobody` would;
# the interpreter may sit in a folder nobody cannot read, so every module the command may
# import is imported first).
AS_NOBODY = f"""
import encodings, importlib, os, pkgutil, sys
import assay, rich, typer
for package in (assay, encodings, typer, rich):  # typer and rich import some modules lazily
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith("__main__"):
            try:
                importlib.import_module(module.name)
            except Exception:
                pass
import importlib.readers
os.setgroups([])
os.setgid({NOBODY})
os.setuid({NOBODY})
sys.argv = ["assay", *sys.argv[1:]]
assay.cli.main()
"""

# The disk fills once the store holds `pages` pages (SQLite's own limit, set on every
# connection the command opens to it).
FULL_AT = """
import sqlite3, sys
pages, store = int(sys.argv.pop(1)), sys.argv.pop(1)
opened = sqlite3.connect

def connect(path, *args, **kwargs):
    db = opened(path, *args, **kwargs)
    if str(path) == store:
        db.execute(f"PRAGMA max_page_count = {pages}")
    return db

sqlite3.connect = connect
sys.argv = ["assay", *sys.argv[1:]]
from assay.cli import main
main()
"""


def assay(argv: list[Any], driver: str | None = None, *extra: Any) -> list[str]:
    head = [sys.executable, "-c", driver, *map(str, extra)] if driver else [
        sys.executable, "-m", "assay"]  # fmt: skip
    return [*head, *map(str, argv)]


def unwritable_as(store: Path, sticky_folder: bool) -> tuple[list[str], Any]:
    """What runs a command as a user who cannot write `store` (root: as nobody; otherwise
    this user, with the file made read-only), and how to make it so."""

    def make() -> None:
        store.chmod(0o444 if os.geteuid() != 0 else 0o644)
        # sticky_folder: the folder takes new files (the -wal and -shm SQLite makes), as /tmp
        # does; otherwise nothing can be created next to the store
        store.parent.chmod(0o1777 if sticky_folder else 0o555 if os.geteuid() != 0 else 0o755)

    return ([sys.executable, "-c", AS_NOBODY] if os.geteuid() == 0 else [
        sys.executable, "-m", "assay"]), make  # fmt: skip


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user can read (pytest's own temporary folders are its user's only)."""
    folder = Path(tempfile.mkdtemp(prefix="assay-shared-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def stored(shared: Path, cli: Any) -> tuple[Path, Path, Path]:
    """A store of one finished run (cases, its trials file, the store in its own folder)."""
    cases = write_jsonl(shared / "cases.jsonl", [make_case(f"c{i}") for i in range(6)])
    folder = shared / "store"
    folder.mkdir()
    trials = shared / "trials.jsonl"
    made = cli("run", "--cases", cases, "--model", "mock", "--output", trials,
               "--store", folder / "s.db")  # fmt: skip
    assert made.code == 0, made.stderr
    return cases, trials, folder / "s.db"


def traversable_by_others(*paths: Path) -> bool:
    """Whether another user can reach these paths: every folder above them searchable by
    others (a checkout under a `mktemp -d` folder, mode 700, is not; the interpreter itself
    is running already, and the child imports every module before it becomes nobody)."""
    for path in paths:
        for folder in path.resolve().parents:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return False
    return True


@pytest.mark.skipif(
    os.geteuid() == 0 and not traversable_by_others(Path(assay_package.__file__), Path(sys.prefix)),
    reason="run as nobody, the command could not read this checkout's files (its templates)"
    " or its environment: a folder above them is closed to other users",
)
@pytest.mark.parametrize("sticky_folder", [False, True])
def test_a_store_this_user_cannot_write_exits_2_before_any_call(
    shared: Path, mock_server: Any, stored: tuple[Path, Path, Path], sticky_folder: bool
) -> None:
    cases, trials, store = stored
    server = mock_server(judge_reply="schema")
    head, make_unwritable = unwritable_as(store, sticky_folder)
    out = shared / "out"
    out.mkdir()
    out.chmod(0o777)  # where the commands may write their outputs
    before = store.read_bytes()
    commands = {
        "run": ["run", "--cases", cases, "--model", "openai:gpt-4o-mini", "--base-url",
                server.url, "--trials", 2, "--store", store, "--output", out / "t.jsonl"],
        "judge": ["judge", "--trials", trials, "--cases", cases, "--judge",
                  "openai:judge-model", "--base-url", server.url, "--price", "0,0",
                  "--store", store, "--output", out / "scores.jsonl"],
    }  # fmt: skip
    try:
        make_unwritable()
        for name, argv in commands.items():
            done = subprocess.run([*head, *map(str, argv)], capture_output=True, text=True,
                                  timeout=120)  # fmt: skip
            assert done.returncode == 2, (name, done.stderr)
            assert "Traceback" not in done.stderr, done.stderr
            assert f"ERROR: {store}: " in done.stderr, done.stderr
            assert "cannot write to the store" in done.stderr or "cannot open" in done.stderr
            assert not list(out.iterdir()), name  # no output, not even an empty one
    finally:
        store.parent.chmod(0o755)
        store.chmod(0o644)
    assert server.stats()["requests"] == 0  # nothing was paid for
    assert store.read_bytes() == before


def full_run(cases: Path, store: Path, output: Path) -> list[Any]:
    return ["run", "--cases", cases, "--model", "mock", "--trials", 3, "--store", store,
            "--output", output, "--json"]  # fmt: skip


def check_recovered(cases: Path, store: Path, output: Path, total: int) -> None:
    """The rerun on a disk with room: exit 0, every trial once, the store sound."""
    again = subprocess.run(assay(full_run(cases, store, output)), capture_output=True,
                           text=True, timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["answered"] == total
    rows = read_jsonl(output)
    assert len(rows) == len({(r["case_id"], r["condition"], r["trial"]) for r in rows}) == total
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM trials").fetchone()[0] == total


def check_full(done: subprocess.CompletedProcess[str], store: Path) -> int:
    """Exit 3 naming the store; what it held is sound and kept (its trial count)."""
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"ERROR: {store}: the disk is full" in done.stderr, done.stderr
    assert "run the same command again" in done.stderr
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA quick_check").fetchone() == ("ok",)
        return int(db.execute("SELECT count(*) FROM trials").fetchone()[0])


def test_a_full_disk_exits_3_and_the_rerun_recovers_every_row(tmp_path: Path) -> None:
    """The disk fills mid-run (SQLite's page limit on the store's connections)."""
    rows = [make_case(f"c{i}", prompt="Why? " + "x" * 2000) for i in range(60)]
    cases = write_jsonl(tmp_path / "cases.jsonl", rows)
    store, output = tmp_path / "s.db", tmp_path / "trials.jsonl"
    done = subprocess.run(assay(full_run(cases, store, output), FULL_AT, 60, store),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert check_full(done, store) < 180
    assert not output.exists()  # no partial output
    check_recovered(cases, store, output, 180)


@contextlib.contextmanager
def small_disk(folder: Path, size_kb: int) -> Iterator[Path]:
    """A tmpfs of `size_kb` mounted on `folder` (skip where this user cannot mount)."""
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small disk needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs",
                              str(folder)], capture_output=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr!r}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_real_full_disk_exits_3_and_the_rerun_recovers_every_row(tmp_path: Path) -> None:
    """The store on a 400 kB tmpfs that fills mid-run; space is then made (remount)."""
    rows = [make_case(f"c{i}", prompt="Why? " + "x" * 1000) for i in range(100)]
    cases = write_jsonl(tmp_path / "cases.jsonl", rows)
    output = tmp_path / "trials.jsonl"
    with small_disk(tmp_path / "disk", 400) as disk:
        store = disk / "s.db"
        done = subprocess.run(assay(full_run(cases, store, output)), capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert check_full(done, store) < 300
        assert not output.exists()
        subprocess.run(["mount", "-o", "remount,size=20m", str(disk)], check=True)
        check_recovered(cases, store, output, 300)
