"""The pytest plugin: a suite's cases as test items, the release gate as one more, the
`assay_evaluate` fixture with `assert_passes`, and pytest-xdist (run through `pytester`)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import contains_case, contains_suite, plugin_args

pytest_plugins = ["pytester"]

SUITE = contains_suite("plugin-suite")
case = contains_case


def write_suite(folder: Path, *, failing: bool) -> Path:
    cases = [case(f"ok-{i}", "actionable") for i in range(1, 4)]
    if failing:
        cases.append(case("zebra", "giraffe"))
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    path = folder / "suite.toml"
    path.write_text(SUITE)
    return path


# Every inner session runs in a subprocess: an in-process one drops the modules it imported,
# and numpy cannot be imported twice in one process.


def run_suite(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    suite = write_suite(pytester.path, failing=True)
    store = pytester.path / "store.db"
    return pytester.runpytest_subprocess(
        *plugin_args(), "--assay-suite", str(suite), "--assay-store", str(store), "-rA", *extra
    )


def test_a_suite_becomes_a_test_per_case_and_condition_and_one_for_the_gate(
    pytester: pytest.Pytester,
) -> None:
    result = run_suite(pytester)
    # candidate: 3 cases pass, "zebra" fails; baseline (echo) misses `contains` on every case,
    # which the gate does not decide for: xfail; the release gate fails on the threshold miss.
    result.assert_outcomes(passed=3, failed=2, xfailed=4)
    text = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "PASSED suite.toml::ok-1[[]candidate[]]",
            "XFAIL suite.toml::ok-1[[]baseline[]]*",
            "FAILED suite.toml::zebra[[]candidate[]]*",
            "FAILED suite.toml::release_gate[[]candidate[]]*",
        ]
    )
    # each case's figures are its outcome; a failure says what it missed
    assert "ok-1 [candidate]: PASS" in text
    assert "contains: contains=1" in text
    assert "zebra [candidate]: FAIL" in text
    assert "release gate: FAIL for candidate" in text
    assert "Traceback" not in text
    # the failure shows what was answered, what was expected, the figure against its threshold
    result.stdout.fnmatch_lines(
        [
            "zebra [[]candidate[]]: FAIL",
            "  contains: contains 0 < min 1",
            "  response: Answer *: regarding 'Question zebra?', here is a concise*",
            '  expected: contains [[]"giraffe"[]]',
            "  contains: contains=0 (min 1)",
        ]
    )


def test_a_case_shows_its_judge_scores(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path, failing=False)
    suite.write_text(SUITE + '\n[judge]\njudges = ["mock:fair"]\n')
    store = pytester.path / "store.db"
    args = [*plugin_args(), "--assay-suite", str(suite), "--assay-store", str(store), "-rA"]
    result = pytester.runpytest_subprocess(*args, "-k", "ok-1 and candidate")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "ok-1 [[]candidate[]]: PASS",
            "  contains: contains=1 (min 1)",
            "  judge:mock:fair: *correctness=*",
        ]
    )


def test_a_single_condition_suite_gates_that_condition(pytester: pytest.Pytester) -> None:
    suite = write_suite(pytester.path, failing=False)
    alone = SUITE.split("[[conditions]]")
    only = alone[2].replace('name = "candidate"', 'name = "assistant"')
    suite.write_text(alone[0] + "[[conditions]]" + only.replace('candidate = "candidate"\n', ""))
    store = pytester.path / "store.db"
    args = [*plugin_args(), "--assay-suite", str(suite), "--assay-store", str(store), "-rA"]
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["PASSED suite.toml::release_gate[[]assistant[]]"])


def test_suite_items_honour_k_and_collect_only_runs_nothing(pytester: pytest.Pytester) -> None:
    result = run_suite(pytester, "--collect-only", "-q")
    result.stdout.fnmatch_lines(["suite.toml::ok-1[[]baseline[]]", "*9 tests collected*"])
    assert not (pytester.path / "store.db").exists()  # collecting ran no model
    result = run_suite(pytester, "-k", "zebra and candidate")
    result.assert_outcomes(failed=1)


def test_a_bad_suite_is_a_collection_error_naming_the_file(pytester: pytest.Pytester) -> None:
    suite = pytester.path / "suite.toml"
    suite.write_text(SUITE.replace('cases = "cases.jsonl"', 'cases = "missing.jsonl"'))
    result = pytester.runpytest_subprocess(*plugin_args(), "--assay-suite", str(suite))
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*missing.jsonl*"])
    assert "Traceback" not in result.stdout.str()


def test_the_fixture_evaluates_a_suite_and_assert_passes_says_why_not(
    pytester: pytest.Pytester,
) -> None:
    good = pytester.mkdir("good")
    bad = pytester.mkdir("bad")
    write_suite(good, failing=False)
    write_suite(bad, failing=True)
    pytester.makepyfile(
        """
        from assay.pytest_plugin import assert_passes

        def test_good(assay_evaluate):
            result = assay_evaluate("good/suite.toml")
            assert_passes(result)
            assert result.verdict == "PASS"

        def test_bad(assay_evaluate):
            assert_passes(assay_evaluate("bad/suite.toml"))
        """
    )
    result = pytester.runpytest_subprocess(*plugin_args())
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*release gate: FAIL for candidate (seed gate)*",
            "*FAIL thresholds: 1 per-case threshold miss(es) in candidate*",
            "*failing cases:*",
            "*zebra [[]candidate[]]: contains: contains 0 < min 1*",
            "*response: Answer *",
            '*expected: contains [[]"giraffe"[]]*',
        ]
    )


def test_the_plugin_is_inert_unless_used() -> None:
    """Loading the plugin imports none of assay's pipeline (it is in every pytest session)."""
    code = (
        "import sys, assay.pytest_plugin; "
        "print(sorted(m for m in sys.modules if m.startswith('assay.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['assay.api', 'assay.pytest_plugin']"


def test_with_xdist_the_suite_runs_once_and_the_workers_report_it(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("xdist")
    suite = write_suite(pytester.path, failing=True)
    log = pytester.path / "evaluations.log"
    pytester.makeconftest(  # counts the suite's evaluations, in whichever process they run
        f"""
        import os
        import assay.pytest_plugin as plugin

        real = plugin.evaluate_suite

        def counted(*args):
            with open({str(log)!r}, "a") as handle:
                handle.write(f"{{os.getpid()}}\\n")
            return real(*args)

        plugin.evaluate_suite = counted
        """
    )
    store = pytester.path / "store.db"
    args = [*plugin_args(), "-p", "xdist", "-n", "2", "--assay-suite", str(suite)]
    result = pytester.runpytest_subprocess(*args, "--assay-store", str(store), "-rA")
    result.assert_outcomes(passed=3, failed=2, xfailed=4)
    result.stdout.fnmatch_lines(["*zebra [[]candidate[]]: FAIL*"])
    assert len(log.read_text().splitlines()) == 1  # once, in the controller


def served_suite(folder: Path, url: str) -> Path:
    """Four cases × two conditions answered by the mock server (one call per trial)."""
    (folder / "cases.jsonl").write_text(
        "".join(
            json.dumps(case(c, "Mock reply")) + "\n" for c in ("brazil", "chile", "peru", "zebra")
        )
    )
    path = folder / "suite.toml"
    path.write_text(
        'name = "served"\ncases = "cases.jsonl"\ntrials = 1\nmodel = "openai:sut-model"\n'
        f'[run]\nbase_url = "{url}"\nprice = "1,1"\n'
        '[[conditions]]\nname = "baseline"\n'
        '[[conditions]]\nname = "candidate"\nsystem = "Be brief."\n'
        '[scoring]\nscorers = ["contains"]\n[gate]\nmode = "seed"\ncandidate = "candidate"\n'
    )
    return path


def test_selecting_items_calls_the_model_for_them_only(
    pytester: pytest.Pytester, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server()
    suite = served_suite(pytester.path, server.url)

    def session(*args: str, store: str) -> pytest.RunResult:
        where = str(pytester.path / store)
        every = [*plugin_args(), "--assay-suite", str(suite), "--assay-store", where]
        return pytester.runpytest_subprocess(*every, *args)

    def calls() -> int:
        return int(server.stats()["requests"])

    session("--collect-only", "-q", store="a.db").stdout.fnmatch_lines(["*9 tests collected*"])
    assert calls() == 0
    session("-k", "brazil", store="a.db").assert_outcomes(passed=2)
    assert calls() == 2  # brazil × (baseline, candidate): not the 8 of the suite
    session("suite.toml::zebra[candidate]", store="b.db").assert_outcomes(passed=1)
    assert calls() == 3  # a node id: that one case × condition
    session("-k", "chile and baseline or peru and candidate", store="c.db").assert_outcomes(
        passed=2
    )
    assert calls() == 5
    # the whole suite, and its gate (which fails: a seed gate wants the candidate higher)
    session(store="d.db").assert_outcomes(passed=8, failed=1)
    assert calls() == 13


def test_the_store_persists_under_the_rootdir_so_a_rerun_calls_nothing(
    pytester: pytest.Pytester, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = mock_server()
    suite = served_suite(pytester.path, server.url)
    pytester.makepyfile(
        f"""
        def test_fixture(assay_evaluate, tmp_path):
            result = assay_evaluate({str(suite)!r}, out=tmp_path / "out")
            assert result.verdict == "FAIL"  # a seed gate wants the candidate higher
        """
    )
    args = [*plugin_args(), "--assay-suite", str(suite)]
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=9, failed=1)  # the gate: seed
    first = int(server.stats()["requests"])
    assert first == 8  # the items and the fixture share the store: each call once
    assert (pytester.path / ".assay" / "assay.db").is_file()
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=9, failed=1)
    assert int(server.stats()["requests"]) == first  # the second session: no call at all


def test_no_banner_or_warning_from_deepevals_plugin(pytester: pytest.Pytester) -> None:
    """With assay[metrics] installed, a user's own tests print nothing of DeepEval's plugin
    (its teardown banner) nor of the pytest-asyncio it brings (the loop scope warning)."""
    if importlib.util.find_spec("deepeval") is None:
        pytest.skip("DeepEval (assay[metrics]) is not installed")
    pytester.makepyfile("def test_mine():\n    assert True\n")
    result = pytester.runpytest_subprocess(*plugin_args())
    result.assert_outcomes(passed=1)
    said = result.stdout.str() + result.stderr.str()
    assert "Running teardown with pytest sessionfinish" not in said
    assert "asyncio_default_fixture_loop_scope" not in said.replace(
        "asyncio_default_fixture_loop_scope=None",
        "",  # pytest-asyncio's header line
    )
    assert "PytestDeprecationWarning" not in said


@pytest.mark.parametrize(
    ("environ", "args", "wanted"),
    [
        ({}, [], False),
        ({"DEEPEVAL": "YES"}, [], True),  # `deepeval test run`
        ({}, ["-p", "deepeval"], True),
        ({}, ["-pdeepeval"], True),
        ({"PYTEST_ADDOPTS": "-p deepeval -q"}, [], True),
        ({}, ["-p", "no:deepeval"], False),
    ],
)
def test_deepevals_plugin_runs_when_asked_for(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str], args: list[str], wanted: bool
) -> None:
    from assay.pytest_plugin import _deepeval_wanted

    monkeypatch.delenv("DEEPEVAL", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    assert _deepeval_wanted(args) is wanted
