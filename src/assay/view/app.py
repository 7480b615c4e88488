"""The viewer web app: server-rendered pages (Starlette + Jinja2), GET only, over a store
opened read-only.

Every page has a stable address (`view/links.py`): `/` (runs; `?suite=`), `/runs/RUN` (the case
matrix; its filters, sort and page in the query string), `/runs/RUN/cases/CASE` (a case),
`/compare?a=RUN&b=RUN` (two runs), `/suites/SUITE/history` (a suite across its runs). The
security middleware is the review app's (`assay.web.security`). `view/export.py` renders the
same templates into files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from assay.store.views import ReadOnlyStore
from assay.view.history import history_page
from assay.view.links import SERVER, Links
from assay.view.matrix import OUTCOMES, MatrixCache, parse_filters, select
from assay.view.pages import case_page, compare_page, stop_line
from assay.web.security import SecurityMiddleware
from assay.web.templates import environment

HERE = Path(__file__).resolve().parent


@dataclass
class ViewConfig:
    """What one viewer needs: the store (read-only) and the token, if any."""

    store: ReadOnlyStore
    token: str | None = None
    title: str = "assay view"


def run_url(run_id: str, query: dict[str, str] | None = None) -> str:
    return SERVER.run(run_id, query)


def case_url(run_id: str, case_id: str) -> str:
    return SERVER.case(run_id, case_id)


def compare_url(a: str, b: str) -> str:
    return SERVER.compare(a, b)


def history_url(suite: str) -> str:
    return SERVER.history(suite)


def _number(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    if isinstance(value, float) and not math.isfinite(value):
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _signed(value: Any) -> str:
    return f"{value:+.3f}" if isinstance(value, int | float) and math.isfinite(value) else "—"


def _shown(value: Any) -> str:
    """A record's value as text: strings as they are, anything else as indented JSON."""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _duration(seconds: Any) -> str:
    """`42 s`, `3 min 5 s`, `2 h 04 min`; `—` when not recorded."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return "—"
    if not math.isfinite(seconds) or seconds < 0:
        return "—"
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


CHUNK = 1 << 20
"""Characters of a whole response encoded and sent at a time."""


def text_chunks(text: str) -> Iterator[bytes]:
    """`text` as UTF-8, a CHUNK of characters at a time (not a second copy of it whole)."""
    for start in range(0, len(text), CHUNK):
        yield text[start : start + CHUNK].encode("utf-8", "replace")


def templates() -> Environment:
    env = environment(HERE / "templates")
    env.filters.update(
        number=_number, signed=_signed, shown=_shown, duration=_duration, stop_line=stop_line
    )
    env.globals.update(outcomes=OUTCOMES)
    return env


def render_page(env: Environment, name: str, links: Links, title: str, **context: Any) -> str:
    """One page's HTML, its links made by `links` (the server's, or an export's)."""
    return env.get_template(name).render(title=title, links=links, **context)


def create_app(config: ViewConfig) -> Starlette:
    env = templates()
    store = config.store
    cache = MatrixCache(store)

    def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = render_page(env, name, SERVER, config.title, **context)
        return HTMLResponse(html, status_code=status)

    def not_found(message: str) -> HTMLResponse:
        return render("message.html", status=404, heading="Not found", message=message)

    async def runs(request: Request) -> Response:
        suite = request.query_params.get("suite") or None
        listed, suites = await run_in_threadpool(lambda: (store.runs(suite), store.suites()))
        return render("runs.html", runs=listed, suites=suites, suite=suite or "")

    async def run(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        summary = await run_in_threadpool(store.run, run_id)
        if summary is None:
            return not_found(f"No run {run_id} in this store.")
        matrix = await run_in_threadpool(cache.get, run_id)
        filters = parse_filters(dict(request.query_params))
        page = await run_in_threadpool(select, matrix, filters)
        return render(
            "run.html",
            run=summary,
            matrix=matrix,
            report=matrix.report,
            filters=filters,
            page=page,
            previous_run=await run_in_threadpool(store.previous_run, run_id),
        )

    async def case(request: Request) -> Response:
        run_id, case_id = request.path_params["run_id"], request.path_params["case_id"]
        summary = await run_in_threadpool(store.run, run_id)
        if summary is None:
            return not_found(f"No run {run_id} in this store.")
        matrix = await run_in_threadpool(cache.get, run_id)
        data = await run_in_threadpool(case_page, store, matrix, case_id)
        if data is None:
            return not_found(f"Run {run_id} has no case {case_id}.")
        return render("case.html", run=summary, **data)

    async def response(request: Request) -> Response:
        run_id, query = request.path_params["run_id"], request.query_params
        case_id, condition = query.get("case", ""), query.get("condition", "")
        trial = query.get("trial", "")
        text = None
        if trial.isdigit() and len(trial) < 10:
            text = await run_in_threadpool(store.response, run_id, case_id, condition, int(trial))
        if text is None:
            return not_found(
                f"Run {run_id} has no response of case {case_id} under {condition}, trial {trial}."
            )
        return StreamingResponse(text_chunks(text), media_type="text/plain; charset=utf-8")

    async def compare(request: Request) -> Response:
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        listed = await run_in_threadpool(store.runs)
        known = {r.run_id: r for r in listed}
        if a not in known or b not in known:
            return render(
                "pick.html",
                status=200 if not (a or b) else 404,
                runs=listed,
                a=a,
                b=b,
                missing=[x for x in (a, b) if x and x not in known],
            )
        before, after = await run_in_threadpool(lambda: (cache.get(a), cache.get(b)))
        data = compare_page(before, after)
        return render("compare.html", a=known[a], b=known[b], **data)

    async def history(request: Request) -> Response:
        suite = request.path_params["suite"]
        data = await run_in_threadpool(history_page, store, suite)
        if data is None:
            return not_found(f"No recorded run of suite {suite} in this store.")
        return render("history.html", **data)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [
        Route("/", runs),
        Route("/runs/{run_id}", run),
        Route("/runs/{run_id}/response", response),
        Route("/runs/{run_id}/cases/{case_id:path}", case),
        Route("/compare", compare),
        Route("/suites/{suite:path}/history", history),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes, middleware=[Middleware(SecurityMiddleware, token=config.token, name="view")]
    )
