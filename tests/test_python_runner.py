"""python:MODULE:CALLABLE and python:PATH.py:CALLABLE agents."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import InputError
from assay.core.records import Case, Trial
from assay.models import Message, ModelError, ModelOptions, Request, create_model, model_price
from assay.models.pricing import Price
from assay.store import Store
from conftest import make_case, write_jsonl

AGENT = """
import asyncio, threading

calls = []

def sync_agent(case, settings):
    calls.append(threading.current_thread().name)
    return f"sync {case.id} {settings['condition']} {settings.get('tone')}"

async def async_agent(case, settings):
    await asyncio.sleep(0)
    return {
        "response": f"async {case.id}",
        "kind": "refusal" if "refuse" in case.prompt else "answer",
        "citations": ["kb-1"],
        "retrieved": ["kb-1", "kb-2"],
        "usage": {"input_tokens": 12, "output_tokens": 3},
        "cost_usd": 0.25,
        "rule": "demo",
    }

closed = []

async def _close():
    closed.append(True)

async_agent.assay_aclose = _close
async_agent.assay_version = {"kb": "abc"}

def failing_agent(case, settings):
    if case.id == "c1":
        raise ValueError("the knowledge base is unreachable")
    return "fine"

def priced_agent(case, settings):
    return {"response": "x", "usage": {"input_tokens": 1000000, "output_tokens": 0}}
priced_agent.assay_price = (2.0, 4.0)

def bad_kind(case, settings):
    return {"response": "x", "kind": "shrug"}

def no_response(case, settings):
    return {"text": "x"}

def wrong_type(case, settings):
    return 42

def bad_citations(case, settings):
    return {"response": "x", "citations": "kb-1"}

not_callable = 3
"""


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "agents" / "my_agent.py"
    path.parent.mkdir()
    path.write_text(AGENT)
    return path


def loaded(path: Path) -> Any:
    """The module assay imported from an agent file."""
    return next(m for m in list(sys.modules.values()) if getattr(m, "__file__", None) == str(path))


def case(case_id: str = "c0", **extra: Any) -> Case:
    return Case.model_validate(make_case(case_id, **extra))


def call(spec: str, the_case: Case, settings: dict[str, Any] | None = None, **options: Any) -> Any:
    model = create_model(spec, ModelOptions(**options))
    request = Request(
        messages=[Message("user", the_case.prompt)],
        max_tokens=10,
        case=the_case,
        settings=settings or {"condition": "baseline", "skill": None, "model": spec},
    )
    return asyncio.run(model.generate(request))


def test_sync_callable_runs_in_a_worker_thread(agent_file: Path) -> None:
    reply = call(
        f"python:{agent_file}:sync_agent",
        case(),
        {"condition": "candidate", "skill": "s", "model": "m", "tone": "warm"},
    )
    assert reply.text == "sync c0 candidate warm" and reply.state is None
    module = loaded(agent_file)
    assert module.calls[-1] != threading.current_thread().name


def test_async_callable_returns_state_usage_and_cost(agent_file: Path) -> None:
    reply = call(f"python:{agent_file}:async_agent", case(prompt="please refuse"))
    assert reply.text == "async c0"
    assert reply.state == {
        "kind": "refusal",
        "citations": ["kb-1"],
        "retrieved": ["kb-1", "kb-2"],
        "rule": "demo",
    }
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (12, 3, 0.25)


def test_module_spec_and_metering(agent_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(agent_file.parent))
    model = create_model("python:my_agent:sync_agent")
    assert model_price(model) is None  # unmetered unless priced
    identity = model.identity()
    assert identity["spec"] == "python:my_agent:sync_agent" and identity["source_sha256"]
    priced = create_model(f"python:{agent_file}:priced_agent")
    assert model_price(priced) == Price(2.0, 4.0)
    assert call(f"python:{agent_file}:priced_agent", case()).cost_usd == pytest.approx(2.0)
    flag = create_model(f"python:{agent_file}:sync_agent", ModelOptions(price=Price(1, 1)))
    assert model_price(flag) == Price(1, 1)


def test_version_and_close_hooks(agent_file: Path) -> None:
    model = create_model(f"python:{agent_file}:async_agent")
    assert model.identity()["version"] == {"kb": "abc"}
    asyncio.run(model.aclose())
    module = loaded(agent_file)
    assert module.closed == [True]


def test_identity_follows_the_source(agent_file: Path) -> None:
    before = create_model(f"python:{agent_file}:sync_agent").identity()
    (agent_file.parent / "helper.py").write_text("X = 1\n")
    after = create_model(f"python:{agent_file}:sync_agent").identity()
    assert before["source_sha256"] != after["source_sha256"]


@pytest.mark.parametrize(
    "name, message",
    [
        ("bad_kind", "kind 'shrug'"),
        ("no_response", "no 'response' string"),
        ("wrong_type", "returned int"),
        ("bad_citations", "'citations' must be a list of strings"),
    ],
)
def test_malformed_returns_are_errors(agent_file: Path, name: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        call(f"python:{agent_file}:{name}", case())


def test_exception_keeps_the_traceback(agent_file: Path) -> None:
    with pytest.raises(ModelError, match="ValueError: the knowledge base") as caught:
        call(f"python:{agent_file}:failing_agent", case("c1"))
    assert "Traceback" in (caught.value.detail or "")
    assert "failing_agent" in (caught.value.detail or "")


@pytest.mark.parametrize(
    "rest, message",
    [
        ("nomodule", "expected python:MODULE:CALLABLE"),
        ("no_such_module_xyz:run", "cannot import"),
        ("missing/agent.py:run", "no such file"),
        ("{file}:not_callable", "is not a callable"),
        ("{file}:absent", "is not a callable"),
    ],
)
def test_bad_specs(agent_file: Path, rest: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        create_model("python:" + rest.format(file=agent_file))


def test_run_stores_tracebacks_and_state(cli, agent_file: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(3)])
    out = tmp_path / "trials.jsonl"
    store_path = tmp_path / "s.db"
    result = cli(
        "run", "--cases", cases, "--model", f"python:{agent_file}:failing_agent",
        "--trials", 1, "--output", out, "--store", store_path,
    )  # fmt: skip
    assert result.code == 2 and "--allow-unmetered" in result.stderr  # unmetered: refused
    result = cli(
        "run", "--cases", cases, "--model", f"python:{agent_file}:failing_agent",
        "--trials", 1, "--output", out, "--store", store_path, "--allow-unmetered",
    )  # fmt: skip
    assert result.code == 3
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    rows = {r["case_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["c1"]["error"] == "ValueError: the knowledge base is unreachable"
    assert rows["c1"]["response"] == "" and rows["c0"]["response"] == "fine"
    store = Store(store_path)
    try:
        run_id = rows["c1"]["run_id"]
        detail = store.error_detail(run_id, "c1", "baseline", 1)
        assert detail is not None and "Traceback" in detail and "failing_agent" in detail
    finally:
        store.close()


def test_suite_params_reach_the_agent(cli, agent_file: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write_jsonl(tmp_path / "cases.jsonl", [make_case("c0", prompt="please refuse")])
    suite = tmp_path / "suite.toml"
    relative = agent_file.relative_to(tmp_path)
    suite.write_text(
        f'cases = "cases.jsonl"\nmodel = "python:{relative}:sync_agent"\ntrials = 1\n'
        "[run]\nallow_unmetered = true\n"
        '[[conditions]]\nname = "plain"\n'
        '[[conditions]]\nname = "warm"\nparams = { tone = "warm" }\n'
        '[[conditions]]\nname = "rich"\nmodel = "python:'
        f'{relative}:async_agent"\n'
    )
    out = tmp_path / "trials.jsonl"
    result = cli("run", suite, "--output", out, "--store", tmp_path / "s.db", "--param", "x=1")
    assert result.code == 0, result.stderr
    rows = {r["condition"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["plain"]["response"] == "sync c0 plain None"
    assert rows["warm"]["response"] == "sync c0 warm warm"
    assert rows["rich"]["state"]["kind"] == "refusal" and rows["rich"]["cost_usd"] == 0.25
    for row in rows.values():
        Trial.model_validate(row)
    # a changed parameter is a different run, not a resumed one
    again = cli("run", suite, "--output", out, "--store", tmp_path / "s.db", "--param", "x=2",
                "--json")  # fmt: skip
    assert again.json()["run_id"] != rows["plain"]["run_id"]


DICT_STYLE = """
def subscripts(case, settings):
    return case["prompt"]

def gets(case, settings):
    return case.get("prompt")

def own_type_error(case, settings):
    return len(case.prompt) + "x"
"""


@pytest.mark.parametrize("name", ["subscripts", "gets"])
def test_taking_the_case_for_a_dict_says_what_the_callable_receives(
    tmp_path: Path, name: str
) -> None:
    agent = tmp_path / "dict_style.py"
    agent.write_text(DICT_STYLE)
    with pytest.raises(ModelError) as caught:
        call(f"python:{agent}:{name}", case())
    message = str(caught.value)
    assert "'Case' object" in message
    assert "the callable receives an assay Case: use case.prompt, not case['prompt']" in message
    assert "prompt, risk, criteria" in message


def test_other_errors_get_no_case_hint(tmp_path: Path) -> None:
    agent = tmp_path / "dict_style.py"
    agent.write_text(DICT_STYLE)
    with pytest.raises(ModelError) as caught:
        call(f"python:{agent}:own_type_error", case())
    assert "TypeError" in str(caught.value) and "assay Case" not in str(caught.value)


def test_the_docs_agent_example_runs(tmp_path: Path) -> None:
    import re
    import textwrap

    readme = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(
        encoding="utf-8"
    )
    found = re.search(r"```python\n\s*# agent.py\n(.*?)```", readme, re.S)
    assert found, "docs/models.md shows an agent.py example"
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(found.group(1)))
    settings = {"condition": "baseline", "skill": None, "model": "m", "tone": "warm"}
    reply = call(f"python:{agent}:answer", case(prompt="Where is my order?"), settings)
    assert reply.text == "(warm, baseline) You asked: Where is my order?"
