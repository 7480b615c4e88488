"""What evaluating gives: the verdict, its checks and comparisons, each case × condition
(`cases`), and the report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.api.cases import CaseResult, case_results
from assay.core.errors import EXIT_OK, InputError
from assay.core.records import Comparison, ScoreRow
from assay.engine.runner import RunResult
from assay.reports.model import Report
from assay.store.spend import Spend
from assay.verdict.analysis import Analysis as Analysis  # re-exported: `assay score`'s table
from assay.verdict.checks import Check, ScoreSummary, SpendFigures, Verdict
from assay.verdict.checks import interval_text as interval_text
from assay.verdict.compare import Delta
from assay.verdict.pipeline import Evaluation
from assay.verdict.rows import BASELINE as BASELINE

if TYPE_CHECKING:
    from assay.measure.agreement import DimensionResult


@dataclass(slots=True)
class Judged:
    """What a suite's [judge] section produced for the answered trials."""

    scores: list[ScoreRow] = field(default_factory=list)
    score_lines: list[str] = field(default_factory=list)
    """The JSON line of each of `scores`, as written (empty: not made)."""
    comparisons: list[Comparison] = field(default_factory=list)
    exit_code: int = EXIT_OK
    stopped: str | None = None
    """Why judging stopped early ("budget", "interrupted"), if it did."""
    failures: list[str] = field(default_factory=list)
    """Items whose judging failed (the first 20), for people."""
    total: int = 0
    """Items to judge."""
    failed_by: dict[str, int] = field(default_factory=dict)
    """Items whose judging failed, by the judge that failed them."""

    @property
    def gap(self) -> str | None:
        """Why the judges' scores are missing when the judging did not finish, blaming the
        judge (which one, how many items, the first failure), or None when it finished."""
        if not self.exit_code:
            return None
        parts = [
            f"judge {judge} could not judge {count} of {self.total} item(s)"
            for judge, count in sorted(self.failed_by.items())
        ]
        if self.stopped == "budget":
            parts.append("judging stopped: the budget cannot cover another judge call")
        elif self.stopped:
            parts.append(f"judging stopped ({self.stopped})")
        first = f" (first: {self.failures[0]})" if self.failures else ""
        what = "; ".join(parts) or "some items were not judged"
        return f"judging did not finish: {what}{first}; run again to resume"


@dataclass
class Result:
    """The verdict (`verdict`, `passed`, `exit_code`), the gate's checks, the per-metric paired
    comparisons with baseline, each case × condition (`cases`, `failed_cases`), and the report
    built from them; `to_dict()`/`to_json()` give it all as plain data."""

    evaluation: Evaluation
    calibration: dict[str, DimensionResult] | None = None
    judged: Judged | None = None
    run: RunResult | None = None
    output: Path | None = None
    written: list[Path] = field(default_factory=list)
    spend: Spend = field(default_factory=Spend)
    """What the evaluation's calls cost (judges after the run, model-backed scorers)."""
    run_spend: Spend | None = None
    """A suite run's: what the run has cost in all its invocations (summary.json, reports)."""
    view_url: str | None = None
    """A suite run's page in `assay view`, which the reports link to (`[report] view_url`)."""

    @property
    def verdict(self) -> Verdict:
        return self.evaluation.verdict

    @property
    def passed(self) -> bool:
        return self.evaluation.passed

    @property
    def checks(self) -> list[Check]:
        return self.evaluation.checks

    @property
    def comparisons(self) -> dict[str, dict[str, Delta]]:
        return self.evaluation.comparisons

    @cached_property
    def cases(self) -> list[CaseResult]:
        """Each case under each condition: its responses, figures, per-case checks, blocking
        findings, the judges' reasons, and whether it passed (conditions sorted, cases in
        catalogue order)."""
        return case_results(self.evaluation)

    @property
    def failed_cases(self) -> list[CaseResult]:
        """The cases of the gated condition that ran and did not pass (an errored trial, a
        blocking finding, a missed per-case threshold): what fails the gate case by case. A
        case never run is not among them (`CaseResult.ran`): the coverage check speaks for
        it, or a sequential run settled its verdict without it."""
        return [c for c in self.cases if c.gated and c.ran and not c.passed]

    def to_dict(self) -> dict[str, Any]:
        """The verdict and exit code, summary.json's figures (the release gate with its
        checks, each condition's means, the paired deltas) and every case (`cases`), as
        JSON-ready data."""
        return {
            "verdict": self.verdict,
            "passed": self.passed,
            "exit_code": self.exit_code,
            **self.summary().as_json(),
            "cases": [c.model_dump(mode="json", exclude_none=True) for c in self.cases],
            "output": str(self.output) if self.output is not None else None,
        }

    def to_json(self, indent: int | None = 2) -> str:
        """`to_dict()` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @property
    def tolerated(self) -> bool:
        """Whether the evidence has gaps and `[gate] max_errored` tolerated every one: the
        verdict then stands for the run, whose errored trials are listed, not retried."""
        coverage = self.evaluation.coverage
        return coverage is not None and coverage.complete and coverage.allowed > 0

    @property
    def exit_code(self) -> int:
        """3 when the suite's run or judging is incomplete (unless `max_errored` tolerated
        every gap) or the verdict is INCOMPLETE; else 0 PASS, 1 FAIL/INCONCLUSIVE."""
        if not self.tolerated:
            if self.run is not None and self.run.exit_code:
                return self.run.exit_code
            if self.judged is not None and self.judged.exit_code:
                return self.judged.exit_code
        return self.evaluation.exit_code

    def summary(self) -> ScoreSummary:
        """`assay score --json` / summary.json: means, paired deltas, the release gate (and a
        suite run's spend)."""
        summary = self.evaluation.analysis.summary()
        spend = self._spend_figures()
        return summary if spend is None else summary.model_copy(update={"spend": spend})

    def _spend_figures(self) -> SpendFigures | None:
        spend = self.run_spend
        return SpendFigures(**spend.rounded()) if spend is not None else None

    @cached_property
    def report(self) -> Report:
        """The report model (verdict first) that md, json, junit and html render."""
        from assay.reports.build import build_report

        evaluation = self.evaluation
        config = evaluation.config
        return build_report(
            evaluation.analysis,
            title=config.title,
            trials=evaluation.inputs.trials,
            results=evaluation.results,
            scorers=evaluation.scorers,
            thresholds=config.thresholds,
            comparisons=evaluation.inputs.comparisons,
            worst=config.worst,
            notes=evaluation.notes,
            calibration=self.calibration,
            cases_shown=config.drilldown,
            judge=config.judge,
            spend=self._spend_figures(),
        ).model_copy(update={"view_url": self.view_url})

    def write_reports(self, out: Path | None = None) -> list[Path]:
        """Render the configured formats into `out` (default: the config's output folder)."""
        from assay.reports.render import write_reports

        folder = out or self.output or self.evaluation.config.output
        if folder is None:
            raise InputError("ERROR: --out: say where the reports go")
        paths = write_reports(self.report, folder, self.evaluation.config.formats)
        self.written.extend(paths)
        return paths
