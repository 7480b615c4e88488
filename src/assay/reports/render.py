"""Renderers of the report model: Markdown (jinja2), JSON, JUnit XML, HTML; written atomically.

Each renderer imports what only it needs (jinja2, ElementTree) when it runs: a JSON-only
report, as `assay run` writes after every run, loads neither."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from assay.core.jsonl import atomic_writer
from assay.reports.corpus import corpus_checks, value_interval
from assay.reports.files import REPORT_FILES
from assay.reports.model import MetricDelta, Report
from assay.reports.numbers import figure, figures
from assay.verdict.checks import interval_text

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATES = Path(__file__).resolve().parent / "templates"
NO_COMPARISON = (
    "no baseline comparison was made: the candidate was gated on its own (blocking findings,"
    " per-case and corpus thresholds)"
)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _interval(delta: MetricDelta) -> str:
    return interval_text(delta.ci_low, delta.ci_high, delta.cases)


# What a pull-request comment would make active, shown as code instead: a bare address
# GitHub-flavoured Markdown would make a link (autolink extension), and an @mention
# (`@user`, `@org/team`) or e-mail address, which would notify someone.
_BARE_URL = re.compile(
    r"(?i)\b(?:[a-z][a-z0-9+.\-]*://|www\.)[^\s<>`|]*"
    r"|[\w.+\-]*@[a-z0-9][\w\-]*(?:[./][\w\-]+)*"
)
# What closes a link's or image's text, or a reference definition's label: `](`, `][`, `]:`.
_LINK_CLOSE = re.compile(r"\](?=[(\[:])")


def _inert(text: str) -> str:
    """Data text that Markdown shows as written: HTML escaped, backslashes and backticks
    kept (no code span of the data's own swallows the one `markdown_text` puts around an
    address), the `]` that would end a link's or image's text escaped, line breaks and `|`
    made table-safe."""
    text = html.escape(text, quote=False).replace("\\", "\\\\").replace("`", "\\`")
    text = _LINK_CLOSE.sub("\\\\]", text)
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown_text(value: object) -> str:
    """Every value the Markdown report prints (the template's `finalize`): data from cases,
    trials, score rows and judges cannot add HTML, links or images to a pull-request comment
    (a tracking pixel or worse); a bare address is shown as code, not linked, and so are
    @mentions and e-mail addresses, which would notify people."""
    if isinstance(value, Markup):  # made here from trusted parts (`_viewed`)
        return str(value)
    text = "" if value is None else str(value)
    parts: list[str] = []
    last = 0
    for match in _BARE_URL.finditer(text):
        parts += [_inert(text[last : match.start()]), f"`{match.group()}`"]
        last = match.end()
    parts.append(_inert(text[last:]))
    return "".join(parts)


def _linked(text: str, url: str | None) -> str:
    """`text` as a Markdown link to `url`, an address assay made (`Report.case_url`,
    `view_url`); as inert text without one."""
    if not url:
        return text
    return Markup(f"[{markdown_text(text)}]({url})")


def _drops(metrics: dict[str, float | None]) -> str:
    worst = sorted((v, k) for k, v in metrics.items() if v is not None and v < 0)[:3]
    return ", ".join(f"{k} {v:+.2f}" for v, k in worst)


def environment() -> Environment:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        undefined=StrictUndefined,
        autoescape=False,  # Markdown, not HTML: `markdown_text` makes every value inert
        finalize=markdown_text,
        keep_trailing_newline=True,
    )
    env.filters.update(
        num=_num,
        signed=_signed,
        interval=_interval,
        drops=_drops,
        linked=_linked,
        figures=figures,
        figure=figure,
        corpus=corpus_checks,
        value_interval=value_interval,
    )
    return env


def render_markdown(report: Report) -> str:
    text = environment().get_template("report.md.j2").render(r=report)
    lines = [line.rstrip() for line in text.splitlines()]
    collapsed: list[str] = []
    for line in lines:
        if line or (collapsed and collapsed[-1]):
            collapsed.append(line)
    return "\n".join(collapsed).strip() + "\n"


def render_json(report: Report) -> str:
    """The report as indented JSON, serialised by pydantic in one pass (a 2,000-trial report
    in about a tenth of the time of `json.dumps(indent=2)`, which runs in pure Python when it
    indents); the same document, with small floats written without an exponent."""
    return report.model_dump_json(indent=2) + "\n"


def render_junit(report: Report) -> str:
    """One testcase per case × check, plus one for the release gate itself; a sequential
    run's cases never looked at are each one skipped testcase saying why."""
    import xml.etree.ElementTree as ET

    suite = ET.Element("testsuite", name=report.title)
    shown = (report.judge, report.sequential, report.clusters)
    if any(item is not None for item in shown):  # properties come first
        properties = ET.SubElement(suite, "properties")
        if report.judge is not None:
            ET.SubElement(properties, "property", name="llm_judge", value=report.judge.headline)
        if report.sequential is not None:
            stop = report.sequential.headline
            ET.SubElement(properties, "property", name="sequential", value=stop)
        if report.clusters is not None:
            rests = f"{report.clusters} clusters of {report.paired_cases} cases"
            ET.SubElement(properties, "property", name="clusters", value=rests)
    gate = ET.SubElement(suite, "testcase", classname="release_gate", name=report.candidate)
    if not report.passed:
        failure = ET.SubElement(gate, "failure", message=f"release gate: {report.verdict}")
        failure.text = "\n".join(report.reasons)
    elif not report.baseline_compared:
        ET.SubElement(gate, "system-out").text = NO_COMPARISON
    failures = 0 if report.passed else 1
    corpus = corpus_checks(report.checks)
    for bound in corpus:
        case = ET.SubElement(suite, "testcase", classname="corpus", name=bound.name)
        if bound.status == "fail":
            failures += 1
            ET.SubElement(case, "failure", message=bound.reason).text = bound.reason
        elif bound.status == "skipped":
            ET.SubElement(case, "skipped", message=bound.reason)
        else:
            ET.SubElement(case, "system-out").text = bound.reason
    errors = gaps = 0
    for check in report.case_checks:
        case = ET.SubElement(suite, "testcase", classname=check.case_id, name=check.check)
        if check.errored and check.passed:  # a gap [gate] max_errored tolerates
            gaps += 1
            ET.SubElement(case, "skipped", message=check.message)
        elif check.errored:
            errors += 1
            ET.SubElement(case, "error", message=check.message).text = check.message
        elif check.passed:
            ET.SubElement(case, "system-out").text = check.message
        else:
            failures += 1
            ET.SubElement(case, "failure", message=check.message).text = check.message
    if report.sequential is not None:  # cases the run never looked at: skipped, with why
        why = f"not run: {report.sequential.headline}"
        for case_id in report.not_looked:
            case = ET.SubElement(suite, "testcase", classname=case_id, name="sequential")
            ET.SubElement(case, "skipped", message=why)
    # thresholds only the disabled judge could meet (its corpus bounds are in `corpus`)
    skipped = [c for c in (report.judge.checks() if report.judge else []) if c not in corpus]
    for skip in skipped:
        name = f"threshold:{skip.metric}"
        testcase = ET.SubElement(suite, "testcase", classname="release_gate", name=name)
        ET.SubElement(testcase, "skipped", message=skip.reason)
    unseen = len(report.not_looked) if report.sequential is not None else 0
    tests = len(report.case_checks) + len(corpus) + 1 + len(skipped) + unseen
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    skips = len(skipped) + gaps + unseen + sum(1 for c in corpus if c.status == "skipped")
    if skips:
        suite.set("skipped", str(skips))
    root = ET.Element(
        "testsuites", name="assay", tests=str(tests), failures=str(failures), errors=str(errors)
    )
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render_html(report: Report) -> str:
    """The self-contained HTML page (`assay.reports.html`; matplotlib loads only here)."""
    from assay.reports.html import render_html as render

    return render(report)


RENDERERS = {
    "md": render_markdown,
    "json": render_json,
    "junit": render_junit,
    "html": render_html,
}


def write_reports(report: Report, out_dir: Path, formats: Sequence[str]) -> list[Path]:
    """Render each format into out_dir; return the paths written."""
    written = []
    for name in formats:
        path = out_dir / REPORT_FILES[name]
        with atomic_writer(path) as handle:
            handle.write(RENDERERS[name](report))
        written.append(path)
    return written
