"""`assay.judge_bench`: run a judge on public human-labelled pairwise sets, against gold labels.

Each item becomes a case (the prompt; `metadata` carries the set and gold label, which no
judge template shows) and two trials, conditions `a` (the set's first output) and `b`. The
judge then runs exactly as `assay judge --mode pairwise --no-expectations-first` runs it
(`scorers.judge.run_judging`: the same templates, both orders, the swap rule, budget, call
cache and resume from the store). Per set, `measure.judgebench.bench_figures` gives the
figures, stored in the store's judge_benchmarks table and shown next to the reference
judges' figures (`references.json`). Pairs the judge does not decide (identical outputs,
tier `rule`) are left out of the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assay.api.judgebench.references import load_references
from assay.api.judgebench.sets import SETS, SUBSETS, BenchItem, load_set, pick
from assay.core.errors import EXIT_INCOMPLETE, EXIT_OK, InputError
from assay.core.jsonl import write_jsonl
from assay.core.raters import human_rater, pair_item_id
from assay.core.records import Case, Comparison, Label, Trial
from assay.core.writable import Output, check_outputs
from assay.engine.plan import sha256_json
from assay.engine.runner import Progress
from assay.measure.judgebench import bench_figures, subset_figures, subset_mean
from assay.scorers.judge import JudgeConfig, JudgeResult, run_judging
from assay.scorers.judge.labels import pairwise_labels
from assay.store import DEFAULT_STORE, Store

EXIT_GATE = 1
OUTPUT_FILES = ("cases.jsonl", "trials.jsonl", "comparisons.jsonl", "labels.jsonl")
"""What `--output` holds: cases, trials, the judge's comparisons, its and the gold labels."""
REQUIREMENT = "Follows the instruction and answers it helpfully, accurately and honestly."


@dataclass
class BenchResult:
    """What a judge-bench run found: figures per set, the judging summary, the gate."""

    judge: str
    prompt_sha256: str
    sets: dict[str, dict[str, Any]] = field(default_factory=dict)
    judging: JudgeResult | None = None
    failures: list[str] = field(default_factory=list)
    output: Path | None = None
    report: Path | None = None

    @property
    def exit_code(self) -> int:
        if self.judging is not None and self.judging.exit_code != EXIT_OK:
            return EXIT_INCOMPLETE
        return EXIT_GATE if self.failures else EXIT_OK


def case_of(item: BenchItem) -> Case:
    """The item as a case; the gold label rides in metadata (for `mock:gold`), unseen by judges."""
    winner = {"a": item.output_1, "b": item.output_2}.get(item.gold)
    return Case(
        id=f"{item.set}/{item.id}",
        category=item.set,
        prompt=item.prompt,
        risk="low",
        criteria=[REQUIREMENT],
        metadata={"set": item.set, "gold": item.gold, "gold_response": winner},
    )


def trials_of(item: BenchItem) -> list[Trial]:
    case_id = f"{item.set}/{item.id}"
    return [
        Trial(case_id=case_id, trial=1, condition=c, runner=f"judge-bench:{item.set}", response=r)
        for c, r in (("a", item.output_1), ("b", item.output_2))
    ]


def gold_labels(items: Sequence[BenchItem]) -> list[Label]:
    """The gold labels as Labels (rater `human:<set>`), for `assay calibrate`."""
    return [
        Label(
            item_id=pair_item_id(f"{i.set}/{i.id}", 1, "a", "b"),
            dimension="winner",
            rater=human_rater(i.set),
            value=i.gold,
        )
        for i in items
    ]


def _num(value: float | None) -> str:
    return "none" if value is None else f"{value:.3f}"


def gate(
    figures: dict[str, dict[str, Any]], min_accuracy: float | None, max_position_bias: float | None
) -> list[str]:
    """The sets below `--min-accuracy` or above `--max-position-bias`, in words."""
    failures = []
    for name, f in figures.items():
        if min_accuracy is not None and (f["accuracy"] is None or f["accuracy"] < min_accuracy):
            failures.append(f"{name}: accuracy {_num(f['accuracy'])} below {min_accuracy}")
        bias = f["position_bias"]
        if max_position_bias is not None and (bias is None or bias > max_position_bias):
            failures.append(f"{name}: position bias {_num(bias)} above {max_position_bias}")
    return failures


def load_items(
    sets: Sequence[str] = SETS,
    limit: int | None = None,
    data: str | Path | None = None,
    mirror: str | None = None,
) -> list[BenchItem]:
    """The items to judge: per set (in the given order, each once), the first `limit` of the
    seeded order (`sets.pick`), from the public layout under `data`, else from the pinned
    upstream files (fetched once into the cache, or from `mirror`: `sets.load_set`)."""
    if limit is not None and limit < 1:
        raise InputError("ERROR: --limit: must be 1 or more")
    folder = Path(data) if data is not None else None
    chosen = list(dict.fromkeys(sets)) or list(SETS)
    return [i for name in chosen for i in pick(load_set(name, folder, mirror), limit)]


def subsets_of(name: str, kept: Sequence[tuple[BenchItem, Comparison]]) -> dict[str, Any]:
    """On a set of subsets, each subset's figures (in the paper's order) and their mean."""
    if name not in SUBSETS:
        return {"subsets": None, "subset_mean": None}
    gold = [i.gold for i, _ in kept]
    found = subset_figures(gold, [c for _, c in kept], [i.subset or "" for i, _ in kept])
    parts = {s: found[s] for s in SUBSETS[name] if s in found}
    return {"subsets": parts, "subset_mean": subset_mean(parts)}


def config_sha256(template_sha256: str, config: JudgeConfig) -> str:
    """The judge configuration's key on the leaderboard: the pairwise template's hash (as its
    labels carry), combined with the rubric's when one is given."""
    if config.rubric is None:
        return template_sha256
    return sha256_json({"template": template_sha256, "rubric": config.rubric.model_dump()})


def check_bench_outputs(
    output: str | Path | None, report: str | Path | None, store: str | Path
) -> None:
    """Refuse, before any item is judged, an output folder or report page that cannot be
    written or that would overwrite the store (`assay.core.writable`)."""
    check_outputs(
        [
            Output("--output", Path(output), folder=True, files=OUTPUT_FILES)
            if output is not None
            else None,
            Output("--report", Path(report)) if report is not None else None,
        ],
        [("the store (--store)", store)],
    )


def judge_bench(
    judge: str,
    *,
    sets: Sequence[str] = SETS,
    limit: int | None = None,
    data: str | Path | None = None,
    mirror: str | None = None,
    items: Sequence[BenchItem] | None = None,
    output: str | Path | None = None,
    store: str | Path = DEFAULT_STORE,
    min_accuracy: float | None = None,
    max_position_bias: float | None = None,
    report: str | Path | None = None,
    progress: Progress | None = None,
    config: JudgeConfig | None = None,
    **settings: Any,
) -> BenchResult:
    """Benchmark `judge` on `sets` (the public layout under `data`, else the pinned upstream
    files, fetched once and cached, or from `mirror`), or on `items` already loaded
    (`load_items`).

    `settings` are JudgeConfig fields (rubric, budget_usd, shuffles, ...); the mode is
    pairwise, conditions `a` and `b`, every pair asked of the judge. Writes under `output`
    comparisons.jsonl, labels.jsonl (the judge's and the gold labels), cases.jsonl and
    trials.jsonl; `report` an HTML judge leaderboard of every judge benchmarked in `store`.
    Figures are stored only when every item was judged.
    """
    from assay.scorers.judge.config import check_judge_keys
    from assay.store.benchmarks import save_benchmark

    base = config if config is not None else JudgeConfig(judges=[judge], **settings)
    chosen = replace(base, judges=[judge], mode="pairwise", a="a", b="b", expectations_first=False)
    check_judge_keys(chosen)
    check_bench_outputs(output, report, store)
    todo = list(items) if items is not None else load_items(sets, limit, data, mirror)
    names = list(dict.fromkeys(i.set for i in todo))
    cases = [case_of(i) for i in todo]
    trials = [t for i in todo for t in trials_of(i)]
    handle = Store(Path(store))
    try:
        judged = run_judging(trials, cases, chosen, handle, progress)
        rows = judged.rows
        comparisons = {c.case_id: c for c in (Comparison.model_validate(r) for r in rows)}
        template = next(
            (str(r["judge_prompt_sha256"]) for r in rows if r.get("judge_prompt_sha256")), ""
        )
        result = BenchResult(judge, config_sha256(template, chosen), judging=judged)
        references = load_references()
        for name in names:
            pairs = [
                (i, comparisons[case_id])
                for i in todo
                if i.set == name and (case_id := f"{i.set}/{i.id}") in comparisons
            ]
            kept = [(i, c) for i, c in pairs if not c.by_rule]
            figures = bench_figures([i.gold for i, _ in kept], [c for _, c in kept])
            figures["decided_by_rule"] = len(pairs) - len(kept)
            figures |= subsets_of(name, kept)
            result.sets[name] = {**figures, "references": references.get(name, [])}
            if judged.exit_code == EXIT_OK:
                save_benchmark(handle, judge, result.prompt_sha256, name, figures)
        result.failures = gate(result.sets, min_accuracy, max_position_bias)
        if output is not None:
            result.output = Path(output)
            write_outputs(result.output, todo, cases, trials, rows)
        if report is not None:
            from assay.api.judgebench.leaderboard import write_leaderboard

            result.report = Path(report)
            write_leaderboard(result.report, handle)
    finally:
        handle.close()
    return result


def write_outputs(
    folder: Path,
    items: Sequence[BenchItem],
    cases: Sequence[Case],
    trials: Sequence[Trial],
    rows: Sequence[dict[str, Any]],
) -> None:
    """The run's records, for `assay calibrate`, `assay bias` and `assay report`."""
    labels = pairwise_labels(rows) + gold_labels(items)
    cases_file, trials_file, comparisons_file, labels_file = (folder / n for n in OUTPUT_FILES)
    write_jsonl(cases_file, [c.model_dump(mode="json", exclude_none=True) for c in cases])
    write_jsonl(trials_file, [t.model_dump(mode="json", exclude_none=True) for t in trials])
    write_jsonl(comparisons_file, rows)
    write_jsonl(labels_file, [x.model_dump(mode="json") for x in labels])


def bench_summary(result: BenchResult, store: Path) -> dict[str, Any]:
    """`assay judge-bench --json` (`assay schema judge-bench`)."""
    judged = result.judging or JudgeResult()
    return {
        "judge": result.judge,
        "prompt_sha256": result.prompt_sha256,
        "sets": result.sets,
        "calls": judged.calls,
        "cache_hits": judged.cache_hits,
        "resumed": judged.resumed,
        "failed": judged.failed,
        "not_run": judged.not_run,
        "spent_usd": round(judged.spent_usd, 6),
        "stopped": judged.stopped,
        "gate_failures": result.failures,
        "output": None if result.output is None else str(result.output),
        "report": None if result.report is None else str(result.report),
        "store": str(store),
        "exit_code": result.exit_code,
    }
