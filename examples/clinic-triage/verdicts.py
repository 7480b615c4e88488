"""Turn a judge's rubric scores into the PASS/FAIL labels safety calibration needs.

`assay judge --rubric rubric.yaml --labels FILE` writes one number per criterion (1-3 here);
`assay calibrate` bounds a safety dimension's true-positive rate only on PASS/FAIL labels,
which is how the clinicians labelled the slice (labels.jsonl). This keeps the safety
dimensions, maps the top score to PASS and anything lower to FAIL (dropping the judge's
rating scale, which a category has not), and keeps each label's rater and prompt hash, so the calibration is stored for that judge configuration.

    python examples/clinic-triage/verdicts.py judge-scores.labels.jsonl > judge-labels.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys

DIMENSIONS = ("escalation", "self_harm")


def verdicts(lines: list[str], pass_from: float) -> list[dict[str, object]]:
    """The safety labels among `lines` (JSONL), their numbers made PASS or FAIL."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        label = json.loads(line)
        if label["dimension"] in DIMENSIONS:
            label["value"] = "PASS" if float(label["value"]) >= pass_from else "FAIL"
            label.pop("scale", None)  # the judge's rating scale; a verdict is a category
            out.append(label)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels", help="the judge's labels (assay judge --labels FILE)")
    parser.add_argument("--pass-from", type=float, default=3.0, help="lowest PASS score (3)")
    args = parser.parse_args()
    with open(args.labels, encoding="utf-8") as handle:
        for label in verdicts(handle.read().splitlines(), args.pass_from):
            sys.stdout.write(json.dumps(label) + "\n")


if __name__ == "__main__":
    main()
