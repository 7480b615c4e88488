"""The floor of the calls phase: bare HTTP loops on uvloop, no assay, against the mock.

`bench/process.py` splits a whole `assay run` into start-up, calls and after-run phases; this
prints what the calls phase cannot beat on this machine: N chat completions with at most
CONCURRENCY in flight, timed from the first request to the last reply, next to the limit
(concurrency / latency), with the client's CPU ms per call. Two clients: `aiohttp` (one
session, a semaphore: what assay's transport is built on) and `raw` (CONCURRENCY keep-alive
sockets writing one prebuilt request and reading the reply by its Content-Length: about the
least a Python client can do per call). When `raw` is no faster than `aiohttp`, the floor is
the server and the machine, not the client. It runs against bench/mock_server.py, or against
any OpenAI-compatible server given with --base-url (the peers harness's mock server, say).
The last line is one JSON object with the figures.

    python bench/floor.py [--calls 2000,4000] [--reps 3] [--clients aiohttp,raw] [--base-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from engine import Server

from assay.core.aio import run


async def with_aiohttp(base_url: str, n: int, concurrency: int) -> float:
    """Seconds for `n` chat completions through aiohttp, at most `concurrency` in flight."""
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


async def with_sockets(base_url: str, n: int, concurrency: int) -> float:
    """Seconds for `n` chat completions over `concurrency` keep-alive sockets, each writing a
    prebuilt request and reading the reply's head and its Content-Length bytes."""
    url = urlsplit(base_url)
    body = b'{"model":"mock","messages":[{"role":"user","content":"Question 1"}]}'
    request = (
        f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    left = n

    async def worker() -> None:
        nonlocal left
        reader, writer = await asyncio.open_connection(url.hostname, url.port)
        while left > 0:
            left -= 1
            writer.write(request)
            head = (await reader.readuntil(b"\r\n\r\n")).lower()
            start = head.index(b"content-length:") + len(b"content-length:")
            await reader.readexactly(int(head[start : head.index(b"\r\n", start)]))
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


CLIENTS: dict[str, Callable[[str, int, int], Coroutine[Any, Any, float]]] = {
    "aiohttp": with_aiohttp,
    "raw": with_sockets,
}


def timed(client: str, base_url: str, n: int, concurrency: int) -> tuple[float, float]:
    """Wall seconds of one loop of `n` calls, and the process's CPU seconds during it."""
    cpu = time.process_time()
    seconds = run(CLIENTS[client](base_url, n, concurrency))
    return seconds, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", default="2000,4000", help="comma-separated call counts")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.1, help="of bench/mock_server.py")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--base-url", default=None, help="another server (its own latency)")
    parser.add_argument("--clients", default="aiohttp,raw", help="comma-separated: aiohttp, raw")
    opts = parser.parse_args()
    server = None if opts.base_url else Server("--latency", str(opts.latency))
    base_url = opts.base_url or (server.url if server else "")
    limit = opts.concurrency / opts.latency
    figures: dict[str, object] = {"limit_calls_per_s": limit}
    try:
        for client in opts.clients.split(","):
            if client not in CLIENTS:
                parser.error(f"--clients: unknown client {client!r} (known: aiohttp, raw)")
            for n in (int(x) for x in opts.calls.split(",")):
                reps = [timed(client, base_url, n, opts.concurrency) for _ in range(opts.reps)]
                seconds = statistics.median(wall for wall, _ in reps)
                cpu_ms = 1000 * statistics.median(cpu for _, cpu in reps) / n
                rate = n / seconds
                figures[f"{client} {n}"] = {
                    "seconds": round(seconds, 3),
                    "calls_per_s": round(rate, 1),
                    "pct_of_limit": round(100 * rate / limit, 1),
                    "cpu_ms_per_call": round(cpu_ms, 3),
                }
                print(
                    f"{client}, {n} calls: {seconds:.3f} s, {rate:.1f} calls/s"
                    f" ({100 * rate / limit:.1f}%), {cpu_ms:.3f} CPU ms/call"
                )
    finally:
        if server is not None:
            server.stop()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
