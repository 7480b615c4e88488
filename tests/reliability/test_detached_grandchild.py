"""A CLI runner that leaves a detached grandchild (`setsid sleep 600 &`) holding its stdout
and stderr: --timeout still ends the call, and the run, within seconds (the grandchild is
killed with the tree); a CLI that answers and exits is not held by the daemon it left."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import make_case, write_jsonl

RUNNER = """#!/bin/sh
setsid sleep 600 &
echo $! > "{pidfile}"
{rest}
"""
HANGS = "sleep 600"
ANSWERS = "echo answered; exit 0"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


@pytest.mark.skipif(sys.platform != "linux", reason="setsid(1) and /proc")
@pytest.mark.parametrize("rest", [HANGS, ANSWERS], ids=["times-out", "answers"])
def test_detached_grandchild_does_not_hold_the_run(tmp_path: Path, rest: str) -> None:
    pidfile = tmp_path / "grandchild.pid"
    runner = tmp_path / "runner.sh"
    runner.write_text(RUNNER.format(pidfile=pidfile, rest=rest))
    runner.chmod(0o755)
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    try:
        # Unfixed, the run blocks until the grandchild exits (600 s): the bound catches that.
        done = subprocess.run(
            [sys.executable, "-m", "assay", "run", "--cases", str(cases),
             "--model", f"command:{runner}", "--allow-unmetered",
             # unfixed, the answer waits for the timeout, then is recorded as one
             "--timeout", "1" if rest == HANGS else "30",
             "--retries", "0", "--trials", "1", "--store", str(tmp_path / "s.db"),
             "--output", str(tmp_path / "trials.jsonl")],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        (trial,) = [json.loads(line) for line in (tmp_path / "trials.jsonl").open()]
        grandchild = int(pidfile.read_text())
        if rest == HANGS:
            assert done.returncode == 3, done.stderr
            assert trial["error"].startswith("timeout after 1"), trial
            assert not alive(grandchild)  # killed with the tree it belonged to
        else:
            assert done.returncode == 0, done.stderr
            assert trial["error"] is None and trial["response"].strip() == "answered"
    finally:
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
