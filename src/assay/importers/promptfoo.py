"""promptfoo results (`promptfoo eval --output results.json`, results version 3) as assay
records.

- A condition is a provider, named by its `label` when it has one, else its `id`; when the
  eval has several prompts, the prompt is added (`openai:gpt-4o/brief`: the prompt's own
  label, else `prompt-N` in the order of the eval's prompts).
- A case is a test; `--repeat N` repeats each test, and the repeats become trials 1..N. Its
  id is the test's `description` when every test has a distinct one, else `test-N`.
- Score rows: `pass` (the test passed: 1/0), `score` (promptfoo's score of the test) and one
  metric per assertion, named by its `metric` when it has one, else its type (`contains`,
  `llm_rubric`; repeats numbered `contains_2`), valued by the assertion's score (pass/fail
  when it has none). A result the provider failed to give (promptfoo's error) is a trial with
  its error and no score row.
- `pass` is promptfoo's own verdict (`Imported.source_gate`): the suite requires it of every
  case, so a test that failed in any repeat fails its case, as it makes `promptfoo eval`
  exit 100. promptfoo writes its results when the eval ends: an import is a complete run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pydantic import Field

from assay.core.records import MAX_INT, Case, Count, ScoreRow, Trial, Usage
from assay.importers.common import (
    ZIP,
    Imported,
    Source,
    cluster_of,
    is_zip,
    merge,
    metric_name,
    not_this_tool,
    number,
    parse_json,
    place,
    problem,
    risk_of,
    sniff,
    text_of,
    unique,
    validate,
    validate_all,
)
from assay.importers.reading import Budget, read_document

TOOL: Final = "promptfoo"
FORMAT_VERSION = 3
EXPECTED = (
    "a promptfoo results file (`promptfoo eval --output results.json` writes an object whose"
    " `results` holds `version`, `prompts` and `results`)"
)
ERROR_REASON = 2  # promptfoo's ResultFailureReason.ERROR: the provider failed, no output
PASS = "pass"  # the metric of promptfoo's verdict of a test


class Provider(Source):
    id: str
    label: str | None = None


class Assertion(Source):
    type: str
    value: Any = None
    metric: str | None = None


class Component(Source):
    passed: bool = Field(alias="pass")
    score: float | None = None
    reason: str | None = None
    assertion: Assertion | None = None


class Grading(Source):
    passed: bool = Field(alias="pass")
    score: float | None = None
    reason: str | None = None
    componentResults: list[Component] | None = None


class Prompt(Source):
    raw: str = ""
    label: str = ""


class Column(Source):
    """One column of promptfoo's table: a prompt under a provider."""

    id: str | None = None
    raw: str = ""
    label: str = ""


class TestCase(Source):
    description: str | None = None
    vars: dict[str, Any] | None = None
    asserts: list[Assertion] | None = Field(default=None, alias="assert")
    metadata: dict[str, Any] | None = None


class Response(Source):
    output: Any = None
    error: str | None = None


class Tokens(Source):
    prompt: Count | None = None
    completion: Count | None = None


class Result(Source):
    provider: Provider
    prompt: Prompt = Field(default_factory=Prompt)
    promptId: str | None = None
    promptIdx: int = Field(ge=0)
    testIdx: int = Field(ge=0)
    testCase: TestCase
    response: Response | None = None
    error: str | None = None
    success: bool
    score: float
    latencyMs: float | None = None
    cost: float | None = Field(default=None, ge=0, le=MAX_INT)
    gradingResult: Grading | None = None
    tokenUsage: Tokens | None = None
    failureReason: int = 0


class Table(Source):
    version: int
    timestamp: str | None = None
    prompts: list[Column] = Field(default_factory=list)
    results: list[Any]


class ResultsFile(Source):
    evalId: str | None = None
    results: Table


def read(paths: Sequence[Path]) -> Imported:
    """Read promptfoo results files (several are one run: e.g. one eval per provider)."""
    budget = Budget()
    return merge(TOOL, [read_file(path, budget) for path in paths])


def read_file(path: Path, budget: Budget) -> Imported:
    """Read one promptfoo results file, its size counted in the import's `budget`;
    InputError naming the file and the JSON path."""
    if is_zip(path):
        raise not_this_tool(path, ZIP, TOOL, EXPECTED)
    data = parse_json(path, read_document(path, budget))
    if sniff(data) != TOOL:
        raise not_this_tool(path, data, TOOL, EXPECTED)
    version = data["results"].get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version < FORMAT_VERSION:
        raise problem(
            path,
            "results.version",
            f"promptfoo results version {version} is not supported: assay reads version"
            f" {FORMAT_VERSION} and later (promptfoo 0.60 and later); re-run `promptfoo eval"
            " --output results.json` with a current promptfoo",
        )
    top = validate(ResultsFile, data, path)
    results = validate_all(Result, top.results.results, path, "results", "results")
    if not results:
        raise problem(path, "results.results", "no results in the file")
    return _convert(path, top, results)


def _conditions(results: list[Result], columns: list[Column]) -> list[str]:
    """Each result's condition: its provider, with the prompt when the eval has several."""
    prompts = list(dict.fromkeys(r.promptId or r.prompt.label for r in results))
    names = []
    for r in results:
        provider = r.provider.label or r.provider.id
        if len(prompts) == 1:
            names.append(provider)
            continue
        column = columns[r.promptIdx] if r.promptIdx < len(columns) else None
        label = r.prompt.label
        own = label and label not in (r.prompt.raw, column.raw if column else None)
        position = prompts.index(r.promptId or r.prompt.label) + 1
        names.append(f"{provider}/{label if own else f'prompt-{position}'}")
    return names


def _test_keys(results: list[Result]) -> tuple[list[str], list[int]]:
    """Each result's case id and trial: repeats of one test (same content) are its trials."""
    contents = [
        json.dumps(r.testCase.model_dump(by_alias=True), sort_keys=True, default=str)
        for r in results
    ]
    distinct = list(dict.fromkeys(contents))
    described = [json.loads(c).get("description") for c in distinct]
    if all(described) and len(set(described)) == len(described):
        ids = {c: str(d) for c, d in zip(distinct, described, strict=True)}
    else:
        ids = {c: f"test-{n}" for n, c in enumerate(distinct, start=1)}
    # trial n of a test: its n-th repeat, in the order of promptfoo's test index
    repeats: dict[str, list[int]] = {}
    for content, r in sorted(zip(contents, results, strict=True), key=lambda cr: cr[1].testIdx):
        indexes = repeats.setdefault(content, [])
        if r.testIdx not in indexes:
            indexes.append(r.testIdx)
    trials = [repeats[c].index(r.testIdx) + 1 for c, r in zip(contents, results, strict=True)]
    return [ids[c] for c in contents], trials


def _criteria(test: TestCase) -> list[str]:
    criteria = []
    for a in test.asserts or []:
        value = a.value if isinstance(a.value, str) else json.dumps(a.value, ensure_ascii=False)
        criteria.append(f"{a.type}: {value}" if a.value is not None else a.type)
    return criteria or ["passes the promptfoo test"]


def _metrics(result: Result) -> tuple[dict[str, float], list[str]]:
    """The result's metrics and the graders' reasons (`metric: reason`)."""
    grading = result.gradingResult
    components = (grading.componentResults if grading else None) or []
    raw_names = [
        (c.assertion.metric or c.assertion.type) if c.assertion else f"assertion_{i + 1}"
        for i, c in enumerate(components)
    ]
    names = unique([PASS, "score", *(metric_name(n) for n in raw_names)])
    values = [1.0 if result.success else 0.0, result.score]
    values += [c.score if c.score is not None else float(c.passed) for c in components]
    reasons = [f"{n}: {c.reason}" for n, c in zip(names[2:], components, strict=True) if c.reason]
    return dict(zip(names, values, strict=True)), reasons


def _convert(path: Path, top: ResultsFile, results: list[Result]) -> Imported:
    imported = Imported(tool=TOOL, sources=[path], source_gate=PASS)
    conditions = _conditions(results, top.results.prompts)
    case_ids, trial_numbers = _test_keys(results)
    cases: dict[str, Case] = {}
    # in the order of promptfoo's table: column by column (provider, prompt), test by test
    for index in sorted(
        range(len(results)), key=lambda i: (results[i].promptIdx, results[i].testIdx)
    ):
        r = results[index]
        where = place("results", "results", index)
        case_id, trial, condition = case_ids[index], trial_numbers[index], conditions[index]
        if case_id not in cases:
            metadata = r.testCase.metadata or {}
            category = metadata.get("category")
            prompt = r.prompt.raw or text_of(r.testCase.vars)
            cases[case_id] = _case(path, where, case_id, r, prompt, category, metadata)
        errored = r.failureReason == ERROR_REASON
        output = r.response.output if r.response else None
        tokens = r.tokenUsage
        imported.trials.append(
            Trial(
                case_id=case_id,
                trial=trial,
                condition=condition,
                runner=f"{TOOL}:{r.provider.id}",
                response=text_of(output),
                usage=Usage(input_tokens=tokens.prompt or 0, output_tokens=tokens.completion or 0)
                if tokens
                else None,
                cost_usd=number(r.cost),
                model=r.provider.id,
                latency_s=r.latencyMs / 1000 if r.latencyMs is not None else None,
                error=(r.error or (r.response.error if r.response else None) or "error")
                if errored
                else None,
                run_id=top.evalId,
                created_at=top.results.timestamp,
            )
        )
        imported.origins.append(f"{path}: {where}")
        if errored:
            continue  # no answer: an errored trial, not a score of 0
        metrics, reasons = _metrics(r)
        imported.scores.append(
            ScoreRow.model_validate(
                {
                    "case_id": case_id,
                    "trial": trial,
                    "condition": condition,
                    "source": TOOL,
                    "evidence": reasons or None,
                    **metrics,
                }
            )
        )
    imported.cases = list(cases.values())
    return imported


def _case(
    path: Path,
    where: str,
    case_id: str,
    r: Result,
    prompt: str,
    category: Any,
    metadata: dict[str, Any],
) -> Case:
    cluster = cluster_of(metadata)
    named = ("category", "risk", "cluster") if cluster is not None else ("category", "risk")
    extra = {k: v for k, v in metadata.items() if k not in named}
    if r.testCase.vars:
        extra["vars"] = r.testCase.vars
    try:
        return Case(
            id=case_id,
            category=category if isinstance(category, str) and category.strip() else TOOL,
            prompt=prompt or "(empty prompt)",
            risk=risk_of(metadata),
            criteria=_criteria(r.testCase),
            metadata=extra or None,
            cluster=cluster,
        )
    except ValueError as exc:  # a blank description or assertion type
        raise problem(path, f"{where}.testCase", str(exc).splitlines()[-1].strip()) from None
