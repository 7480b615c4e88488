"""The public human-labelled pairwise sets `assay judge-bench` reads, in their public layout.

Each reader turns one set into `BenchItem`s: a prompt, two outputs in the set's own order
(`output_1` becomes condition `a`, `output_2` condition `b`) and the gold label `a`, `b` or
`tie`, as the set defines it:
- `llmbar-natural`, `llmbar-adversarial` (LLMBar, Zeng et al. 2024, MIT): the curated gold
  label, never a tie (the adversarial set joins Neighbor, GPTInst, GPTOut and Manual);
- `prd-vicuna80` (PRD, Li et al. 2023, MIT): the majority of the human votes on the Vicuna-80
  questions, among the five models whose answers are published; "exactly equal" is a tie, and
  a question without a strict majority is left out;
- `pandalm` (PandaLM test set v1, Apache-2.0): the majority of the three annotators; 0 (similar
  quality) is a tie, and an item without a strict majority is left out.

`pick` is the one seeded selection rule, used for `--limit`: items in the order of
sha256("assay-judge-bench/<set>/<id>"), first n. Without `--data`, a set's files are
fetched once from their upstream repositories and cached (`fetch.py`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from assay.api.judgebench.fetch import fetch_set
from assay.api.judgebench.rows import (
    LLMBarRow,
    PandaLMRow,
    PRDAnswer,
    PRDQuestion,
    PRDRating,
    json_rows,
    jsonl_rows,
)
from assay.core.errors import InputError

Gold = Literal["a", "b", "tie"]
SEED = "assay-judge-bench"
LLMBAR_ADVERSARIAL = ("Neighbor", "GPTInst", "GPTOut", "Manual")
SUBSETS = {"llmbar-adversarial": LLMBAR_ADVERSARIAL}
"""The sets made of subsets, in their paper's order: figures per subset and their mean."""
PRD_MODELS = ("bard", "claude", "gpt35", "gpt4", "vicuna-13b")
PRD_FILE = re.compile(
    r"^answer[_-](.+?)-vs-answer[_-](.+)-(gpt4|gpt35|claude|bard|human)-reviewer[_-]threeclass\.jsonl$"
)


@dataclass(frozen=True, slots=True)
class BenchItem:
    """One labelled pair: `output_1` is condition `a`, `output_2` condition `b`.

    Texts that are not strings upstream (PandaLM has a few outputs stored as JSON `true`)
    are read as their Python text (`True`), so every item becomes valid trials. `subset`
    names the part of a set made of subsets (`SUBSETS`) the item comes from."""

    set: str
    id: str
    prompt: str
    output_1: str
    output_2: str
    gold: Gold
    subset: str | None = None

    def __post_init__(self) -> None:
        for name in ("id", "prompt", "output_1", "output_2"):
            value = getattr(self, name)
            if not isinstance(value, str):
                object.__setattr__(self, name, str(value))

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def majority(votes: Iterable[Gold]) -> Gold | None:
    """The label more than half the votes give, else None."""
    counted = Counter(votes)
    total = sum(counted.values())
    label, count = counted.most_common(1)[0] if counted else ("tie", 0)
    return label if total and count * 2 > total else None


def _prompt(instruction: str, extra: str = "") -> str:
    return f"{instruction}\n\n{extra}" if extra.strip() else instruction


def llmbar_subset(data: Path, subset: str) -> list[tuple[int, LLMBarRow]]:
    """The rows of one LLMBar `Dataset/LLMBar/<subset>/dataset.json`, with their lines."""
    return json_rows(data / "llmbar" / "Dataset" / "LLMBar" / subset / "dataset.json", LLMBarRow)


def _llmbar(data: Path, name: str, subsets: Sequence[str]) -> list[BenchItem]:
    items = []
    for subset in subsets:
        for index, (_, row) in enumerate(llmbar_subset(data, subset)):
            gold: Gold = "a" if row.label == 1 else "b"
            part = subset.split("/")[-1]
            key = f"{part.lower()}-{index}"
            shown = part if name in SUBSETS else None
            items.append(BenchItem(name, key, row.input, row.output_1, row.output_2, gold, shown))  # type: ignore[arg-type]
    return items


def llmbar_natural(data: Path) -> list[BenchItem]:
    return _llmbar(data, "llmbar-natural", ["Natural"])


def llmbar_adversarial(data: Path) -> list[BenchItem]:
    return _llmbar(data, "llmbar-adversarial", [f"Adversarial/{s}" for s in LLMBAR_ADVERSARIAL])


PRD_SCORE: dict[int, Gold] = {1: "a", 2: "b", 3: "tie"}


def prd_files(data: Path, reviewer: str) -> dict[tuple[str, str], Path]:
    """`ratings-<reviewer>/` files by (first shown, second shown) model, among PRD_MODELS
    (the second, hyphen-named gpt35 run is left out)."""
    folder = data / "prd_vicuna80" / "vicuna80" / f"ratings-{reviewer}"
    if not folder.is_dir():
        raise InputError(f"ERROR: --data: {folder} not found (expected PRD's public layout)")
    files: dict[tuple[str, str], Path] = {}
    for path in sorted(folder.iterdir()):
        match = PRD_FILE.match(path.name)
        if match is None or path.name.startswith("answer-"):
            continue
        first, second = match.group(1), match.group(2)
        if first in PRD_MODELS and second in PRD_MODELS:
            files[(first, second)] = path
    return files


def prd_vicuna80(data: Path) -> list[BenchItem]:
    root = data / "prd_vicuna80" / "vicuna80"
    asked = root / "prompts" / "vicuna_questions.jsonl"
    questions = {q.question_id: q.text for _, q in jsonl_rows(asked, PRDQuestion)}
    generations = {model: root / "generations" / f"answer_{model}.jsonl" for model in PRD_MODELS}
    answers = {
        model: {a.question_id: str(a.text) for _, a in jsonl_rows(path, PRDAnswer)}
        for model, path in generations.items()
    }
    items = []
    for (first, second), path in prd_files(data, "human").items():
        votes: dict[int, list[Gold]] = defaultdict(list)
        for number, row in jsonl_rows(path, PRDRating):
            where = f"ERROR: {path}:{number}: question_id: {row.question_id}"
            if row.question_id not in questions:
                raise InputError(f"{where}: not a question of {asked}")
            for model in (first, second):
                if row.question_id not in answers[model]:
                    raise InputError(f"{where}: {generations[model]} has no answer to it")
            votes[row.question_id].append(PRD_SCORE[row.score])
        for question, given in sorted(votes.items()):
            gold = majority(given)
            if gold is not None:
                items.append(
                    BenchItem(
                        "prd-vicuna80",
                        f"{first}-vs-{second}-q{question}",
                        questions[question],
                        answers[first][question],
                        answers[second][question],
                        gold,
                    )
                )
    return items


PANDALM_LABEL: dict[int, Gold] = {0: "tie", 1: "a", 2: "b"}


def pandalm(data: Path) -> list[BenchItem]:
    items = []
    for _, row in json_rows(data / "pandalm" / "testset-v1.json", PandaLMRow):
        votes = [PANDALM_LABEL[vote] for vote in (row.annotator1, row.annotator2, row.annotator3)]
        gold = majority(votes)
        if gold is not None:
            prompt = _prompt(row.instruction, row.input)
            items.append(
                BenchItem("pandalm", str(row.idx), prompt, row.response1, row.response2, gold)  # type: ignore[arg-type]
            )
    return items


READERS: dict[str, Callable[[Path], list[BenchItem]]] = {
    "llmbar-natural": llmbar_natural,
    "llmbar-adversarial": llmbar_adversarial,
    "prd-vicuna80": prd_vicuna80,
    "pandalm": pandalm,
}
SETS = tuple(READERS)


def pick(items: Sequence[BenchItem], limit: int | None) -> list[BenchItem]:
    """The seeded selection: items ordered by sha256 of SEED/set/id, the first `limit`."""

    def rank(item: BenchItem) -> str:
        return hashlib.sha256(f"{SEED}/{item.set}/{item.id}".encode()).hexdigest()

    ordered = sorted(items, key=rank)
    return ordered if limit is None else ordered[:limit]


def load_set(name: str, data: Path | None, mirror: str | None = None) -> list[BenchItem]:
    """A set's items: from `data` (the public layout) when given, else from the pinned
    upstream files, fetched once into the cache (`fetch.fetch_set`, `mirror` for another
    source)."""
    if name not in READERS:
        raise InputError(f"ERROR: --set: unknown set {name!r}; expected one of {', '.join(SETS)}")
    if data is not None:
        if not data.is_dir():
            raise InputError(f"ERROR: --data: {data} is not a directory")
        return READERS[name](data)
    return READERS[name](fetch_set(name, mirror))
