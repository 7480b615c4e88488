"""DeepEval and RAGAS metrics as scorers (`assay[metrics]`), offline on the scripted judge.

`mock:fair` answers DeepEval's HallucinationMetric and RAGAS's faithfulness prompts by the
rule of its grounding answers (a claim sharing most words with a context sentence is
supported, contradicted when a number or the negation differs), so the figures are exact.
Every test here fails on a socket connection to anything but 127.0.0.1: the libraries
reach the judge through assay's caller only.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import InputError
from assay.core.suite import ScorerEntry
from assay.engine.budget import Budget
from assay.engine.calls import Caller
from assay.scorers import ScoreContext, create_scorer
from assay.scorers.runner import build_scorers
from assay.store import Store
from conftest import make_case, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
TOWER = "The Eiffel Tower is 330 metres tall and stands in Paris. It opened to visitors in 1889."
GROUNDED = "The Eiffel Tower stands in Paris and is 330 metres tall."
WRONG = "The Eiffel Tower stands in Paris and is 450 metres tall."
INVENTED = "The tower was designed by Gustave Eiffel with 500 workers."


INSTALLED = all(find_spec(name) is not None for name in ("deepeval", "ragas"))


def _import_libraries() -> None:
    """Import DeepEval and RAGAS once, as the adapters do, with the tests' `bench/` folder
    (whose `datasets` package would shadow Hugging Face's, which RAGAS imports) off the path
    meanwhile."""
    from assay.scorers.external import deepeval_metrics, ragas_metrics

    bench = str(ROOT / "bench")
    saved_path = list(sys.path)
    shadow = {k: sys.modules.pop(k) for k in list(sys.modules) if k.partition(".")[0] == "datasets"}
    sys.path[:] = [p for p in sys.path if p != bench]
    try:
        deepeval_metrics._library()
        ragas_metrics._library()
    finally:
        sys.path[:] = saved_path
        for name in [k for k in sys.modules if k.partition(".")[0] == "datasets"]:
            del sys.modules[name]  # Hugging Face's: RAGAS keeps what it imported
        sys.modules.update(shadow)


if INSTALLED:
    _import_libraries()
needs_libraries = pytest.mark.skipif(not INSTALLED, reason="assay[metrics] is not installed")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fail any socket connection to a host other than 127.0.0.1 (and record it)."""
    tried: list[Any] = []
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1"):
            tried.append(address)
            raise OSError(f"test: outbound connection to {address!r} refused")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield tried
    assert tried == [], f"outbound connections attempted: {tried}"


def test_a_missing_library_is_exit_2_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the extra installed, naming a library metric is an input error (exit 2)."""
    from assay.scorers.external import deepeval_metrics, ragas_metrics

    def absent(name: str) -> Any:
        raise ModuleNotFoundError(f"No module named {name.partition('.')[0]!r}", name=name)

    monkeypatch.setattr(deepeval_metrics, "import_module", absent)
    monkeypatch.setattr(ragas_metrics, "import_module", absent)
    for name, library in (
        ("deepeval:HallucinationMetric", "DeepEval"),
        ("ragas:faithfulness", "RAGAS"),
    ):
        with pytest.raises(InputError) as raised:
            create_scorer(name, judge="mock:fair")
        assert raised.value.exit_code == 2
        assert f"{library} is not installed: install assay[metrics]" in str(raised.value)


def test_other_prefixes_and_unknown_scorers_still_list_the_known_ones() -> None:
    with pytest.raises(InputError, match=r"unknown \(known: .*deepeval:<metric>, ragas:<metric>"):
        create_scorer("nosuch:thing")


@needs_libraries
def test_an_unknown_metric_lists_the_available_ones() -> None:
    with pytest.raises(InputError) as raised:
        create_scorer("deepeval:HallucinatonMetric")
    assert "unknown metric (available: " in str(raised.value)
    assert "deepeval:HallucinationMetric" in str(raised.value)
    with pytest.raises(InputError) as raised:
        create_scorer("ragas:faithfullness")
    listed = str(raised.value)
    assert "ragas:faithfulness" in listed and "ragas:sql_semantic_equivalence" in listed
    assert "ragas:agent_goal_accuracy" not in listed  # takes a conversation, not a prompt
    with pytest.raises(InputError, match="bad options"):
        create_scorer("deepeval:HallucinationMetric", judge="mock:fair", no_such_option=1)


@needs_libraries
def test_the_scorers_declare_metrics_models_and_take_the_suite_judge() -> None:
    hallucination, faithfulness = build_scorers(
        [
            ScorerEntry.model_validate({"name": "deepeval:HallucinationMetric"}),
            ScorerEntry.model_validate(
                {"name": "ragas:faithfulness", "options": {"judge": "mock:first"}}
            ),
        ],
        judge="mock:fair",
    )
    assert hallucination.metrics == hallucination.primary == ("deepeval:hallucination",)
    assert hallucination.models == ("mock:fair",)
    assert faithfulness.metrics == ("ragas:faithfulness",)
    assert faithfulness.models == ("mock:first",)


def _score(tmp_path: Path, name: str, response: str, budget: float | None = None) -> Any:
    store = Store(tmp_path / "s.db")
    try:
        caller = Caller(store, Budget(budget), concurrency=2)
        case = make_case("c", prompt="How tall is the Eiffel Tower?")
        from assay.core.records import Case, Trial

        ctx = ScoreContext.of(
            Case.model_validate({**case, "context": [{"id": "d1", "text": TOWER}]}),
            Trial(case_id="c", trial=1, condition="b", runner="m", response=response),
            caller=caller,
        )
        return asyncio.run(create_scorer(name, judge="mock:fair").score(ctx))
    finally:
        store.close()


@needs_libraries
def test_deepeval_hallucination_is_the_share_of_contexts_agreed_with(tmp_path: Path) -> None:
    grounded = _score(tmp_path, "deepeval:HallucinationMetric", GROUNDED)
    assert grounded.metrics == {"deepeval:hallucination": 1.0}
    assert grounded.fields["method"] == "judge:mock:fair"
    wrong = _score(tmp_path, "deepeval:HallucinationMetric", WRONG)
    assert wrong.metrics == {"deepeval:hallucination": 0.0}
    assert wrong.fields["evidence"]["verdicts"][0]["verdict"] == "no"


@needs_libraries
def test_ragas_faithfulness_is_the_share_of_statements_supported(tmp_path: Path) -> None:
    assert _score(tmp_path, "ragas:faithfulness", GROUNDED).metrics == {"ragas:faithfulness": 1.0}
    half = _score(tmp_path, "ragas:faithfulness", f"{GROUNDED} {INVENTED}")
    assert half.metrics == {"ragas:faithfulness": 0.5}


def _suite(tmp_path: Path, judge: str = "") -> Path:
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case("g1", prompt=f"{GROUNDED} {WRONG}", context=[{"id": "d1", "text": TOWER}])],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'cases = "cases.jsonl"\ntrials = 1\nmodel = "mock:echo"\noutput = "out"\n'
        '[[conditions]]\nname = "baseline"\n[[conditions]]\nname = "candidate"\n'
        f'[judge]\njudges = ["mock:fair"]\n{judge}'
        "[scoring]\nscorers = [\n"
        '  { name = "deepeval:HallucinationMetric", options = { include_reason = false } },\n'
        '  { name = "ragas:faithfulness" },\n]\n'
        '[scoring.corpus]\n"ragas:faithfulness" = { min = 0.9, decide = "estimate" }\n',  # one case
        encoding="utf-8",
    )
    return suite


@needs_libraries
def test_a_suite_run_scores_gates_and_a_rerun_makes_no_call(cli: Any, tmp_path: Path) -> None:
    """`assay run SUITE` with both libraries' metrics: their rows are written like any
    scorer's, the corpus threshold gates on them, and a second run is answered from the
    call cache."""
    suite = _suite(tmp_path)
    first = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert first.code == 1, first.stderr  # the corpus threshold on ragas:faithfulness fails
    rows = [
        json.loads(line)
        for line in (tmp_path / "out" / "deterministic.jsonl").read_text().splitlines()
    ]
    figures = {(r["condition"], r["scorer"]): r["metrics"] for r in rows}
    # mock:echo answers with the prompt and the context: four statements, one contradicted.
    assert figures[("candidate", "ragas:faithfulness")] == {"ragas:faithfulness": 0.75}
    assert figures[("candidate", "deepeval:hallucination")] == {"deepeval:hallucination": 0.0}
    assert {r["method"] for r in rows} == {"judge:mock:fair"}
    checks = {c["name"]: c for c in first.json()["release_gate"]["checks"]}
    assert checks["corpus:ragas:faithfulness:min"]["status"] == "fail"
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "ragas:faithfulness" in report and "deepeval:hallucination" in report
    again = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert again.code == first.code and again.json()["calls"] == 0


@needs_libraries
def test_the_judge_budget_stops_the_library_metrics(cli: Any, tmp_path: Path) -> None:
    """[judge] budget_usd caps the library metrics' calls: a budget too small for them
    leaves the run incomplete (exit 3) with nothing scored past it."""
    suite = _suite(tmp_path, judge='price = "1000,1000"\nbudget_usd = 0.01\n')
    done = cli("run", suite, "--store", tmp_path / "s.db")
    assert done.code == 3, (done.stdout, done.stderr)
    assert "budget" in done.stderr


@needs_libraries
def test_the_docs_example_runs_as_written(tmp_path: Path) -> None:
    """docs/metrics.md: the suite shown is the example's, and its
    commands give the exit codes their comments say."""
    section = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    shown = re.search(r"```toml\n(.*?)```", section, re.S)
    assert shown is not None
    example = (ROOT / "examples" / "metrics" / "suite.toml").read_text(encoding="utf-8")
    assert shown.group(1).strip() in example
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    path = [p for p in sys.path if p and p != str(ROOT / "bench")]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join(path)}
    lines = [x for x in block.group(1).splitlines() if x.strip()]
    assert len(lines) == 2
    for line in lines:
        command, _, comment = line.partition("#")
        argv = command.split()
        assert argv[0] == "assay"
        done = subprocess.run(
            [sys.executable, "-m", "assay", *argv[1:]],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == int(comment.rsplit("exit", 1)[1]), (line, done.stderr)
        assert "Traceback" not in done.stderr
