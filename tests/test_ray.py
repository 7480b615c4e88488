"""The Ray executor: same records as the local executor, on a real two-node loopback cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.core.records import Case
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.engine.executors import LocalExecutor, create_executor
from assay.engine.executors.ray import close_worker_models, run_call
from assay.models import Message, ModelError, ModelOptions, Request, Response, create_model
from assay.store import Store
from conftest import make_case, write_jsonl

SRC = str(Path(assay.__file__).resolve().parents[1])
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support-agent"
TIMINGS = ("latency_s", "created_at")


def content(path: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Trials by key, without the fields that measure time."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    by_key = {(t["case_id"], t["condition"], t["trial"]): t for t in rows}
    assert len(by_key) == len(rows), "duplicate trials"
    return {k: {f: v for f, v in t.items() if f not in TIMINGS} for k, t in by_key.items()}


def request_for(case: Case) -> Request:
    return Request(messages=[Message("user", case.prompt)], max_tokens=64, trial=2, case=case)


def test_run_call_answers_and_returns_errors_as_values() -> None:
    case = Case.model_validate(make_case("r1", context=[{"id": "d", "text": "t"}]))
    request = request_for(case)
    answer = run_call("mock", ModelOptions(), request)
    assert isinstance(answer, Response)
    local = asyncio_run(create_model("mock").generate(request))
    assert answer == local
    failed = run_call("mock:answer,fail=1", ModelOptions(), request)
    assert isinstance(failed, ModelError) and failed.retryable


def test_provider_errors_keep_their_retry_hints_through_a_task(mock_server: Any) -> None:
    import pickle

    server = mock_server(rates={"429": 1.0}, retry_after=0.7)
    case = Case.model_validate(make_case("r3"))
    options = ModelOptions(base_url=server.url)
    outcome = run_call("openai:gpt-4o-mini", options, request_for(case))
    shipped = pickle.loads(pickle.dumps(outcome))  # what Ray does with a task's return value
    assert isinstance(shipped, ModelError)
    assert shipped.retryable and shipped.overload and shipped.retry_after == 0.7
    assert str(shipped).startswith("HTTP 429")
    close_worker_models()


def test_caller_runs_generate_through_its_executor(tmp_path: Path) -> None:
    seen: list[str] = []

    class Recording(LocalExecutor):
        async def generate(self, model: Any, request: Request) -> Response:
            seen.append(model.spec)
            return await super().generate(model, request)

    store = Store(tmp_path / "s.db")
    caller = Caller(store, Budget(None), concurrency=2, executor=Recording())
    case = Case.model_validate(make_case("r2"))
    model = create_model("mock")
    first = asyncio_run(caller.call(model, request_for(case)))
    store.flush()
    again = asyncio_run(caller.call(model, request_for(case)))
    assert first == again and seen == ["mock"] and caller.cache_hits == 1


def test_engine_never_runs_more_calls_than_executor_slots(tmp_path: Path) -> None:
    from assay.engine import Condition, RunSettings
    from assay.engine.runner import Engine

    in_flight = peak = 0

    class TwoSlots(LocalExecutor):
        slots = 2

        async def generate(self, model: Any, request: Request) -> Response:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            try:
                return await super().generate(model, request)
            finally:
                in_flight -= 1

    from assay.engine.plan import build_plan

    cases = [Case.model_validate(make_case(f"s{i}")) for i in range(12)]
    model = create_model("mock:answer,latency=0.01")
    store = Store(tmp_path / "s.db")
    engine = Engine(store, {"baseline": model}, RunSettings(concurrency=8), executor=TwoSlots())
    plan = build_plan(cases, [Condition("baseline", "mock:answer,latency=0.01")], 1,
                      {"baseline": model.identity()})  # fmt: skip
    result = asyncio_run(engine.run("r", plan, 12))
    assert result.answered == 12 and engine.concurrency == 2 and peak == 2


def test_executor_choice_errors_are_input_errors() -> None:
    from assay.core.errors import InputError

    with pytest.raises(InputError, match="unknown executor"):
        create_executor("dask", ModelOptions())
    with pytest.raises(InputError, match="needs --executor ray"):
        create_executor("local", ModelOptions(), address="127.0.0.1:1")


def test_unreachable_ray_address_fails_fast(cli: Any, cases_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    result = cli("run", "--cases", cases_file, "--model", "mock", "--executor", "ray",
                 "--ray-address", "127.0.0.1:1", "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2 and "nothing answers at 127.0.0.1:1" in result.stderr


def asyncio_run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[dict[str, Any]]:
    """A head and a second worker node, one CPU each, on 127.0.0.1; stopped afterwards."""
    pytest.importorskip("ray")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p),
    }
    helper = Path(__file__).with_name("ray_cluster.py")
    proc = subprocess.Popen(
        [sys.executable, str(helper)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            pytest.fail("the Ray test cluster did not start")
        info: dict[str, Any] = json.loads(line)
        info["env"] = {
            **env,
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        yield info
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def assay_run(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "assay", "run", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.slow
def test_ray_executor_matches_local_records(ray_cluster: dict[str, Any], tmp_path: Path) -> None:
    cases = [make_case(f"c{i}") for i in range(8)]
    cases.append(make_case("turns", turns=["and then?"], context=[{"id": "d1", "text": "Doc"}]))
    catalogue = write_jsonl(tmp_path / "cases.jsonl", cases)
    skill = tmp_path / "skill.md"
    skill.write_text("Answer in one sentence.")
    common = (
        "--cases",
        catalogue,
        "--model",
        "mock:answer,fail=0.2,seed=3",
        "--condition-skill",
        skill,
        "--trials",
        "2",
        "--retries",
        "8",
        "--json",
    )
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    local = assay_run(*common, "--output", local_out, "--store", tmp_path / "local.db")
    assert local.returncode == 0, local.stderr
    store = tmp_path / "ray.db"
    remote = assay_run(
        *common,
        "--executor",
        "ray",
        "--ray-address",
        ray_cluster["address"],
        "--output",
        ray_out,
        "--store",
        store,
        env=ray_cluster["env"],
    )
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout)["calls"] >= 36
    assert content(ray_out) == content(local_out)
    assert len(content(ray_out)) == 9 * 2 * 2
    # The driver alone keeps the store and cache: a rerun on Ray resumes with no calls at all.
    again = assay_run(
        *common,
        "--executor",
        "ray",
        "--ray-address",
        ray_cluster["address"],
        "--output",
        ray_out,
        "--store",
        store,
        env=ray_cluster["env"],
    )
    assert again.returncode == 0 and json.loads(again.stdout)["calls"] == 0
    assert content(ray_out) == content(local_out)
    # The LangGraph support agent (a python: runner with its own inner model) on six cases.
    agent = (
        "--cases", EXAMPLE / "cases.jsonl", "--model", f"python:{EXAMPLE / 'agent.py'}:run",
        "--param", "agent_model=mock", "--param", "guardrails=true", "--allow-unmetered",
        *(arg for i in range(1, 7) for arg in ("--case", f"sa-{i:03d}")), "--trials", "2",
        "--json",
    )  # fmt: skip
    local_agent, ray_agent = tmp_path / "agent-local.jsonl", tmp_path / "agent-ray.jsonl"
    local = assay_run(*agent, "--output", local_agent, "--store", tmp_path / "agent-local.db")
    assert local.returncode == 0, local.stderr
    remote = assay_run(*agent, "--executor", "ray", "--ray-address", ray_cluster["address"],
                       "--output", ray_agent, "--store", tmp_path / "agent-ray.db",
                       env=ray_cluster["env"])  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout)["calls"] == 6 * 2  # each trial ran as a Ray task
    assert len(content(ray_agent)) == 6 * 2
    assert all(t["state"] and t["error"] is None for t in content(ray_agent).values())
    assert content(ray_agent) == content(local_agent)


@pytest.mark.slow
def test_cluster_has_two_loopback_nodes(ray_cluster: dict[str, Any]) -> None:
    assert ray_cluster["nodes"] == ["127.0.0.1", "127.0.0.1"]
    assert ray_cluster["address"].startswith("127.0.0.1:")


@pytest.mark.slow
def test_ray_executor_under_provider_faults_matches_local(
    ray_cluster: dict[str, Any], tmp_path: Path, mock_server: Any
) -> None:
    rates = {"429": 0.1, "500": 0.1, "truncated": 0.05, "reset": 0.05}
    server = mock_server(rates=rates, seed=9, retry_after=0.01)
    catalogue = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"f{i}") for i in range(10)])
    common = ("--cases", catalogue, "--model", "openai:gpt-4o-mini", "--base-url", server.url,
              "--trials", "2", "--retries", "10", "--json")  # fmt: skip
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    local = assay_run(*common, "--output", local_out, "--store", tmp_path / "l.db")
    assert local.returncode == 0, local.stderr
    remote = assay_run(*common, "--executor", "ray", "--ray-address", ray_cluster["address"],
                       "--output", ray_out, "--store", tmp_path / "r.db", env=ray_cluster["env"])  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    assert sum(server.stats()["faults"].values()) > 0
    # A trial's cost counts its possibly billed failed attempts at their reservation, and the
    # faults land on other requests in the two runs: everything else is the same.
    ray, here = content(ray_out), content(local_out)
    assert {k: {f: v for f, v in t.items() if f != "cost_usd"} for k, t in ray.items()} == {
        k: {f: v for f, v in t.items() if f != "cost_usd"} for k, t in here.items()
    }
    assert all(ray[k]["cost_usd"] > 0 and here[k]["cost_usd"] > 0 for k in ray)


class FakeRay:
    """A stand-in for the `ray` module in the driver: tasks run `run_call` in this process;
    counts the connections made (`init`) and dropped (`shutdown`)."""

    class exceptions:  # as ray names it
        RayError = RuntimeError

    def __init__(self) -> None:
        self.inits = 0
        self.shutdowns = 0
        self.connected = False

    def init(self, **_: Any) -> None:
        self.inits += 1
        self.connected = True

    def is_initialized(self) -> bool:
        return self.connected

    def shutdown(self) -> None:
        self.shutdowns += 1
        self.connected = False

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def cancel(self, ref: Any) -> None:
        pass

    def remote(self, **_: Any) -> Any:
        def wrap(body: Any) -> Any:
            class Task:
                def options(self, **_: Any) -> Task:
                    return self

                def remote(self, *args: Any) -> Any:
                    async def ref() -> Any:
                        return body(*args)

                    return ref()

            return Task()

        return wrap


def test_a_sequential_run_on_ray_connects_once_for_all_its_looks(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no difference every look runs (4 here); without --ray-address each look started
    (and stopped) a local cluster of its own: the run now holds one for all of them."""
    from assay.api import running

    fake = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(record=True)
    cases = [make_case(f"c{i}", expect={"contains": ["never said"]}) for i in range(20)]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "seq"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "openai:sut-model"\n'
        f'output = "out"\n[run]\nbase_url = "{server.url}"\nprice = "1,1"\nexecutor = "ray"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        'system = "Be brief."\n[scoring]\nscorers = ["contains"]\n[gate]\nsequential = true\n'
        "look = 5\n",
        encoding="utf-8",
    )
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None
    stop = outcome.evaluation.evaluation.analysis.gate.sequential
    assert stop is not None and stop.look == 4 and outcome.run.answered == 40
    assert len(server.requests()) == 40
    assert (fake.inits, fake.shutdowns, fake.connected) == (1, 1, False)


@pytest.mark.slow
def test_a_sequential_run_goes_through_the_ray_executor(
    ray_cluster: dict[str, Any], tmp_path: Path
) -> None:
    """Looks run as Ray tasks on the cluster: the candidate (mock:answer) says what every
    case expects and baseline (mock:echo) does not, so the first look of 20 cases PASSes;
    then the candidate runs on the 60 others (its per-case checks) before the PASS stands."""
    from conftest import contains_case, contains_suite

    write_jsonl(tmp_path / "cases.jsonl", [contains_case(f"c{i}", "actionable") for i in range(80)])
    text = contains_suite("ray-seq").replace('[gate]\nmode = "seed"\n', "[gate]\nlook = 20\n")
    text = text.replace("[scoring.thresholds]\ncontains = { min = 1 }\n", "")
    suite = tmp_path / "suite.toml"
    suite.write_text(text, encoding="utf-8")
    done = assay_run(
        suite, "--sequential", "--executor", "ray", "--ray-address", ray_cluster["address"],
        "--store", tmp_path / "s.db", "--json",
        env=ray_cluster["env"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    stop = summary["release_gate"]["sequential"]
    assert (stop["look"], stop["cases"], stop["calls_made"], stop["checked"]) == (1, 20, 100, 80)
    assert summary["release_gate"]["verdict"] == "PASS" and summary["calls"] == 100
