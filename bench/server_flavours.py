"""How OpenAI-compatible servers answer structured-output requests and unknown model names:
the rejection bodies real servers send, replayed by the mock server (`--flavour`).

- `openai`: takes every form (`json_schema`, `json_object`, none).
- `vllm`: vLLM 0.8 with the xgrammar guided-decoding backend. A `json_schema` whose schema
  uses keywords xgrammar cannot enforce (enum, string and array bounds, numeric ranges; the
  judges' schemas use them) is refused with a 400 in vLLM's flat error shape; `json_object`
  is taken. An unknown model name is a 404.
- `ollama`: Ollama's OpenAI-compatible endpoint when its grammar converter cannot take the
  schema: a 500 "invalid JSON schema in format"; `json_object` (its `format: "json"`) is
  taken. Models are listed with their tag (`NAME:latest`); an unknown one is a 404.
- `llama-cpp-python`: the llama-cpp-python server (0.3), whose request model allows only
  `text` and `json_object` (with an optional `schema`): `json_schema` is refused with a 500
  carrying the pydantic validation error. Any model name is served by its one model.
- `no-response-format`: a server whose request model forbids unknown fields and has no
  `response_format`: a 422 FastAPI validation error naming it.
"""

from __future__ import annotations

import json
from typing import Any

FLAVOURS = ("openai", "vllm", "ollama", "llama-cpp-python", "no-response-format")

XGRAMMAR_UNSUPPORTED = (
    "enum",
    "pattern",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
)

LLAMA_CPP_LITERAL_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", "
    "line 376, in create_chat_completion\n    POST /v1/chat/completions"
)

Reply = tuple[int, dict[str, Any]]


def _openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _vllm_error(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"object": "error", "message": message, "type": kind, "param": None, "code": code}


def _uses(schema: Any, keywords: tuple[str, ...]) -> bool:
    """Whether a JSON Schema uses any of `keywords` anywhere."""
    if isinstance(schema, dict):
        return any(k in schema for k in keywords) or any(
            _uses(v, keywords) for v in schema.values()
        )
    if isinstance(schema, list):
        return any(_uses(v, keywords) for v in schema)
    return False


def form_of(body: dict[str, Any]) -> str:
    """The structured-output form of a request: json_schema, json_object or none."""
    kind = (body.get("response_format") or {}).get("type")
    return str(kind) if kind in ("json_schema", "json_object") else "none"


def refusal(flavour: str, body: dict[str, Any]) -> Reply | None:
    """The error a server of this flavour sends for a chat request's structured output."""
    response_format = body.get("response_format")
    if response_format is None:
        return None
    kind = response_format.get("type")
    if flavour == "vllm" and kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if _uses(schema, XGRAMMAR_UNSUPPORTED):
            message = "The provided JSON schema contains features not supported by xgrammar."
            return 400, _vllm_error(message, "BadRequestError", 400)
    if flavour == "ollama" and kind == "json_schema":
        return 500, _openai_error("invalid JSON schema in format", "api_error")
    if flavour == "llama-cpp-python" and kind not in ("text", "json_object"):
        return 500, _openai_error(LLAMA_CPP_LITERAL_ERROR, "internal_server_error")
    if flavour == "no-response-format":
        detail = [
            {
                "loc": ["body", "response_format"],
                "msg": "extra fields not permitted",
                "type": "value_error.extra",
            }
        ]
        return 422, {"detail": detail}
    return None


def listed(flavour: str, models: list[str]) -> list[str]:
    """The ids `GET /v1/models` lists for the models a server serves."""
    if flavour == "ollama":
        return [m if ":" in m else f"{m}:latest" for m in models]
    return list(models)


def unknown_model(flavour: str, model: str, models: list[str]) -> Reply | None:
    """The error for a chat request naming a model the server does not serve."""
    ids = listed(flavour, models)
    if not models or model in ids or f"{model}:latest" in ids:
        return None
    if flavour == "llama-cpp-python":
        return None  # it answers every name with the one model it loaded
    if flavour == "vllm":
        return 404, _vllm_error(f"The model `{model}` does not exist.", "NotFoundError", 404)
    if flavour == "ollama":
        message = f'model "{model}" not found, try pulling it first'
        return 404, _openai_error(message, "not_found_error")
    message = f"The model `{model}` does not exist or you do not have access to it."
    return 404, _openai_error(message, "invalid_request_error", "model_not_found")


SCHEMA_MARKER = "JSON Schema:\n"


def requested_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON Schema a request asks for, wherever it travels: `json_schema.schema`,
    `json_object`'s `schema`, or (a plain prompt) after "JSON Schema:" in the last message."""
    response_format = body.get("response_format") or {}
    schema = (response_format.get("json_schema") or {}).get("schema") or response_format.get(
        "schema"
    )
    if isinstance(schema, dict):
        return schema
    messages = body.get("messages") or []
    text = str(messages[-1].get("content", "")) if messages else ""
    if SCHEMA_MARKER in text:
        try:
            found = json.loads(text.rsplit(SCHEMA_MARKER, 1)[1])
        except ValueError:
            return None
        return found if isinstance(found, dict) else None
    return None
