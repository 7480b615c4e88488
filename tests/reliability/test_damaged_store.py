"""A store with damaged pages but an intact header: every command that reads it exits 2 naming
the file and how to recover, never with a traceback; the recovery it names works."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import make_case, write_jsonl

PAGE_DAMAGE = b"\xff" * 512


def damage_data_pages(path: Path) -> None:
    """Overwrite the start of the leaf pages that hold the trials and the call cache: the
    header and schema stay readable (the store opens), those rows do not."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.execute("PRAGMA page_size").fetchone()[0]
    leaves = [
        page
        for (page,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name IN ('trials', 'call_cache') AND pagetype = 'leaf'"
        )
    ]
    db.close()
    assert len(leaves) > 4, "the store is too small to damage its data pages"
    data = bytearray(path.read_bytes())
    for page in leaves:  # pages count from 1
        start = (page - 1) * size
        data[start : start + len(PAGE_DAMAGE)] = PAGE_DAMAGE
    path.write_bytes(bytes(data))
    db = sqlite3.connect(path)  # the damage is past the header and schema: the store opens
    assert db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
    db.close()


@pytest.fixture
def damaged(tmp_path: Path, cli: Any) -> tuple[Path, Path, str]:
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"c{i}", prompt="Why? " + "x" * 3000) for i in range(10)],
    )
    store = tmp_path / "assay.db"
    done = cli("run", "--cases", cases, "--model", "mock", "--trials", "3", "--store", store,
               "--json")  # fmt: skip
    assert done.code == 0, done.stderr
    run_id = done.json()["run_id"]
    damage_data_pages(store)
    return cases, store, run_id


def assert_damage_reported(code: int, stderr: str, store: Path) -> None:
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert f"ERROR: {store}: the store is damaged" in stderr
    assert f"sqlite3 {store} .recover" in stderr and "start a new store" in stderr


def test_damaged_store_exits_2_naming_the_file_in_every_command(
    tmp_path: Path, cli: Any, damaged: tuple[Path, Path, str]
) -> None:
    cases, store, run_id = damaged
    pristine = store.read_bytes()
    commands = {
        "run": ["run", "--cases", cases, "--model", "mock", "--trials", "3", "--store", store],
        "report": ["report", "--run", run_id, "--store", store, "--out", tmp_path / "r"],
        "judge": ["judge", "--run", run_id, "--store", store, "--cases", cases,
                  "--judge", "mock", "--output", tmp_path / "scores.jsonl"],
    }  # fmt: skip
    for name, argv in commands.items():
        store.write_bytes(pristine)
        done = cli(*argv)
        assert_damage_reported(done.code, done.stderr, store)
        assert not (tmp_path / "r").exists() and not (tmp_path / "scores.jsonl").exists(), name
    # review serve would block serving: run it as its own process, bounded by a timeout
    store.write_bytes(pristine)
    served = subprocess.run(
        [sys.executable, "-m", "assay", "review", "serve", "--run", run_id, "--store", str(store), "--cases",
         str(cases), "--port", "0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert_damage_reported(served.returncode, served.stderr, store)


def shell_recovers(tmp_path: Path) -> bool:
    """Whether this machine's sqlite3 shell has a working `.recover` (some builds fail on
    every database with 'SQL logic error')."""
    if shutil.which("sqlite3") is None:
        return False
    healthy = tmp_path / "healthy.db"
    subprocess.run(["sqlite3", str(healthy), "CREATE TABLE t (x); INSERT INTO t VALUES (1);"])
    return (
        subprocess.run(["sqlite3", str(healthy), ".recover"], capture_output=True).returncode == 0
    )


def test_the_recovery_the_message_names_works(
    tmp_path: Path, cli: Any, damaged: tuple[Path, Path, str]
) -> None:
    if not shell_recovers(tmp_path):
        pytest.skip("this machine's sqlite3 shell has no working .recover")
    cases, store, _ = damaged
    recovered = tmp_path / "recovered.db"
    # as the shell pipe `sqlite3 DB .recover | sqlite3 recovered.db` (.recover exits 1 on what
    # it could not read, and still prints all it could)
    dump = subprocess.run(["sqlite3", str(store), ".recover"], capture_output=True)
    assert b"CREATE TABLE" in dump.stdout
    subprocess.run(["sqlite3", str(recovered)], input=dump.stdout, check=True)
    again = cli("run", "--cases", cases, "--model", "mock", "--trials", "3", "--store", recovered,
                "--json")  # fmt: skip
    assert again.code == 0, again.stderr
    assert again.json()["answered"] == 30
