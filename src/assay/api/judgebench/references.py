"""Reference judges' figures on the benchmark sets, next to which a judge is shown.

`data/references.json` lists, per set, known judges' accuracy and position consistency, each
with the model its authors ran and its source. They are computed from the verdicts the sets'
authors released (LLMBar's `result.json` of each evaluator, strategy Vanilla_NoRules, the
paper's "Vanilla"; PRD's GPT-4 and Claude reviews), both orders, by `compute_references` from
the public layout: `tests/test_judge_bench.py` recomputes them and checks the file, and checks
LLMBar's against the figures the paper publishes. Accuracy is the two orders' mean, as in the
papers; a verdict the upstream parser could not read counts as wrong. On `llmbar-adversarial`
the figures are as published: per subset (Neighbor, GPTInst, GPTOut, Manual; `subsets`), and
their unweighted mean as the headline; `pooled` gives them over the 319 items.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from assay.api.judgebench.rows import PRDRating, jsonl_rows, missing
from assay.api.judgebench.sets import (
    LLMBAR_ADVERSARIAL,
    PRD_SCORE,
    Gold,
    prd_files,
    prd_vicuna80,
)
from assay.core.errors import InputError
from assay.core.jsonl import read_text
from assay.measure.judgebench import Orders, reference_figures, subset_mean

REFERENCES = Path(__file__).parent / "data" / "references.json"
LLMBAR_MODELS = {
    "GPT-4": "gpt-4, snapshot not named in the authors' config",
    "ChatGPT": "gpt-3.5-turbo-0613",
    "ChatGPT-0301": "gpt-3.5-turbo-0301",
    "PaLM2": "text-bison-001",
    "LLaMA2": "Llama-2-70b-chat-hf",
    "Falcon": "falcon-180B-chat",
}
"""The LLMBar evaluators and the models their released configs call (LLMEvaluator/evaluators/
config/<judge>/Vanilla_NoRules.json @ 900616b)."""
LLMBAR_STRATEGY = "Vanilla_NoRules"
LLMBAR_SOURCE = (
    "Zeng et al., Evaluating Large Language Models at Evaluating Instruction Following"
    " (ICLR 2024), Vanilla; verdicts from github.com/princeton-nlp/LLMBar @ 900616b,"
    " Dataset/LLMBar/{subset}/evaluators/{judge}/" + LLMBAR_STRATEGY + "/result.json"
)
PRD_SOURCE = (
    "Li et al., PRD: Peer Rank and Discussion Improve Large Language Model based Evaluations"
    " (2023); reviews from github.com/bcdnlp/PRD @ 35fb99e, data/vicuna80/ratings-{reviewer}/"
)
PRD_REVIEWERS = {"gpt4": ("GPT-4", "gpt-4"), "claude": ("Claude", "claude-1")}
"""PRD's reviewers: name and the model its scripts call (peer_rank/ @ 35fb99e)."""
WINNER: dict[str | None, Gold | None] = {"1": "a", "2": "b", None: None}


def read_json(path: Path) -> Any:
    """One JSON document of the authors' released verdicts, or an InputError naming it."""
    if not path.is_file():
        raise missing(path)
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise InputError(f"ERROR: {path}:{error.lineno}: not JSON: {error.msg}") from None


def _llmbar_verdicts(data: Path, subset: str, judge: str) -> tuple[list[str], Orders] | None:
    """Gold labels and the judge's verdicts in both orders on one subset, if released."""
    folder = data / "llmbar" / "Dataset" / "LLMBar" / subset / "evaluators" / judge
    path = folder / LLMBAR_STRATEGY / "result.json"
    if not path.is_file():
        return None
    gold: list[str] = []
    orders: Orders = []
    for row in read_json(path):  # the authors' released verdicts (a maintainer's tool)
        run = row["results"][0]
        gold.append("a" if row["label"] == 1 else "b")
        orders.append((WINNER[run["swap = False"]["winner"]], WINNER[run["swap = True"]["winner"]]))
    return gold, orders


def _llmbar(data: Path, name: str, subsets: list[str]) -> list[dict[str, Any]]:
    found = []
    for judge, model in LLMBAR_MODELS.items():
        released = {s: _llmbar_verdicts(data, s, judge) for s in subsets}
        if any(v is None for v in released.values()):
            continue
        parts = {s.split("/")[-1]: reference_figures(*v) for s, v in released.items() if v}
        shown = subsets[0] if len(subsets) == 1 else "Adversarial/{" + ",".join(parts) + "}"
        row: dict[str, Any] = {"set": name, "judge": judge, "model": model}
        if len(parts) == 1:
            row |= {**next(iter(parts.values())), "subsets": None, "pooled": None}
        else:
            gold = [g for v in released.values() if v for g in v[0]]
            orders = [o for v in released.values() if v for o in v[1]]
            row |= {
                "items": sum(p["items"] for p in parts.values()),
                **subset_mean(parts),
                "subsets": parts,
                "pooled": reference_figures(gold, orders),
            }
        found.append({**row, "source": LLMBAR_SOURCE.format(subset=shown, judge=judge)})
    return found


def _prd(data: Path) -> list[dict[str, Any]]:
    gold = {item.id: item.gold for item in prd_vicuna80(data)}
    found = []
    for reviewer, (judge, model) in PRD_REVIEWERS.items():
        verdicts: dict[tuple[str, str, int], Gold] = {}
        for (first, second), path in prd_files(data, reviewer).items():
            for _, row in jsonl_rows(path, PRDRating):
                verdicts[(first, second, row.question_id)] = PRD_SCORE[row.score]
        flip: dict[Gold | None, Gold | None] = {"a": "b", "b": "a", "tie": "tie", None: None}
        labels: list[str] = []
        orders: list[tuple[str | None, str | None]] = []
        for key, label in gold.items():
            pair, question = key.rsplit("-q", 1)
            first, second = pair.split("-vs-")
            shown = verdicts.get((first, second, int(question)))
            swapped = flip[verdicts.get((second, first, int(question)))]
            labels.append(label)
            orders.append((shown, swapped))
        figures = reference_figures(labels, orders)
        found.append(
            {
                "set": "prd-vicuna80",
                "judge": judge,
                "model": model,
                **figures,
                "subsets": None,
                "pooled": None,
                "source": PRD_SOURCE.format(reviewer=reviewer),
            }
        )
    return found


def compute_references(data: Path) -> list[dict[str, Any]]:
    """Every reference figure, recomputed from the public sets under `data`."""
    rows = _llmbar(data, "llmbar-natural", ["Natural"])
    rows += _llmbar(data, "llmbar-adversarial", [f"Adversarial/{s}" for s in LLMBAR_ADVERSARIAL])
    rows += _prd(data)
    return [_rounded(row) for row in rows]


def _rounded(value: Any) -> Any:
    """Figures to 6 decimals (the published ones have 3 or 4 significant digits)."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def load_references() -> dict[str, list[dict[str, Any]]]:
    """The reference figures of `data/references.json`, by set."""
    by_set: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in json.loads(REFERENCES.read_text(encoding="utf-8")):
        by_set[row["set"]].append(row)
    return dict(by_set)


def write_references(data: Path) -> None:
    """Regenerate `data/references.json` from the public sets (see bench/)."""
    text = json.dumps(compute_references(data), indent=2, ensure_ascii=False)
    REFERENCES.write_text(text + "\n", encoding="utf-8")
