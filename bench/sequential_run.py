"""A sequential run end to end against the mock model server: calls made and wall time of
`assay run SUITE --sequential` against `--no-sequential`, with the per-case checks on every
case (the default: the candidate's trials on every case before a PASS) and sampled
(`[gate] sampled_checks = true`), and a full run after the early stop on the same store (it
makes only the calls not made yet); with the dollars each run spent (the mock server's calls
priced at $1 per million tokens each way).

    PYTHONPATH=src python bench/sequential_run.py [--cases 200] [--trials 3] [--look 20]

The suite: two conditions on `openai:` (the mock server), each case expecting (`contains`)
the reply the candidate's system prompt gets (`--effect all`: the candidate wins every case)
or, for half the cases, the baseline's (`--effect none`: no difference)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mock_server import _reply_text

SYSTEM = "Be brief."


def _suite(
    folder: Path, url: str, cases: int, trials: int, look: int, effect: str, sampled: bool = False
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(cases):
        prompt = f"Question {i}?"
        wins = effect == "all" or i % 2 == 0
        expected = _reply_text(SYSTEM + prompt) if wins else _reply_text(prompt)
        case = {"id": f"c{i}", "prompt": prompt, "category": "ab"[i % 2], "risk": "low",
                "criteria": ["answers"], "expect": {"contains": [expected]}}  # fmt: skip
        lines.append(json.dumps(case))
    (folder / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = folder / "suite.toml"
    suite.write_text(
        f'name = "seq"\ncases = "cases.jsonl"\ntrials = {trials}\nmodel = "openai:sut"\n'
        f'[run]\nbase_url = "{url}"\nprice = "1,1"\nconcurrency = 16\n'
        '[[conditions]]\nname = "baseline"\n'
        f'[[conditions]]\nname = "candidate"\nsystem = "{SYSTEM}"\n'
        '[scoring]\nscorers = ["contains"]\n'
        f"[gate]\nlook = {look}\n" + ("sampled_checks = true\n" if sampled else ""),
        encoding="utf-8",
    )
    return suite


def _requests(url: str) -> int:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats") as reply:
        return int(json.load(reply)["requests"])


def _run(
    suite: Path, url: str, store: Path, out: Path, *flags: str
) -> tuple[str, int, float, float]:
    before, started = _requests(url), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "assay", "run", str(suite), "--store", str(store),
         "--out", str(out), "--json", *flags],
        capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": "sk-bench"},
    )  # fmt: skip
    took = time.perf_counter() - started
    if done.returncode == 2:
        raise SystemExit(done.stderr)
    summary = json.loads(done.stdout)
    gate = summary.get("release_gate") or {}
    verdict = gate.get("verdict", "?")
    stop = gate.get("sequential")
    if stop:
        verdict += f" at look {stop['look']} of {stop['looks']}"
    dollars = float(summary.get("spent_usd") or 0.0)
    return f"{verdict} (exit {done.returncode})", _requests(url) - before, dollars, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--look", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--effect", choices=["all", "none"], default="all")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent
    server = subprocess.Popen(
        [sys.executable, str(here / "mock_server.py"), "--latency", str(args.latency)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        port = server.stdout.readline().split()[1]
        url = f"http://127.0.0.1:{port}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            suite = _suite(folder, url, args.cases, args.trials, args.look, args.effect)
            sampled = _suite(
                folder / "sampled", url, args.cases, args.trials, args.look, args.effect, True
            )
            rows = [
                ("--sequential", _run(suite, url, folder / "a.db", folder / "a", "--sequential")),
                ("--sequential, sampled_checks = true",
                 _run(sampled, url, folder / "d.db", folder / "d", "--sequential")),
                ("--no-sequential", _run(suite, url, folder / "b.db", folder / "b", "--no-sequential")),
                ("--no-sequential after --sequential (same store)",
                 _run(suite, url, folder / "a.db", folder / "c", "--no-sequential")),
            ]  # fmt: skip
        print(f"{args.cases} cases × 2 conditions × {args.trials} trials, looks of {args.look},"
              f" effect {args.effect}, mock latency {args.latency}s")  # fmt: skip
        for name, (verdict, calls, dollars, took) in rows:
            print(f"  {name:<48} {verdict:<24} {calls:>6} calls  ${dollars:.4f}  {took:6.2f} s")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
