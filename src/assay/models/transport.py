"""aiohttp, as every provider that speaks HTTP imports it: without its import-time CA loading.

When it is imported, aiohttp.connector builds its two default SSL contexts (verified and
unverified), and each loads the system CA bundle: about a quarter of the instructions
`assay run` executed before its first model call, spent even when every call goes to a
local http:// server. Imported from here, the contexts aiohttp creates during its import load
their CA certificates when they first wrap a connection instead (the first TLS handshake
through them): a run against http:// never loads them, an https one loads the one context it
uses, once. Certificate verification is unchanged: a context holds the same certificates
(from the same places, SSL_CERT_FILE and SSL_CERT_DIR included) before its first handshake.

Scoped: only contexts that ask for the default certificates (in the importing thread) while
aiohttp is first imported here are deferred (every other context, before or after, is a plain
`ssl.SSLContext`), and when the process imported aiohttp already, importing it here changes
nothing.
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["DeferredCAContext", "aiohttp"]


class DeferredCAContext(ssl.SSLContext):
    """An SSL context whose default CA certificates load when it is first used: before it
    wraps a socket or a BIO, or shows its certificate store, whichever comes first.

    Never made directly: a context whose `set_default_verify_paths` was put off by
    `_deferred_verify_paths` becomes one."""

    _deferred_paths = False

    def load_deferred(self) -> None:
        """Load the default CA certificates now if they were put off (once)."""
        if self._deferred_paths:
            self._deferred_paths = False
            super().set_default_verify_paths()

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self.load_deferred()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self.load_deferred()
        return super().wrap_bio(*args, **kwargs)

    def get_ca_certs(self, binary_form: bool = False) -> Any:
        self.load_deferred()
        return super().get_ca_certs(binary_form)

    def cert_store_stats(self) -> dict[str, int]:
        self.load_deferred()
        return super().cert_store_stats()


@contextmanager
def _deferred_verify_paths() -> Iterator[None]:
    """While inside, `set_default_verify_paths` (which `ssl.create_default_context` and
    `load_default_certs` call) only remembers the context, when called from this thread; on
    leaving, each one remembered becomes a DeferredCAContext, which loads the certificates
    when first used.

    The method is replaced on the class for the duration and restored after (the module's
    `ssl.SSLContext` name itself must not change: its property setters look it up)."""
    contexts: list[ssl.SSLContext] = []
    name = "set_default_verify_paths"
    own = vars(ssl.SSLContext).get(name)  # None: inherited from _ssl._SSLContext
    load = getattr(ssl.SSLContext, name)
    importer = threading.get_ident()

    def remember(context: ssl.SSLContext) -> None:
        if threading.get_ident() == importer:
            contexts.append(context)
        else:  # another thread's context, perhaps about to be used: load as it asked
            load(context)

    setattr(ssl.SSLContext, name, remember)
    try:
        yield
    finally:
        if own is None:
            delattr(ssl.SSLContext, name)
        else:
            setattr(ssl.SSLContext, name, own)
        for context in contexts:
            if type(context) is ssl.SSLContext:
                context.__class__ = DeferredCAContext
                context._deferred_paths = True  # type: ignore[attr-defined]
            else:  # a subclass made elsewhere meanwhile: load now, as it asked
                context.set_default_verify_paths()


with _deferred_verify_paths():
    import aiohttp
