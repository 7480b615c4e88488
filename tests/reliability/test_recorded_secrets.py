"""Secrets in a reply's metadata: a provider, an agent or a CLI that puts the API key in the
reply's `model` field, in usage keys, in agent state or JSON-escaped in an error body gets
none of it written (the --output, the store's trials and call cache, the terminal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from assay.core.redact import decode_escapes, scrub, scrub_known, scrub_record
from conftest import make_case, write_jsonl


def escaped(text: str) -> str:
    """`text` as JSON `\\uXXXX` escapes, the way some providers spell error bodies."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


class KeyEchoHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that reports the caller's key as the reply's model, and
    answers a prompt containing `fail` with a 400 whose body spells the key escaped."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        if "fail" in body["messages"][-1]["content"]:
            raw = '{"error": {"message": "bad request", "key": "' + escaped(key) + '"}}'
            self.send_response(400)
        else:
            reply = {
                "model": f"gpt-4o-mini ({key})",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            }
            raw = json.dumps(reply)
            self.send_response(200)
        data = raw.encode()
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def key_echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), KeyEchoHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


AGENT = """
import os
def run(case, settings):
    key = os.environ["OPENAI_API_KEY"]
    if "fail" in case.prompt:
        spelled = "".join(f"\\\\u{ord(c):04x}" for c in key)
        raise RuntimeError('{"error": "bad key \\\\"' + spelled + '\\\\""}')
    return {"response": "ok", "model": key, "notes": {key: [key]}}
"""

CLAUDE = """#!{python}
import json, os
key = os.environ["ANTHROPIC_API_KEY"]
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": "ok",
    "total_cost_usd": 0.001, "usage": {{"input_tokens": 3, "output_tokens": 1}},
    "modelUsage": {{key: {{"inputTokens": 3}}}}}}))
"""


def holding(root: Path, needles: list[str]) -> list[str]:
    """Every file under root (store, WAL, outputs) holding a needle."""
    return [
        f"{path.name}: {needle[:12]}..."
        for path in root.rglob("*")
        if path.is_file()
        for needle in needles
        if needle.encode() in path.read_bytes()
    ]


def test_keys_in_reply_metadata_and_escaped_errors_are_never_recorded(
    tmp_path: Path, key_echo_server: str
) -> None:
    token = uuid.uuid4().hex
    keys = {"OPENAI_API_KEY": f"sk-canary-{token}", "ANTHROPIC_API_KEY": f"canary{token[::-1]}"}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    claude = bin_dir / "claude"
    claude.write_text(CLAUDE.format(python=sys.executable))
    claude.chmod(0o755)
    (tmp_path / "agent.py").write_text(AGENT)
    env = {**os.environ, **keys, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case("c0"), make_case("c1", prompt="Please fail?")],
    )
    runs = {
        "openai": ["--model", "openai:gpt-4o-mini", "--base-url", key_echo_server],
        "python": ["--model", "python:agent.py:run", "--allow-unmetered"],
        "claude": ["--model", "claude", "--allow-unmetered"],
    }
    streams: list[str] = []
    for name, flags in runs.items():
        done = subprocess.run(
            [sys.executable, "-m", "assay", "run", "--cases", str(cases), *flags,
             "--retries", "0", "--store", "assay.db", "--output", f"{name}.jsonl"],
            cwd=tmp_path, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode in (0, 3), done.stderr
        streams += [done.stdout, done.stderr]
        trials = [
            json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()
        ]
        answered = [t for t in trials if t["error"] is None]
        # The key reached the reply's metadata (so the test can fail), and was redacted.
        assert answered and all("[redacted]" in t["model"] for t in answered), trials
    python_trials = (tmp_path / "python.jsonl").read_text()
    assert '"[redacted]": ["[redacted]"]' in python_trials  # agent state, keys included
    needles = [*keys.values(), *(escaped(k) for k in keys.values())]
    assert holding(tmp_path, needles) == []
    assert not [n for n in needles for s in streams if n in s]


def test_scrub_decodes_json_escapes_before_redacting() -> None:
    key = f"zz{uuid.uuid4().hex}"
    assert scrub(f'{{"key": "{escaped(key)}"}}', [key]) == '{"key": "[redacted]"}'
    assert scrub(f"key {escaped('sk-' + 'a' * 20)}", []) == "key [redacted]"
    assert decode_escapes("\\ud83d\\ude00 a\\/b") == "\U0001f600 a/b"
    # Model output is changed only when decoding it reveals a secret.
    assert scrub_known(f"say {escaped(key)}", [key]) == "say [redacted]"
    assert scrub_known("a \\u0041 b", [key]) == "a \\u0041 b"
    # Metadata loses key shapes; content keeps key-like text it did not get from assay.
    record = {
        "model": "sk-" + "b" * 20,
        "response": "api_key='sk-" + "c" * 20 + "'",
        "case_id": "x",
    }
    assert scrub_record(record, []) == {**record, "model": "[redacted]"}


CLI_AGENT = """#!{python}
import sys
print("answered by " + sys.argv[0].rsplit("/", 1)[-1])
"""


def test_a_key_in_a_command_runners_arguments_is_never_recorded(tmp_path: Path) -> None:
    """`command:my-cli --api-key $MY_TOKEN` (the shell expands the variable): the spec is
    recorded as each trial's runner and in the run's settings; with the key's value in a
    variable named like a secret, neither the store, the --output, the report nor the
    viewer's export holds it, and nothing printed does."""
    key = f"tok{uuid.uuid4().hex}"
    agent = tmp_path / "my-cli"
    agent.write_text(CLI_AGENT.format(python=sys.executable))
    agent.chmod(0o755)
    env = {**os.environ, "MY_TOKEN": key}
    cases = write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"c{i}", expect={"contains": ["answered"]}) for i in range(2)],
    )
    spec = f"command:{agent} --api-key {key}"
    commands = [
        ["run", "--cases", str(cases), "--model", spec, "--format", "text", "--allow-unmetered",
         "--store", "assay.db", "--output", "trials.jsonl"],
        ["report", "--trials", "trials.jsonl", "--cases", str(cases), "--scorer", "contains",
         "--out", "report",
         "--format", "md,json,junit,html"],
        ["view", "--store", "assay.db", "--export", "site"],
    ]  # fmt: skip
    streams: list[str] = []
    for command in commands:
        done = subprocess.run(
            [sys.executable, "-m", "assay", *command],
            cwd=tmp_path, env=env, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode in (0, 1, 3), (command, done.stderr)
        streams += [done.stdout, done.stderr]
    trials = [json.loads(line) for line in (tmp_path / "trials.jsonl").read_text().splitlines()]
    assert trials and all(t["response"].startswith("answered by my-cli") for t in trials)
    assert all(t["runner"].endswith("--api-key [redacted]") for t in trials), trials
    assert (tmp_path / "site").is_dir()
    assert holding(tmp_path, [key]) == []
    assert not [s for s in streams if key in s]
