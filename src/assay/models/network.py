"""What the OpenAI SDK takes from the environment, for `openai:`'s aiohttp client.

- Proxies: `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` (and their lower-case forms), as
  aiohttp's `trust_env` reads them (its `get_env_proxy_for_url`: the same variables, the
  same `NO_PROXY` rules, proxy credentials in the URL or `~/.netrc`). They are read once per
  model, for its base URL, not on every request as `trust_env` does (it reads the
  environment and `~/.netrc` per call): every call of a model goes to that one URL.
- CA certificates: `SSL_CERT_FILE`, else `REQUESTS_CA_BUNDLE` (what `requests` users set),
  loaded into the model's own SSL context for an https:// base URL; a variable naming a file
  that cannot be read is an InputError before any call. Without either, aiohttp's default
  context (the system's certificates, `SSL_CERT_DIR` honoured) as before.
- Headers: `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` as `OpenAI-Organization` and
  `OpenAI-Project`, as the SDK sends them.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass

from yarl import URL

from assay.core.errors import InputError
from assay.models.transport import aiohttp  # without its import-time CA loading

CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
HEADER_VARIABLES = {"OPENAI_ORG_ID": "OpenAI-Organization", "OPENAI_PROJECT_ID": "OpenAI-Project"}


@dataclass(frozen=True, slots=True)
class Route:
    """How a model's requests reach its base URL: the proxy (None: direct) and the SSL
    context (None: aiohttp's default)."""

    proxy: URL | None = None
    """With its credentials in the URL (aiohttp sends them as Proxy-Authorization)."""
    ssl: ssl.SSLContext | None = None


def route(base_url: str) -> Route:
    """The proxy and CA certificates the environment gives for `base_url`."""
    url = URL(base_url)
    proxy: URL | None
    try:
        proxy, auth = aiohttp.helpers.get_env_proxy_for_url(url)
    except LookupError:  # no proxy for this URL, or NO_PROXY names its host
        proxy = None
    else:
        if auth is not None:  # from the URL or ~/.netrc; aiohttp deprecates `proxy_auth`
            proxy = proxy.with_user(auth.login).with_password(auth.password)
    return Route(proxy, _ssl_context() if url.scheme == "https" else None)


def _ssl_context() -> ssl.SSLContext | None:
    for variable in CA_VARIABLES:
        path = os.environ.get(variable)
        if path:
            try:
                return ssl.create_default_context(cafile=path)
            except (OSError, ssl.SSLError) as exc:
                raise InputError(
                    f"ERROR: {variable}={path}: cannot load CA certificates from it: {exc}"
                ) from None
    return None


def openai_headers() -> dict[str, str]:
    """The organisation and project headers the environment sets (none when unset)."""
    return {
        header: value
        for variable, header in HEADER_VARIABLES.items()
        if (value := os.environ.get(variable))
    }


def session(headers: dict[str, str], way: Route) -> aiohttp.ClientSession:
    """An API client's session (call inside the event loop): no connection limit (the
    engine limits concurrency), DNS cached, no cookies, routed as `way` says."""
    connector = aiohttp.TCPConnector(
        limit=0, ttl_dns_cache=300, ssl=way.ssl if way.ssl is not None else True
    )
    return aiohttp.ClientSession(
        connector=connector,
        headers=headers,
        cookie_jar=aiohttp.DummyCookieJar(),  # an API client keeps no cookies
        proxy=way.proxy,
    )
