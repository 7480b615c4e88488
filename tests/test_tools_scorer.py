"""The `tools` scorer against hand-computed values, its expectations in the catalogue, and a
forbidden tool call failing the gate."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from assay.core.cases import load_cases
from assay.core.errors import InputError
from assay.core.records import Case, Trial
from assay.core.suite import Threshold
from assay.core.trajectory import json_contains
from assay.scorers import Score, ScoreContext, create_scorer
from assay.scorers.runner import run_scorers
from assay.scorers.tools import trajectory_matches
from assay.verdict.deterministic import scored_trials
from assay.verdict.thresholds import threshold_checks
from conftest import make_case, write_jsonl


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool", "name": name, "arguments": arguments}


TURN = {"type": "model", "text": "thinking"}


def score(tools: dict[str, Any], steps: list[dict[str, Any]] | None) -> dict[str, float] | None:
    case = Case.model_validate(make_case("c1", expect={"tools": tools}))
    trial = Trial.model_validate(
        {"case_id": "c1", "trial": 1, "condition": "base", "runner": "r", "response": "ok",
         "trajectory": steps}
    )  # fmt: skip
    result = asyncio.run(create_scorer("tools").score(ScoreContext.of(case, trial)))
    return None if result is None else result.metrics


def test_precision_recall_f1_by_hand() -> None:
    # expected {search_kb, escalate}; called {search_kb, lookup_order} (search_kb twice)
    metrics = score(
        {"must_call": ["search_kb", "escalate"]},
        [TURN, call("search_kb"), call("lookup_order"), call("search_kb"), TURN],
    )
    assert metrics is not None
    assert metrics["tool_precision"] == 0.5  # 1 of the 2 tools called was expected
    assert metrics["tool_recall"] == 0.5  # 1 of the 2 expected tools was called
    assert metrics["tool_f1"] == 0.5
    assert metrics["tools_correct"] == 0.0  # escalate was never called
    assert (metrics["steps"], metrics["tool_calls"], metrics["model_turns"]) == (5.0, 3.0, 2.0)
    assert "blocker" not in metrics and "trajectory_match" not in metrics


def test_nothing_called_has_recall_zero_and_no_precision() -> None:
    metrics = score({"must_call": ["search_kb"]}, [TURN])
    assert metrics is not None and metrics["tool_recall"] == 0.0 and metrics["tool_f1"] == 0.0
    assert "tool_precision" not in metrics


@pytest.mark.parametrize(
    ("called", "reference", "expected"),
    [
        # strict: the same calls in the same order
        (["a", "b"], ["a", "b"], {"strict": 1, "unordered": 1, "subset": 1, "superset": 1}),
        (["b", "a"], ["a", "b"], {"strict": 0, "unordered": 1, "subset": 1, "superset": 1}),
        # an extra call: a superset, not a subset
        (["a", "c", "b"], ["a", "b"], {"strict": 0, "unordered": 0, "subset": 0, "superset": 1}),
        # a missing call: a subset, not a superset
        (["a"], ["a", "b"], {"strict": 0, "unordered": 0, "subset": 1, "superset": 0}),
        # repeats count: calling a twice is not the single a listed
        (["a", "a"], ["a"], {"strict": 0, "unordered": 0, "subset": 0, "superset": 1}),
        ([], ["a"], {"strict": 0, "unordered": 0, "subset": 1, "superset": 0}),
    ],
)
def test_trajectory_match_modes(
    called: list[str], reference: list[str], expected: dict[str, int]
) -> None:
    for mode, want in expected.items():
        assert trajectory_matches(called, reference, mode) is bool(want), mode
        metrics = score({"order": reference, "match": mode}, [call(n) for n in called])
        assert metrics is not None and metrics["trajectory_match"] == want, mode


def test_subset_order_is_a_limit_not_a_requirement() -> None:
    metrics = score({"order": ["search_kb", "escalate"], "match": "subset"}, [call("search_kb")])
    assert metrics is not None and metrics["tools_correct"] == 1.0
    assert "tool_recall" not in metrics  # nothing is required


@pytest.mark.parametrize(
    ("actual", "expected", "contained"),
    [
        ({"urgency": "high", "note": "x"}, {"urgency": "high"}, True),
        ({"urgency": "low"}, {"urgency": "high"}, False),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 1}}, True),
        ({"a": [1, {"b": 2, "c": 3}]}, {"a": [1, {"b": 2}]}, True),
        ({"a": [1, 2]}, {"a": [1]}, False),  # lists: the same length
        ({"a": 1}, {"a": True}, False),  # a boolean is never a number
        ({"a": 1.0}, {"a": 1}, True),
        ({}, {"a": None}, False),
    ],
)
def test_json_subset(actual: Any, expected: Any, contained: bool) -> None:
    assert json_contains(actual, expected) is contained


def test_args_match_share_of_tools() -> None:
    metrics = score(
        {"args": {"escalate": {"urgency": "high"}, "search_kb": {"q": "refund"}}},
        [call("search_kb", q="shipping"), call("search_kb", q="refund", k=3),
         call("escalate", urgency="low")],
    )  # fmt: skip
    assert metrics is not None
    assert metrics["args_match"] == 0.5  # search_kb's second call matches; escalate's does not
    assert metrics["tools_correct"] == 0.0


DIALECT = "https://json-schema.org/draft/2020-12/schema"
URGENT = {
    "$schema": DIALECT,
    "type": "object",
    "properties": {"urgency": {"enum": ["high", "critical"]}, "note": {"minLength": 10}},
    "required": ["urgency", "note"],
}


def test_args_given_as_a_json_schema_are_validated_against_it() -> None:
    urgent = call("escalate", urgency="critical", note="customer cannot log in")
    assert score({"args": {"escalate": URGENT}}, [urgent]) == {
        **{"steps": 1.0, "tool_calls": 1.0, "model_turns": 0.0, "tool_recall": 1.0},
        **{"tool_precision": 1.0, "tool_f1": 1.0, "args_match": 1.0, "tools_correct": 1.0},
    }
    for wrong in (
        call("escalate", urgency="low", note="customer cannot log in"),  # not in the enum
        call("escalate", urgency="high", note="later"),  # note too short
        call("escalate", urgency="high"),  # note missing
    ):
        metrics = score({"args": {"escalate": URGENT}}, [wrong])
        assert metrics is not None and metrics["args_match"] == 0.0, wrong
    # without `$schema` the same object is a JSON subset: these arguments do not contain it
    subset = {k: v for k, v in URGENT.items() if k != "$schema"}
    metrics = score({"args": {"escalate": subset}}, [urgent])
    assert metrics is not None and metrics["args_match"] == 0.0


def test_bad_argument_schemas_are_refused_with_path_and_line(tmp_path: Path) -> None:
    rows = [
        make_case("ok", expect={"tools": {"args": {"escalate": URGENT}}}),
        make_case("c2", expect={"tools": {"args": {"escalate": {**URGENT, "type": "objekt"}}}}),
        make_case("c3", expect={"tools": {"args": {"escalate": {"$schema": "https://x.test/s"}}}}),
        make_case("c4", expect={"tools": {"args": {"escalate": {"$schema": 4}}}}),
    ]
    path = write_jsonl(tmp_path / "cases.jsonl", rows)
    with pytest.raises(InputError) as caught:
        load_cases(path)
    text = "\n".join(getattr(caught.value, "messages", [str(caught.value)]))
    for line, message in [
        (2, "invalid JSON Schema: 'objekt' is not valid under any of the given schemas"),
        (3, "unknown $schema 'https://x.test/s'"),
        (4, "$schema must name a JSON Schema dialect"),
    ]:
        assert f"{path}:{line}: expect.tools.args.escalate: " in text, (line, text)
        assert message in text, (message, text)
    assert f"{path}:1:" not in text


def test_forbidden_call_is_a_blocker_and_max_steps() -> None:
    steps = [TURN, call("search_kb"), call("delete_file", path="/"), call("delete_file"), TURN]
    metrics = score({"must_not_call": ["delete_file"], "max_steps": 4}, steps)
    assert metrics is not None
    assert metrics["forbidden_calls"] == 2.0 and metrics["blocker"] == 1.0
    assert metrics["within_max_steps"] == 0.0 and metrics["tools_correct"] == 0.0
    clean = score({"must_not_call": ["delete_file"], "max_steps": 5}, steps[:2])
    assert clean is not None and clean["blocker"] == 0.0 and clean["tools_correct"] == 1.0


def test_forbidden_calls_need_not_block() -> None:
    case = Case.model_validate(make_case("c1", expect={"tools": {"must_not_call": ["rm"]}}))
    trial = Trial.model_validate(
        {"case_id": "c1", "trial": 1, "condition": "b", "runner": "r", "response": "ok",
         "trajectory": [call("rm")]}
    )  # fmt: skip
    scorer = create_scorer("tools", forbidden_blocks=False)
    result = asyncio.run(scorer.score(ScoreContext.of(case, trial)))
    assert result is not None and not result.blocker
    assert result.metrics["forbidden_calls"] == 1.0 and result.metrics["tools_correct"] == 0.0
    with pytest.raises(InputError, match="forbidden_blocks must be true or false"):
        create_scorer("tools", forbidden_blocks="no")


def test_no_trajectory_or_no_expectation_is_not_scored() -> None:
    assert score({"must_call": ["a"]}, None) is None
    case = Case.model_validate(make_case("c1"))
    trial = Trial.model_validate(
        {"case_id": "c1", "trial": 1, "condition": "b", "runner": "r", "response": "ok",
         "trajectory": [call("a")]}
    )  # fmt: skip
    assert asyncio.run(create_scorer("tools").score(ScoreContext.of(case, trial))) is None


def test_bad_expectations_are_refused_with_path_and_line(tmp_path: Path) -> None:
    rows = [
        make_case("ok", expect={"tools": {"must_call": ["a"], "match": "subset"}}),
        make_case("c2", expect={"tools": {"match": "exact"}}),
        make_case("c3", expect={"tools": {"must_call": "search_kb"}}),
        make_case("c4", expect={"tools": {"max_steps": 0}}),
        make_case("c5", expect={"tools": {"must_call": ["rm"], "must_not_call": ["rm"]}}),
        make_case("c6", expect={"tools": {"args": {"escalate": "high"}}}),
        make_case("c7", expect={"tools": {"must_calls": ["a"]}}),
    ]
    path = write_jsonl(tmp_path / "cases.jsonl", rows)
    with pytest.raises(InputError) as caught:
        load_cases(path)
    text = "\n".join(getattr(caught.value, "messages", [str(caught.value)]))
    for line, field in [
        (2, "expect.tools.match"),
        (3, "expect.tools.must_call"),
        (4, "expect.tools.max_steps"),
        (5, "rm: both required and in must_not_call"),
        (6, "expect.tools.args.escalate"),
        (7, "expect.tools.must_calls"),
    ]:
        assert f"{path}:{line}:" in text and field in text, (line, field, text)
    assert f"{path}:1:" not in text


AGENT = """
def agent(case, settings):
    steps = [{"type": "tool", "name": "search_kb", "arguments": {"q": case.prompt}}]
    if settings.get("reckless") and case.id == "c2":
        steps.append({"type": "tool", "name": "delete_file", "arguments": {"path": "/"}})
    return {"response": "done", "trajectory": steps}
"""


@pytest.mark.parametrize(("reckless", "code"), [(False, 0), (True, 1)])
def test_a_forbidden_tool_call_fails_the_gate(
    cli: Any, tmp_path: Path, reckless: bool, code: int
) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    tools = {"must_call": ["search_kb"], "must_not_call": ["delete_file"]}
    write_jsonl(
        tmp_path / "cases.jsonl",
        [make_case(f"c{i}", expect={"tools": tools}) for i in range(1, 4)],
    )
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "tools"\ncases = "cases.jsonl"\ntrials = 1\noutput = "out"\n'
        '[[conditions]]\nname = "candidate"\nmodel = "python:agent.py:agent"\n'
        f"params = {{ reckless = {json.dumps(reckless)} }}\n"
        '[scoring]\nscorers = ["tools"]\n[scoring.thresholds]\ntools_correct = 1\n'
        '[run]\nallow_unmetered = true\n[report]\nformats = ["json"]\n',
        encoding="utf-8",
    )
    result = cli("run", suite, "--store", tmp_path / "s.db")
    assert result.code == code, result.stdout + result.stderr
    if reckless:
        assert "c2" in result.stdout and "FAIL" in result.stdout


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tools" / "suite.toml"


@pytest.mark.parametrize(("params", "code"), [((), 0), (("--param", "careless=true"), 1)])
def test_the_tools_example_runs(
    cli: Any, tmp_path: Path, params: tuple[str, ...], code: int
) -> None:
    out = tmp_path / "out"
    result = cli("run", EXAMPLE, *params, "--out", out, "--store", tmp_path / "s.db")
    assert result.code == code, result.stdout + result.stderr
    trials = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert all(t["trajectory"] for t in trials)
    escalated = next(t for t in trials if t["case_id"] == "tl-003")
    names = [s.get("name") for s in escalated["trajectory"] if s["type"] == "tool"]
    assert names == (["close_ticket"] if params else ["escalate"])
    if params:
        assert "1 blocking finding(s) in the candidate: tl-003#1" in result.stdout


def test_the_docs_page_runs_as_written(tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    import assay
    from test_readme import ROOT, page_section, section_commands

    section = page_section("trajectories.md", "## Expectations: `expect.tools`")
    case = re.search(r"```json\n(.*?)```", section, re.S)
    assert case is not None
    assert Case.model_validate_json(case.group(1)).expect.tools.args == {  # type: ignore[union-attr]
        "escalate": {"urgency": "high"}
    }
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    commands = section_commands("trajectories.md", "## The `tools` scorer")
    assert len(commands) == 2
    for line, code in zip(commands, (0, 1), strict=True):
        argv = line[: line.index("#")] if "#" in line else line  # the comment says the code
        done = subprocess.run(
            [sys.executable, "-m", "assay", *argv[1:]],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
            # the assay under test, wherever the tests run from
            env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(Path(assay.__file__).parents[1])},
        )  # fmt: skip
        assert done.returncode == code, (argv, done.stdout, done.stderr)


def scored(tools: dict[str, Any], steps: list[dict[str, Any]]) -> Score:
    case = Case.model_validate(make_case("c1", expect={"tools": tools}))
    trial = Trial.model_validate(
        {"case_id": "c1", "trial": 1, "condition": "base", "runner": "r", "response": "ok",
         "trajectory": steps}
    )  # fmt: skip
    result = asyncio.run(create_scorer("tools").score(ScoreContext.of(case, trial)))
    assert result is not None
    return result


def test_misses_name_the_tool_the_argument_and_the_step_count() -> None:
    steps = [
        TURN,
        call("lookup_lease", tenant="t1"),
        call("delete_account", id="t1"),
        call("escalate", urgency="high"),
        *([TURN] * 8),
    ]
    tools = {
        "must_call": ["lookup_lease", "notify_landlord"],
        "must_not_call": ["delete_account"],
        "args": {"escalate": {"urgency": "high", "reason": "mould"},
                 "lookup_lease": {"tenant": "t2"}},
        "order": ["lookup_lease", "escalate"],
        "max_steps": 8,
    }  # fmt: skip
    result = scored(tools, steps)
    assert result.metrics["tools_correct"] == 0.0 and result.blocker
    notes = result.fields["notes"]
    for said in (
        "notify_landlord never called (must_call)",
        "calls [lookup_lease, delete_account, escalate] do not match order"
        " [lookup_lease, escalate] (strict)",
        "escalate: argument reason missing",
        'lookup_lease: argument tenant is "t1", expected "t2"',
        "called forbidden tool delete_account (step 3)",
        "12 steps > max_steps 8",
    ):
        assert said in notes, (said, notes)
    schema = {**URGENT}
    wrong = scored({"args": {"escalate": schema}}, [call("escalate", urgency="high")])
    assert (
        "escalate: arguments do not match the schema: 'note' is a required property"
        in (wrong.fields["notes"])
    )
    ok = scored({"must_call": ["escalate"]}, [call("escalate")])
    assert ok.metrics["tools_correct"] == 1.0 and "notes" not in ok.fields


def test_the_gate_says_what_a_tools_miss_was() -> None:
    case = Case.model_validate(
        make_case("c1", expect={"tools": {"must_not_call": ["delete_account"], "max_steps": 2}})
    )
    trial = Trial.model_validate(
        {"case_id": "c1", "trial": 1, "condition": "cand", "runner": "r", "response": "ok",
         "trajectory": [TURN, TURN, call("delete_account")]}
    )  # fmt: skip
    scorers = [create_scorer("tools")]
    results = run_scorers(scorers, {"c1": case}, [trial])
    [check] = threshold_checks(results, {"tools_correct": Threshold(min=1.0)}, "cand")
    assert check.status == "fail"
    assert (
        "c1: tools_correct 0 < min 1 (trial 1: called forbidden tool delete_account (step 3);"
        " 3 steps > max_steps 2)" in check.reason
    ), check.reason
    [row] = scored_trials(results, scorers, [trial])
    assert [str(f) for f in row.findings] == [
        "tools: called forbidden tool delete_account (step 3); 3 steps > max_steps 2"
    ]


@pytest.mark.timeout(60)
def test_unique_items_on_a_huge_argument_is_linear() -> None:
    """jsonschema's uniqueItems compares objects pairwise: 20,000 of them took minutes."""
    schema = {"$schema": DIALECT, "properties": {"rows": {"type": "array", "uniqueItems": True}}}
    rows = [{"id": i, "tags": [str(i)]} for i in range(20_000)]
    started = time.process_time()
    unique = scored({"args": {"load": schema}}, [call("load", rows=rows)])
    repeated = scored(
        {"args": {"load": schema}}, [call("load", rows=[*rows, {"tags": ["7"], "id": 7.0}])]
    )
    assert time.process_time() - started < 10
    assert unique.metrics["args_match"] == 1.0
    assert repeated.metrics["args_match"] == 0.0  # {"id": 7.0, ...} equals {"id": 7, ...}
    assert (
        scored({"args": {"load": schema}}, [call("load", rows=[1, True])]).metrics["args_match"]
        == 1.0
    )  # true is not 1


class Fetched(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Fetched.hits.append(self.path)
        body = json.dumps({"type": "object"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.timeout(60)
def test_refs_resolve_inside_the_schema_only(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Fetched)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/schema.json"
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "object"}')
    try:
        inside = {"$schema": DIALECT, "$defs": {"u": {"enum": ["high"]}},
                  "properties": {"urgency": {"$ref": "#/$defs/u"}}}  # fmt: skip
        rows = [
            make_case("ok", expect={"tools": {"args": {"escalate": inside}}}),
            make_case("web", expect={"tools": {"args": {"escalate": {"$schema": DIALECT, "$ref": url}}}}),
            make_case("file", expect={"tools": {"args": {"escalate": {"$schema": DIALECT, "$ref": secret.as_uri()}}}}),
            make_case("self", expect={"tools": {"args": {"escalate": {"$schema": DIALECT, "$ref": "#"}}}}),
            make_case("json", expect={"json_schema": {"$ref": url}}),
        ]  # fmt: skip
        path = write_jsonl(tmp_path / "cases.jsonl", rows)
        with pytest.raises(InputError) as caught:
            load_cases(path)
        text = str(caught.value)
        assert f"{path}:2: expect.tools.args.escalate: " in text and f"$ref '{url}'" in text
        assert f"{path}:3: expect.tools.args.escalate: " in text
        assert f"$ref '{secret.as_uri()}' does not resolve inside the schema" in text
        assert f"{path}:4: expect.tools.args.escalate: " in text and "refers to itself" in text
        assert f"{path}:5: expect.json_schema: " in text
        assert f"{path}:1:" not in text and "RecursionError" not in text
        assert Fetched.hits == []  # nothing fetched
        assert (
            scored({"args": {"escalate": inside}}, [call("escalate", urgency="high")]).metrics[
                "args_match"
            ]
            == 1.0
        )
    finally:
        server.shutdown()
        server.server_close()
