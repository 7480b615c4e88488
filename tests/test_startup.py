"""The command line starts fast: it imports what a command needs only when that command runs.

These check which modules get imported (in a fresh interpreter), not how long it takes;
bench/startup.py prints the timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Heavy libraries no start-up path may import: numerics, plotting, templating, the review web app.
HEAVY = ["numpy", "scipy", "matplotlib", "jinja2", "starlette"]


def python_c(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run CODE in a fresh interpreter (it must succeed); its output as text."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )


def imported_after(code: str) -> set[str]:
    """The top-level packages in sys.modules after running CODE in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = python_c(probe)
    return {name.split(".")[0] for name in json.loads(done.stdout.splitlines()[-1])}


def test_import_assay_cli_imports_no_heavy_library() -> None:
    assert imported_after("import assay.cli").isdisjoint(HEAVY)


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys\nfrom assay.cli.app import app\n"
        "try:\n    app(['--help'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print([m for m in sys.modules if m.startswith('assay.cli.') and m not in"
        " ('assay.cli.app', 'assay.cli.output')])"
    )
    done = python_c(code)
    assert "Commands:" in done.stdout
    assert done.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize("command", ["validate", "run", "schema"])
def test_startup_commands_import_no_heavy_library(command: str) -> None:
    assert imported_after(f"import assay.cli.{command}").isdisjoint(HEAVY)


def test_a_suite_run_reaches_its_first_call_without_heavy_libraries() -> None:
    """What `assay run SUITE.toml` loads before its first model call (the run path, the
    provider, every scorer for the suite's pre-run checks, the judges that follow the run)
    leaves out the heavy libraries (numpy: krippendorff's alpha of a judge panel imports it
    when computed) and the ones only later steps need (jsonschema for a schema check, YAML
    for rubric files, tenacity for the first retry: with tornado installed, importing
    tenacity imports it; ctypes for the llama.cpp provider)."""
    loaded = imported_after(
        "import assay.cli.run, assay.api.running, assay.api.keys, assay.engine,"
        " assay.models.openai, assay.scorers.runner, assay.verdict.names, assay.scorers.judge.config,"
        " assay.scorers.judge.follow"
    )
    assert loaded.isdisjoint([*HEAVY, "jsonschema", "yaml", "tenacity", "tornado", "ctypes"])


def test_a_scripted_judge_answers_as_the_system_under_test_in_a_fresh_process(tmp_path) -> None:
    """The scripted judges (mock:first, ...) register when a mock model first needs them,
    not because the command line imported the judges up front."""
    cases = tmp_path / "cases.jsonl"
    case = {"id": "c1", "category": "general", "prompt": "Q?", "risk": "low", "criteria": ["ok"]}
    cases.write_text(json.dumps(case) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "assay", "run", "--cases", str(cases), "--model", "mock:first",
         "--trials", "1", "--store", str(tmp_path / "s.db")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1/1 trials answered" in done.stdout


def test_schema_of_one_record_builds_only_that_model() -> None:
    """`assay schema case` imports the Case model, not every output and report model."""
    code = (
        "import sys\nfrom assay.cli.app import app\n"
        "try:\n    app(['schema', 'case'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('assay.api.outputs', 'assay.reports.model', 'assay.verdict.checks')"
        " if m in sys.modules])"
    )
    done = python_c(code)
    assert '"title": "Case"' in done.stdout
    assert done.stdout.splitlines()[-1] == "[]"


def test_every_named_schema_model_exists() -> None:
    """The lazily imported table of models names real pydantic models (output ones included)."""
    from pydantic import BaseModel

    from assay.api.outputs import OUTPUTS
    from assay.api.schemas import SCHEMAS

    assert set(OUTPUTS) <= set(SCHEMAS)
    for name in SCHEMAS:
        assert issubclass(SCHEMAS[name], BaseModel), name


def test_recording_judge_scores_imports_no_scipy() -> None:
    """A suite run with judges records their scores for `assay history` (store/history.py)
    without importing scipy: only the bias statistics that use it import it."""
    assert "scipy" not in imported_after("import assay.scorers.judge.run, assay.store.history")


TLS = Path(__file__).parent / "fixtures" / "tls"
TLS_PROBE = """
import asyncio, json, ssl, sys
from assay.core import aio
from assay.models.transport import aiohttp
import aiohttp.connector

verified = aiohttp.connector._SSL_CONTEXT_VERIFIED
tls = sys.argv[1]
# The base class's method shows the store as it is, without loading what was put off.
before = ssl.SSLContext.cert_store_stats(verified)["x509_ca"]

async def answer(reader, writer):
    await reader.readuntil(b"\\r\\n\\r\\n")
    writer.write(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nok")
    await writer.drain()
    writer.close()

async def fetch(name):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(f"{tls}/{name}.pem", f"{tls}/{name}-key.pem")
    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"https://127.0.0.1:{port}/") as reply:
                return await reply.text()
    except aiohttp.ClientError as exc:
        return type(exc).__name__
    finally:
        server.close()

trusted, stranger = aio.run(fetch("server")), aio.run(fetch("stranger"))
after = verified.cert_store_stats()["x509_ca"]
print(json.dumps({"before": before, "trusted": trusted, "stranger": stranger, "after": after}))
"""


@pytest.mark.parametrize("loop", ["default", "asyncio"])
def test_aiohttp_loads_its_ca_certificates_at_the_first_handshake_and_still_verifies(
    tmp_path: Path, loop: str
) -> None:
    """Importing aiohttp through assay.models.transport leaves its default SSL contexts'
    CA certificates unloaded (a run against http:// never needs them); the first TLS
    handshake loads them (SSL_CERT_FILE honoured), so a server the CA vouches for is
    trusted and one it does not is refused, exactly as with aiohttp's own contexts; on
    assay's event loop (uvloop where installed) and on asyncio's own."""
    env = {**os.environ, "SSL_CERT_FILE": str(TLS / "ca.pem"), "SSL_CERT_DIR": str(tmp_path)}
    env["ASSAY_EVENT_LOOP"] = "asyncio" if loop == "asyncio" else ""
    done = subprocess.run(
        [sys.executable, "-c", TLS_PROBE, str(TLS)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {
        "before": 0,
        "trusted": "ok",
        "stranger": "ClientConnectorCertificateError",
        "after": 1,
    }


def test_ssl_contexts_made_outside_the_aiohttp_import_are_plain() -> None:
    """Only aiohttp's import-time contexts are deferred: one made afterwards loads its
    certificates at once, as the ssl module documents."""
    code = (
        "import ssl\nfrom assay.models.transport import aiohttp\n"
        "context = ssl.create_default_context()\n"
        "print(type(context) is ssl.SSLContext, 'set_default_verify_paths' in"
        " vars(ssl.SSLContext))"
    )
    done = python_c(code)
    assert done.stdout.split() == ["True", "False"]


def test_records_build_their_validators_when_first_used() -> None:
    """Validating a Case (what `assay validate` and a run do before the first call) builds no
    other record's validator: Trials, score rows, comparisons and labels build theirs later."""
    code = (
        "from assay.core import records\n"
        "records.Case.model_validate({'id': 'c', 'category': 'g', 'prompt': 'Q?',"
        " 'risk': 'low', 'criteria': ['ok']})\n"
        "print([n for n in ('Case', 'Trial', 'ScoreRow', 'Comparison', 'Label')"
        " if getattr(records, n).__pydantic_complete__])"
    )
    done = python_c(code)
    assert done.stdout.splitlines()[-1] == "['Case']"


def test_only_the_importing_threads_contexts_are_deferred(tmp_path: Path) -> None:
    """A context another thread makes while aiohttp is being imported loads its certificates
    at once (it may be used before the import ends); the importing thread's wait for use."""
    code = (
        "import ssl, threading\nfrom assay.models import transport\n"
        "other = []\n"
        "with transport._deferred_verify_paths():\n"
        "    mine = ssl.create_default_context()\n"
        "    thread = threading.Thread(target=lambda: other.append(ssl.create_default_context()))\n"
        "    thread.start()\n    thread.join()\n"
        "    during = [ssl.SSLContext.cert_store_stats(c)['x509_ca'] for c in (mine, other[0])]\n"
        "print(during, type(mine).__name__, type(other[0]).__name__,"
        " mine.cert_store_stats()['x509_ca'])"
    )
    env = {**os.environ, "SSL_CERT_FILE": str(TLS / "ca.pem"), "SSL_CERT_DIR": str(tmp_path)}
    done = python_c(code, env)
    assert done.stdout.split() == ["[0,", "1]", "DeferredCAContext", "SSLContext", "1"]


def test_the_command_line_raises_the_collectors_threshold_and_the_api_does_not() -> None:
    """The command line collects young cycles less often (assay.cli GC_THRESHOLD: start-up's
    objects live as long as the process); a program importing assay's API keeps its own."""
    cli = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: sys.stderr.write(f'THRESHOLD {gc.get_threshold()}\\n'))\n"
        "sys.argv = ['assay', 'schema', 'case']\n"
        "from assay.cli import main\n"
        "main()\n"
    )
    done = python_c(cli)
    assert "THRESHOLD (20000, 20, 10)" in done.stderr
    api = "import gc, assay.api, assay.api.running\nprint(gc.get_threshold())"
    done = python_c(api)
    default = python_c("import gc; print(gc.get_threshold())")
    assert done.stdout == default.stdout


def test_a_run_without_a_suite_reaches_its_first_call_without_the_verdict() -> None:
    """`assay run --model ... --cases ...` gates nothing: the run path and the provider load
    neither the verdict, nor the scorers, nor the rubric (a suite run imports them to check
    its scorers and metrics before its first call)."""
    code = (
        "import sys\nimport assay.cli.run, assay.api.running, assay.engine, assay.models.openai\n"
        "print([m for m in sys.modules if m.startswith(('assay.verdict', 'assay.scorers',"
        " 'assay.core.rubric'))])"
    )
    done = python_c(code)
    assert done.stdout.splitlines()[-1] == "[]"


def test_a_whole_suite_run_imports_no_statistics_library_it_does_not_use(tmp_path: Path) -> None:
    """A suite run (mock model, one scorer, no judge) gates with scipy.special's t quantile
    only: the viewer's store reader (assay.store.views → the calibrations → sklearn, pandas,
    scipy.stats) came in with the reports' viewer links and doubled the run's CPU time and
    peak memory on the peers harness (1.4 → 2.8 CPU s, 102 → 233 MB on W1)."""
    cases = "".join(
        json.dumps(
            {"id": f"c{i}", "prompt": f"q{i}", "category": "a", "risk": "low", "criteria": ["x"]}
        )
        + "\n"
        for i in range(6)
    )
    (tmp_path / "cases.jsonl").write_text(cases, encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "light"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "mock"\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\nsystem = "b"\n'
        '[scoring]\nscorers = ["contains"]\n',
        encoding="utf-8",
    )
    loaded = imported_after(
        f"import os\nos.chdir({str(tmp_path)!r})\nimport assay\n"
        f"assay.run({str(suite)!r}, store={str(tmp_path / 's.db')!r})"
    )
    assert "assay" in loaded
    assert loaded.isdisjoint(["sklearn", "pandas", "matplotlib", "krippendorff"])
