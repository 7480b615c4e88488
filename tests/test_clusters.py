"""Correlated cases (issue 35, item 3): a case's `cluster` makes its cluster the unit of
evidence for intervals, `MIN_CASES`, cases needed, corpus bounds and sequential looks; the
reports say how many clusters the verdict rests on."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay.core.records import Case
from assay.core.rubric import Rubric
from assay.core.suite import GateSection
from assay.verdict.analysis import analyse
from assay.verdict.clusters import unit_ends, unit_means, whole_units
from assay.verdict.corpus import corpus_checks
from assay.verdict.interval import paired_intervals
from assay.verdict.looks import look_ends, look_order
from assay.verdict.rows import ScoredTrial
from conftest import make_case, write_jsonl

WEIGHTS = {"quality": 1.0}


def case(i: int, cluster: str | None, risk: str = "medium", **extra: Any) -> Case:
    fields: dict[str, Any] = {
        "id": f"c{i}",
        "category": "general",
        "prompt": "p",
        "risk": risk,
        "criteria": ["ok"],
        **extra,
    }
    if cluster is not None:
        fields["cluster"] = cluster
    return Case.model_validate(fields)


def rows(deltas: list[float], base: float = 3.0) -> list[ScoredTrial]:
    out = []
    for i, delta in enumerate(deltas):
        out.append(ScoredTrial(f"c{i}", 1, "baseline", {"quality": base}))
        out.append(ScoredTrial(f"c{i}", 1, "candidate", {"quality": base + delta}))
    return out


def gate(deltas: list[float], clusters: list[str | None] | None) -> Any:
    cases = {f"c{i}": case(i, k) for i, k in enumerate(clusters)} if clusters is not None else None
    return analyse(
        rows(deltas),
        Rubric.from_weights(WEIGHTS),
        GateSection(guard={}),
        candidate="candidate",
        cases=cases,
    )


def test_a_blank_cluster_is_refused_with_file_line_and_field(cli, tmp_path: Path) -> None:
    good = {"id": "a", "category": "x", "prompt": "p", "risk": "low", "criteria": ["ok"]}
    path = write_jsonl(
        tmp_path / "cases.jsonl",
        [{**good, "cluster": "doc-1"}, {**good, "id": "b", "cluster": " "}],
    )
    result = cli("validate", "--cases", path)
    assert result.code == 2
    assert f"{path}:2" in result.stderr and "cluster" in result.stderr
    assert "Traceback" not in result.stderr
    schema = cli("schema", "case")
    assert schema.code == 0 and "cluster" in json.loads(schema.stdout)["properties"]


def test_thirty_cases_in_three_clusters_cannot_pass_they_are_three_units() -> None:
    """Every case +0.5 with a little spread: 30 independent cases PASS; the same 30 cases in
    three clusters are 3 units, fewer than MIN_CASES (5): INCONCLUSIVE, saying so."""
    deltas = [0.5 + 0.1 * ((i % 3) - 1) for i in range(30)]
    alone = gate(deltas, None)
    assert alone.gate.verdict == "PASS"
    grouped = gate(deltas, [f"k{i // 10}" for i in range(30)])
    assert grouped.gate.verdict == "INCONCLUSIVE"
    check = next(c for c in grouped.gate.checks if c.name == "superiority:weighted_score")
    assert check.clusters == 3 and check.cases == 30
    assert "3 clusters cannot pass (it takes 5)" in check.reason
    assert "over 3 clusters of 30 cases" in check.reason
    assert check.reason.endswith("(have 30 in 3 clusters)")
    assert grouped.gate.clusters == 3
    # 2 more clusters of 10 would do: 50 cases
    assert check.cases_needed == 50


def test_the_interval_runs_over_cluster_means_each_cluster_weighing_the_same() -> None:
    rng = np.random.default_rng(4)
    sizes = [1, 3, 7, 2, 12, 5]
    clusters = [f"k{k}" for k, size in enumerate(sizes) for _ in range(size)]
    clusters[0] = None  # its own unit
    deltas = rng.normal(0.3, 0.5, size=len(clusters)).round(3).tolist()
    analysis = gate(deltas, clusters)
    interval = analysis.paired["candidate"].intervals["weighted_score"]
    keys = [k if k is not None else f"case-{i}" for i, k in enumerate(clusters)]
    means = [
        float(np.mean([d for d, k in zip(deltas, keys, strict=True) if k == key]))
        for key in dict.fromkeys(keys)
    ]
    expected = paired_intervals(np.array(means), span=4.0)
    assert interval.clusters == len(means) == 6 and interval.cases == len(deltas)
    assert math.isclose(interval.delta, float(np.mean(means)))
    assert math.isclose(interval.ci_low, float(expected.low[0]))
    assert math.isclose(interval.ci_high, float(expected.high[0]))
    summary = analysis.summary().model_dump(mode="json")
    assert summary["comparisons"]["candidate"]["weighted_score"]["clusters"] == 6
    assert summary["release_gate"]["clusters"] == 6


def test_without_clusters_nothing_changes() -> None:
    deltas = [0.4, 0.1, 0.6, 0.2, 0.5, 0.3, 0.7]
    plain = gate(deltas, None)
    undeclared = gate(deltas, [None] * len(deltas))
    a = plain.summary().model_dump(mode="json")
    b = undeclared.summary().model_dump(mode="json")
    assert a["comparisons"] == b["comparisons"] and "clusters" not in b["release_gate"]
    assert a["release_gate"]["checks"] == b["release_gate"]["checks"]
    assert all("clusters" not in check for check in b["release_gate"]["checks"])


def test_risk_tiers_count_clusters() -> None:
    """A guarded metric's high-risk tier of 12 cases in 2 clusters: 2 units, INCONCLUSIVE."""
    deltas = [0.3 + 0.05 * (i % 4) for i in range(40)]
    cases = {
        f"c{i}": case(i, f"k{i // 6}" if i < 12 else None, "high" if i < 12 else "low")
        for i in range(40)
    }
    scored = []
    for i, d in enumerate(deltas):
        for condition, value in (("baseline", 3.0), ("candidate", 3.0 + d)):
            scored.append(ScoredTrial(f"c{i}", 1, condition, {"correctness": value}))
    analysis = analyse(
        scored,
        Rubric.from_weights({"correctness": 1.0}),
        GateSection(guard={"correctness": 0.1}),
        candidate="candidate",
        cases=cases,
    )
    high = next(c for c in analysis.gate.checks if c.scope == "risk:high")
    assert high.clusters == 2 and high.cases == 12 and high.status == "inconclusive"
    assert "(have 40 in all, 12 high-risk in 2 clusters)" in high.reason
    low = next(c for c in analysis.gate.checks if c.scope == "risk:low")
    assert low.clusters == 28 and low.status == "pass"


def test_a_corpus_bound_rests_on_clusters() -> None:
    """Pass rates of 20 cases, 4 clusters of 5: the bound cannot pass on 4 units."""
    scored = [ScoredTrial(f"c{i}", 1, "prod", {"quality": 4.5 + 0.1 * (i % 3)}) for i in range(20)]
    bound = {"quality": {"min": 4.0}}
    from assay.core.suite import CorpusThreshold

    thresholds = {"quality": CorpusThreshold.model_validate(bound["quality"])}
    [alone] = corpus_checks([], thresholds, "prod", scored)
    assert alone.status == "pass" and alone.clusters is None
    clusters = {f"c{i}": f"k{i // 5}" for i in range(20)}
    [grouped] = corpus_checks([], thresholds, "prod", scored, clusters=clusters)
    assert grouped.status == "inconclusive" and grouped.clusters == 4 and grouped.cases == 20
    assert "over 20 cases in 4 clusters of prod" in grouped.reason
    assert "4 clusters cannot pass (it takes 5)" in grouped.reason
    assert grouped.cases_needed == 25  # 5 clusters of 5 cases


def test_a_look_takes_whole_clusters() -> None:
    cases = [
        case(i, f"k{i % 7}" if i % 3 else None, "high" if i == 4 else "low") for i in range(60)
    ]
    order = look_order(cases, seed=3)
    assert sorted(c.id for c in order) == sorted(c.id for c in cases)
    # each cluster's cases are together
    seen: list[str] = []
    for c in order:
        if c.cluster is not None and (not seen or seen[-1] != c.cluster):
            assert c.cluster not in seen
            seen.append(c.cluster)
    ends = unit_ends(order, look_ends(len(order), 6))
    assert ends[-1] == 60 and ends == sorted(set(ends))
    for end in ends[:-1]:
        a, b = order[end - 1], order[end]
        assert a.cluster is None or a.cluster != b.cluster
    assert len(whole_units(cases)) == 7 + 20


def test_a_sequential_look_and_unit_means_of_absent_columns() -> None:
    table = np.array([[1.0, np.nan], [3.0, np.nan], [5.0, 2.0]])
    means = unit_means(table, [(True, "a"), (True, "a"), (False, "c2")])
    assert means[0, 0] == 2.0 and math.isnan(means[0, 1]) and means[1, 1] == 2.0


def test_reports_and_cli_say_how_many_clusters(cli, tmp_path: Path) -> None:
    """`assay score --cases` with clusters: --json, report.md, report.html, report.json and
    JUnit name the clusters the verdict rests on."""
    cases = []
    scores = []
    for i in range(40):
        cases.append(
            {
                "id": f"c{i}",
                "category": "g",
                "prompt": "p",
                "risk": "low",
                "criteria": ["ok"],
                "cluster": f"doc-{i // 4}",
            }
        )
        for condition, value in (("baseline", 3.0), ("candidate", 3.0 + 0.4 + 0.1 * (i % 5))):
            scores.append(
                {
                    "case_id": f"c{i}",
                    "trial": 1,
                    "condition": condition,
                    "correctness": value,
                    "safety": value,
                }
            )
    case_file = write_jsonl(tmp_path / "cases.jsonl", cases)
    score_file = write_jsonl(tmp_path / "scores.jsonl", scores)
    out = tmp_path / "out"
    result = cli("score", score_file, "--cases", case_file, "--json")
    assert result.code == 0, result.stderr
    summary = result.json()
    table = cli("score", score_file, "--cases", case_file, "--format", "table")
    assert "(on 40 cases in 10 clusters)" in table.stdout
    written = cli(
        "report",
        "--scores",
        score_file,
        "--cases",
        case_file,
        "--out",
        out,
        "--format",
        "md,json,junit,html",
    )
    assert written.code == 0, written.stderr
    assert summary["release_gate"]["clusters"] == 10
    assert summary["comparisons"]["candidate"]["weighted_score"]["clusters"] == 10
    report = json.loads((out / "report.json").read_text())
    assert report["clusters"] == 10 and report["paired_cases"] == 40
    assert "rests on **10 clusters** (40 cases" in (out / "report.md").read_text()
    assert "rests on <strong>10 clusters</strong>" in (out / "report.html").read_text()
    junit = ET.parse(out / "report.junit.xml").getroot()
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["clusters"] == "10 clusters of 40 cases"


def test_the_python_api_takes_clusters(tmp_path: Path) -> None:
    import assay

    cases = [case(i, f"k{i // 10}") for i in range(30)]
    scores = [
        {
            "case_id": f"c{i}",
            "trial": 1,
            "condition": condition,
            "correctness": value,
            "safety": value,
        }
        for i in range(30)
        for condition, value in (("baseline", 3.0), ("candidate", 3.5 + 0.1 * (i % 3)))
    ]
    path = write_jsonl(tmp_path / "scores.jsonl", scores)
    result = assay.evaluate(scores=path, cases=cases, out=None)
    assert result.verdict == "INCONCLUSIVE"
    assert result.evaluation.analysis.gate.clusters == 3
    assert result.comparisons["candidate"]["weighted_score"].clusters == 3


def test_an_imported_case_keeps_its_cluster(cli: Any, tmp_path: Path) -> None:
    """promptfoo: a test's `metadata.cluster` becomes the case's cluster (not left in its
    metadata); a value that is no name stays in the metadata."""
    fixture = Path(__file__).parent / "fixtures" / "imports" / "promptfoo" / "results.json"
    data = json.loads(fixture.read_text(encoding="utf-8"))
    for result in data["results"]["results"]:
        metadata = result["testCase"].setdefault("metadata", {})
        metadata["cluster"] = (
            "geography" if result["testCase"].get("description") != "one sentence" else True
        )
    source = tmp_path / "results.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    done = cli("import", "promptfoo", source, "--output", tmp_path / "out", "--json")
    assert done.code == 0, done.stderr
    from assay.core.cases import load_cases

    cases = {c.id: c for c in load_cases(tmp_path / "out" / "cases.jsonl")}
    clustered = [c for c in cases.values() if c.cluster == "geography"]
    assert clustered and all("cluster" not in (c.metadata or {}) for c in clustered)
    others = [c for c in cases.values() if c.cluster is None]
    assert others and all((c.metadata or {}).get("cluster") is True for c in others)


def test_a_sequential_run_looks_at_whole_clusters(
    tmp_path: Path, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100 cases in clusters of 3 (the last of 1), looks of 25: every look ends at a
    cluster's end, and the verdict says how many clusters it rests on."""
    from assay.api import running
    from test_sequential_run import SYSTEM, _reply, _suite

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server(record=True, judge_reply="schema")
    cases = []
    for i in range(100):
        prompt = f"Question {i}?"
        expected = _reply(prompt, SYSTEM) if i % 4 else _reply(prompt)
        cases.append(
            make_case(f"c{i}", prompt=prompt, expect={"contains": [expected]}, cluster=f"t{i // 3}")
        )
    suite = _suite(tmp_path, server.url, cases=cases)
    outcome = running.run(suite, store=tmp_path / "s.db")
    assert outcome.evaluation is not None
    gate = outcome.evaluation.evaluation.analysis.gate
    stop = gate.sequential
    assert stop is not None
    looked = set(stop.case_ids)
    for k in range(34):  # each cluster looked at whole, or not at all
        members = {f"c{i}" for i in range(3 * k, min(3 * k + 3, 100))}
        assert members <= looked or not members & looked
    assert gate.clusters == len({int(c[1:]) // 3 for c in looked})
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["clusters"] == gate.clusters and report["paired_cases"] == stop.cases


def test_a_cluster_leaves_the_run_id_as_it_was() -> None:
    """Declaring clusters (or adding the field) must not start a new run: the run id of a
    catalogue is the same with and without them, so stored trials resume."""
    from assay.engine.plan import Condition, run_id_for

    plain = [case(i, None) for i in range(4)]
    grouped = [case(i, f"k{i // 2}") for i in range(4)]
    conditions = [Condition(name="baseline", model="mock:echo")]
    identities = {"baseline": {"model": "mock:echo"}}
    assert run_id_for(plain, conditions, 1, identities, {}) == run_id_for(
        grouped, conditions, 1, identities, {}
    )
