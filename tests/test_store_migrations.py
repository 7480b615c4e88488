"""Store schema versions: new stores, upgrading a store written before versions, refusing newer.

The fixture tests/fixtures/store-v0/store-v0.db.gz was written by assay before the store had
schema versions (see build.sh next to it); every test works on a fresh copy of it.
"""

from __future__ import annotations

import gzip
import hashlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from assay.core.errors import InputError
from assay.store import Store, schema
from assay.store.calibrations import latest_calibrations
from assay.store.history import judge_scores
from assay.store.review import ReviewStore
from assay.store.spend import spent_so_far

FIXTURE = Path(__file__).parent / "fixtures" / "store-v0"
RUN_ID = "748d58cfaa2b"  # the run build.sh made
RUN_ARGS = ("--model", "mock", "--trials", "2", "--price", "1,2", "--budget-usd", "1")
JUDGE_RUNS = {  # each `assay judge --run` of build.sh, and the items it judged
    "direct": (("--judge", "mock:fair"), 8),
    "pairwise": (("--judge", "mock:fair", "--mode", "pairwise"), 4),
    "cascade": (
        ("--judge", "mock:fair", "--screen", "mock:fair", "--screen-threshold", "1",
         "--review-threshold", "0.99"),
        8,
    ),
}  # fmt: skip


@pytest.fixture
def v0(tmp_path: Path) -> Path:
    """A fresh copy of the version 0 store."""
    path = tmp_path / "store.db"
    path.write_bytes(gzip.decompress((FIXTURE / "store-v0.db.gz").read_bytes()))
    return path


def version_of(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return schema.user_version(db)
    finally:
        db.close()


def schema_of(path: Path) -> set[tuple[str, str, str, str | None]]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    finally:
        db.close()
    return {(t, n, tbl, sql) for t, n, tbl, sql in rows if n != "sqlite_sequence"}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_fixture_is_a_version_0_store(v0: Path) -> None:
    assert version_of(v0) == 0


def test_a_new_store_is_created_at_the_current_version(tmp_path: Path) -> None:
    Store(tmp_path / "s.db").close()
    assert version_of(tmp_path / "s.db") == schema.SCHEMA_VERSION >= 1
    tables = {name for kind, name, _, _ in schema_of(tmp_path / "s.db") if kind == "table"}
    assert tables == {
        "runs",
        "trials",
        "call_cache",
        "run_spend",
        "run_reservations",
        "run_leases",
        "judgments",
        "review_queue",
        "review_order",
        "review_answers",
        "judge_scores",
        "judge_calibrations",
        "server_forms",
        "judge_benchmarks",
        "batches",
        "batch_requests",
        "run_spend_roles",
        "call_costs",
        "run_results",
        "run_cases",
        "run_scores",
        "run_cells",
        "call_claims",
        "run_provenance",
    }


def test_a_version_0_store_is_migrated_in_place_and_stays_readable(v0: Path) -> None:
    store = Store(v0)
    try:
        assert version_of(v0) == schema.SCHEMA_VERSION
        ((run_id, _, config),) = store.runs()
        assert run_id == RUN_ID and config
        trials = list(store.trial_records(RUN_ID))
        assert len(trials) == 8 and all(t["error"] is None and t["response"] for t in trials)
        assert {t["condition"] for t in trials} == {"baseline", "candidate"}
        judged = store.db.execute(
            "SELECT mode, COUNT(*) FROM judgments WHERE status = 'ok' GROUP BY mode"
        ).fetchall()
        assert dict(judged) == {"direct": 16, "pairwise": 4}
        assert len(judge_scores(store)) == 8
        assert spent_so_far(store, RUN_ID) > 0
        (calibration,) = latest_calibrations(store)
        assert (calibration.judge, calibration.dimension) == ("judge:mock:fair", "tone")
    finally:
        store.close()
    review = ReviewStore(v0)
    (answer,) = review.answers()
    assert (answer.reviewer, answer.answer) == ("ana", {"winner": "b"})
    assert len(review.queued()) == 8


def test_a_migrated_store_has_the_schema_of_a_new_one(v0: Path, tmp_path: Path) -> None:
    Store(v0).close()
    Store(tmp_path / "new.db").close()
    assert schema_of(v0) == schema_of(tmp_path / "new.db")


def test_rerunning_the_same_run_on_a_version_0_store_makes_no_calls(cli: Any, v0: Path) -> None:
    result = cli(
        "run",
        "--cases",
        FIXTURE / "cases.jsonl",
        "--condition-skill",
        FIXTURE / "skill.md",
        *RUN_ARGS,
        "--store",
        v0,
        "--json",
    )
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["run_id"] == RUN_ID  # same run id: every trial key is found and resumed
    assert summary["calls"] == 0 and summary["cache_hits"] == 0
    assert summary["answered"] == summary["total"] == 8
    assert summary["run_spent_usd"] > 0  # the spend recorded before the upgrade is kept


def rejudge(cli: Any, v0: Path, tmp_path: Path, options: tuple[str, ...]) -> dict[str, Any]:
    result = cli(
        "judge",
        "--run",
        RUN_ID,
        "--cases",
        FIXTURE / "cases.jsonl",
        *options,
        "--allow-unmetered",
        "--store",
        v0,
        "--output",
        tmp_path / "out.jsonl",
        "--json",
    )
    assert result.code == 0, result.stderr
    return dict(result.json())


@pytest.mark.parametrize("name", sorted(JUDGE_RUNS))
def test_rejudging_on_a_version_0_store_makes_no_judge_calls(
    cli: Any, v0: Path, tmp_path: Path, name: str, v0_judge_templates: None
) -> None:
    options, items = JUDGE_RUNS[name]
    summary = rejudge(cli, v0, tmp_path, options)
    assert summary["calls"] == 0 and summary["cache_hits"] == 0
    assert summary["resumed"] == summary["items"] == items


def test_judgments_made_with_the_unfenced_prompts_are_made_again(
    cli: Any, v0: Path, tmp_path: Path
) -> None:
    options, items = JUDGE_RUNS["direct"]
    summary = rejudge(cli, v0, tmp_path, options)
    assert summary["resumed"] == 0 and summary["calls"] == summary["items"] == items


def test_a_store_from_a_newer_assay_is_refused_and_left_untouched(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    db.close()
    before = digest(path)
    result = cli(
        "run", "--cases", FIXTURE / "cases.jsonl", "--model", "mock", "--store", path, "--json"
    )
    assert result.code == 2
    message = " ".join(result.stderr.split())
    assert str(path) in message and "traceback" not in message.lower()
    assert f"schema version {schema.SCHEMA_VERSION + 1}" in message
    assert f"version {schema.SCHEMA_VERSION} this assay supports" in message
    assert "upgrade assay" in message
    with pytest.raises(InputError, match="upgrade assay"):
        ReviewStore(path)
    assert digest(path) == before
    assert version_of(path) == schema.SCHEMA_VERSION + 1


def test_a_store_in_rollback_journal_mode_is_refused_untouched(tmp_path: Path) -> None:
    """Refusing reads only the header: even the switch to WAL (a write) is not made."""
    path = tmp_path / "s.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    before = digest(path)
    with pytest.raises(InputError, match="newer than the version"):
        Store(path)
    assert digest(path) == before


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"this is not a database\n" * 50, id="not-sqlite"),
        pytest.param(lambda data: data[:100] + b"\xff" * (len(data) - 100), id="overwritten"),
    ],
)
def test_a_damaged_store_is_an_input_error(cli: Any, v0: Path, damage: Any) -> None:
    v0.write_bytes(damage(v0.read_bytes()))
    result = cli("run", "--cases", FIXTURE / "cases.jsonl", "--model", "mock", "--store", v0)
    assert result.code == 2
    message = " ".join(result.stderr.split())
    assert f"{v0}: cannot open the store" in message and "Traceback" not in result.stderr


def test_concurrent_openers_migrate_once(v0: Path) -> None:
    errors: list[BaseException] = []

    def open_store() -> None:
        try:
            Store(v0).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert version_of(v0) == schema.SCHEMA_VERSION


def test_migrations_run_in_order_and_a_failed_step_changes_nothing(
    v0: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next schema change is one more function in MIGRATIONS."""
    ran: list[str] = []

    def add_note(db: sqlite3.Connection) -> None:
        ran.append("note")
        db.execute("ALTER TABLE runs ADD COLUMN note TEXT")

    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("step failed")

    current = tmp_path / "current.db"
    Store(current).close()
    steps = [*schema.MIGRATIONS, add_note]
    monkeypatch.setattr(schema, "MIGRATIONS", steps)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", len(steps))
    for path in (v0, current):  # from 0 (every step) and from the last version (the new one)
        Store(path).close()
        assert version_of(path) == len(steps)
        columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(runs)")}
        assert "note" in columns
    assert ran == ["note", "note"]

    fresh = tmp_path / "fresh.db"
    Store(fresh).close()
    before = schema_of(fresh)
    monkeypatch.setattr(schema, "MIGRATIONS", [*steps, broken])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", len(steps) + 1)
    with pytest.raises(RuntimeError, match="step failed"):
        Store(fresh)
    assert version_of(fresh) == len(steps) and schema_of(fresh) == before


def test_a_version_9_store_keeps_its_verdicts_and_takes_one_per_suite(tmp_path: Path) -> None:
    from assay.store.results import save_results

    path = tmp_path / "v9.db"
    db = sqlite3.connect(path)
    for step in schema.MIGRATIONS[:9]:  # a store as assay wrote it at version 9
        step(db)
    db.execute("PRAGMA user_version = 9")
    db.execute(
        "INSERT INTO run_results (run_id, suite, verdict, report, saved_at)"
        " VALUES ('r1', 'alpha', 'PASS', '{}', '2026-12-01T00:00:00.000Z')"
    )
    db.commit()
    db.close()
    store = Store(path)
    try:
        assert version_of(path) == schema.SCHEMA_VERSION
        save_results(
            store, "r1", suite="beta", verdict="FAIL", report="{}", cases=[], scores=[], cells=[]
        )
        save_results(
            store, "r1", suite="beta", verdict="PASS", report="{}", cases=[], scores=[], cells=[]
        )
        rows = store.db.execute(
            "SELECT run_id, suite, verdict FROM run_results ORDER BY suite"
        ).fetchall()
    finally:
        store.close()
    # alpha's verdict, recorded before the migration, is kept beside beta's (recorded again)
    assert rows == [("r1", "alpha", "PASS"), ("r1", "beta", "PASS")]
