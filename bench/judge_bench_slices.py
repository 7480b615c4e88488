"""Cut the `assay judge-bench` slices from the public sets, and regenerate the reference figures.

    PYTHONPATH=src python bench/judge_bench_slices.py --data ../shared/data --per-set 300 \
        --out src/assay/api/judgebench/data/slices
    PYTHONPATH=src python bench/judge_bench_slices.py --data ../shared/data --references

A slice is the set's first N items in the seeded order of `assay.api.judgebench.sets.pick`
(sha256 of "assay-judge-bench/<set>/<id>"), the same rule `--limit` uses, written as
`<set>.jsonl` (BenchItem fields) next to the set's upstream licence file and a SOURCE line.
Only sets whose licence allows redistribution have a reader (MIT: LLMBar, PRD; Apache-2.0:
PandaLM). `--references` rewrites data/references.json from the released judge verdicts.
Prints one JSON line: the items written per set.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from assay.api.judgebench.references import write_references
from assay.api.judgebench.sets import BUNDLED, SETS, load_set, pick

LICENCES = {
    "llmbar-natural": ("llmbar", "MIT, LLMBar (Zeng et al. 2024), github.com/princeton-nlp/LLMBar"),
    "llmbar-adversarial": (
        "llmbar",
        "MIT, LLMBar (Zeng et al. 2024), github.com/princeton-nlp/LLMBar",
    ),
    "prd-vicuna80": ("prd_vicuna80", "MIT, PRD (Li et al. 2023), github.com/bcdnlp/PRD"),
    "pandalm": ("pandalm", "Apache-2.0, PandaLM (Wang et al. 2024), github.com/WeOpenML/PandaLM"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="The public sets' folder.")
    parser.add_argument("--out", type=Path, default=BUNDLED, help="Where the slices go.")
    parser.add_argument("--per-set", type=int, default=300)
    parser.add_argument("--references", action="store_true", help="Only rewrite references.json.")
    args = parser.parse_args()
    if args.references:
        write_references(args.data)
        print(json.dumps({"references": "written"}))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    sources: list[str] = []
    for name in SETS:
        items = pick(load_set(name, args.data), args.per_set)
        lines = "".join(json.dumps(i.as_json(), ensure_ascii=False) + "\n" for i in items)
        (args.out / f"{name}.jsonl").write_text(lines, encoding="utf-8")
        folder, attribution = LICENCES[name]
        shutil.copyfile(args.data / folder / "LICENSE", args.out / f"LICENSE.{folder}")
        sources.append(f"{name}.jsonl: {attribution}; licence LICENSE.{folder}\n")
        written[name] = len(items)
    (args.out / "SOURCES.txt").write_text("".join(sources), encoding="utf-8")
    print(json.dumps(written))


if __name__ == "__main__":
    main()
