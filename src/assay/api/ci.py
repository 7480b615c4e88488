"""CI output of an evaluation: the Markdown summary on a GitHub Actions job page, and
workflow annotations that point at the failing cases' lines in the catalogue.

`assay report` and `assay run SUITE.toml` call `publish` after the verdict: with
`GITHUB_STEP_SUMMARY` set the report's Markdown is appended to that file (GitHub shows it on
the run's summary page); with `GITHUB_ACTIONS=true` (every GitHub-hosted or self-hosted job)
one `::error file=…,line=…::` line per failing case is returned for printing, so the case
shows in the pull request's changed-files view. Outside GitHub Actions nothing happens.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.api.results import Result
from assay.core.cases import case_lines

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
MAX_CASE_ANNOTATIONS = 9
"""GitHub shows at most 10 error annotations of a step: 9 cases, then the release gate."""


@dataclass(slots=True)
class Published:
    """What `publish` did: the annotation lines to print (stdout, where the runner reads
    them), and warnings for stderr (a job summary that could not be written: the verdict
    stands, so it is no error)."""

    annotations: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def publish(result: Result, environ: Mapping[str, str] | None = None) -> Published:
    """Append the job summary (when `$GITHUB_STEP_SUMMARY` is set) and make the annotations
    (on GitHub Actions only)."""
    env = os.environ if environ is None else environ
    done = Published()
    summary = env.get(SUMMARY_VARIABLE)
    if summary:
        try:
            write_summary(result, Path(summary))
        except OSError as exc:
            done.warnings.append(
                f"WARNING: ${SUMMARY_VARIABLE}: cannot append the report to {summary}:"
                f" {exc.strerror or exc}"
            )
    if env.get("GITHUB_ACTIONS") == "true":
        done.annotations = case_annotations(result, Path(env.get("GITHUB_WORKSPACE") or Path.cwd()))
    return done


def write_summary(result: Result, path: Path) -> None:
    """Append the report's Markdown to the job summary file (GitHub's contract: append)."""
    from assay.reports.render import render_markdown

    with path.open("a", encoding="utf-8") as handle:
        handle.write(render_markdown(result.report) + "\n")


def case_annotations(result: Result, workspace: Path) -> list[str]:
    """`::error` per failing case (its failed checks, at its line in the catalogue, the path
    relative to `workspace`), then one for the release gate when it did not pass."""
    report = result.report
    failed: dict[str, list[str]] = {}
    for check in report.case_checks:
        if not check.passed:
            failed.setdefault(check.case_id, []).append(f"{check.check}: {check.message}")
    catalogue = result.evaluation.config.cases
    lines = case_lines(catalogue) if catalogue is not None and catalogue.is_file() else {}
    where = _relative(catalogue, workspace) if catalogue is not None else None
    allowed = {c.case_id: c.message for c in report.case_checks if c.errored and c.passed}
    out = []
    shown = list(failed.items())[:MAX_CASE_ANNOTATIONS]
    for case_id, problems in shown:
        place = {"file": where, "line": str(lines[case_id])} if case_id in lines else {}
        out.append(
            command(
                "error",
                "\n".join(problems),
                title=f"assay: case {case_id} failed ({report.candidate})",
                **place,
            )
        )
    for case_id, message in list(allowed.items())[:MAX_CASE_ANNOTATIONS]:
        place = {"file": where, "line": str(lines[case_id])} if case_id in lines else {}
        out.append(
            command("warning", message, title=f"assay: case {case_id} has no answer", **place)
        )
    if not report.passed:
        more = len(failed) - len(shown)
        reasons = "\n".join(
            [*report.reasons, *([f"{more} more failing case(s): see the report"] if more else [])]
        )
        title = f"assay release gate: {report.verdict}"
        out.append(command("error", reasons or report.verdict, title=title))
    return out


def command(name: str, message: str, **properties: str | None) -> str:
    """A GitHub workflow command line, escaped as the runner expects (`%`, CR, LF in the
    message; also `:` and `,` in property values)."""
    props = ",".join(
        f"{key}={_escape(value, property=True)}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{_escape(message)}"


def _escape(text: str, *, property: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _relative(path: Path, workspace: Path) -> str:
    """The path as GitHub wants it: relative to the checkout (as given when outside it)."""
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
