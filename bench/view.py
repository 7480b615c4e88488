"""Benchmark `assay view` pages on a 10,000-case run.

Makes a store with one run of N cases × two conditions (bench/view_store.py: recorded
results, some errored trials), then times each page through the app (Starlette's TestClient,
in process: routing, the store's queries, filtering and Jinja rendering, no network): the
first run page (which reads the run into memory), the first search (which reads the prompts
and responses), then warm pages (page 1, a filter, a search, a deep page, a sort) and a case
page. With --export, also times `assay view --export` of the store (every page, case and
JSON file written, as `export_view` does). --pad N makes each response N characters longer
(a model's answer is longer than the store's one line: every trial's record is larger to
read). Prints one line per figure and a JSON line with the medians in milliseconds.
Usage: python bench/view.py [--cases 10000] [--repeat 5] [--export] [--pad 0]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from starlette.testclient import TestClient  # noqa: E402
from view_store import make_store  # noqa: E402

from assay.api.viewing import export_view  # noqa: E402
from assay.store.views import ReadOnlyStore  # noqa: E402
from assay.view.app import ViewConfig, case_url, create_app  # noqa: E402

RUN = "run000000001"


def timed(client: TestClient, url: str) -> float:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = (time.perf_counter() - start) * 1000
    assert response.status_code == 200, (url, response.status_code)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--export", action="store_true", help="also time assay view --export")
    parser.add_argument("--pad", type=int, default=0, help="characters added to each response")
    args = parser.parse_args()
    pad = "\n" + "More detail. " * (args.pad // 13) if args.pad > 0 else ""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "view.db"
        start = time.perf_counter()
        if pad:
            store = make_store(path, args.cases, response=lambda i, c: f"{c}: device {i}.{pad}")
        else:
            store = make_store(path, args.cases)
        store.close()
        print(f"store: {args.cases} cases x 2 conditions in {time.perf_counter() - start:.1f} s")
        client = TestClient(
            create_app(ViewConfig(store=ReadOnlyStore(path))), base_url="http://127.0.0.1"
        )
        figures = {"first run page (reads the run)": timed(client, f"/runs/{RUN}")}
        figures["first search (reads the texts)"] = timed(client, f"/runs/{RUN}?q=device+17")
        pages = {
            "run page 1": f"/runs/{RUN}",
            "errored filter": f"/runs/{RUN}?outcome=errored",
            "search in prompts and responses": f"/runs/{RUN}?q=device+4242",
            "page 150": f"/runs/{RUN}?page=150",
            "sort by delta": f"/runs/{RUN}?sort=delta&category=devices",
            "case page": case_url(RUN, "case-04242"),
            "runs list": "/",
        }
        for name, url in pages.items():
            figures[name] = statistics.median(timed(client, url) for _ in range(args.repeat))
        if args.export:
            start = time.perf_counter()
            exported = export_view(path, Path(folder) / "site")
            figures["export"] = (time.perf_counter() - start) * 1000
            print(f"export: {exported.pages} pages")
        for name, ms in figures.items():
            print(f"{name}: {ms:.0f} ms")
        print(
            json.dumps(
                {
                    "cases": args.cases,
                    "pad": args.pad,
                    "ms": {k: round(v, 1) for k, v in figures.items()},
                }
            )
        )


if __name__ == "__main__":
    main()
