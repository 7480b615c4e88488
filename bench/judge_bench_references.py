"""Regenerate the `assay judge-bench` reference figures from the judges' released verdicts.

    PYTHONPATH=src python bench/judge_bench_references.py --data ../shared/data

Rewrites src/assay/api/judgebench/data/references.json (`references.compute_references`:
LLMBar's evaluators' result.json per subset, PRD's GPT-4 and Claude reviews, both orders);
`tests/test_judge_bench.py` checks the file against the same verdicts. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from assay.api.judgebench.references import write_references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="The public sets' folder.")
    args = parser.parse_args()
    write_references(args.data)
    print(json.dumps({"references": "written"}))


if __name__ == "__main__":
    main()
