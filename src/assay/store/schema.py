"""Every table of the run store, and the ordered migrations that bring a file to this version.

The schema version lives in the file header (`PRAGMA user_version`). Version 0 is a store
written before versions existed: its tables were created on demand with `CREATE TABLE IF NOT
EXISTS`, so any of them may be missing. `MIGRATIONS[i]` takes a file from version i to i + 1;
a schema change is one more function appended to that list (never an edit of an old step),
and `SCHEMA_VERSION` follows.

Tables (the modules of store/ that read and write them):
- `runs`, `trials`, `call_cache` (db.py): a run's config, its trials in plan order keyed for
  resume, the content-addressed cache of model replies;
- `run_spend`, `run_spend_roles`, `run_reservations`, `call_costs` (spend.py): what each run
  has spent (in all, and per role), so a resumed run keeps its budget, the reservations of
  calls in flight, recorded before each is sent (those a killed process left count as spent),
  and the most one call of each model spec has cost;
- `run_leases` (lease.py): the process running each run, with its heartbeat;
- `judgments`, `review_queue`: the judges' records keyed for resume, and the items the judge
  cascade sends to humans;
- `review_order`, `review_answers` (review.py): the review app's presentation order and answers;
- `judge_scores` (history.py): score rows per run for judge monitoring;
- `judge_calibrations` (calibrations.py): calibration verdicts per judge configuration;
- `server_forms` (servers.py): the structured-output form each OpenAI-compatible server
  accepted, per base URL and model (models/forms.py);
- `judge_benchmarks` (benchmarks.py): `assay judge-bench` figures per judge configuration and set.
- `batches`, `batch_requests` (batches.py): provider batches submitted (`--batch`) and the
  call cache keys of their requests.
- `run_results`, `run_cases`, `run_scores`, `run_cells` (results.py writes, views.py reads):
  what a suite run's evaluation found (the verdict and report, one row per suite that gated
  the run), its cases, its score rows and each case × condition's weighted score and blocking
  flag (of the evaluation recorded last), for `assay view`;
  `run_provenance` (results.py): each run's wall time and git commit, for the runs list.
- `call_claims` (claims.py): the calls in flight by cache key, with the process making each
  and its heartbeat, so overlapping processes never make the same call twice.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from assay.core.errors import InputError
from assay.store.transactions import immediate

Migration = Callable[[sqlite3.Connection], None]

# The tables exactly as assay declared them before versions existed (so a version 0 file
# that has a table already has it in this form); one statement per entry.
BASELINE: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS trials (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    trial INTEGER NOT NULL,
    record TEXT NOT NULL,
    error TEXT,
    error_detail TEXT,
    PRIMARY KEY (run_id, key)
)""",
    "CREATE INDEX IF NOT EXISTS trials_by_seq ON trials (run_id, seq)",
    """CREATE TABLE IF NOT EXISTS call_cache (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS run_spend (
    run_id TEXT PRIMARY KEY,
    spent_usd REAL NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    mode TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    judge TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT,
    error TEXT,
    raw TEXT,
    created_at TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS judgments_by_item ON judgments (case_id, trial, a, b)",
    "CREATE TABLE IF NOT EXISTS review_queue (case_id TEXT NOT NULL, trial INTEGER NOT NULL,"
    " a TEXT, b TEXT, reason TEXT NOT NULL, source TEXT NOT NULL, created_at TEXT NOT NULL,"
    " PRIMARY KEY (case_id, trial, a, b))",
    """CREATE TABLE IF NOT EXISTS review_order (
    dataset TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    first TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (dataset, case_id, trial, a, b)
)""",
    """CREATE TABLE IF NOT EXISTS review_answers (
    dataset TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    mode TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    answer TEXT NOT NULL,
    answered_at TEXT NOT NULL,
    PRIMARY KEY (dataset, reviewer, mode, case_id, trial, a, b)
)""",
    """CREATE TABLE IF NOT EXISTS judge_scores (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    source TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    condition TEXT NOT NULL,
    score REAL,
    length INTEGER,
    record TEXT NOT NULL,
    created_at TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS judge_scores_by_source ON judge_scores (source, prompt_sha256, id)",
    """CREATE INDEX IF NOT EXISTS judge_scores_by_trial
    ON judge_scores (run_id, source, prompt_sha256, case_id, trial, condition)""",
    """CREATE TABLE IF NOT EXISTS judge_calibrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    judge TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    dimension TEXT NOT NULL,
    verdict TEXT NOT NULL,
    n INTEGER NOT NULL,
    kappa REAL,
    weighted_kappa REAL,
    agreement REAL,
    tpr_low REAL,
    safety INTEGER NOT NULL,
    result TEXT NOT NULL,
    labels_sha256 TEXT NOT NULL,
    created_at TEXT NOT NULL
)""",
    """CREATE INDEX IF NOT EXISTS judge_calibrations_by_judge
    ON judge_calibrations (judge, prompt_sha256, dimension, id)""",
)


def _create_baseline(db: sqlite3.Connection) -> None:
    """0 → 1: every table and index; those a version 0 file already has are kept as they are."""
    for statement in BASELINE:
        db.execute(statement)


def _add_server_forms(db: sqlite3.Connection) -> None:
    """1 → 2: `server_forms`, the structured-output form a server accepts per base URL and
    model, so a later run does not send a form the server already refused."""
    db.execute(
        """CREATE TABLE server_forms (
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    form TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (base_url, model)
)"""
    )


def _add_judge_benchmarks(db: sqlite3.Connection) -> None:
    """2 → 3: the judge-bench figures, one row per run of a judge configuration on a set."""
    db.execute(
        """CREATE TABLE judge_benchmarks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    judge TEXT NOT NULL,
    prompt_sha256 TEXT NOT NULL,
    set_name TEXT NOT NULL,
    items INTEGER NOT NULL,
    accuracy REAL,
    position_consistency REAL,
    figures TEXT NOT NULL,
    created_at TEXT NOT NULL
)"""
    )
    db.execute(
        "CREATE INDEX judge_benchmarks_by_judge ON judge_benchmarks (judge, prompt_sha256, set_name, id)"
    )


def _leases_and_reservations(db: sqlite3.Connection) -> None:
    """3 → 4: `run_reservations` (each metered call's reservation, recorded before it is sent)
    and `run_leases` (which process is running a run, and its heartbeat)."""
    db.execute(
        """CREATE TABLE run_reservations (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    amount_usd REAL NOT NULL,
    created_at TEXT NOT NULL
)"""
    )
    db.execute("CREATE INDEX run_reservations_by_run ON run_reservations (run_id)")
    db.execute(
        """CREATE TABLE run_leases (
    run_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    heartbeat REAL NOT NULL,
    taken_at TEXT NOT NULL
)"""
    )


def _add_batches(db: sqlite3.Connection) -> None:
    """4 → 5: `batches` and `batch_requests`, the provider batches a run submitted and the
    requests (by call cache key) in each, so a restarted run waits for the same batches
    instead of submitting its requests again (engine/batching.py)."""
    db.execute(
        """CREATE TABLE batches (
    batch_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (endpoint, batch_id)
)"""
    )
    db.execute(
        """CREATE TABLE batch_requests (
    endpoint TEXT NOT NULL,
    custom_id TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    PRIMARY KEY (endpoint, custom_id)
)"""
    )


def _spend_roles_and_call_costs(db: sqlite3.Connection) -> None:
    """5 → 6: `run_spend_roles` (what each run has spent per role: the system under test,
    its judges, its model-backed scorers) and `call_costs` (the most one call of each model
    spec has cost, so a rerun reserves at least that for an agent's call)."""
    db.execute(
        """CREATE TABLE run_spend_roles (
    run_id TEXT NOT NULL,
    role TEXT NOT NULL,
    spent_usd REAL NOT NULL,
    PRIMARY KEY (run_id, role)
)"""
    )
    db.execute(
        """CREATE TABLE call_costs (
    spec TEXT PRIMARY KEY,
    most_usd REAL NOT NULL
)"""
    )


def _add_run_results(db: sqlite3.Connection) -> None:
    """6 → 7: what a suite run's evaluation found, so `assay view` can show a run without
    its output folder (which the next run of the suite overwrites): `run_results` (the
    suite, the verdict and the report's JSON), `run_cases` (the catalogue the run answered,
    in its order), `run_scores` (every score row and comparison, judges' and scorers'),
    `run_cells` (each case × condition's weighted score and whether it has a blocking
    finding)."""
    db.execute(
        """CREATE TABLE run_results (
    run_id TEXT PRIMARY KEY,
    suite TEXT NOT NULL,
    verdict TEXT NOT NULL,
    report TEXT NOT NULL,
    saved_at TEXT NOT NULL
)"""
    )
    db.execute("CREATE INDEX run_results_by_suite ON run_results (suite, saved_at)")
    db.execute(
        """CREATE TABLE run_cases (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    category TEXT NOT NULL,
    risk TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
)"""
    )
    db.execute(
        """CREATE TABLE run_scores (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    case_id TEXT NOT NULL,
    trial INTEGER NOT NULL,
    condition TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
)"""
    )
    db.execute("CREATE INDEX run_scores_by_case ON run_scores (run_id, case_id)")
    db.execute(
        """CREATE TABLE run_cells (
    run_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    weighted REAL,
    blocker INTEGER NOT NULL,
    PRIMARY KEY (run_id, case_id, condition)
)"""
    )


def _add_call_claims(db: sqlite3.Connection) -> None:
    """7 → 8: `call_claims`, each call in flight by its cache key with the process making it
    (holder, host, pid) and that process's heartbeat: another process that needs the same call
    waits for its reply instead of paying for it again (store/claims.py)."""
    # One b-tree (WITHOUT ROWID, no other index: it holds only the calls in flight, and a
    # heartbeat's scan of it costs less than keeping an index in every claim's commit).
    db.execute(
        """CREATE TABLE call_claims (
    key TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    heartbeat REAL NOT NULL
) WITHOUT ROWID"""
    )


def _add_run_provenance(db: sqlite3.Connection) -> None:
    """8 → 9: `run_provenance`, each run's wall time summed over the invocations that ran it
    (answering, judging, scoring, reporting) and the git commit of the checkout it last ran
    from, for `assay view`'s runs list."""
    db.execute(
        """CREATE TABLE run_provenance (
    run_id TEXT PRIMARY KEY,
    git_commit TEXT,
    duration_s REAL NOT NULL,
    updated_at TEXT NOT NULL
)"""
    )


def _run_results_per_suite(db: sqlite3.Connection) -> None:
    """9 → 10: `run_results` keyed by (run, suite), not by run: two suites that gate the same
    trials (the same run id) each keep their verdict and report, so each suite's history in
    `assay view` has every run it gated. The rows recorded so far are kept."""
    db.execute(
        """CREATE TABLE run_results_v10 (
    run_id TEXT NOT NULL,
    suite TEXT NOT NULL,
    verdict TEXT NOT NULL,
    report TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    PRIMARY KEY (run_id, suite)
)"""
    )
    db.execute(
        "INSERT INTO run_results_v10 (run_id, suite, verdict, report, saved_at)"
        " SELECT run_id, suite, verdict, report, saved_at FROM run_results"
    )
    db.execute("DROP TABLE run_results")  # and its index
    db.execute("ALTER TABLE run_results_v10 RENAME TO run_results")
    db.execute("CREATE INDEX run_results_by_suite ON run_results (suite, saved_at)")


MIGRATIONS: Sequence[Migration] = (
    _create_baseline,
    _add_server_forms,
    _add_judge_benchmarks,
    _leases_and_reservations,
    _add_batches,
    _spend_roles_and_call_costs,
    _add_run_results,
    _add_call_claims,
    _add_run_provenance,
    _run_results_per_suite,
)
SCHEMA_VERSION = len(MIGRATIONS)


def user_version(db: sqlite3.Connection) -> int:
    """The schema version recorded in the file (0 for a new or pre-version file)."""
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _refuse_newer(path: Path, version: int) -> InputError:
    return InputError(
        f"ERROR: {path}: the store is at schema version {version}, newer than the version"
        f" {SCHEMA_VERSION} this assay supports; upgrade assay to use it"
    )


def check_version(db: sqlite3.Connection, path: Path) -> int:
    """The file's schema version; InputError when a newer assay wrote it. Reads only."""
    version = user_version(db)
    if version > SCHEMA_VERSION:
        raise _refuse_newer(path, version)
    return version


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the store to `SCHEMA_VERSION`, or refuse a file written by a newer assay.

    A store already at this version costs one read of the header. Otherwise the missing steps
    run in one write transaction (SQLite DDL is transactional), so a concurrent opener waits
    and then finds the file migrated, and a failed step leaves the file as it was. A newer
    file is refused before anything is written to it. `db` is in autocommit mode.
    """
    if check_version(db, path) == SCHEMA_VERSION:
        return
    with immediate(db):
        version = check_version(db, path)  # another process may have migrated it meanwhile
        for step in MIGRATIONS[version:]:
            step(db)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
