"""The names of the files an evaluation writes into its output folder (imported before the
run, to prove the folder writable and no input overwritten, without loading the renderers)."""

from __future__ import annotations

REPORT_FILES = {
    "md": "report.md",
    "json": "report.json",
    "junit": "report.junit.xml",
    "html": "report.html",
}
"""Each report format's file (`assay report --format`)."""

TRIALS = "trials.jsonl"
DETERMINISTIC = "deterministic.jsonl"
SCORES = "scores.jsonl"
COMPARISONS = "comparisons.jsonl"
SUMMARY = "summary.json"
SUITE_FILES = (TRIALS, DETERMINISTIC, SCORES, COMPARISONS, SUMMARY, *REPORT_FILES.values())
"""What `assay run SUITE.toml` writes into the suite's output folder."""
