"""A sequential run never PASSes over per-case checks it has not run (verdict/percase.py):
blocking findings, per-case thresholds and scorer errors need every case's candidate trial,
unless `[gate] sampled_checks` states a bound; and its "calls not made" are calls the store
does not hold. Fresh material: a tenant-rights intake agent (`python:`) calling tools."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.records import Case
from assay.store import Store
from assay.verdict.looks import look_order
from assay.verdict.percase import rate_bound
from conftest import make_case, write_jsonl

CASES = 28
SEED = 20_240_611  # the gate's default seed: the order the run takes
AGENT = """
def intake(case, settings):
    steps = [{"type": "tool", "name": "lookup_statute", "arguments": {"q": case.prompt}}]
    careful = settings["condition"] != "baseline" or int(case.id[2:]) % 3 == 0
    if settings["condition"] != "baseline" and case.id in settings.get("reckless", []):
        steps.append({"type": "tool", "name": "file_eviction_notice", "arguments": {}})
    if case.id in settings.get("skips", []):
        steps = []
    text = "Under the habitability statute you may withhold rent." if careful else "See a lawyer."
    return {"response": text, "trajectory": steps}
"""


def _cases(tools: dict[str, Any]) -> list[dict[str, Any]]:
    topics = ("repairs", "deposit", "eviction", "lease")
    return [
        make_case(
            f"tr{i}",
            prompt=f"My landlord will not fix the heating ({i}). What can I do?",
            category=topics[i % len(topics)],
            expect={"contains": ["habitability"], "tools": tools},
        )
        for i in range(CASES)
    ]


def _late(cases: list[dict[str, Any]], count: int = 1) -> list[str]:
    """The last cases of the run's look order: never looked at by an early stop."""
    order = look_order([Case.model_validate(c) for c in cases], SEED)
    return [c.id for c in order[-count:]]


def _write(tmp_path: Path, cases: list[dict[str, Any]], body: str, pin: bool = False) -> Path:
    (tmp_path / "intake.py").write_text(AGENT, encoding="utf-8")
    write_jsonl(tmp_path / "cases.jsonl", cases)
    sha = hashlib.sha256((tmp_path / "cases.jsonl").read_bytes()).hexdigest()
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'name = "tenant-intake"\ncases = "cases.jsonl"\n'
        + (f'cases_sha256 = "{sha}"\n' if pin else "")
        + 'trials = 1\noutput = "out"\nmodel = "python:intake.py:intake"\n'
        "[run]\nallow_unmetered = true\nconcurrency = 4\n" + body,
        encoding="utf-8",
    )
    return suite


def _trials(store: Path) -> list[tuple[str, str]]:
    handle = Store(store)
    try:
        rows = handle.db.execute("SELECT case_id, condition FROM trials WHERE error IS NULL")
        return [(case, condition) for case, condition in rows]
    finally:
        handle.close()


def _ab(tmp_path: Path, reckless: list[str], extra: str = "") -> Path:
    tools = {"must_call": ["lookup_statute"], "must_not_call": ["file_eviction_notice"]}
    cases = _cases(tools)
    return _write(
        tmp_path,
        cases,
        '[[conditions]]\nname = "baseline"\n'
        f'[[conditions]]\nname = "candidate"\nparams = {{ reckless = {json.dumps(reckless)} }}\n'
        '[scoring]\nscorers = ["contains", "tools"]\n'
        f"[gate]\nsequential = true\nlook = 5\n{extra}"
        '[report]\nformats = ["json", "md", "junit"]\n',
    )


def test_a_forbidden_tool_call_on_a_late_low_risk_case_fails_the_sequential_ab(
    tmp_path: Path, cli: Any
) -> None:
    """The candidate is better on the comparison from the first looks, and makes a forbidden
    call on the case the order puts last: the early look settles the comparison, then the
    candidate runs on every case (the baseline does not), and the call FAILs the run."""
    late = _late(_cases({}))
    suite = _ab(tmp_path, late)
    store = tmp_path / "s.db"
    done = cli("run", suite, "--store", store, "--json")
    assert done.code == 1, done.stdout + done.stderr
    gate = json.loads(done.stdout)["release_gate"]
    assert gate["verdict"] == "FAIL"
    assert f"1 blocking finding(s) in the candidate: {late[0]}#1" in " ".join(gate["reasons"])
    stop = gate["sequential"]
    assert stop["stopped_early"] and stop["cases"] < CASES and stop["checked"] == CASES
    ran = _trials(store)
    baseline = {case for case, condition in ran if condition == "baseline"}
    candidate = {case for case, condition in ran if condition == "candidate"}
    assert len(candidate) == CASES and len(baseline) == stop["cases"]
    assert late[0] not in baseline  # the comparison never looked at it
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "FAIL"
    # Without the forbidden call the same run PASSes early, having checked every case.
    (tmp_path / "clean").mkdir()
    clean = cli("run", _ab(tmp_path / "clean", []), "--store", tmp_path / "c.db", "--json")
    assert clean.code == 0, clean.stdout + clean.stderr
    stop = json.loads(clean.stdout)["release_gate"]["sequential"]
    assert stop["stopped_early"] and stop["cases"] < CASES and stop["checked"] == CASES
    assert f"per-case checks on {CASES} of {CASES} cases" in clean.stderr


def test_sampled_checks_pass_with_the_bound_stated_and_fail_on_what_they_see(
    tmp_path: Path, cli: Any
) -> None:
    """Opted in, an early PASS rests on the cases looked at, with the Clopper-Pearson bound
    in every output; the candidate runs on no case beyond them."""
    suite = _ab(tmp_path, _late(_cases({})), extra="sampled_checks = true\n")
    done = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert done.code == 0, done.stdout + done.stderr
    stop = json.loads(done.stdout)["release_gate"]["sequential"]
    seen = stop["cases"]
    assert stop["stopped_early"] and stop["checked"] == seen < CASES
    bound = rate_bound(0, seen, 0.95)
    text = f"0 failing in {seen} of {CASES} cases: rate below {bound:.0%} at 95%"
    assert text in stop["sampled"] and text in done.stderr
    for name in ("report.md", "report.junit.xml", "report.json", "summary.json"):
        assert text in (tmp_path / "out" / name).read_text(encoding="utf-8"), name
    assert len(_trials(tmp_path / "s.db")) == 2 * seen


def test_the_clopper_pearson_bound_is_exact() -> None:
    assert rate_bound(0, 15, 0.95) == pytest.approx(1 - 0.05 ** (1 / 15))  # 18.1%
    assert f"{rate_bound(0, 15, 0.95):.0%}" == "18%"
    from scipy.stats import beta

    assert rate_bound(2, 40, 0.9) == pytest.approx(float(beta.ppf(0.9, 3, 38)))
    assert rate_bound(0, 0, 0.95) == 1.0 and rate_bound(5, 5, 0.95) == 1.0


def _pinned(tmp_path: Path, sampled: str = "") -> tuple[Path, list[str]]:
    """One condition over a pinned golden set of 28 cases, per-case `tools_correct = 1`,
    a corpus bound the looks can settle; the two cases the order puts last skip the tool."""
    cases = _cases({"must_call": ["lookup_statute"]})
    skips = _late(cases, 2)
    suite = _write(
        tmp_path,
        cases,
        f'[[conditions]]\nname = "intake"\nparams = {{ skips = {json.dumps(skips)} }}\n'
        '[scoring]\nscorers = ["tools"]\n[scoring.thresholds]\ntools_correct = 1\n'
        "[scoring.corpus]\ntools_correct = { min = 0.5 }\n"
        f"[gate]\nsequential = true\nlook = 7\n{sampled}"
        '[report]\nformats = ["json", "md", "junit"]\n',
        pin=True,
    )
    return suite, skips


def test_a_pinned_single_system_run_checks_every_case_before_it_passes(
    tmp_path: Path, cli: Any
) -> None:
    suite, skips = _pinned(tmp_path)
    done = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert done.code == 1, done.stdout + done.stderr
    gate = json.loads(done.stdout)["release_gate"]
    assert gate["verdict"] == "FAIL"
    reasons = " ".join(gate["reasons"])
    assert all(case in reasons for case in skips) and "tools_correct" in reasons
    assert gate["sequential"]["cases"] == CASES and len(_trials(tmp_path / "s.db")) == CASES


def test_sampled_checks_on_a_pinned_set_must_name_its_pin(tmp_path: Path, cli: Any) -> None:
    suite, _ = _pinned(tmp_path, "sampled_checks = true\n")
    done = cli("run", suite, "--store", tmp_path / "s.db")
    assert done.code == 2 and "sampled_checks" in done.stderr and "pinned" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "s.db").exists()
    sha = hashlib.sha256((tmp_path / "cases.jsonl").read_bytes()).hexdigest()
    text = suite.read_text(encoding="utf-8").replace(
        "sampled_checks = true", f'sampled_checks = "{sha}"'
    )
    suite.write_text(text, encoding="utf-8")
    named = cli("run", suite, "--store", tmp_path / "s.db", "--json")
    assert named.code == 0, named.stdout + named.stderr  # the late cases were never run
    stop = json.loads(named.stdout)["release_gate"]["sequential"]
    assert stop["stopped_early"] and stop["cases"] < CASES
    assert f"0 failing in {stop['cases']} of {CASES} cases" in stop["sampled"]
