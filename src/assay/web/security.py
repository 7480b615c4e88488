"""Access control and hardening of assay's web apps (`assay review`, `assay view`).

- Beyond loopback the app needs a token; with one, every request must carry it (Bearer
  header, the cookie, or `?token=` once, which sets the cookie) or gets 401.
- Every response carries a strict Content-Security-Policy and the usual hardening headers.
- Every POST carries a CSRF token derived from the browser's session cookie.
- Without a token, only loopback Host headers are served, so a web page that rebinds its
  own domain name to 127.0.0.1 (DNS rebinding) cannot read or drive the app.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from urllib.parse import urlencode

from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp

from assay.core.errors import InputError

CSRF_FIELD = "csrf"


def token_cookie(app: str) -> str:
    """The cookie that carries an app's token (`assay_review_token`): one per app, so two
    apps served from the same host keep their own."""
    return f"assay_{app}_token"


def session_cookie(app: str) -> str:
    """The cookie that carries an app's browser session (`assay_review_session`)."""
    return f"assay_{app}_session"


CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; form-action 'self';"
    " frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
}


MIN_TOKEN = 12  # characters
MIN_GUESSES_LOG10 = 12.0
"""zxcvbn's estimate of the guesses a token takes, as a power of ten: 10^12 is three decades
at a thousand tries a second against the server (a common password with digits takes 10^3
to 10^5, `secrets.token_urlsafe(16)` about 10^22)."""
ZXCVBN_CHARS = 72  # zxcvbn reads at most this many; a longer token is at least as strong
KNOWN_WORDS = ["assay", "review", "token"]


def token_weakness(token: str) -> str | None:
    """Why `token` is too guessable to guard the app, or None when it will do.

    A token needs `MIN_TOKEN` characters, no whitespace or control characters, and must take
    10^`MIN_GUESSES_LOG10` guesses by zxcvbn's estimate (dictionaries of common passwords,
    names and words, keyboard walks, repeats, sequences, dates, l33t spellings), as
    `secrets.token_urlsafe` or `token_hex` give (`suggest_token`). This refuses what a person
    types as a placeholder or picks as a password (`aaaaaaaaaaaa`, `Password1234`,
    `qwerty123456`), not what a generator makes.
    """
    if len(token) < MIN_TOKEN:
        return f"use at least {MIN_TOKEN} characters (a guessable token protects nothing)"
    if any(c.isspace() or not c.isprintable() for c in token):
        return "it holds whitespace or control characters"
    from zxcvbn import zxcvbn  # (its word lists load here: only a served token needs them)

    estimate = zxcvbn(token[:ZXCVBN_CHARS], user_inputs=KNOWN_WORDS)
    if float(estimate["guesses_log10"]) < MIN_GUESSES_LOG10:
        warning = str(estimate["feedback"].get("warning") or "").rstrip(".")
        why = f" ({warning[0].lower()}{warning[1:]})" if warning else ""
        return (
            f"it is a common password or built like one{why}: about"
            f" 10^{float(estimate['guesses_log10']):.0f} guesses find it"
        )
    return None


def suggest_token() -> str:
    """A random token with 192 bits of entropy that `token_weakness` accepts."""
    while token_weakness(token := secrets.token_urlsafe(24)) is not None:  # pragma: no cover
        pass
    return token


def check_listening(host: str, token: str | None, envvar: str, exposes: str) -> None:
    """Refuse (InputError, exit 2) a weak `--token`, and a `--host` beyond loopback without
    one; `exposes` says what anyone on the network could then do, `envvar` where the token
    may also come from."""
    weakness = token_weakness(token) if token is not None else None
    if weakness is not None:
        raise InputError(
            f"ERROR: --token: {weakness}. A random token, for example: --token {suggest_token()}"
        )
    if not is_loopback(host) and token is None:
        raise InputError(
            f"ERROR: --host {host}: refusing to listen beyond loopback without --token: anyone"
            f" on the network could {exposes}. Pass --token TOKEN"
            f" (a random one, for example: --token {suggest_token()}; or set"
            f" {envvar}), or keep the default --host 127.0.0.1."
        )


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and localhost; anything else reaches the network."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _hostname(host_header: str) -> str:
    """The host part of a Host header: `[::1]:8765` -> `::1`, `localhost:80` -> `localhost`."""
    if host_header.startswith("["):
        return host_header[1:].split("]", 1)[0]
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def _same(supplied: str | None, expected: str) -> bool:
    return supplied is not None and hmac.compare_digest(
        supplied.encode("utf-8"), expected.encode("utf-8")
    )


def _bearer(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


class Csrf:
    """CSRF tokens bound to the browser's session cookie by an HMAC with a server secret."""

    def __init__(self, secret: bytes | None = None) -> None:
        self.secret = secret or secrets.token_bytes(32)

    def token_for(self, session: str) -> str:
        return hmac.new(self.secret, session.encode("utf-8"), hashlib.sha256).hexdigest()

    def valid(self, session: str | None, token: str | None) -> bool:
        return bool(session) and _same(token, self.token_for(session or ""))


class SecurityMiddleware(BaseHTTPMiddleware):
    """Token check, session cookie and hardening headers for every request and response."""

    def __init__(self, app: ASGIApp, token: str | None, name: str = "review") -> None:
        super().__init__(app)
        self.token = token
        self.name = name
        self.token_cookie = token_cookie(name)
        self.session_cookie = session_cookie(name)

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await self._respond(request, call_next)
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
        return response

    async def _respond(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        set_token = False
        if self.token is None and not is_loopback(_hostname(request.headers.get("host", ""))):
            return PlainTextResponse(
                "403 Forbidden: without --token this server answers only to a loopback address"
                " (127.0.0.1, localhost, [::1]).\n",
                status_code=403,
            )
        if self.token is not None:
            from_query = request.query_params.get("token")
            if _same(from_query, self.token):
                set_token = True
                if request.method == "GET":  # drop the token from the address bar
                    kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                    target = request.url.path + (f"?{urlencode(kept)}" if kept else "")
                    redirect = RedirectResponse(target, status_code=303)
                    self._set_token_cookie(redirect)
                    return redirect
            elif not (
                _same(_bearer(request), self.token)
                or _same(request.cookies.get(self.token_cookie), self.token)
            ):
                return PlainTextResponse(
                    f"401 Unauthorized: this {self.name} server needs its token (an Authorization:"
                    " Bearer header, or ?token=TOKEN once in the address).\n",
                    status_code=401,
                    headers={"WWW-Authenticate": f'Bearer realm="assay {self.name}"'},
                )
        session = request.cookies.get(self.session_cookie)
        new_session = None if session else secrets.token_urlsafe(32)
        request.state.session = session or new_session
        response = await call_next(request)
        if new_session:
            response.set_cookie(
                self.session_cookie, new_session, httponly=True, samesite="strict", path="/"
            )
        if set_token:
            self._set_token_cookie(response)
        return response

    def _set_token_cookie(self, response: Response) -> None:
        assert self.token is not None
        response.set_cookie(
            self.token_cookie, self.token, httponly=True, samesite="strict", path="/"
        )
