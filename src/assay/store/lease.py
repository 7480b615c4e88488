"""Who is running a run (`run_leases`): one process at a time, with a heartbeat.

Two `assay run` of the same run at once would make every call twice and spend twice the
budget (each counts only its own spend in memory). The first takes the run's lease; a second
is refused (exit 2) naming the holder. A lease whose holder is gone — a dead process on this
host, or no heartbeat for `STALE_S` from anywhere — is taken over, so a run killed at any
instant resumes by running the same command again.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import uuid
from pathlib import Path

from assay.core.errors import InputError
from assay.store.db import Store, now_iso
from assay.store.transactions import immediate

HEARTBEAT_S = 5.0  # how often the holder renews its lease
STALE_S = 60.0  # a lease not renewed for this long is taken over

_PROCESS: dict[int, str] = {}


def this_process() -> str:
    """This process's holder id (host, pid and a random part, fixed for the process): it
    names the lease and the call reservations (store/spend.py) this process holds."""
    pid = os.getpid()
    if pid not in _PROCESS:  # after a fork, the child is a holder of its own
        _PROCESS[pid] = f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:8]}"
    return _PROCESS[pid]


def alive(pid: int) -> bool:
    """Whether a process of this host is running (a zombie is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def holder_gone(host: str, pid: int, heartbeat: float, now: float) -> bool:
    """Whether the holder of a lease or a call claim (store/claims.py) is gone: a dead process
    of this host, or no heartbeat for `STALE_S` from anywhere."""
    return (host == socket.gethostname() and not alive(pid)) or now - heartbeat >= STALE_S


def take_lease(store: Store, run_id: str) -> None:
    """Hold the run's lease, or raise InputError naming the process that holds it."""
    holder, host, pid, now = this_process(), socket.gethostname(), os.getpid(), time.time()
    with immediate(store.db) as db:
        row = db.execute(
            "SELECT holder, host, pid, heartbeat FROM run_leases WHERE run_id = ?", (run_id,)
        ).fetchone()
        if row is not None and row[0] != holder:
            other, other_host, other_pid, beat = str(row[0]), str(row[1]), int(row[2]), row[3]
            if not holder_gone(other_host, other_pid, float(beat), now):
                age = now - float(beat)
                raise InputError(
                    f"ERROR: run {run_id} is being run by another process (pid {other_pid} on "
                    f"{other_host}, last heartbeat {max(age, 0):.0f}s ago; holder {other}) "
                    f"in the store {store.path}. Two at once would make every call twice: "
                    "wait for it to finish, or stop it, then run the same command again (a "
                    f"lease without a heartbeat for {STALE_S:.0f}s is taken over)."
                )
        db.execute(
            "INSERT OR REPLACE INTO run_leases (run_id, holder, host, pid, heartbeat, taken_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, holder, host, pid, now, now_iso()),
        )


def renew_lease(store: Store, run_id: str) -> bool:
    """Renew the heartbeat of this process's lease; False if it no longer holds it."""
    cursor = store.db.execute(
        "UPDATE run_leases SET heartbeat = ? WHERE run_id = ? AND holder = ?",
        (time.time(), run_id, this_process()),
    )
    return cursor.rowcount > 0


def release_lease(store: Store, run_id: str) -> None:
    """Give the run's lease up (if this process still holds it)."""
    store.db.execute(
        "DELETE FROM run_leases WHERE run_id = ? AND holder = ?", (run_id, this_process())
    )
