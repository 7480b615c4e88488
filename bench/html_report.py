"""Benchmark `assay report --format html` on a large synthetic run.

Writes cases, trials (baseline and candidate), judge Score rows with evidence, pairwise
comparisons and calibration labels to a temporary folder, then times the command as a user
runs it (`python -m assay report ...` in a subprocess: start-up and imports included), once
for HTML alone and once for md,json,junit for comparison. Prints one line per run and a
JSON line with every figure.
Usage: python bench/html_report.py [--cases 1000] [--trials 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = ("correctness", "autonomy", "actionability", "safety", "concision")


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def synthetic(folder: Path, cases: int, trials: int, seed: int = 7) -> dict[str, Path]:
    """A run where the candidate is a little better on average, with some blockers."""
    rng = random.Random(seed)
    case_rows, trial_rows, score_rows, comparisons, labels = [], [], [], [], []
    for i in range(cases):
        case_id = f"case-{i:05d}"
        case_rows.append(
            {
                "id": case_id,
                "category": ("billing", "access", "outage", "privacy")[i % 4],
                "prompt": f"Customer question number {i}: how do I fix problem {i % 37}?",
                "risk": ("low", "medium", "high")[i % 3],
                "criteria": ["answers the question", "gives concrete steps"],
            }
        )
        for trial in range(1, trials + 1):
            for condition, shift in (("baseline", 0.0), ("candidate", 0.3)):
                words = rng.randint(20, 300)
                trial_rows.append(
                    {
                        "case_id": case_id,
                        "trial": trial,
                        "condition": condition,
                        "runner": "bench",
                        "response": " ".join(["step"] * words),
                        "error": None,
                    }
                )
                scores = {m: min(5, max(1, round(rng.gauss(3.2 + shift, 1.0)))) for m in METRICS}
                blocker = condition == "candidate" and rng.random() < 0.01
                score_rows.append(
                    {
                        "case_id": case_id,
                        "trial": trial,
                        "condition": condition,
                        **scores,
                        "blocker": blocker,
                        "notes": "leaks an account number" if blocker else None,
                        "source": "judge:bench",
                        "evidence": [f"criterion {k}: met" for k in range(2)],
                    }
                )
            verdict = rng.choice(["a", "b", "b", "tie"])
            comparisons.append(
                {
                    "case_id": case_id,
                    "trial": trial,
                    "a": "baseline",
                    "b": "candidate",
                    "judge": "judge:bench",
                    "verdict": verdict,
                    "consistent": True,
                }
            )
        truth = rng.choice(["PASS", "FAIL"])
        labels.append(
            {"item_id": case_id, "dimension": "safety", "rater": "human:a", "value": truth}
        )
        judged = truth if rng.random() < 0.85 else ("PASS" if truth == "FAIL" else "FAIL")
        labels.append(
            {"item_id": case_id, "dimension": "safety", "rater": "judge:bench", "value": judged}
        )
    return {
        "cases": write(folder / "cases.jsonl", case_rows),
        "trials": write(folder / "trials.jsonl", trial_rows),
        "scores": write(folder / "scores.jsonl", score_rows),
        "comparisons": write(folder / "comparisons.jsonl", comparisons),
        "labels": write(folder / "labels.jsonl", labels),
    }


def timed(args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "assay", *args], env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1):
        raise SystemExit(f"assay report failed ({result.returncode}):\n{result.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=3)
    options = parser.parse_args()
    figures: dict[str, object] = {"cases": options.cases, "trials": options.trials}
    with tempfile.TemporaryDirectory() as folder:
        files = synthetic(Path(folder), options.cases, options.trials)
        common = [
            "report",
            "--scores", str(files["scores"]),
            "--trials", str(files["trials"]),
            "--cases", str(files["cases"]),
            "--comparisons", str(files["comparisons"]),
        ]  # fmt: skip
        html = Path(folder) / "html"
        figures["html_s"] = round(
            timed(
                [*common, "--labels", str(files["labels"]), "--format", "html", "--out", str(html)]
            ),
            2,
        )
        figures["html_bytes"] = (html / "report.html").stat().st_size
        figures["text_formats_s"] = round(
            timed([*common, "--format", "md,json,junit", "--out", str(Path(folder) / "text")]), 2
        )
    print(
        f"html: {figures['html_s']} s, {figures['html_bytes']} bytes;"
        f" md,json,junit: {figures['text_formats_s']} s"
        f" ({options.cases} cases x {options.trials} trials x 2 conditions)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
