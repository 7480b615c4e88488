"""assay's pytest plugin (registered through the `pytest11` entry point when assay is installed).

- `pytest --assay-suite path/suite.toml` adds one test item per case × condition of the suite
  (`suite.toml::CASE[CONDITION]`) and one for the release gate (`release_gate[CANDIDATE]`).
  The suite is run, judged and gated once per session, when its first item runs (cached and
  resumable in the store, as `assay run` does); each item then reports its case's
  deterministic checks and judge scores. An item fails on its case's blocking findings,
  per-case threshold misses or errored trials under the gated condition; the same misses
  under a condition the gate does not decide for are `xfail` (shown, not gated).
- The `assay_evaluate` fixture evaluates a suite inside a test (`assay.evaluate`, with the
  store and reports in the test's tmp_path unless given), and `assert_passes(result)` fails
  the test with the failing checks and their figures, the blocking findings and worst cases.
- With pytest-xdist (`-n`), the controller evaluates each suite once and hands the outcomes
  to the workers, which only report them.

The plugin is loaded in every pytest session of an environment where assay is installed, so
this module imports nothing of assay's until one of its options or fixtures is used.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr, TracebackStyle

    from assay.api.results import Result
    from assay.api.testing import Outcome, Outcomes
    from assay.core.suite import Suite
    from assay.engine import RunRequest

__all__ = ["assert_passes"]

OUTCOMES_KEY = "assay_outcomes"
"""xdist workerinput key: the file holding the controller's outcomes of every suite."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "assay: evaluate LLM suites as tests")
    group.addoption(
        "--assay-suite",
        action="append",
        default=[],
        metavar="SUITE.toml",
        help="Add a test per case × condition of this assay suite, and one for its release"
        " gate (repeatable).",
    )
    group.addoption(
        "--assay-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="A condition parameter for every condition of the suites (as assay run --param).",
    )
    group.addoption(
        "--assay-store",
        default=None,
        metavar="PATH",
        help="The SQLite run store for --assay-suite (default: assay's, .assay/assay.db).",
    )
    group.addoption(
        "--assay-out",
        default=None,
        metavar="DIR",
        help="Reports folder for --assay-suite (default: the suite's output; with several"
        " suites, one subfolder per suite name).",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("assay_suite") and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistController(), "assay-xdist")


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselect the items
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    for given in config.getoption("assay_suite"):
        path = Path(given).absolute()  # symlinks kept: the node id is the path as given
        nodeid = Path(os.path.relpath(path, config.rootpath)).as_posix()
        suite = SuiteFile.from_parent(session, path=path, nodeid=nodeid)
        items.extend(session.genitems(suite))


class SuiteFile(pytest.File):
    """An assay suite: its items, and its evaluation (once per session, or the xdist
    controller's)."""

    _outcomes: Outcomes | None = None

    def collect(self) -> Iterator[pytest.Item]:
        from assay.api.testing import GATE_ITEM, item_name

        suite, request = _request(self.config, self.path)
        for condition in request.conditions:
            for case in request.cases:
                name = item_name(case.id, condition.name)
                yield CaseItem.from_parent(self, name=name)
        yield CaseItem.from_parent(self, name=item_name(GATE_ITEM, _gated(suite, request)))

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        return _input_error(excinfo) or super().repr_failure(excinfo)

    def outcomes(self) -> Outcomes:
        if self._outcomes is None:
            shared = getattr(self.config, "workerinput", {}).get(OUTCOMES_KEY)
            if shared is not None:
                from assay.api.testing import Outcomes

                every = _load_shared(Path(shared))
                self._outcomes = every.get(str(self.path)) or Outcomes(
                    error=f"the xdist controller did not evaluate {self.path}"
                )
            else:
                self._outcomes = evaluate_suite(self.config, self.path)
        return self._outcomes


class CaseFailed(Exception):
    """A case (or the release gate) did not pass; its text is the explanation."""


class CaseItem(pytest.Item):
    """One case × condition of the suite (or its release gate)."""

    def runtest(self) -> None:
        from assay.api.testing import GATE_ITEM

        parent = self.parent
        assert isinstance(parent, SuiteFile)
        outcomes = parent.outcomes()
        if outcomes.error is not None:
            raise CaseFailed(outcomes.error)
        outcome: Outcome | None = outcomes.items.get(self.name)
        if outcome is None and self.name.startswith(f"{GATE_ITEM}["):
            outcome = next(
                (o for o in outcomes.items.values() if o.name.startswith(GATE_ITEM)), None
            )
        if outcome is None:
            raise CaseFailed(f"{self.name}: not in the suite's evaluation (nothing scored it)")
        self.user_properties.append(("assay", outcome.text))
        if outcome.status == "fail":
            raise CaseFailed(outcome.text)
        self.add_report_section("call", "assay", outcome.text)  # shown with -rP / -rA
        if outcome.status == "xfail":
            pytest.xfail(outcome.text)
        if outcome.status == "skip":  # a case a sequential run never looked at
            pytest.skip(outcome.text)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: TracebackStyle | None = None
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return _input_error(excinfo) or super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"assay: {self.name}"


def _gated(suite: Suite, request: RunRequest) -> str:
    """The condition the gate decides for (as the evaluation will pick it)."""
    from assay.core.errors import InputError
    from assay.verdict.pipeline import pick_candidate

    try:
        return pick_candidate(suite.gate.candidate, sorted(c.name for c in request.conditions))
    except InputError:  # no gated condition: the evaluation says why, in the gate's item
        return suite.gate.candidate


def _input_error(excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    """An InputError's messages (bad suite or cases: what `assay` would print, exit 2)."""
    from assay.core.errors import InputError

    if isinstance(excinfo.value, InputError):
        return "\n".join(excinfo.value.messages)
    return None


def _request(config: pytest.Config, path: Path) -> tuple[Suite, RunRequest]:
    from assay.api.run_inputs import load, parse_params
    from assay.api.running import run_request

    suite = load(path)
    assert suite is not None
    params = parse_params(config.getoption("assay_param"), "--assay-param")
    return suite, run_request(suite, params=params)


def evaluate_suite(config: pytest.Config, path: Path) -> Outcomes:
    """Run, judge and gate the suite once; its outcomes, or why there are none."""
    from assay.api.running import execute_run
    from assay.api.testing import Outcomes, outcomes
    from assay.core.errors import AssayError
    from assay.store import DEFAULT_STORE

    try:
        suite, request = _request(config, path)
        out = config.getoption("assay_out")
        if out is not None and len(config.getoption("assay_suite")) > 1:
            out = Path(out) / suite.name
        run = execute_run(
            suite, request, store=config.getoption("assay_store") or DEFAULT_STORE, out=out
        )
    except AssayError as exc:
        return Outcomes(error=str(exc))
    if run.evaluation is None:
        why = run.notes or ["the suite's run gave no verdict"]
        return Outcomes(error="\n".join([f"{path}: exit {run.exit_code}", *why]))
    return outcomes(run.evaluation)


def _load_shared(path: Path) -> dict[str, Outcomes]:
    from pydantic import TypeAdapter

    from assay.api.testing import Outcomes

    adapter = TypeAdapter(dict[str, Outcomes])
    return adapter.validate_json(path.read_bytes())


class _XdistController:
    """Under pytest-xdist: evaluate every suite once in the controller, before the workers
    run their items, and hand the outcomes to each worker as a JSON file."""

    def __init__(self) -> None:
        self.shared: Path | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.shared is None:
            self.shared = self._evaluate(node.config)
        node.workerinput[OUTCOMES_KEY] = str(self.shared)

    def pytest_unconfigure(self) -> None:
        if self.shared is not None:
            shutil.rmtree(self.shared.parent, ignore_errors=True)

    def _evaluate(self, config: pytest.Config) -> Path:
        from pydantic import TypeAdapter

        from assay.api.testing import Outcomes

        every = {
            str(Path(p).absolute()): evaluate_suite(config, Path(p).absolute())
            for p in config.getoption("assay_suite")
        }
        folder = Path(tempfile.mkdtemp(prefix="assay-xdist-"))
        path = folder / "outcomes.json"
        path.write_bytes(TypeAdapter(dict[str, Outcomes]).dump_json(every))
        return path


@pytest.fixture
def assay_evaluate(tmp_path: Path) -> Callable[..., Result]:
    """`assay_evaluate(suite, **options)`: `assay.evaluate` with the store and the reports in
    the test's tmp_path unless `store=`/`out=` are given; returns the `Result`."""

    def evaluate(suite: str | Path | Suite | None = None, **options: Any) -> Result:
        from assay.api.evaluation import evaluate as run_evaluation

        options.setdefault("store", tmp_path / "assay.db")
        options.setdefault("out", tmp_path / "assay-out")
        return run_evaluation(suite, **options)

    return evaluate


def assert_passes(result: Result) -> None:
    """Fail the test unless the release gate passed, saying why: the failing checks with
    their figures, the blocking findings, the failing and the worst cases."""
    from assay.api.testing import assert_passes as check

    __tracebackhide__ = True
    check(result)
