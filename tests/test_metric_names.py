"""Every metric a user names is checked before any model call (issue 11, item 3).

A metric named in `[scoring.weights]`, `[scoring.thresholds]`, `[scoring.corpus]`,
`[gate.guard]`, `--weights` or `--corpus`
that no configured scorer, judge, rubric or score row produces is exit 2, naming where it was
written and the nearest known metric, with zero calls to the model server.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import InputError
from assay.core.records import AgentState, Case, ContextDoc, Expect, Trial, Usage
from assay.core.suite import Suite, load_suite
from assay.core.trajectory import ModelTurn, ToolCall, ToolsExpect
from assay.scorers import SCORERS, ScoreContext, create_scorer
from assay.verdict.config import resolve
from assay.verdict.names import check_metric_names, known_metrics
from conftest import make_case, write_jsonl

DOC = "The Eiffel Tower is 330 metres tall and stands in Paris. It opened in 1889."
INVENTED = "The tower was painted gold by Gustave Eiffel and his 500 workers."

SUITE = """
name = "names"
cases = "cases.jsonl"
trials = 1
model = "openai:local-llm"

[run]
allow_unmetered = true

[[conditions]]
name = "baseline"

[[conditions]]
name = "candidate"
system = "Answer from the context."

[judge]
judges = ["openai:judge-llm"]
allow_unmetered = true

[scoring]
scorers = [{{ name = "groundedness", options = {{ judge = "openai:ground-llm" }} }},
           "contains", {{ name = "retrieval", options = {{ k = 3 }} }}]
{scoring}
{gate}
"""

TYPOS = {
    "[scoring.thresholds]": (
        "[scoring.thresholds]\ngroundednes = { min = 0.5 }",
        "",
        "groundedness",
    ),
    "[scoring.weights]": ("[scoring.weights]\ncorectness = 1\ncontains = 1", "", "correctness"),
    "[gate.guard]": ("", "[gate]\nguard = { saftey = 0.1 }", "safety"),
    "[scoring.corpus]": ("[scoring.corpus]\ncontain = { min = 0.5 }", "", "contains"),
}


@pytest.fixture
def world(tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The model server (system under test, judge and grounding judge all talk to it) and
    a case catalogue with context to ground against."""
    server = mock_server(judge_reply="schema")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    cases = [
        make_case(
            f"c{i}",
            context=[{"id": "d1", "text": DOC}],
            expect={"contains": ["Paris"], "retrieve": ["d1"]},
        )
        for i in range(2)
    ]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    return {"server": server, "dir": tmp_path}


def suite_file(folder: Path, scoring: str = "", gate: str = "", name: str = "suite.toml") -> Path:
    path = folder / name
    path.write_text(SUITE.format(scoring=scoring, gate=gate), encoding="utf-8")
    return path


def requests(world: dict[str, Any]) -> int:
    return int(world["server"].stats()["requests"])


def test_the_suite_without_typos_runs_and_calls_the_server(cli: Any, world: dict[str, Any]) -> None:
    """The control: the same suite with correct names runs its model and judges."""
    scoring = "[scoring.thresholds]\ngroundedness = { min = 0.0 }\n[scoring.weights]\ncontains = 1"
    path = suite_file(world["dir"], scoring, "[gate]\nguard = { safety = 0.1, contains = 0.1 }")
    result = cli("run", path, "--store", world["dir"] / "s.db", "--out", world["dir"] / "out")
    assert result.code in (0, 1), result.stderr
    assert requests(world) > 0
    assert (world["dir"] / "out" / "report.md").exists()


@pytest.mark.parametrize("place", list(TYPOS))
def test_a_typo_in_each_suite_place_is_exit_2_before_any_call(
    cli: Any, world: dict[str, Any], place: str
) -> None:
    scoring, gate, nearest = TYPOS[place]
    path = suite_file(world["dir"], scoring, gate)
    store = world["dir"] / "s.db"
    result = cli("run", path, "--store", store, "--out", world["dir"] / "out")
    assert result.code == 2, result.stderr
    typo = next(line for line in result.stderr.splitlines() if place in line)
    assert typo.startswith(f"ERROR: {path}: {place} ")
    assert f"did you mean {nearest}?" in typo
    known = result.stderr.splitlines()[-1]
    assert known.startswith("ERROR: known metrics: ")
    for metric in ("groundedness", "contains", "recall@3", "hit@3", "correctness", "safety"):
        assert metric in known
    assert requests(world) == 0
    assert not store.exists()
    assert not (world["dir"] / "out").exists()


def test_every_typo_of_a_suite_is_listed_at_once(cli: Any, world: dict[str, Any]) -> None:
    scoring = "\n".join(TYPOS[p][0] for p in ("[scoring.thresholds]", "[scoring.weights]"))
    path = suite_file(world["dir"], scoring, TYPOS["[gate.guard]"][1])
    result = cli("run", path, "--store", world["dir"] / "s.db")
    assert result.code == 2
    for name in ("groundednes", "corectness", "saftey"):
        assert f" {name}: unknown metric" in result.stderr
    assert requests(world) == 0


def trials_file(folder: Path) -> Path:
    """Trials with an invented claim, so the grounding judge would be asked about it."""
    rows = [
        Trial(
            case_id=f"c{i}", trial=1, condition=condition, runner="openai:local-llm",
            response=f"The Eiffel Tower stands in Paris. {INVENTED}",
            state=AgentState(retrieved=["d1"]),
        ).model_dump(mode="json", exclude_none=True)
        for i in range(2)
        for condition in ("baseline", "candidate")
    ]  # fmt: skip
    return write_jsonl(folder / "trials.jsonl", rows)


def test_report_with_judge_backed_grounding_checks_weights_before_any_call(
    cli: Any, world: dict[str, Any]
) -> None:
    folder = world["dir"]
    path, trials = suite_file(folder), trials_file(folder)
    args = ("report", "--trials", trials, "--suite", path, "--store", folder / "s.db")
    bad = cli(*args, "--weights", "recal@3=1", "--out", folder / "bad")
    assert bad.code == 2, bad.stderr
    assert "ERROR: --weights recal@3: unknown metric" in bad.stderr
    assert "did you mean recall@3?" in bad.stderr
    assert requests(world) == 0
    assert not (folder / "bad" / "report.md").exists()
    good = cli(*args, "--weights", "recall@3=1", "--out", folder / "good")  # the control
    # the suite's judges scored nothing here (no --scores): INCOMPLETE, exit 3
    assert good.code == 3, good.stderr
    assert "no judge or human score row" in good.stdout
    assert requests(world) > 0


def test_score_rows_weights_check_the_metrics_the_rows_carry(cli: Any, tmp_path: Path) -> None:
    rows = [
        {"case_id": c, "trial": 1, "condition": cond, "accuracy": 3, "tone": 4}
        for c in "abcdef"
        for cond in ("baseline", "candidate")
    ]
    scores = write_jsonl(tmp_path / "scores.jsonl", rows)
    ok = cli("score", scores, "--weights", "accuracy=1,tone=1")
    assert ok.code in (0, 1), ok.stderr
    bad = cli("score", scores, "--weights", "acuracy=1,tone=1")
    assert bad.code == 2
    assert "ERROR: --weights acuracy: unknown metric" in bad.stderr
    assert "did you mean accuracy?" in bad.stderr
    assert "ERROR: known metrics: accuracy, tone" in bad.stderr
    corpus = cli("score", scores, "--corpus", "tones>=3")
    assert corpus.code == 2
    assert "ERROR: --corpus tones: unknown metric" in corpus.stderr


def test_a_suite_metric_score_rows_lack_is_known_yet_still_absent(cli: Any, tmp_path: Path) -> None:
    """Score rows plus the suite: a metric the suite's scorers declare is known, so the
    existing message (absent from every row) still names it."""
    rows = [
        {"case_id": c, "trial": 1, "condition": cond, "accuracy": 3}
        for c in "abcdef"
        for cond in ("baseline", "candidate")
    ]
    scores = write_jsonl(tmp_path / "scores.jsonl", rows)
    suite = tmp_path / "suite.toml"
    suite.write_text('[scoring]\nscorers = ["contains"]\n', encoding="utf-8")
    result = cli("score", scores, "--suite", suite, "--weights", "contains=1")
    assert result.code == 2
    assert "contains: weighted metric is absent from every row" in result.stderr


def test_default_guards_are_not_checked(cli: Any, tmp_path: Path) -> None:
    """correctness and safety guard by default; a suite that scores neither still runs,
    with a note (only names the user wrote are checked)."""
    write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}", expect={"contains": ["c"]}) for i in range(3)])  # fmt: skip
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'cases = "cases.jsonl"\ntrials = 1\n'
        '[[conditions]]\nname = "baseline"\nmodel = "mock:echo"\n'
        '[[conditions]]\nname = "candidate"\nmodel = "mock:answer"\n'
        '[scoring]\nscorers = ["contains"]\n[gate]\nmode = "stats"\ncandidate = "candidate"\n',
        encoding="utf-8",
    )
    result = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert result.code in (0, 1), result.stderr
    assert (
        "correctness: not scored, so its guard was skipped"
        in result.json()["release_gate"]["notes"]
    )
    written = suite.read_text() + "guard = { correctness = 0.1 }\n"
    suite.write_text(written, encoding="utf-8")
    refused = cli("run", suite, "--store", tmp_path / "s.db")
    assert refused.code == 2
    assert f"ERROR: {suite}: [gate.guard] correctness: unknown metric" in refused.stderr


# -- what is known -------------------------------------------------------------------------


def load(tmp_path: Path, text: str) -> Suite:
    path = tmp_path / "suite.toml"
    path.write_text(text, encoding="utf-8")
    return load_suite(path)


def test_judges_and_rubrics_declare_their_criteria(tmp_path: Path) -> None:
    rubric = {
        "name": "support", "description": "d",
        "levels": [{"score": s, "label": f"l{s}", "description": f"d{s}"} for s in range(1, 6)],
        "criteria": [{"name": "accuracy", "description": "a"}, {"name": "empathy", "description": "e"}],
    }  # fmt: skip
    (tmp_path / "rubric.json").write_text(json.dumps(rubric), encoding="utf-8")
    plain = load(tmp_path, '[judge]\njudges = ["mock:fair"]\n')
    assert known_metrics(resolve(plain)) == {
        "correctness", "autonomy", "actionability", "safety", "concision",
    }  # fmt: skip
    with_rubric = load(tmp_path, '[judge]\njudges = ["mock:fair"]\nrubric = "rubric.json"\n')
    assert known_metrics(resolve(with_rubric)) == {"accuracy", "empathy"}
    concise = load(
        tmp_path, '[judge]\njudges = ["mock:fair"]\nrubric = "rubric.json"\nconcision = true\n'
    )
    assert known_metrics(resolve(concise)) == {"accuracy", "empathy", "concision"}
    # a rubric file weighs the suite's metrics even without judges (score rows carry them)
    assert known_metrics(resolve(load(tmp_path, '[judge]\nrubric = "rubric.json"\n'))) == {
        "accuracy", "empathy",
    }  # fmt: skip
    # pairwise judges produce comparisons, not metrics
    pairwise = load(tmp_path, '[judge]\njudges = ["mock:fair"]\nmode = "pairwise"\n')
    assert known_metrics(resolve(pairwise)) == set()


def test_scorers_declare_option_dependent_metrics(tmp_path: Path) -> None:
    suite = load(
        tmp_path,
        '[scoring]\nscorers = [{ name = "retrieval", options = { k = 7 } }, "hallucination"]\n',
    )
    assert known_metrics(resolve(suite)) == {"hit@7", "recall@7", "ndcg@7", "hallucination"}
    # a --scorer override replaces the suite's scorers
    assert known_metrics(resolve(suite, scorers=["exact"])) == {"exact"}


def test_only_written_names_are_places(tmp_path: Path) -> None:
    suite = load(tmp_path, '[gate]\nmode = "seed"\n')
    assert resolve(suite).places == {}
    assert resolve(suite, weights="a=1").places == {"--weights": ("a",)}
    written = load(tmp_path, "[gate]\nguard = { correctness = 0.1 }\n")
    where = f"{tmp_path / 'suite.toml'}: [gate.guard]"
    assert resolve(written).places == {where: ("correctness",)}
    assert resolve(written, candidate="other").places == {where: ("correctness",)}


def test_check_metric_names_suggests_and_lists() -> None:
    check_metric_names({"here": ["a", "b"]}, {"a", "b", "c"})  # all known: nothing raised
    with pytest.raises(InputError) as caught:
        check_metric_names({"x.toml: [scoring.corpus]": ["halucination"]}, {"hallucination"})
    assert caught.value.messages == [
        "ERROR: x.toml: [scoring.corpus] halucination: unknown metric: no configured scorer,"
        " judge, rubric or score row produces it; did you mean hallucination?",
        "ERROR: known metrics: hallucination",
    ]
    with pytest.raises(InputError) as nothing:
        check_metric_names({"--weights": ["zzz"]}, set())
    assert nothing.value.messages[-1].startswith("ERROR: known metrics: none")


# -- every registered scorer declares what it produces ---------------------------------------


def contexts() -> list[ScoreContext]:
    """Cases and trials that reach every branch of the built-in scorers."""
    context = [ContextDoc(id="d1", text=DOC)]
    expects = [
        Expect(refuse=True, escalate=True, cite_one_of=["d1"], retrieve=["d1", "d2"],
               contains=["Paris"], not_contains=["London"], regex="Paris",
               json_schema={"type": "object"}),
        Expect(refuse=False, escalate=False, cite_one_of=["d9"], retrieve=["d2"]),
        Expect(tools=ToolsExpect(must_call=["a"], must_not_call=["x"], order=["a"],
                                 args={"a": {"k": 1}}, max_steps=3)),
    ]  # fmt: skip
    trajectory: list[ModelTurn | ToolCall] = [
        ModelTurn(text="t"),
        ToolCall(name="a", arguments={"k": 1}),
        ToolCall(name="x"),
    ]
    states = [
        AgentState(kind="refusal", citations=["d1", "nope"], retrieved=["d1"]),
        AgentState(kind="escalation", citations=["d1"], retrieved=["d2", "d1"]),
        AgentState(kind="answer"),
    ]
    out = []
    for expect in expects:
        case = Case(
            id="c", category="g", prompt="p", risk="low", criteria=["x"], reference="Paris",
            context=context, expect=expect,
        )  # fmt: skip
        for state in states:
            for response in (f"The Eiffel Tower stands in Paris. {INVENTED}", '{"a": 1}', "Paris"):
                trial = Trial(
                    case_id="c", trial=1, condition="b", runner="m", response=response,
                    state=state, latency_s=0.5, cost_usd=0.01, usage=Usage(input_tokens=3),
                    trajectory=trajectory,
                )  # fmt: skip
                out.append(ScoreContext.of(case, trial, documents={"d1": DOC, "d2": "x"}))
    return out


OPTIONS: dict[str, dict[str, Any]] = {
    "retrieval": {"k": 2},
    "budget": {"max_latency_s": 1, "max_tokens": 100, "max_cost_usd": 1},
    "groundedness": {"threshold": 0.5},
    "faithfulness": {"threshold": 0.5},
    "hallucination": {"threshold": 0.5},
}


@pytest.mark.parametrize("name", sorted(SCORERS))
def test_every_registered_scorer_declares_the_metrics_it_produces(name: str) -> None:
    scorer = create_scorer(name, **OPTIONS.get(name, {}))
    declared = set(scorer.metrics)
    produced: set[str] = set()
    for ctx in contexts():
        score = asyncio.run(scorer.score(ctx))
        if score is not None:
            produced |= set(score.metrics)
    assert produced, f"{name}: the contexts should make it score something"
    assert produced <= declared, f"{name} produced undeclared {produced - declared}"
    assert set(scorer.primary) <= declared
