"""Helpers shared by the reliability tests: reading outputs, comparing records, commands.

Each command under test is described once (`Command`), so the same fault, crash and
bad-input tests can be pointed at later stages (`assay judge`, `assay score`, ...) by adding
an entry rather than a test.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TIMINGS = frozenset({"latency_s", "created_at"})

Key = tuple[Any, ...]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def trial_key(row: dict[str, Any]) -> Key:
    return (row["case_id"], row["condition"], row["trial"])


def by_key(
    rows: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], Key] = trial_key
) -> dict[Key, dict[str, Any]]:
    """Rows by key, without timing fields; fails on a duplicate key."""
    keyed: dict[Key, dict[str, Any]] = {}
    for row in rows:
        k = key(row)
        assert k not in keyed, f"duplicate record {k}"
        keyed[k] = {f: v for f, v in row.items() if f not in TIMINGS}
    return keyed


@dataclass(frozen=True)
class Command:
    """One assay command as the reliability tests drive it.

    `argv(workdir)` gives the arguments after `assay`, with the store and output inside
    workdir; `setup(workdir)` prepares what it needs first (e.g. a run to judge); `output`
    names the file it writes (relative to workdir); `key` identifies one of its records.
    """

    name: str
    argv: Callable[[Path], list[str]]
    output: str
    key: Callable[[dict[str, Any]], Key] = trial_key
    env: dict[str, str] = field(default_factory=dict)
    setup: Callable[[Path], None] | None = None  # prepares a fresh workdir (inputs, a store)
    progress: Callable[[Path], int] | None = None  # records committed so far in workdir

    def cmd(self, workdir: Path) -> list[str]:
        return [sys.executable, "-m", "assay", *self.argv(workdir)]

    def environ(self) -> dict[str, str]:
        return {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}


def run_once(
    command: Command, workdir: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the command to its end."""
    return subprocess.run(
        command.cmd(workdir), env=command.environ(), capture_output=True, text=True, timeout=timeout
    )


def kill_after(command: Command, workdir: Path, delay_s: float) -> int | None:
    """Start the command and SIGKILL it after `delay_s` (None if it had already finished)."""
    proc = subprocess.Popen(
        command.cmd(workdir),
        env=command.environ(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return proc.wait(delay_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return None


def records(command: Command, workdir: Path) -> dict[Key, dict[str, Any]]:
    return by_key(read_jsonl(workdir / command.output), command.key)


def crash_points(seed: int, count: int, span_s: float) -> list[float]:
    """`count` kill delays spread over the command's running time, reproducibly."""
    rng = random.Random(seed)
    return sorted(rng.uniform(0.0, span_s) for _ in range(count))


def stored_rows(store: Path, table: str) -> int:
    """Rows committed to a table of a store (0 when the store or table does not exist yet)."""
    if not store.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
            return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.DatabaseError:
        return 0


def interrupt_when(
    command: Command, workdir: Path, ready: Callable[[], bool], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Start the command, send SIGINT (Ctrl+C) once `ready()` holds, and wait for its end."""
    proc = subprocess.Popen(
        command.cmd(workdir),
        env=command.environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A parent that ignores SIGINT (a background CI job) would pass that on; Python only
        # turns SIGINT into KeyboardInterrupt when it starts with the default disposition.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.01)  # polling the store for progress, not waiting for a result
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
