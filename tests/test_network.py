"""`openai:` reaches its server as the OpenAI SDK would from the same environment
(models/network.py): through HTTP(S)_PROXY unless NO_PROXY names the host, trusting the CA
certificates of SSL_CERT_FILE or REQUESTS_CA_BUNDLE, with OPENAI_ORG_ID/OPENAI_PROJECT_ID
headers. Everything runs on 127.0.0.1: a test-owned forward proxy and the mock server."""

from __future__ import annotations

import base64
import http.client
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from assay.core import aio
from assay.core.errors import InputError
from assay.models.base import Message, ModelError, Request, Response
from assay.models.registry import ModelOptions, create_model

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


class ForwardProxy:
    """A forward proxy for http:// URLs (no CONNECT): records each request it relays."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def relay(self) -> None:
                target = urlsplit(self.path)  # the absolute URL a proxy is sent
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen.append({"method": self.command, "url": self.path, **dict(self.headers)})
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                forwarded = {
                    k: v for k, v in self.headers.items() if not k.lower().startswith("proxy-")
                }
                upstream.request(self.command, target.path, body=body, headers=forwarded)
                reply = upstream.getresponse()
                data = reply.read()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.getheader("Content-Type") or "")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = relay

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    running = ForwardProxy()
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_VARIABLES, "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.delenv("OPENAI_ORG_ID", raising=False)
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)


def ask(base_url: str) -> Response:
    model = create_model("openai:m", ModelOptions(base_url=base_url))

    async def once() -> Response:
        try:
            return await model.generate(Request([Message("user", "hi")], max_tokens=8))
        finally:
            await model.aclose()

    return aio.run(once())


def test_requests_go_through_http_proxy_with_its_credentials_and_the_openai_headers(
    proxy: ForwardProxy, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    user_proxy = proxy.url.replace("http://", "http://ann:s3cret@")
    monkeypatch.setenv("HTTP_PROXY", user_proxy)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_456")
    assert ask(server.url).text
    assert [(r["method"], r["url"]) for r in proxy.seen] == [
        ("POST", f"{server.url}/chat/completions")
    ]
    sent = proxy.seen[0]
    assert sent["OpenAI-Organization"] == "org-123" and sent["OpenAI-Project"] == "proj_456"
    assert sent["Proxy-Authorization"] == "Basic " + base64.b64encode(b"ann:s3cret").decode()


def test_no_proxy_and_no_variables_go_direct(
    proxy: ForwardProxy, mock_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mock_server()
    assert ask(server.url).text  # nothing set: direct
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert ask(server.url).text
    assert proxy.seen == []
    assert server.stats()["requests"] == 2
    monkeypatch.setenv("no_proxy", "example.org")  # the lower-case form wins, as in urllib
    monkeypatch.delenv("NO_PROXY")
    assert ask(server.url).text
    assert len(proxy.seen) == 1


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An OpenAI-compatible https:// server on 127.0.0.1 with a self-signed certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    reply = json.dumps(
        {"model": "m", "choices": [{"message": {"content": "over tls"}}], "usage": {}}
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{server.server_address[1]}/v1", cert
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"])
def test_a_custom_ca_bundle_is_trusted(
    https_server: tuple[str, Path], variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = https_server
    with pytest.raises(ModelError, match="certificate"):
        ask(url)  # the system's certificates do not know it
    monkeypatch.setenv(variable, str(cert))
    assert ask(url).text == "over tls"


def test_a_ca_bundle_that_cannot_be_read_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "missing.pem"))
    with pytest.raises(InputError, match=r"REQUESTS_CA_BUNDLE=.*missing\.pem"):
        create_model("openai:m", ModelOptions(base_url="https://127.0.0.1:9/v1"))
    # An http:// server needs no certificates: the variable is not read.
    create_model("openai:m", ModelOptions(base_url="http://127.0.0.1:9/v1"))
