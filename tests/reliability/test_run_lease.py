"""One process per run: two identical `assay run` at once would make every call twice and
spend the budget twice. The second is refused (exit 2) naming the holder; a lease left by a
killed process, or silent for `STALE_S` from another host, is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from assay.store.lease import STALE_S
from conftest import make_case, write_jsonl


def run_cmd(tmp_path: Path, url: str) -> list[str]:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(4)])
    return [sys.executable, "-m", "assay", "run", "--cases", str(cases),
            "--model", "openai:gpt-4o-mini", "--base-url", url, "--trials", "2",
            "--concurrency", "1", "--store", str(tmp_path / "s.db"), "--json"]  # fmt: skip


def wait_for_requests(server: Any, count: int) -> None:
    deadline = time.monotonic() + 60
    while server.stats()["requests"] < count:
        assert time.monotonic() < deadline, "the first run never called the model"
        time.sleep(0.05)


def test_a_second_process_on_the_same_run_is_refused(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(latency=1.0)  # 8 calls one at a time: the first runs for 8 s
    cmd = run_cmd(tmp_path, server.url)
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_requests(server, 1)
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"is being run by another process (pid {first.pid} on" in second.stderr
        assert "Traceback" not in second.stderr
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err
    assert json.loads(out)["answered"] == 8
    assert server.stats()["requests"] == 8  # every call made once
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)  # lease released
    assert again.returncode == 0 and json.loads(again.stdout)["calls"] == 0, again.stderr


def test_a_killed_holders_lease_is_taken_over(tmp_path: Path, mock_server: Any) -> None:
    server = mock_server(latency=0.4)
    cmd = run_cmd(tmp_path, server.url)
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_requests(server, 2)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    resumed = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["answered"] == 8


def lease_from_elsewhere(store: Path, run_id: str, age_s: float) -> None:
    db = sqlite3.connect(store)
    db.execute(
        "INSERT OR REPLACE INTO run_leases (run_id, holder, host, pid, heartbeat, taken_at)"
        " VALUES (?, 'other-host:4242:abcd', 'other-host', 4242, ?, '')",
        (run_id, time.time() - age_s),
    )
    db.commit()
    db.close()


def test_a_lease_from_another_host_holds_until_it_goes_stale(tmp_path: Path, cli: Any) -> None:
    assert socket.gethostname() != "other-host"
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    argv = ["run", "--cases", cases, "--model", "mock", "--store", tmp_path / "s.db", "--json"]
    run_id = cli(*argv).json()["run_id"]
    lease_from_elsewhere(tmp_path / "s.db", run_id, age_s=1)
    refused = cli(*argv)
    assert refused.code == 2 and "(pid 4242 on other-host" in refused.stderr
    lease_from_elsewhere(tmp_path / "s.db", run_id, age_s=STALE_S + 1)
    assert cli(*argv).code == 0


def test_a_run_whose_lease_is_taken_over_stops(tmp_path: Path, mock_server: Any) -> None:
    """A holder silent past STALE_S (a stopped laptop) may find its run taken over when it
    wakes: at its next heartbeat it starts no more trials, so no call is made twice."""
    server = mock_server(latency=1.0)
    cmd = run_cmd(tmp_path, server.url)
    cmd[cmd.index("--trials") + 1] = "20"  # 80 calls one at a time: far longer than a beat
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_requests(server, 1)
        db = sqlite3.connect(tmp_path / "s.db")
        (run_id,) = db.execute("SELECT run_id FROM run_leases").fetchone()
        db.close()
        lease_from_elsewhere(tmp_path / "s.db", run_id, age_s=0)
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 3, err
    assert "another process took this run over" in err
    assert json.loads(out)["stopped"] == "lease"
    assert server.stats()["requests"] < 80
