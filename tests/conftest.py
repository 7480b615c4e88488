"""Shared fixtures: a CLI invoker, case files, and the mock model server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
# DeepEval (assay[metrics]) installs a pytest plugin; in the sessions pytester starts it would
# report the session: no telemetry from the tests.
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "1"
os.environ["RAGAS_DO_NOT_TRACK"] = "true"

from mock_server import MockServer, ServerConfig  # noqa: E402

from app_thread import AppThread  # noqa: E402


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def invoke(*args: str | Path) -> Result:
    """Run the real CLI entry point in-process and capture its exit code and output (and
    take back the environment defaults it sets, so the test process keeps its own)."""
    from assay.cli import main
    from assay.core.environ import restore_user_env

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["assay", *map(str, args)]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = argv
        restore_user_env()
    return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli() -> Any:
    return invoke


@pytest.fixture(autouse=True)
def _not_on_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests behave the same in a GitHub Actions job: no annotations, no job summary written
    (the tests of that output set these variables themselves)."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def v0_judge_templates(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The judge templates of the assay that wrote tests/fixtures/store-v0 (before prompts
    were fenced, tests/fixtures/store-v0/templates/): its stored judgments are keyed by their
    hashes, so with today's templates they are made again."""
    from assay.scorers.judge import prompts

    folder = ROOT / "tests" / "fixtures" / "store-v0" / "templates"
    today = prompts.template_source

    def source(name: str) -> str:
        path = folder / f"{name}.j2"
        return path.read_text(encoding="utf-8") if path.exists() else today(name)

    prompts._compiled.cache_clear()
    monkeypatch.setattr(prompts, "template_source", source)
    yield
    prompts._compiled.cache_clear()


def plugin_args() -> list[str]:
    """`-p assay.pytest_plugin` for an inner pytest run, unless the installed `pytest11`
    entry point loads the plugin already (it cannot be registered twice)."""
    from importlib.metadata import entry_points

    installed = any(e.value == "assay.pytest_plugin" for e in entry_points(group="pytest11"))
    return [] if installed else ["-p", "assay.pytest_plugin"]


def make_case(case_id: str, **extra: Any) -> dict[str, Any]:
    case = {
        "id": case_id,
        "category": "general",
        "prompt": f"Question {case_id}?",
        "risk": "low",
        "criteria": ["answers the question"],
    }
    case.update(extra)
    return case


CONTAINS_SUITE = """\
name = "{name}"
cases = "cases.jsonl"
trials = 1

[[conditions]]
name = "baseline"
model = "mock:echo"

[[conditions]]
name = "candidate"
model = "mock:answer"

[scoring]
scorers = ["contains"]

[scoring.thresholds]
contains = {{ min = 1 }}

[gate]
mode = "seed"
candidate = "candidate"
"""


def contains_suite(name: str) -> str:
    """A two-condition suite (mock:echo vs mock:answer) gated by each case's `contains` check."""
    return CONTAINS_SUITE.format(name=name)


def contains_case(case_id: str, word: str) -> dict[str, Any]:
    """A case whose answer must contain `word` (mock:answer's replies contain "actionable")."""
    return make_case(case_id, expect={"contains": [word]})


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(5)])


class MockServerThread(AppThread):
    """The bench mock server, run on its own event loop in a background thread."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        super().__init__(MockServer(config).app)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats") as reply:
            return dict(json.load(reply))

    def requests(self) -> list[dict[str, Any]]:
        """The per-request log (needs `record=True`): arrival and reply times, body hash, fault."""
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/requests") as reply:
            return list(json.load(reply))


@pytest.fixture
def mock_server() -> Iterator[Any]:
    """A factory: mock_server(latency=..., rates={...}) -> a running server, stopped after."""
    servers: list[MockServerThread] = []

    def start(**kwargs: Any) -> MockServerThread:
        server = MockServerThread(ServerConfig(**kwargs))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def hostile_server() -> Iterator[Any]:
    """A server on 127.0.0.1 whose replies should not be trusted (tests/hostile_server.py):
    the model name chooses the hostility (`openai:endless`, `anthropic:huge`, ...)."""
    from hostile_server import HostileServer

    server = HostileServer()
    yield server
    server.stop()


class Mirror:
    """A folder served over HTTP on 127.0.0.1; `requests` lists the paths asked for."""

    def __init__(self, folder: Path) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                super().do_GET()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=folder))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve_folder() -> Iterator[Any]:
    """A factory: serve_folder(path) -> a Mirror serving it on 127.0.0.1, closed after."""
    mirrors: list[Mirror] = []

    def start(folder: Path) -> Mirror:
        mirrors.append(Mirror(folder))
        return mirrors[-1]

    yield start
    for mirror in mirrors:
        mirror.close()


@pytest.fixture(autouse=True)
def _no_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """assay's cache is the test's own, and a judge-bench set fetched without a mirror of the
    test's goes to a closed port on 127.0.0.1: no test reaches the internet or the home cache."""
    monkeypatch.setenv("ASSAY_CACHE", str(tmp_path / "assay-cache"))
    monkeypatch.setenv("ASSAY_JUDGE_BENCH_MIRROR", "http://127.0.0.1:9/no-network-in-tests")


@pytest.fixture(autouse=True)
def _work_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in its own folder, so default outputs never land in the checkout."""
    monkeypatch.chdir(tmp_path)
