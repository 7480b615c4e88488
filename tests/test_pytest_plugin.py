"""The pytest plugin: a suite's cases as test items, the release gate as one more, the
`assay_evaluate` fixture with `assert_passes`, and pytest-xdist (run through `pytester`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    assert "contains: contains 0 < min 1" in text
    assert "release gate: FAIL for candidate" in text
    assert "Traceback" not in text


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
            "  contains: contains=1",
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
            "*zebra contains: contains 0 < min 1*",
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

        def counted(config, path):
            with open({str(log)!r}, "a") as handle:
                handle.write(f"{{os.getpid()}}\\n")
            return real(config, path)

        plugin.evaluate_suite = counted
        """
    )
    store = pytester.path / "store.db"
    args = [*plugin_args(), "-p", "xdist", "-n", "2", "--assay-suite", str(suite)]
    result = pytester.runpytest_subprocess(*args, "--assay-store", str(store), "-rA")
    result.assert_outcomes(passed=3, failed=2, xfailed=4)
    result.stdout.fnmatch_lines(["*zebra [[]candidate[]]: FAIL*"])
    assert len(log.read_text().splitlines()) == 1  # once, in the controller
