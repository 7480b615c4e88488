"""The fast paths for a million rows give exactly what the careful paths give on small data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.api.running import run_request, select_cases
from assay.core.cases import HELD_BYTES, CaseFile, load_cases, scan_cases
from assay.core.errors import InputError
from assay.core.jsonl import iter_lines, read_text


def _case(i: int, **extra: object) -> dict[str, object]:
    return {
        "id": f"c-{i}",
        "category": "billing",
        "prompt": f"Question {i}?",
        "risk": "low",
        "criteria": ["answers"],
        **extra,
    }


def _big(i: int, **extra: object) -> dict[str, object]:
    """A case whose line is a quarter of `HELD_BYTES`: five make a catalogue that is streamed."""
    return _case(i, metadata={"pad": "x" * (HELD_BYTES // 4)}, **extra)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_iter_lines_numbers_lines_as_read_text(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes('\ufeff{}\r\n\n  \n{"a": 1}\x0c{}\r{}\n{"b": "\u00e9"}'.encode())
    assert list(iter_lines(path)) == list(enumerate(read_text(path).splitlines(), start=1))


def test_iter_lines_bad_utf8_is_read_texts_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(InputError) as expected:
        read_text(path)
    with pytest.raises(InputError) as got:
        list(iter_lines(path))
    assert str(got.value) == str(expected.value)


def test_scan_cases_streams_the_same_cases(tmp_path: Path) -> None:
    lines = [json.dumps(_big(i, turns=["more?"] if i % 2 else None)) for i in range(7)]
    path = _write(tmp_path / "cases.jsonl", [lines[0], "", *lines[1:]])
    scanned = scan_cases(path)
    assert isinstance(scanned, CaseFile)
    assert len(scanned) == 7
    assert list(scanned) == load_cases(path)
    assert list(scanned) == load_cases(path)  # iterable again
    assert scanned[3] == load_cases(path)[3]
    assert scanned[-1] == load_cases(path)[-1]
    assert scanned[1:3] == load_cases(path)[1:3]
    with pytest.raises(IndexError):
        scanned[7]


@pytest.mark.parametrize(
    "bad",
    [
        '{"id": "c-1", "prompt": "p"}',  # missing fields
        json.dumps(_case(0)),  # a repeated id
        "not json",
        "[1, 2]",
        json.dumps(_case(9)).replace(
            '"answers"]', '"answers"], "x": ' + "[" * 70 + "]" * 70
        ),  # nested too deeply
    ],
)
def test_scan_cases_reports_exactly_what_load_cases_reports(tmp_path: Path, bad: str) -> None:
    lines = [json.dumps(_big(i)) for i in range(5)]
    path = _write(tmp_path / "cases.jsonl", [*lines[:3], bad, *lines[3:]])
    with pytest.raises(InputError) as expected:
        load_cases(path)
    with pytest.raises(InputError) as got:
        scan_cases(path)
    assert str(got.value) == str(expected.value)


def test_scan_cases_empty_catalogue(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", [""])
    with pytest.raises(InputError, match="the catalogue has no cases"):
        scan_cases(path)
    assert len(scan_cases(path, allow_empty=True)) == 0


def test_a_changed_catalogue_is_an_input_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", [json.dumps(_big(i)) for i in range(5)])
    scanned = scan_cases(path)
    _write(path, ['{"id": "c-0"}'])
    with pytest.raises(InputError, match=r"cases.jsonl:1: the catalogue changed"):
        list(scanned)


def test_run_request_streams_a_catalogue_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", [json.dumps(_big(i)) for i in range(5)])
    request = run_request(cases=path, model="mock", trials=1)
    assert isinstance(request.cases, CaseFile)
    picked = run_request(cases=path, model="mock", trials=1, case_ids=["c-2", "c-0"])
    assert [c.id for c in picked.cases] == ["c-0", "c-2"]
    assert select_cases(load_cases(path), None) == load_cases(path)


def test_summarise_matches_the_per_row_figures() -> None:
    """The columnar summary equals the definition: fsum means over the rows that carry each
    metric, the weighted score Σ weight × goodness(mean) over the weighted metrics."""
    import math
    import random

    from assay.core.rubric import Rubric
    from assay.verdict.compare import metric_names, summarise
    from assay.verdict.rows import ScoredTrial

    rng = random.Random(7)
    rubric = Rubric.from_weights(
        {"correctness": 0.5, "safety": 0.3, "hallucination": 0.2, "unused": 0.0},
        lower=["hallucination"],
    )
    rows = []
    for i in range(300):
        metrics: dict[str, float] = {}
        for name in ("correctness", "safety", "extra", "unused"):
            if rng.random() < 0.8:
                metrics[name] = rng.choice([1, 2, 3, 4, 5, rng.uniform(1, 5)])
        if rng.random() < 0.7:
            metrics["hallucination"] = rng.random()
        rows.append(ScoredTrial(f"c{i}", 1, "baseline", metrics, blocker=i % 17 == 0))
    names = metric_names(rows, rubric)
    summary = summarise(rows, rubric, names)
    means = {
        name: math.fsum(values) / len(values)
        for name in rubric.weights
        if (values := [r.metrics[name] for r in rows if name in r.metrics])
    }
    assert summary.weighted_score == pytest.approx(rubric.weighted(means), rel=1e-12)
    for name in names:
        values = [r.metrics[name] for r in rows if name in r.metrics]
        assert summary.means[name] == math.fsum(values) / len(values)
    assert summary.blocking_findings == sum(1 for r in rows if r.blocker)
    assert summary.rows == 300
    none = summarise([ScoredTrial("c", 1, "baseline", {"extra": 1.0})], rubric, ["extra"])
    assert none.weighted_score is None
    assert none.means == {"extra": 1.0}


def test_a_small_catalogue_is_read_once(tmp_path: Path) -> None:
    """A file of `HELD_BYTES` or less is loaded whole: parsed once, not once per pass."""
    path = _write(tmp_path / "cases.jsonl", [json.dumps(_case(i)) for i in range(4)])
    scanned = scan_cases(path)
    assert not isinstance(scanned, CaseFile)
    assert scanned == load_cases(path)


def test_a_catalogue_from_a_pipe_is_read_once(tmp_path: Path) -> None:
    """A pipe cannot be read twice: it is loaded whole, and the run sees every case."""
    import os
    import threading

    fifo = tmp_path / "cases.fifo"
    os.mkfifo(fifo)
    text = "".join(json.dumps(_case(i)) + "\n" for i in range(3))
    writer = threading.Thread(target=lambda: fifo.write_text(text, encoding="utf-8"))
    writer.start()
    cases = scan_cases(fifo)
    writer.join()
    assert [c.id for c in cases] == ["c-0", "c-1", "c-2"]
    assert [c.id for c in cases] == ["c-0", "c-1", "c-2"]
