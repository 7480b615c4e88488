"""Running one CLI call as a process: no shell, its own session, pipes assay owns.

On Linux the program runs under the reaper (models/reaper.py), a child subreaper that kills
and reaps whatever the program leaves running when it exits (a daemon it started with
`setsid`, or double-forked), so a call that ends leaves no process of it behind. A timeout,
cancellation or oversized output kills the call's process group and every descendant (also
one that left the group with `setsid`), and the call never waits on pipes a detached
grandchild holds: it ends at the child's exit (plus a short drain) or at the timeout. Used by
the CLI runners (models/command.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from assay.core.environ import user_env
from assay.models.base import ModelError, reply_too_large
from assay.models.reaper import CANNOT_START, CANNOT_START_PREFIX

STDERR_KEEP_BYTES = 64 * 1024  # the tail of stderr kept for error details
DRAIN_S = 1.0  # how long to read pipes still held open by a grandchild after the exit
DRAIN_QUIET_S = 0.1  # ... and no longer once they are silent this long
REAPER = Path(__file__).with_name("reaper.py")


def reaped(argv: list[str]) -> list[str]:
    """`argv` run under the reaper (models/reaper.py): on Linux, by this interpreter, isolated
    (`-I`: no PYTHON* variables, user site or current folder) and without `site` (`-S`),
    so it starts in milliseconds; elsewhere `argv` itself."""
    if sys.platform != "linux" or not sys.executable:
        return argv
    return [sys.executable, "-I", "-S", str(REAPER), *argv]


@dataclass(slots=True)
class Finished:
    """A finished process: exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def kill_group(pid: int) -> None:
    """SIGKILL a process group (the child is its leader); gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    """The live descendants of `pid` (Linux /proc; none found elsewhere), including those
    that left its process group (`setsid`), which killing the group would miss."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL the child's process group and every descendant still attached to it."""
    rest = descendants(pid)
    kill_group(pid)
    for other in rest:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(other, signal.SIGKILL)


class _Reader:
    """Collects a pipe: everything up to a cap (stdout) or just the tail (stderr)."""

    def __init__(self, stream: asyncio.StreamReader, cap: int, keep_tail: bool, pid: int):
        self.stream = stream
        self.cap = cap
        self.keep_tail = keep_tail
        self.pid = pid
        self.data = bytearray()
        self.overflow = False

    async def read(self) -> None:
        while chunk := await self.stream.read(65536):
            self.data += chunk
            if len(self.data) > self.cap:
                if self.keep_tail:
                    del self.data[: len(self.data) - self.cap]
                else:
                    self.overflow = True
                    kill_group(self.pid)
                    return

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


class _Pipes:
    """The child's stdin, stdout and stderr as pipes this process owns and closes.

    asyncio's own pipes tie `Process.wait()` to every pipe closing, so a detached grandchild
    (`setsid sleep 1000 &`) that inherited them would hold the call, and the run, until it
    exits. With these, `wait()` returns when the child exits, and `close()` stops reading
    and writing whatever still holds the other ends.
    """

    def __init__(self, stdin: bytes | None) -> None:
        self.stdin = stdin
        self.child: list[int] = []  # the ends the child gets: closed here once it has them
        self.transports: list[asyncio.BaseTransport] = []
        self.ours: list[int] = []  # our ends until a transport owns them
        self.out_r, out_w = self._pipe()
        self.err_r, err_w = self._pipe()
        self.child += [out_w, err_w]
        if stdin is not None:
            in_r, self.in_w = self._pipe(ours_first=False)
            self.child.append(in_r)

    def _pipe(self, ours_first: bool = True) -> tuple[int, int]:
        read, write = os.pipe()
        self.ours.append(read if ours_first else write)
        return read, write

    def child_stdin(self) -> int:
        """The child's stdin: its pipe's read end, or /dev/null without input."""
        return self.child[2] if self.stdin is not None else asyncio.subprocess.DEVNULL

    def started(self) -> None:
        """The child holds its ends now (or never will): close ours of them."""
        for fd in self.child:
            os.close(fd)
        self.child = []

    async def reader(self, fd: int) -> asyncio.StreamReader:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=2**16)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(fd, "rb", buffering=0)
        )
        self.ours.remove(fd)
        self.transports.append(transport)
        return stream

    async def feed(self) -> None:
        """Write stdin without waiting: the transport sends it as the child reads, then closes
        the pipe (a child that exits unread drops it; `close()` aborts what is left)."""
        if self.stdin is None:
            return
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_write_pipe(
            asyncio.BaseProtocol, os.fdopen(self.in_w, "wb", buffering=0)
        )
        self.ours.remove(self.in_w)
        self.transports.append(transport)
        transport.write(self.stdin)
        transport.close()

    def close(self) -> None:
        """Stop reading and writing: close every end this process still holds."""
        for transport in self.transports:
            if isinstance(transport, asyncio.WriteTransport):
                if transport.get_write_buffer_size():  # closing, with stdin left unread
                    transport.abort()
            else:
                transport.close()
        for fd in [*self.child, *self.ours]:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.child, self.ours, self.transports = [], [], []


async def run_process(
    argv: list[str], stdin: str | None, cwd: Path, timeout_s: float | None, max_output: int
) -> Finished:
    """Run argv without a shell in a new session; kill its process group on timeout,
    cancellation, oversized output, and after it exits (no call leaves processes behind).

    The call ends at the child's exit (plus `DRAIN_S` to read what is left in the pipes) or
    at the timeout, whatever still holds the pipes: a detached grandchild in a session of its
    own cannot be killed with the group, but it no longer holds the run.
    """
    pipes = _Pipes(stdin.encode() if stdin is not None else None)
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *reaped(argv),
                stdin=pipes.child_stdin(),
                stdout=pipes.child[0],
                stderr=pipes.child[1],
                cwd=cwd,
                env=user_env(),
                start_new_session=True,
            )
        except OSError as exc:
            raise ModelError(
                f"cannot start {argv[0]!r}: {exc.strerror or exc}", billed=False
            ) from None
        finally:
            pipes.started()
        finished = await _collect(proc, pipes, timeout_s, max_output)
    finally:
        pipes.close()
    if finished.returncode == CANNOT_START and finished.stderr.startswith(CANNOT_START_PREFIX):
        raise ModelError(finished.stderr.strip().removeprefix("assay: "), billed=False)
    return finished


async def _drain(tasks: list[asyncio.Task[None]], readers: list[_Reader]) -> None:
    """After the exit, read what is left in the pipes: until both reach their end, or they
    stay silent for `DRAIN_QUIET_S` (a grandchild holds them open), at most `DRAIN_S`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DRAIN_S
    size = -1
    while size != (size := sum(len(r.data) for r in readers)) and loop.time() < deadline:
        done, _ = await asyncio.wait(tasks, timeout=DRAIN_QUIET_S)
        if len(done) == len(tasks):
            return


async def _collect(
    proc: asyncio.subprocess.Process, pipes: _Pipes, timeout_s: float | None, max_output: int
) -> Finished:
    """Read the child's output until it exits (or the timeout); kill its group after."""
    out = _Reader(await pipes.reader(pipes.out_r), max_output, keep_tail=False, pid=proc.pid)
    err = _Reader(await pipes.reader(pipes.err_r), STDERR_KEEP_BYTES, keep_tail=True, pid=proc.pid)
    tasks = [asyncio.create_task(out.read()), asyncio.create_task(err.read())]
    try:
        await pipes.feed()
        async with asyncio.timeout(timeout_s):
            returncode = await proc.wait()
            await _drain(tasks, [out, err])
    except TimeoutError:
        raise ModelError(
            f"timeout after {timeout_s}s; process group killed", retryable=True, billed=True
        ) from None
    finally:
        if proc.returncode is None:  # timeout or cancellation: its whole tree goes
            kill_tree(proc.pid)
        kill_group(proc.pid)
        for task in tasks:
            task.cancel()
        pipes.close()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())
    if out.overflow:
        raise reply_too_large(max_output, "output")
    return Finished(returncode, out.text(), err.text())
