"""Measure `assay view` with one long response: the viewer's memory and the pages' sizes.

Makes a store of a few cases × two conditions (bench/view_store.py) where one candidate
response is --mb megabytes, serves it with the real CLI (`assay view --port 0`, a process of
its own), fetches the run page, the long response's case page and (when the viewer has the
route) the whole response as text, and reads the viewer's resident memory after each from
/proc (VmRSS now, VmHWM its peak). With --export, also times `assay view --export` and
reports the case page's and the text file's sizes and the exporting process's peak memory.
--src chooses the source tree the viewer runs from (default: this checkout's `src`), so the
same figures can be taken of another checkout.
Usage: python bench/view_long.py [--mb 50] [--cases 20] [--export] [--src PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from view_store import make_store  # noqa: E402

RUN = "run000000001"


def memory(pid: int) -> dict[str, float]:
    """The process's resident memory now and at its peak, in MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def fetch(url: str) -> tuple[int, int, float]:
    """(status, bytes, seconds) of a GET, the body read in chunks and not kept."""
    start = time.perf_counter()
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=600) as response:
            status = response.status
            while chunk := response.read(1 << 20):
                size += len(chunk)
    except urllib.error.HTTPError as exc:
        status = exc.code
    return status, size, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="the long response's size")
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--export", action="store_true", help="also time assay view --export")
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    args = parser.parse_args()
    chars = int(args.mb * 1_000_000)
    line = "a line of a very long answer that goes on and on\n"
    long_text = "the start of a very long answer.\n" + line * (chars // len(line))

    def response(i: int, condition: str) -> str:
        if i == 1 and condition == "candidate":
            return long_text
        return f"{condition}: press the reset button on device {i}."

    figures: dict[str, object] = {"response_mb": round(len(long_text) / 1e6, 1)}
    env = {**os.environ, "PYTHONPATH": str(args.src)}
    with tempfile.TemporaryDirectory(prefix="assay-view-long-") as folder:
        path = Path(folder) / "view.db"
        make_store(path, args.cases, response=response, errored=lambda i: False).close()
        figures["store_mb"] = round(path.stat().st_size / 1e6, 1)
        server = subprocess.Popen(
            [sys.executable, "-m", "assay", "view", "--store", str(path), "--port", "0"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            found = re.match(r"view: (http://\S+?)/? ", server.stdout.readline())
            assert found, server.stderr.read() if server.stderr else ""
            base = found.group(1)
            figures["idle"] = memory(server.pid)
            for name, url in (
                ("run_page", f"{base}/runs/{RUN}"),
                ("case_page", f"{base}/runs/{RUN}/cases/case-00001"),
                (
                    "whole_response",
                    f"{base}/runs/{RUN}/response?case=case-00001&condition=candidate&trial=1",
                ),
            ):
                status, size, seconds = fetch(url)
                figures[name] = {
                    "status": status,
                    "mb": round(size / 1e6, 3),
                    "s": round(seconds, 2),
                    **memory(server.pid),
                }
                print(name, figures[name], flush=True)
        finally:
            server.terminate()
            server.wait(30)
        if args.export:
            site = Path(folder) / "site"
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", EXPORT, str(path), str(site)],
                env=env,
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stderr
            page = site / "runs" / RUN / "cases" / "case-00001.html"
            texts = list(page.parent.rglob("*.txt"))
            figures["export"] = {
                "s": round(time.perf_counter() - start, 1),
                "peak_rss_mb": round(float(done.stdout.strip()) / 1024, 1),
                "case_page_mb": round(page.stat().st_size / 1e6, 3),
                "text_files_mb": [round(t.stat().st_size / 1e6, 1) for t in texts],
            }
            print("export", figures["export"], flush=True)
    print(json.dumps(figures))


EXPORT = """
import resource, sys
from pathlib import Path
from assay.api.viewing import export_view
export_view(Path(sys.argv[1]), Path(sys.argv[2]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

if __name__ == "__main__":
    main()
