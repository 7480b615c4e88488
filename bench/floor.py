"""The floor of the calls phase: a bare aiohttp loop on uvloop, no assay, against the mock.

`bench/process.py` splits a whole `assay run` into start-up, calls and after-run phases; this
prints what the calls phase cannot beat on this machine: N chat completions through one
aiohttp session with at most CONCURRENCY in flight (a semaphore), timed from the first request
to the last reply, next to the limit (concurrency / latency). It runs against
bench/mock_server.py, or against any OpenAI-compatible server given with --base-url (the
peers harness's mock server, say). The last line is one JSON object with the figures.

    python bench/floor.py [--calls 2000,4000] [--reps 3] [--base-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import aiohttp
from engine import Server

from assay.core.aio import run


async def calls(base_url: str, n: int, concurrency: int) -> float:
    """Seconds for `n` chat completions with at most `concurrency` in flight."""
    gate = asyncio.Semaphore(concurrency)
    headers = {"content-type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> None:
            body = {"model": "mock", "messages": [{"role": "user", "content": f"Question {i}"}]}
            async with (
                gate,
                session.post(
                    f"{base_url}/chat/completions", data=json.dumps(body), headers=headers
                ) as reply,
            ):
                await reply.read()

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", default="2000,4000", help="comma-separated call counts")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.1, help="of bench/mock_server.py")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--base-url", default=None, help="another server (its own latency)")
    opts = parser.parse_args()
    server = None if opts.base_url else Server("--latency", str(opts.latency))
    base_url = opts.base_url or (server.url if server else "")
    limit = opts.concurrency / opts.latency
    figures: dict[str, object] = {"limit_calls_per_s": limit}
    try:
        for n in (int(x) for x in opts.calls.split(",")):
            seconds = statistics.median(
                run(calls(base_url, n, opts.concurrency)) for _ in range(opts.reps)
            )
            rate = n / seconds
            figures[str(n)] = {
                "seconds": round(seconds, 3),
                "calls_per_s": round(rate, 1),
                "pct_of_limit": round(100 * rate / limit, 1),
            }
            print(f"{n} calls: {seconds:.3f} s, {rate:.1f} calls/s ({100 * rate / limit:.1f}%)")
    finally:
        if server is not None:
            server.stop()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
