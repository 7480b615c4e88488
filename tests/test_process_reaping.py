"""A CLI call leaves no process behind: a descendant its program left running when it exited
(a daemon in a session of its own, or double-forked) is killed and reaped with the call, and
the call still ends as the program did (its answer, exit status or signal)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from assay.models import Message, ModelError, Request, create_model

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a child subreaper is Linux's")

# Starts a descendant that outlives the program (`how`), writes its pid, then answers.
LEAVER = """#!{python}
import os, sys, time
pidfile, how = {pidfile!r}, {how!r}
if os.fork() == 0:
    if how in ("setsid", "daemon"):
        os.setsid()
    if how == "daemon" and os.fork() != 0:  # the classic daemon: fork, setsid, fork
        os._exit(0)
    if how == "closed":  # holds none of the call's pipes
        for fd in (0, 1, 2):
            os.close(fd)
    with open(pidfile + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(pidfile + ".tmp", pidfile)
    time.sleep(600)
    os._exit(0)
while not os.path.exists(pidfile):
    time.sleep(0.01)
print("answered")
"""


def running(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def ask(spec: str) -> str:
    model = create_model(spec)
    request = Request(messages=[Message("user", "hi")], max_tokens=5, timeout_s=30)
    return asyncio.run(model.generate(request)).text


@pytest.mark.parametrize("how", ["setsid", "daemon", "closed", "group"])
def test_a_descendant_left_running_is_killed_with_the_call(tmp_path: Path, how: str) -> None:
    pidfile = tmp_path / "descendant.pid"
    program = tmp_path / "leaver"
    program.write_text(LEAVER.format(python=sys.executable, pidfile=str(pidfile), how=how))
    program.chmod(0o755)
    try:
        started = time.monotonic()
        assert ask(f"command:{program}") == "answered"
        assert time.monotonic() - started < 20  # never held by the descendant's pipes
        descendant = int(pidfile.read_text())
        assert not running(descendant)  # unfixed: still sleeping, a child of init
    finally:
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_the_call_ends_as_the_program_did(tmp_path: Path) -> None:
    """Run under the reaper, a program's exit status, signal and failure to start are still
    its own."""
    program = tmp_path / "tool"
    program.write_text(
        f"#!{sys.executable}\nimport os, sys\nprint('x')\nos.kill(os.getpid(), 15)\n"
    )
    program.chmod(0o755)
    with pytest.raises(ModelError, match="killed by signal 15"):
        ask(f"command:{program}")
    program.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(7)\n")
    with pytest.raises(ModelError, match="exited with status 7"):
        ask(f"command:{program}")
    program.chmod(0o644)
    with pytest.raises(ModelError, match=r"cannot start '.*tool': Permission denied"):
        ask(f"command:{program}")


def test_a_program_writing_to_a_closed_pipe_is_ended_by_sigpipe(tmp_path: Path) -> None:
    """A program gets SIGPIPE at its default (Python ignores it for itself): a shell loop
    writing into `head` ends with it instead of running on (an ignored SIGPIPE only fails
    each `echo`, and the loop goes on until the timeout)."""
    program = tmp_path / "pipe"
    program.write_text("#!/bin/sh\nwhile :; do echo y; done | head -n 1\n")
    program.chmod(0o755)
    started = time.monotonic()
    assert ask(f"command:{program}") == "y"
    assert time.monotonic() - started < 20
