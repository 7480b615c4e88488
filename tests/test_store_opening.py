"""Several processes opening one new store at the same moment all open it: switching a new
file to write-ahead logging answers "database is locked" at once (no busy handler) while
another process is opening it, so the switch is retried (store/db.py: write_ahead)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

OPEN = """
import sys, time
from pathlib import Path
from assay.store import Store
start = float(sys.argv[2])
time.sleep(max(0.0, start - time.time() - 0.005))
while time.time() < start:  # the last few milliseconds spun, for one instant
    pass
Store(Path(sys.argv[1])).close()
print("ok")
"""


def test_processes_opening_a_new_store_together_all_open_it(tmp_path: Path) -> None:
    for attempt in range(6):  # each attempt a new file, opened by 8 processes at one instant
        store = tmp_path / f"s{attempt}.db"
        start = time.time() + 1.0
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN, str(store), str(start)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(8)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0 and out.strip() == "ok", err
