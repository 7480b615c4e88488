"""A python: agent's trajectory: the steps it reports, or read from its chat messages.

An agent returns `trajectory` (a list of steps, core/trajectory.py) or `messages`: the
messages of its conversation, as a LangGraph graph's final state holds them
(`state["messages"]`: LangChain message objects, or their dicts) or as an OpenAI-compatible
or Anthropic tool-calling loop keeps them (dicts). Each assistant message becomes a model turn
(its text and, when reported, its tokens), each tool call in it a tool step, and the tool's
reply (a LangChain `ToolMessage`, an OpenAI `role: tool` message, an Anthropic `tool_result`
block) its result, matched by the call's id.
"""

from __future__ import annotations

import json
from typing import Any

from assay.core.trajectory import checked_steps, model_step, tool_step
from assay.models.base import ModelError


def _get(message: Any, key: str) -> Any:
    """A field of a message dict or object (`message["content"]` or `message.content`)."""
    if isinstance(message, dict):
        return message.get(key)
    return getattr(message, key, None)


def _text(content: Any) -> str:
    """A message's text: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "\n".join(parts)
    return "" if content is None else str(content)


def _arguments(value: Any) -> dict[str, Any]:
    """Tool arguments as a JSON object (OpenAI sends them as a JSON string)."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            return {"_raw": value}
    return value if isinstance(value, dict) else {"_value": value}


def _calls(message: Any) -> list[tuple[str | None, str, dict[str, Any]]]:
    """(id, name, arguments) of each tool call an assistant message makes."""
    found: list[tuple[str | None, str, dict[str, Any]]] = []
    for call in _get(message, "tool_calls") or []:
        function = _get(call, "function")
        if function is not None:  # OpenAI: {"id", "type": "function", "function": {...}}
            found.append(
                (
                    _get(call, "id"),
                    str(_get(function, "name")),
                    _arguments(_get(function, "arguments")),
                )
            )
        else:  # LangChain: {"id", "name", "args"}
            found.append(
                (_get(call, "id"), str(_get(call, "name")), _arguments(_get(call, "args")))
            )
    content = _get(message, "content")
    if isinstance(content, list):  # Anthropic: tool_use blocks in the content
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                found.append(
                    (block.get("id"), str(block.get("name")), _arguments(block.get("input")))
                )
    return found


def _role(message: Any) -> str:
    role = _get(message, "role") or _get(message, "type")
    return {"ai": "assistant", "human": "user"}.get(str(role), str(role))


def _usage(message: Any) -> tuple[int | None, int | None]:
    usage = _get(message, "usage_metadata") or _get(message, "usage")
    if not isinstance(usage, dict):
        return None, None
    got = [
        usage.get(k)
        for k in ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens")
    ]
    ints = [v if isinstance(v, int) and not isinstance(v, bool) else None for v in got]
    return (ints[0] if ints[0] is not None else ints[2]), (
        ints[1] if ints[1] is not None else ints[3]
    )


def steps_from_messages(messages: Any) -> list[dict[str, Any]]:
    """The steps a conversation's messages record (see the module's docstring)."""
    if not isinstance(messages, list | tuple):
        raise ModelError("the agent's 'messages' must be a list of messages")
    steps: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for message in messages:
        role = _role(message)
        if role == "assistant":
            tokens_in, tokens_out = _usage(message)
            steps.append(model_step(_text(_get(message, "content")), tokens_in, tokens_out))
            for call_id, name, arguments in _calls(message):
                step = tool_step(name, arguments, id=call_id)
                steps.append(step)
                if call_id:
                    by_id[call_id] = step
        elif role == "tool":  # OpenAI and LangChain: one message per tool reply
            _answer(
                by_id,
                _get(message, "tool_call_id"),
                _get(message, "content"),
                _get(message, "status") == "error",
            )
        elif role == "user" and isinstance(_get(message, "content"), list):  # Anthropic
            for block in _get(message, "content"):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    _answer(
                        by_id,
                        block.get("tool_use_id"),
                        block.get("content"),
                        block.get("is_error") is True,
                    )
    return steps


def _answer(by_id: dict[str, dict[str, Any]], call_id: Any, content: Any, failed: bool) -> None:
    """Record a tool's reply on the call it answers (a reply to no known call is dropped)."""
    step = by_id.get(str(call_id)) if call_id is not None else None
    if step is None:
        return
    text = _text(content)
    done = tool_step(
        step["name"],
        step["arguments"],
        id=step.get("id"),
        result=None if failed else text,
        error=text if failed else None,
    )
    step.clear()
    step.update(done)


def agent_trajectory(result: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The trajectory a python: agent's reply reports: its `trajectory` steps, else the steps
    of its `messages`; None when it reports neither. A malformed one is a ModelError."""
    if "trajectory" in result:
        try:
            return checked_steps(result["trajectory"])
        except ValueError as exc:
            raise ModelError(f"the agent's trajectory: {exc}") from None
    if "messages" in result:
        return checked_steps(steps_from_messages(result["messages"]))
    return None
