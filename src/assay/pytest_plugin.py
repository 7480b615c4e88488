"""assay's pytest plugin (registered through the `pytest11` entry point when assay is installed).

- `pytest --assay-suite path/suite.toml` adds one test item per case × condition of the suite
  (`suite.toml::CASE[CONDITION]`) and one for the release gate (`release_gate[CANDIDATE]`),
  all collected before any call. The suite is run, judged and gated once per session, when
  its first item runs; each item then reports its case's checks and scores. With `-k`, `-m`,
  node ids (`pytest --assay-suite s.toml "s.toml::zebra[candidate]"`) or `--deselect`
  selecting some case items and not the gate's, only the selected cases × conditions are
  run and judged (each condition on its own). An item fails on its case's blocking findings,
  per-case threshold misses or errored trials under the gated condition, showing the
  response, the expectation, the figure against its threshold and the judges' reasons; the
  same misses under a condition the gate does not decide for are `xfail` (shown, not gated).
- The store is persistent: `.assay/assay.db` under the rootdir (`--assay-store` to choose),
  so a second session answers every call from it and calls no model.
- The `assay_evaluate` fixture evaluates a suite inside a test (`assay.evaluate`, with that
  store, and the reports in the test's tmp_path unless given), and `assert_passes(result)`
  fails the test with the failing checks and their figures, the blocking findings and the
  failing and worst cases.
- With pytest-xdist (`-n`), the controller evaluates each whole suite once and hands the
  outcomes to the workers, which only report them.
- DeepEval (`assay[metrics]`) registers a pytest plugin that prints a banner in every session
  and brings pytest-asyncio, which warns when its loop scope is not configured: the plugin
  blocks DeepEval's (unless `deepeval test run` or `-p deepeval` asks for it) and silences
  that warning where DeepEval is installed.

The plugin is loaded in every pytest session of an environment where assay is installed, so
this module imports nothing of assay's until one of its options or fixtures is used.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import shlex
import shutil
import tempfile
import warnings
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
STORE = Path(".assay") / "assay.db"
"""The plugin's store, under the rootdir unless `--assay-store` says."""
SUITES = pytest.StashKey[dict[Path, Path]]()
"""The --assay-suite files (resolved → as given, made absolute)."""
COLLECTED = pytest.StashKey[set[Path]]()
"""The suites pytest collected itself (given as paths or node ids, or found in a folder)."""
DEEPEVAL = "deepeval"
LOOP_SCOPE_WARNING = r'The configuration option "asyncio_default_fixture_loop_scope" is unset'


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Called when this plugin is registered: block DeepEval's plugin (its banner, its
    telemetry, the import of DeepEval in every session) unless this run asks for it."""
    config = pluginmanager.get_plugin("pytestconfig")
    args = list(config.invocation_params.args) if config is not None else []
    if not _deepeval_wanted(args):
        pluginmanager.set_blocked(DEEPEVAL)


def _deepeval_wanted(args: list[str]) -> bool:
    """`deepeval test run` (which sets DEEPEVAL) or `-p deepeval` on the command line or in
    PYTEST_ADDOPTS."""
    if os.environ.get("DEEPEVAL", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    try:
        words = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, args)]
    except ValueError:  # pytest says what is wrong with it
        words = list(map(str, args))
    named = [b for a, b in itertools.pairwise(words) if a == "-p"]
    named += [w[2:] for w in words if w.startswith("-p") and len(w) > 2]
    return any(name.lstrip("=") == DEEPEVAL for name in named)


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
        help="The SQLite store for --assay-suite and the assay_evaluate fixture, kept between"
        " sessions (default: .assay/assay.db under the rootdir).",
    )
    group.addoption(
        "--assay-out",
        default=None,
        metavar="DIR",
        help="Reports folder for --assay-suite (default: the suite's output; with several"
        " suites, one subfolder per suite name).",
    )


@pytest.hookimpl(tryfirst=True)  # before pytest-asyncio's warns
def pytest_configure(config: pytest.Config) -> None:
    if importlib.util.find_spec(DEEPEVAL) is not None:
        # pytest-asyncio came with DeepEval (assay[metrics]), not with the user's tests.
        warnings.filterwarnings(
            "ignore", message=LOOP_SCOPE_WARNING, category=pytest.PytestDeprecationWarning
        )
    given = [Path(p).absolute() for p in config.getoption("assay_suite")]
    config.stash[SUITES] = {p.resolve(): p for p in given}
    config.stash[COLLECTED] = set()
    if given and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistController(), "assay-xdist")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> SuiteFile | None:
    """A --assay-suite file pytest meets (given as a path or node id, or in a folder)."""
    suites = parent.config.stash.get(SUITES, {})
    if not suites or file_path.suffix != ".toml" or file_path.resolve() not in suites:
        return None
    parent.config.stash[COLLECTED].add(file_path.resolve())
    found: SuiteFile = SuiteFile.from_parent(parent, path=file_path)
    return found


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselect the items
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Every --assay-suite pytest did not collect itself, added whole."""
    collected = config.stash.get(COLLECTED, set())
    for resolved, path in config.stash.get(SUITES, {}).items():
        if resolved in collected:
            continue
        nodeid = Path(os.path.relpath(path, config.rootpath)).as_posix()
        suite = SuiteFile.from_parent(session, path=path, nodeid=nodeid)
        items.extend(session.genitems(suite))


def store_path(config: pytest.Config) -> Path:
    """`--assay-store`, else `.assay/assay.db` under the rootdir (kept between sessions)."""
    given = config.getoption("assay_store")
    return Path(given) if given else config.rootpath / STORE


class SuiteFile(pytest.File):
    """An assay suite: its items, and its evaluation (once per session, or the xdist
    controller's)."""

    _outcomes: Outcomes | None = None
    case_items = 0
    """How many case × condition items it collected."""

    def collect(self) -> Iterator[pytest.Item]:
        from assay.api.testing import GATE_ITEM, item_name

        suite, request = _request(self.config, self.path)
        self.case_items = len(request.cases) * len(request.conditions)
        for condition in request.conditions:
            for case in request.cases:
                item = CaseItem.from_parent(self, name=item_name(case.id, condition.name))
                item.case = (case.id, condition.name)
                yield item
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
                self._outcomes = evaluate_suite(self.config, self.path, self.selection())
        return self._outcomes

    def selection(self) -> dict[str, list[str]] | None:
        """The selected case items (after -k, -m, node ids, --deselect) as condition → case
        ids; None when the gate's item or every case item is selected (the whole suite)."""
        mine = [i for i in self.session.items if isinstance(i, CaseItem) and i.parent is self]
        if any(i.case is None for i in mine):
            return None
        if len(mine) >= self.case_items:
            return None
        chosen: dict[str, list[str]] = {}
        for item in mine:
            assert item.case is not None
            case_id, condition = item.case
            chosen.setdefault(condition, []).append(case_id)
        return chosen


class CaseFailed(Exception):
    """A case (or the release gate) did not pass; its text is the explanation."""


class CaseItem(pytest.Item):
    """One case × condition of the suite (or its release gate)."""

    case: tuple[str, str] | None = None
    """(case id, condition); None: the release gate's item."""

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


def _request(config: pytest.Config, path: Path, **only: Any) -> tuple[Suite, RunRequest]:
    """The suite and its run as `assay run` resolves them; `only`: `case_ids`, `conditions`."""
    from assay.api.run_inputs import load, parse_params
    from assay.api.running import run_request

    suite = load(path)
    assert suite is not None
    params = parse_params(config.getoption("assay_param"), "--assay-param")
    return suite, run_request(suite, params=params, **only)


def evaluate_suite(
    config: pytest.Config, path: Path, selection: dict[str, list[str]] | None = None
) -> Outcomes:
    """Run, judge and gate the suite once; its outcomes, or why there are none. With a
    `selection` (condition → case ids), only those cases of each condition are run and
    evaluated, each condition on its own, into a temporary reports folder."""
    from assay.api.running import execute_run
    from assay.api.testing import Outcomes, outcomes
    from assay.core.errors import AssayError

    try:
        suite, request = _request(config, path)
        if selection is None:
            out = config.getoption("assay_out")
            if out is not None and len(config.getoption("assay_suite")) > 1:
                out = Path(out) / suite.name
            run = execute_run(suite, request, store=store_path(config), out=out)
            if run.evaluation is None:
                return _no_verdict(path, run.exit_code, run.notes)
            return outcomes(run.evaluation)
        gated = _gated(suite, request)
        whole = suite.model_copy(update={"cases_sha256": None})  # a part, knowingly
        found = Outcomes()
        with tempfile.TemporaryDirectory(prefix="assay-selected-") as folder:
            for condition, case_ids in selection.items():
                part = _request(config, path, case_ids=case_ids, conditions=[condition])[1]
                out = Path(folder) / str(len(found.items))
                # every selected case is run: a part stops no sequential run early
                run = execute_run(whole, part, store=store_path(config), out=out, sequential=False)
                if run.evaluation is None:
                    return _no_verdict(path, run.exit_code, run.notes)
                found.items.update(outcomes(run.evaluation, gated=gated).items)
        return found
    except AssayError as exc:
        return Outcomes(error=str(exc))


def _no_verdict(path: Path, code: int, notes: list[str]) -> Outcomes:
    from assay.api.testing import Outcomes

    why = notes or ["the suite's run gave no verdict"]
    return Outcomes(error="\n".join([f"{path}: exit {code}", *why]))


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
def assay_evaluate(tmp_path: Path, pytestconfig: pytest.Config) -> Callable[..., Result]:
    """`assay_evaluate(suite, **options)`: `assay.evaluate` with the plugin's store (kept
    between sessions: a rerun calls no model) and the reports in the test's tmp_path unless
    `store=`/`out=` are given; returns the `Result`."""

    def evaluate(suite: str | Path | Suite | None = None, **options: Any) -> Result:
        from assay.api.evaluation import evaluate as run_evaluation

        options.setdefault("store", store_path(pytestconfig))
        options.setdefault("out", tmp_path / "assay-out")
        return run_evaluation(suite, **options)

    return evaluate


def assert_passes(result: Result) -> None:
    """Fail the test unless the release gate passed, saying why: the failing checks with
    their figures, the blocking findings, the failing and the worst cases."""
    from assay.api.testing import assert_passes as check

    __tracebackhide__ = True
    check(result)
