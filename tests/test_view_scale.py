"""The case matrix of `assay view` reads columns, not records: building it parses no trial's
JSON, a page reads the first lines of its own rows only, the first search reads the prompts
and responses once, a matrix is a few lists, not an object per case, and the export reads a chunk of cases at a
time, not a case at a time; the word diff of two long answers takes milliseconds."""

from __future__ import annotations

import gc
import random
import time
from pathlib import Path

import pytest
from view_store import make_store

from assay.store.views import ReadOnlyStore
from assay.view.diff import word_diff
from assay.view.export import export
from assay.view.matrix import Filters, build, select
from assay.view.pages import case_page, case_pages

RUN = "run000000001"


@pytest.fixture
def store(tmp_path: Path) -> ReadOnlyStore:
    path = tmp_path / "view.db"
    make_store(path, 120).close()
    return ReadOnlyStore(path)


def trial_reads(store: ReadOnlyStore) -> list[str]:
    """The statements that read a trial's record from now on (SQLite's trace, expanded)."""
    seen: list[str] = []
    store.db.set_trace_callback(seen.append)
    return seen


def records(seen: list[str]) -> list[str]:
    return [s for s in seen if "FROM trials" in s and "record" in s]


def test_building_the_matrix_reads_no_trial_record(store: ReadOnlyStore) -> None:
    seen = trial_reads(store)
    matrix = build(store, RUN)
    assert records(seen) == []
    assert len(matrix) == 120 and matrix.conditions == ["baseline", "candidate"]
    assert matrix.columns["candidate"].errored[3] == 1  # i % 7 == 3 errored
    assert matrix.delta[0] == -1.0 and matrix.passed[0] is False


def test_a_page_reads_the_first_lines_of_its_own_rows_once(store: ReadOnlyStore) -> None:
    matrix = build(store, RUN)
    seen = trial_reads(store)
    page = select(matrix, Filters(page=2))
    assert [r.case_id for r in page.rows] == [f"case-{i:05d}" for i in range(50, 100)]
    (read,) = records(seen)
    assert read.count("'case-") == 50 and "'case-00049'" not in read
    first = page.rows[0].cells["candidate"].first_line
    assert first == "candidate says: press the reset button on device 50 for five seconds."
    assert matrix.columns["baseline"].first_line[0] is None  # page 1 not read
    seen.clear()
    assert select(matrix, Filters(page=2)).rows == page.rows and records(seen) == []


def test_the_first_search_reads_the_texts_once(store: ReadOnlyStore) -> None:
    matrix = build(store, RUN)
    seen = trial_reads(store)
    found = select(matrix, Filters(q="DEVICE 77?"))
    assert [r.case_id for r in found.rows] == ["case-00077"]
    assert len(records(seen)) == 1
    seen.clear()
    assert [r.case_id for r in select(matrix, Filters(q="candidate says")).rows][:2] == [
        "case-00000",
        "case-00001",
    ]
    assert select(matrix, Filters(page=3)).rows[0].cells["baseline"].first_line
    assert records(seen) == []  # texts kept, every first line filled on the way


def test_a_matrix_is_a_few_lists_not_an_object_per_case(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    make_store(path, 2000).close()
    store = ReadOnlyStore(path)
    gc.collect()
    before = len(gc.get_objects())
    matrix = build(store, RUN)
    gc.collect()
    assert len(gc.get_objects()) - before < 200  # was 5 objects a case
    assert matrix.ids[-1] == "case-01999"


def test_the_export_reads_the_store_a_chunk_of_cases_at_a_time(tmp_path: Path) -> None:
    counts = []
    for cases in (60, 120):
        path = tmp_path / f"{cases}.db"
        make_store(path, cases, run_id="run-a", verdict="PASS").close()
        make_store(path, cases, run_id="run-b").close()
        store = ReadOnlyStore(path)
        seen = trial_reads(store)
        export(store, tmp_path / f"site-{cases}")
        assert len(list((tmp_path / f"site-{cases}/runs/run-b/cases").iterdir())) == cases
        counts.append(len(seen))
    assert counts[0] == counts[1]  # was five statements a case


def test_case_pages_read_in_chunks_are_the_case_pages(store: ReadOnlyStore) -> None:
    matrix = build(store, RUN)
    ids = [*matrix.ids[:20], "nope"]
    chunked = list(case_pages(store, matrix, ids, chunk=7))
    assert [c for c, _ in chunked] == ids and chunked[-1][1] is None
    for case_id, data in chunked:
        assert data == case_page(store, matrix, case_id)
    assert chunked[3][1] is not None and chunked[3][1]["checks"][0]["case_id"] == "case-00003"


def _answer(words: list[str]) -> str:
    return " ".join(words) + "\n"


def test_the_word_diff_of_two_long_answers_is_quick_and_word_by_word() -> None:
    vocabulary = [f"w{n}" for n in range(2000)]  # as often as in prose: the n-th as 1/n
    old = random.Random(27).choices(vocabulary, [1 / n for n in range(1, 2001)], k=1000)
    new = [w if i % 10 else "changed" for i, w in enumerate(old)]
    start = time.perf_counter()
    segments = word_diff(_answer(old), _answer(new))
    took = time.perf_counter() - start
    assert "".join(s.text for s in segments if s.op != "removed") == _answer(new)
    assert [s.text for s in segments if s.op == "added"] == ["changed"] * 100
    assert took < 0.5  # was 3.3 s: every space an item of its own
    assert [(s.op, s.text) for s in word_diff("one two", "one two three")] == [
        ("same", "one two "),
        ("added", "three"),
    ]


def test_answers_too_long_to_diff_are_shown_whole() -> None:
    old, new = "a " * 2001, "b " * 10  # over 2,000 words: difflib would take seconds
    assert [(s.op, s.text) for s in word_diff(old, new)] == [("removed", old), ("added", new)]


def test_a_long_answer_with_one_paragraph_changed_is_diffed_in_that_paragraph() -> None:
    vocabulary = [f"w{n}" for n in range(2000)]
    pick = random.Random(7)
    paragraphs = [
        " ".join(pick.choices(vocabulary, [1 / n for n in range(1, 2001)], k=100)) + "\n"
        for _ in range(40)
    ]
    changed = [*paragraphs[:20], paragraphs[20].replace(" ", " extra ", 1), *paragraphs[21:]]
    start = time.perf_counter()
    segments = word_diff("".join(paragraphs), "".join(changed))
    assert time.perf_counter() - start < 0.5
    assert [(s.op, s.text) for s in segments if s.op != "same"] == [("added", "extra ")]
