"""A judge that replies with megabytes of text: what is stored of it and what the repair
step re-sends are capped (`RAW_KEEP_CHARS`), so four items cannot grow the store by
hundreds of megabytes or the repair request by the whole reply."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from assay.scorers.judge.ask import RAW_KEEP_CHARS, kept
from conftest import make_case, write_jsonl

REPLY_CHARS = 4 * 1024 * 1024


class RunawayJudge(BaseHTTPRequestHandler):
    """An OpenAI-compatible judge whose every reply is 4 MiB of prose, never JSON."""

    bodies: list[int]

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        self.rfile.read(length)
        self.server.bodies.append(length)  # type: ignore[attr-defined]
        reply = {
            "model": "judge",
            "choices": [{"index": 0, "message": {"role": "assistant",
                                                 "content": "blah " * (REPLY_CHARS // 5)}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10},
        }  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def runaway() -> Iterator[tuple[str, list[int]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), RunawayJudge)
    server.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.bodies  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def test_runaway_judge_replies_are_capped_in_store_and_repair(
    tmp_path: Path, cli: Any, runaway: tuple[str, list[int]]
) -> None:
    url, bodies = runaway
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(4)])
    trials = write_jsonl(
        tmp_path / "trials.jsonl",
        [{"case_id": f"c{i}", "trial": 1, "condition": "baseline", "runner": "mock",
          "response": f"answer {i}"} for i in range(4)],
    )  # fmt: skip
    store = tmp_path / "judge.db"
    done = cli("judge", "--trials", trials, "--cases", cases, "--judge", "openai:runaway",
               "--base-url", url, "--allow-unmetered", "--retries", "0", "--store", store,
               "--output", tmp_path / "scores.jsonl")  # fmt: skip
    assert done.code == 3, done.stderr  # no item could be judged
    assert len(bodies) == 8  # each item: the question and one repair
    first, repair = min(bodies), max(bodies)
    # the repair quotes the reply back, cut: not the 4 MiB the judge sent
    assert repair - first < 2 * RAW_KEEP_CHARS
    db = sqlite3.connect(store)
    stored = db.execute("SELECT raw FROM judgments").fetchall()
    db.close()
    assert len(stored) == 4
    for (raw,) in stored:
        replies = json.loads(raw)
        assert len(replies) == 2
        assert all(len(r) <= RAW_KEEP_CHARS + 100 and "more characters not kept" in r
                   for r in replies)  # fmt: skip
    assert sum(p.stat().st_size for p in tmp_path.glob("judge.db*")) < 8 * 1024 * 1024


def test_kept_leaves_ordinary_replies_alone() -> None:
    reply = '{"scores": {}}'
    assert kept(reply) is reply
    assert kept("x" * (RAW_KEEP_CHARS + 5)).endswith("[… 5 more characters not kept]")
