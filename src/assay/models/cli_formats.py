"""Parsers for what agent CLIs print: `text`, `claude-json` and `codex-jsonl`.

Each parser takes the process's stdout and returns a Response or raises ModelError;
lines that are not part of the format (warnings, progress notes) are tolerated. The agent
formats also read the agent's steps into the Response's trajectory (core/trajectory.py):
claude's `assistant` and `user` events (`--output-format stream-json --verbose`, or the
list `json --verbose` prints) and codex's completed items (commands, MCP tool calls, web
searches, file changes, messages).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from assay.core.redact import scrub_cut
from assay.core.trajectory import model_step, tool_step
from assay.models.base import UNREADABLE_COST, ModelError, Response, reported_cost, token_count
from assay.models.trajectories import steps_from_messages

FORMATS = ("text", "claude-json", "codex-jsonl")
MESSAGE_LIMIT = 300
# Words in an error text that say the provider was overloaded or rate limited.
OVERLOAD_HINTS = ("overloaded", "rate limit", "rate_limit", "429", "529", "503")


def _short(text: str) -> str:
    text = scrub_cut(" ".join(str(text).split()), MESSAGE_LIMIT + 1)
    return text[:MESSAGE_LIMIT] + ("…" if len(text) > MESSAGE_LIMIT else "")


def _failure(prefix: str, text: str) -> ModelError:
    """A failed answer; retryable when the text says the provider was overloaded."""
    overload = any(hint in text.lower() for hint in OVERLOAD_HINTS)
    return ModelError(f"{prefix}: {_short(text)}", retryable=overload, overload=overload)


def _counts(usage: Any, inputs: tuple[str, ...], output: str) -> tuple[int, int, bool]:
    """Input tokens (the sum of the `inputs` keys), output tokens and whether every count
    present could be read (a count that is not an integer of at least 0, say `Infinity` or
    `1e400`, is unreadable usage: its call counts at its reservation)."""
    if not isinstance(usage, dict):
        return 0, 0, usage is None
    counts = [token_count(usage.get(key)) for key in inputs]
    out = token_count(usage.get(output))
    readable = out is not None and all(c is not None for c in counts)
    return sum(c or 0 for c in counts), out or 0, readable


def parse_text(stdout: str) -> Response:
    """The whole stdout is the answer (trailing whitespace removed); empty is an error."""
    text = stdout.rstrip()
    if not text.strip():
        raise ModelError("the command printed nothing")
    return Response(text=text)


def _json_values(stdout: str) -> Iterator[Any]:
    """JSON values that start a line (one-line or pretty-printed); other lines are skipped."""
    decoder = json.JSONDecoder()
    offset = 0
    while offset < len(stdout):
        end = stdout.find("\n", offset)
        end = len(stdout) if end < 0 else end
        line = stdout[offset:end]
        start = offset + len(line) - len(line.lstrip())
        if line.lstrip()[:1] in ("{", "["):
            try:
                value, stop = decoder.raw_decode(stdout, start)
            except (ValueError, RecursionError):  # not JSON, or nested too deep to read
                pass
            else:
                yield value
                newline = stdout.find("\n", stop)
                offset = len(stdout) if newline < 0 else newline + 1
                continue
        offset = end + 1


def _claude_events(stdout: str) -> Iterator[dict[str, Any]]:
    for value in _json_values(stdout):
        items = value if isinstance(value, list) else [value]  # `json --verbose` prints a list
        yield from (item for item in items if isinstance(item, dict))


def _claude_result(stdout: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = None
    for item in _claude_events(stdout):
        if item.get("type") == "result":
            found = item
    return found


def claude_trajectory(stdout: str) -> list[dict[str, Any]] | None:
    """The steps of claude's `assistant` and `user` events (Anthropic messages: tool_use and
    tool_result blocks); the events of one API message (claude prints each content block
    as an event of its own, with the message's id) make one model turn. None when the output
    has no such events (`--output-format json` without `--verbose`)."""
    messages: list[dict[str, Any]] = []
    for event in _claude_events(stdout):
        message = event.get("message")
        if event.get("type") not in ("assistant", "user") or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        last = messages[-1] if messages else None
        if (
            event["type"] == "assistant"
            and last is not None
            and last["role"] == "assistant"
            and message.get("id") is not None
            and last.get("id") == message.get("id")
        ):
            last["content"] = [*last["content"], *blocks]
            last["usage"] = message.get("usage", last.get("usage"))
            continue
        messages.append(
            {
                "role": event["type"],
                "id": message.get("id"),
                "content": list(blocks),
                "usage": message.get("usage"),
            }
        )
    return steps_from_messages(messages) if messages else None


def parse_claude_json(stdout: str) -> Response:
    """`claude --output-format stream-json --verbose` (or `json`): `result` is the answer;
    `is_error` or a non-success subtype is an error (carrying its `total_cost_usd`); usage
    (cache tokens counted as input), `total_cost_usd` and the trajectory of its events kept."""
    result = _claude_result(stdout)
    if result is None:
        raise ModelError(
            "claude-json: no result object in the output"
            if stdout.strip()
            else "claude-json: the command printed nothing"
        )
    # a cost that is no amount (-5, NaN, "0.01") counts at the call's reservation, never
    # priced from its tokens instead
    cost_usd = reported_cost(result.get("total_cost_usd"))
    subtype = result.get("subtype", "success")
    if result.get("is_error") is True or subtype != "success":
        # e.g. `error_max_budget_usd`: the call stopped at its --max-budget-usd, and what it
        # spent until then still counts against the budget
        reason = result.get("result") or result.get("error") or "no message"
        failure = _failure(f"claude-json: {subtype}", str(reason))
        failure.cost_usd = cost_usd
        raise failure
    text = result.get("result")
    if not isinstance(text, str):
        raise ModelError("claude-json: the result object has no `result` text")
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    input_tokens, output_tokens, readable = _counts(result.get("usage"), keys, "output_tokens")
    if cost_usd is None and not readable:
        cost_usd = UNREADABLE_COST
    models = result.get("modelUsage")
    model = next(iter(models), None) if isinstance(models, dict) and models else None
    return Response(
        text=text,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost_usd,
        model=model,
        trajectory=claude_trajectory(stdout),
    )


AGENT_MESSAGE_TYPES = ("agent_message", "assistant_message")


def _codex_step(item: dict[str, Any]) -> dict[str, Any] | None:
    """A completed codex item as a step: a message is a model turn; a command (`shell`), an
    MCP tool call (its tool's name), a web search (`web_search`) or a file change
    (`apply_patch`) a tool call; reasoning and to-do lists are no step."""
    kind = item.get("type", item.get("item_type"))
    failed = item.get("status") == "failed"
    if kind in AGENT_MESSAGE_TYPES and isinstance(item.get("text"), str):
        return model_step(item["text"])
    if kind == "command_execution":
        code = item.get("exit_code")
        error = f"exit code {code}" if isinstance(code, int) and code != 0 else None
        return tool_step(
            "shell",
            {"command": item.get("command")},
            id=item.get("id"),
            result=str(item.get("aggregated_output") or ""),
            error=error or ("failed" if failed else None),
        )
    if kind == "mcp_tool_call":
        arguments = item.get("arguments")
        error = item.get("error")
        return tool_step(
            str(item.get("tool") or "mcp"),
            arguments if isinstance(arguments, dict) else {},
            id=item.get("id"),
            result=None if item.get("result") is None else json.dumps(item["result"]),
            error=str(error.get("message") if isinstance(error, dict) else error)
            if error is not None
            else ("failed" if failed else None),
        )
    if kind == "web_search":
        return tool_step("web_search", {"query": item.get("query")}, id=item.get("id"))
    if kind == "file_change":
        return tool_step(
            "apply_patch",
            {"changes": item.get("changes")},
            id=item.get("id"),
            error="failed" if failed else None,
        )
    return None


def parse_codex_jsonl(stdout: str) -> Response:
    """`codex exec --json`: the last completed agent_message is the answer (all are kept in
    `state.agent_messages`); usage from the last turn.completed; a failed turn is an error."""
    messages: list[str] = []
    steps: list[dict[str, Any]] = []
    usage: Any = None
    failure: str | None = None
    deep = False  # a line nested too deep to read: it may be the usage
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:  # not JSON: a note among the events
            continue
        except RecursionError:
            deep = True
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            item_type = item.get("type", item.get("item_type"))
            if item_type in AGENT_MESSAGE_TYPES and isinstance(item.get("text"), str):
                messages.append(item["text"])
            step = _codex_step(item)
            if step is not None:
                steps.append(step)
        elif kind == "turn.completed":
            usage = event.get("usage", {})  # not an object: unreadable usage (`_counts`)
            failure = None
        elif kind == "turn.failed":
            error = event.get("error")
            failure = str(error.get("message") if isinstance(error, dict) else error)
        elif kind == "error":
            failure = str(event.get("message") or "error event")
    if failure is not None:
        raise _failure("codex-jsonl: turn failed", failure)
    if not messages:
        raise ModelError(
            "codex-jsonl: no agent_message in the output"
            if stdout.strip()
            else "codex-jsonl: the command printed nothing"
        )
    # no turn completed with its usage, or a line that could not be read: the cost is unknown
    input_tokens, output_tokens, readable = _counts(usage, ("input_tokens",), "output_tokens")
    readable = readable and usage is not None and not deep
    usage = usage if isinstance(usage, dict) else {}
    return Response(
        text=messages[-1],
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=None if readable else UNREADABLE_COST,
        state={"agent_messages": messages, "usage": usage if readable else None},
        trajectory=steps,
    )


PARSERS: dict[str, Callable[[str], Response]] = {
    "text": parse_text,
    "claude-json": parse_claude_json,
    "codex-jsonl": parse_codex_jsonl,
}
