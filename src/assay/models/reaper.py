"""Run one program and leave nothing of it behind: the script each CLI call runs through.

`python -I -S reaper.py PROGRAM ARGS...` (models/process.py) makes this process a child
subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER)`), starts PROGRAM as its child and waits for
it. A descendant PROGRAM leaves behind, even one that left its session (`setsid`) or was
double-forked to become a daemon, is reparented here rather than to init; once PROGRAM has
exited, every process still below this one is killed (SIGKILL) and reaped, and this process
exits as PROGRAM did (its exit status, or the same signal). So a call ends with no process
of it running, and the pipes those processes held close with them.

A script run by path, importing nothing of assay (assay's own modules may not be importable
by the interpreter the way it is started: `-I` ignores PYTHONPATH), and only the few modules
it needs (`_signal`, not `signal`, which imports enum): it runs once per call.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (no stubs: `signal` without enum)
import ctypes
import os
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
CANNOT_START = 127  # the exit status when PROGRAM cannot be started (stderr says why)
CANNOT_START_PREFIX = "assay: cannot start "


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children (Linux 3.4 and later)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _read(path: str) -> str:
    try:
        with open(path) as file:
            return file.read()
    except OSError:  # gone meanwhile
        return ""


def children(pid: int) -> list[int]:
    """The children of `pid` (`/proc/PID/task/*/children`; a scan of /proc without it)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    if os.path.exists(f"/proc/{pid}/task/{tasks[0]}/children"):
        listed = (_read(f"/proc/{pid}/task/{task}/children").split() for task in tasks)
        return [int(child) for found in listed for child in found]
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        fields = _read(f"/proc/{name}/stat").rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(name))
    return found


def below(pid: int) -> list[int]:
    """Every process below `pid`, parents before their children."""
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def reap_all() -> None:
    """Collect every child that has exited, without waiting."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def clear_below(patience_s: float = 2.0) -> None:
    """Kill every process below this one and reap them, until none is left (a process may
    fork while the others are killed: its children come back here and are killed next).
    One that cannot be killed (another user's) is left after `patience_s`."""
    deadline = time.monotonic() + patience_s
    while rest := below(os.getpid()):
        for pid in rest:
            try:  # noqa: SIM105  (contextlib costs this script a third of its start-up)
                os.kill(pid, _signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        reap_all()
        if time.monotonic() > deadline:
            return
        if below(os.getpid()):
            time.sleep(0.005)


# What Python ignores for itself, which a program it starts must not inherit ignored.
RESTORED = tuple(
    getattr(_signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, name)
)


def cannot_start(program: str, exc: OSError) -> int:
    sys.stderr.write(f"{CANNOT_START_PREFIX}{program!r}: {exc.strerror or exc}\n")
    return CANNOT_START


def run(argv: list[str]) -> int:
    """Run `argv` as a child; kill and reap whatever it leaves; its exit status (negative:
    the signal that ended it)."""
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ, setsigdef=RESTORED)
    except OSError as exc:
        return cannot_start(argv[0], exc)
    while True:
        done, status = os.waitpid(-1, 0)  # orphans that exit meanwhile are reaped here
        if done == pid:
            break
    clear_below()
    return os.waitstatus_to_exitcode(status)


def main() -> None:
    argv = sys.argv[1:]
    if not argv:
        sys.stderr.write("usage: reaper.py PROGRAM [ARGS...]\n")
        sys.exit(2)
    if not become_subreaper():  # nothing to gain from staying: run it in this process
        for number in RESTORED:
            _signal.signal(number, _signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os._exit(cannot_start(argv[0], exc))
    code = run(argv)
    sys.stdout.flush()
    if code < 0:  # end as the child ended: by the same signal
        _signal.signal(-code, _signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


if __name__ == "__main__":
    main()
