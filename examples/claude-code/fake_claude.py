"""A stand-in for the `claude` CLI, for running this example offline and in assay's tests.

It prints what `claude --print --output-format stream-json --verbose` prints (Claude Code's
documented stream-json: a `system` init event, one `assistant` event per content block of
each API message, a `user` event per tool result, a closing `result` event with the cost),
scripted rather than thought up: when the prompt carries the skill ("run its test suite"),
or asks about the tests, it runs pytest through its Bash tool (the result is canned: it runs
nothing); otherwise it only reads calc.py and answers from the code.
"""

from __future__ import annotations

import json
import sys

SESSION = "fake-session"
MODEL = "claude-sonnet-4-5-20250929"


def emit(event: dict[str, object]) -> None:
    print(json.dumps(event), flush=True)


def assistant(message: str, block: dict[str, object], tokens: tuple[int, int]) -> None:
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1]}
    body = {"id": message, "type": "message", "role": "assistant", "model": MODEL,
            "content": [block], "stop_reason": None, "usage": usage}  # fmt: skip
    emit({"type": "assistant", "message": body, "parent_tool_use_id": None, "session_id": SESSION})


def tool_result(use_id: str, text: str) -> None:
    block = {"type": "tool_result", "tool_use_id": use_id, "content": text, "is_error": False}
    message = {"role": "user", "content": [block]}
    emit({"type": "user", "message": message, "parent_tool_use_id": None, "session_id": SESSION})


def main(args: list[str]) -> int:
    if "--output-format" not in args or args[args.index("--output-format") + 1] != "stream-json":
        print("fake claude: this stand-in only speaks --output-format stream-json", file=sys.stderr)
        return 2
    if "--verbose" not in args:
        print("Error: --output-format=stream-json requires --verbose", file=sys.stderr)
        return 1
    prompt = args[args.index("--") + 1] if "--" in args else args[-1]
    emit({"type": "system", "subtype": "init", "session_id": SESSION, "model": MODEL,
          "tools": ["Bash", "Read", "Grep"], "permissionMode": "default"})  # fmt: skip
    if "run its test suite" in prompt or "tests pass" in prompt:
        assistant("msg_01", {"type": "text", "text": "I'll run the tests first."}, (900, 12))
        command = {"command": "python -m pytest -q -p no:cacheprovider", "description": "Run tests"}
        use = {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": command}
        assistant("msg_01", use, (900, 40))
        tool_result("toolu_01", "..                                 [100%]\n2 passed in 0.01s")
        answer = "The tests pass (2 passed): add() handles negative numbers and divide() raises"
        answer += " ZeroDivisionError on a zero divisor."
    else:
        use = {"type": "tool_use", "id": "toolu_01", "name": "Read",
               "input": {"file_path": "calc.py"}}  # fmt: skip
        assistant("msg_01", use, (800, 30))
        tool_result("toolu_01", "def add(a, b):\n    return a + b\n...")
        answer = "Reading calc.py, add() simply returns a + b, so negative numbers work."
    assistant("msg_02", {"type": "text", "text": answer}, (1100, 60))
    emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
          "result": answer, "session_id": SESSION, "total_cost_usd": 0.0042,
          "usage": {"input_tokens": 2000, "output_tokens": 100}})  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
