"""Write the small synthetic example files of examples/stats/ (seeded; re-run to regenerate)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "examples" / "stats"


def write(name: str, rows: list[dict[str, object]]) -> None:
    (OUT / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def main() -> None:
    rng = random.Random(42)
    OUT.mkdir(parents=True, exist_ok=True)
    labels: list[dict[str, object]] = []
    for i in range(160):
        item = f"case-{i:03d}"
        truth = "FAIL" if i % 3 == 0 else "PASS"
        for h in ("human:ana", "human:ben", "human:chen"):
            value = truth if rng.random() < 0.93 else ("PASS" if truth == "FAIL" else "FAIL")
            labels.append({"item_id": item, "dimension": "escalation", "rater": h, "value": value})
        careful = truth if rng.random() < 0.97 else ("PASS" if truth == "FAIL" else "FAIL")
        labels.append(
            {
                "item_id": item,
                "dimension": "escalation",
                "rater": "judge:careful",
                "value": careful,
                "prompt_sha256": "5" * 64,
            }
        )
        labels.append(
            {
                "item_id": item,
                "dimension": "escalation",
                "rater": "judge:lenient",
                "value": "PASS" if rng.random() < 0.9 else truth,
            }
        )
        score = rng.randint(1, 5)
        for h in ("human:ana", "human:ben"):
            labels.append(
                {
                    "item_id": item,
                    "dimension": "correctness",
                    "rater": h,
                    "value": max(1, min(5, score + rng.choice([0, 0, 0, 1, -1]))),
                }
            )
        labels.append(
            {
                "item_id": item,
                "dimension": "correctness",
                "rater": "judge:careful",
                "value": max(1, min(5, score + rng.choice([0, 0, 1, -1]))),
                "prompt_sha256": "5" * 64,
            }
        )
    write("labels.jsonl", labels)

    quality = {"candidate": 0.4, "concise": 0.0, "verbose": 0.1}
    lengths = {"baseline": 225, "candidate": 250, "concise": 150, "verbose": 375}
    comparisons: list[dict[str, object]] = []
    trials: list[dict[str, object]] = []
    for i in range(120):
        case = f"case-{i:03d}"
        difficulty = rng.gauss(0, 0.8)
        length = {m: max(10, int(rng.gauss(mean, mean / 2))) for m, mean in lengths.items()}
        for m, n in length.items():
            trials.append(
                {
                    "case_id": case,
                    "trial": 1,
                    "condition": m,
                    "runner": "example",
                    "response": "x" * n,
                }
            )
        for model, q in quality.items():
            logit = q - difficulty + 0.9 * math.tanh((length[model] - length["baseline"]) / 200)
            p = 1 / (1 + math.exp(-logit))
            ab = "b" if rng.random() < p - 0.08 else "a"  # the judge leans to the response
            ba = "b" if rng.random() < p + 0.08 else "a"  # shown first (a in `ab`, b in `ba`)
            verdict = ab if ab == ba else "tie"
            comparisons.append({
                "case_id": case, "trial": 1, "a": "baseline", "b": model, "judge": "careful",
                "passes": [{"order": "ab", "winner": ab}, {"order": "ba", "winner": ba}],
                "verdict": verdict, "consistent": ab == ba,
            })  # fmt: skip
    write("comparisons.jsonl", comparisons)
    write("trials.jsonl", trials)

    for run, shift in (("run-1", 0.0), ("run-2", 0.0), ("run-3", 1.2)):
        scores: list[dict[str, object]] = []
        for i in range(120):
            case = f"case-{i:03d}"
            base = 3 + (1 if i % 4 == 0 else 0) - (1 if i % 5 == 0 else 0)
            judge = max(1, min(5, round(base - shift + rng.choice([0, 0, 0, 1]))))
            scores.append(
                {
                    "case_id": case,
                    "trial": 1,
                    "condition": "candidate",
                    "source": "judge:careful",
                    "prompt_sha256": "5" * 64,
                    "correctness": judge,
                }
            )
            if i % 6 == 0:
                scores.append(
                    {
                        "case_id": case,
                        "trial": 1,
                        "condition": "candidate",
                        "source": "human:ana",
                        "correctness": base,
                    }
                )
        write(f"scores-{run}.jsonl", scores)


if __name__ == "__main__":
    main()
