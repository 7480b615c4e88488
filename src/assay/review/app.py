"""The review web app: server-rendered pages (Starlette + Jinja2), one plain script file.

Reviewers see "Response 1" and "Response 2" in an order drawn at random per pair and kept
in the store; condition names never reach the browser. Every answer is committed the moment
it is posted.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from assay.review.agreement import Agreement, pairwise_agreement, score_agreement
from assay.review.config import ReviewConfig
from assay.review.forms import (
    FormError,
    parse_pairwise,
    parse_scores,
    posted_answer,
    response_slots,
    shown_winner,
)
from assay.review.items import ReviewItem
from assay.review.queue import flagged_indexes, next_unanswered, queue_order
from assay.web.security import CSRF_FIELD, Csrf, SecurityMiddleware, session_cookie
from assay.web.templates import environment

HERE = Path(__file__).resolve().parent
REVIEWER_COOKIE = "assay_reviewer"
SESSION_COOKIE = session_cookie("review")
REVIEWER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


def _templates() -> Environment:
    env = environment(HERE / "templates")
    env.filters["textarea"] = _textarea
    return env


def _textarea(notes: str | None) -> str:
    """Notes as a textarea's content: an HTML parser drops one newline right after
    `<textarea>`, so a note that starts with one gets an extra (it is edited as written)."""
    text = notes or ""
    return "\n" + text if text.startswith("\n") else text


def create_app(config: ReviewConfig) -> Starlette:
    """Build the ASGI app; presentation orders are drawn (or read back) here."""
    config.first = config.store.assign_order(
        config.review.dataset, [i.key for i in config.review.items]
    )
    env = _templates()
    csrf = Csrf()
    items = config.review.items
    by_index = {i.index: i for i in items}

    def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        session = getattr(request.state, "session", None) or ""
        html = env.get_template(name).render(
            title=config.title,
            mode=config.mode,
            csrf_field=CSRF_FIELD,
            csrf=csrf.token_for(session),
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def reviewer_of(request: Request) -> tuple[str | None, bool]:
        """The reviewer id (query beats cookie) and whether to set the cookie."""
        wanted = request.query_params.get("reviewer")
        if wanted is not None:
            if not REVIEWER_RE.match(wanted):
                raise FormError(
                    "A reviewer id is 1–64 letters, digits, dots, dashes, underscores or @."
                )
            return wanted, True
        cookie = request.cookies.get(REVIEWER_COOKIE)
        return (cookie, False) if cookie and REVIEWER_RE.match(cookie) else (None, False)

    def remember(response: Response, reviewer: str, set_cookie: bool) -> Response:
        if set_cookie:
            response.set_cookie(
                REVIEWER_COOKIE, reviewer, httponly=True, samesite="strict", path="/"
            )
        return response

    def answered_by(reviewer: str) -> dict[int, dict[str, Any]]:
        index_of = {i.key: i.index for i in items}
        answers = config.store.answers(config.review.dataset, config.mode, reviewer)
        return {index_of[a.key]: a.answer for a in answers if a.key in index_of}

    def reviewer_order() -> tuple[list[ReviewItem], set[int]]:
        queued = config.store.queued()
        return queue_order(items, queued), flagged_indexes(items, queued)

    async def check_csrf(request: Request) -> FormData:
        form = await request.form()
        token = form.get(CSRF_FIELD)
        if not csrf.valid(
            request.cookies.get(SESSION_COOKIE), token if isinstance(token, str) else None
        ):
            raise PermissionError("missing or invalid CSRF token")
        return form

    def forbidden(request: Request) -> HTMLResponse:
        return render(
            request,
            "message.html",
            status=403,
            heading="Form expired",
            message="This form's security token is missing or stale. Reload the page and try again.",
        )

    def bad_request(request: Request, message: str) -> HTMLResponse:
        return render(request, "message.html", status=400, heading="Bad request", message=message)

    # -- pages ------------------------------------------------------------------------------
    def identify(request: Request) -> tuple[str, bool] | Response:
        """The reviewer (and whether to set their cookie), or the response that says why not."""
        try:
            reviewer, set_cookie = reviewer_of(request)
        except FormError as exc:
            return bad_request(request, str(exc))
        if reviewer is None:
            return RedirectResponse("/", status_code=303)
        return reviewer, set_cookie

    async def index(request: Request) -> Response:
        try:
            reviewer, set_cookie = reviewer_of(request)
        except FormError as exc:
            return bad_request(request, str(exc))

        def gather() -> dict[str, Any]:
            counts = config.store.reviewers(config.review.dataset, config.mode)
            answers = config.store.answers(config.review.dataset, config.mode)
            agreement: list[Agreement] = (
                pairwise_agreement(answers)
                if config.mode == "pairwise"
                else score_agreement(answers, [c.name for c in config.rubric.judged_criteria()])
            )
            _, flagged = reviewer_order()
            return {"counts": counts, "agreement": agreement, "flagged": len(flagged)}

        data = await run_in_threadpool(gather)
        answerable = sum(1 for i in items if i.answerable(config.mode))
        response = render(
            request,
            "index.html",
            reviewer=reviewer,
            total=len(items),
            answerable=answerable,
            **data,
        )
        return remember(response, reviewer, set_cookie) if reviewer else response

    async def choose_reviewer(request: Request) -> Response:
        try:
            form = await check_csrf(request)
        except PermissionError:
            return forbidden(request)
        reviewer = str(form.get("reviewer", "")).strip()
        if not REVIEWER_RE.match(reviewer):
            return bad_request(
                request, "A reviewer id is 1–64 letters, digits, dots, dashes, underscores or @."
            )
        return remember(RedirectResponse("/next", status_code=303), reviewer, True)

    async def next_item(request: Request) -> Response:
        who = identify(request)
        if isinstance(who, Response):
            return who
        reviewer, set_cookie = who
        after_text = request.query_params.get("after", "")
        after = int(after_text) if after_text.isdigit() else None

        def pick() -> ReviewItem | None:
            order, _ = reviewer_order()
            return next_unanswered(order, set(answered_by(reviewer)), config.mode, after)

        item = await run_in_threadpool(pick)
        target = f"/item/{item.index}" if item else "/done"
        return remember(RedirectResponse(target, status_code=303), reviewer, set_cookie)

    async def done(request: Request) -> Response:
        who = identify(request)
        if isinstance(who, Response):
            return who
        reviewer, set_cookie = who
        answered = await run_in_threadpool(answered_by, reviewer)
        response = render(request, "done.html", reviewer=reviewer, answered=len(answered))
        return remember(response, reviewer, set_cookie)

    async def show_item(request: Request) -> Response:
        return await item_page(request, None, None)

    async def item_page(
        request: Request, posted: dict[str, Any] | None, error: str | None
    ) -> Response:
        who = identify(request)
        if isinstance(who, Response):
            return who
        reviewer, set_cookie = who
        item = by_index.get(request.path_params["index"])
        if item is None:
            return render(
                request, "message.html", status=404, heading="Not found", message="No such item."
            )

        def gather() -> tuple[list[ReviewItem], set[int], dict[int, dict[str, Any]]]:
            order, flagged = reviewer_order()
            return order, flagged, answered_by(reviewer)

        order, flagged, answered = await run_in_threadpool(gather)
        position = [i.index for i in order].index(item.index)
        previous = order[position - 1].index if position > 0 else None
        following = order[position + 1].index if position + 1 < len(order) else None
        answer = posted if posted is not None else answered.get(item.index)
        answerable = sum(1 for i in items if i.answerable(config.mode))
        response = render(
            request,
            "item.html",
            status=400 if error else 200,
            reviewer=reviewer,
            item=item,
            case=item.case,
            slots=response_slots(config, item, answer),
            metrics=config.rubric.judged_criteria(),
            scale=config.rubric.points,
            position=position + 1,
            total=len(order),
            answered=len([i for i in answered if by_index[i].answerable(config.mode)]),
            answerable=answerable,
            is_answered=item.index in answered,
            flagged=item.index in flagged,
            previous=previous,
            following=following,
            winner=shown_winner(config, item, answer),
            pair_notes=(answer or {}).get("notes", "") if config.mode == "pairwise" else "",
            error=error,
            can_answer=item.answerable(config.mode),
        )
        return remember(response, reviewer, set_cookie)

    async def save_item(request: Request) -> Response:
        try:
            form = await check_csrf(request)
        except PermissionError:
            return forbidden(request)
        posted_by = form.get("reviewer")
        if isinstance(posted_by, str) and REVIEWER_RE.match(posted_by):
            reviewer: str | None = posted_by  # the reviewer the page was shown to
        else:
            try:
                reviewer, _ = reviewer_of(request)
            except FormError as exc:
                return bad_request(request, str(exc))
        if reviewer is None:
            return RedirectResponse("/", status_code=303)
        item = by_index.get(request.path_params["index"])
        if item is None:
            return bad_request(request, "No such item.")
        if not item.answerable(config.mode):
            return bad_request(request, "This item has nothing to answer: its trials errored.")
        try:
            answer = (
                parse_pairwise(config, item, form)
                if config.mode == "pairwise"
                else parse_scores(config, item, form)
            )
        except FormError as exc:
            return await item_page(request, posted_answer(config, item, form), str(exc))
        await run_in_threadpool(
            config.store.save_answer,
            config.review.dataset,
            reviewer,
            config.mode,
            item.key,
            answer,
        )
        query = urlencode({"after": item.index, "reviewer": reviewer})
        return RedirectResponse(f"/next?{query}", status_code=303)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [
        Route("/", index),
        Route("/reviewer", choose_reviewer, methods=["POST"]),
        Route("/next", next_item),
        Route("/done", done),
        Route("/item/{index:int}", show_item),
        Route("/item/{index:int}", save_item, methods=["POST"]),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(SecurityMiddleware, token=config.token, name="review")],
    )
