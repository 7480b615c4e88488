"""The `tools` scorer: a trial's tool calls against the case's `expect.tools`.

Per trial (core/trajectory.py `ToolsExpect` says what each key means):

- `tool_precision`, `tool_recall`, `tool_f1`: the distinct tools called against the tools
  expected (`must_call`, `args`, and `order` unless `match` is `subset`, where the listed
  calls are a limit, not a requirement); precision is left out when nothing was called.
- `trajectory_match` (with `order`): 1 when the sequence of tool names matches `order` under
  `match`, agentevals' four modes: `strict` the same calls in the same order, `unordered` the
  same calls in any order, `subset` no call beyond the listed ones, `superset` at least the
  listed ones (each as a multiset of names: a tool listed twice must be called twice).
- `args_match` (with `args`): the share of the tools in `args` with at least one call whose
  arguments contain the given JSON object (a JSON subset: objects by key, recursively; lists
  item by item, of the same length; scalars equal, a boolean never equal to a number) or,
  when the object has a `$schema` key, validate against it as a JSON Schema.
- `forbidden_calls` (with `must_not_call`): the calls to forbidden tools; any is a blocking
  finding (`blocker`), unless the scorer's option `forbidden_blocks = false` (a suite's
  `{ name = "tools", options = { forbidden_blocks = false } }`) leaves it to the gate's
  thresholds (`tools_correct` is 0 either way).
- `within_max_steps` (with `max_steps`): 1 when the trial took at most that many steps.
- `steps`, `tool_calls`, `model_turns`: what the trial took.
- `tools_correct` (primary): 1 when every stated expectation holds (each `must_call` tool
  called, the trajectory matched, every `args` subset found, no forbidden call, within the
  step limit). When it is 0 the score's `notes` name each miss: the tool never called, the
  calls against `order`, the tool and argument that did not match (`escalate: argument
  reason missing`), each forbidden call with its step (`called forbidden tool
  delete_account (step 3)`), the step count (`12 steps > max_steps 8`); the gate's messages
  repeat them.

An argument schema that runs past a limit (core/bounded.py) gives an errored score row
naming the tool, never a pass.

A case without `expect.tools`, or a trial without a recorded trajectory (a runner that
reports none), is not scored.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from assay.core.bounded import LimitExceeded, schema_error
from assay.core.errors import InputError
from assay.core.text import cut
from assay.core.trajectory import (
    ModelTurn,
    ToolCall,
    ToolsExpect,
    arguments_match,
    is_schema,
    schema_validator,
    subset_difference,
    tool_calls,
)
from assay.scorers.base import BLOCKER, CheckScorer, Metrics, Score, ScoreContext, register
from assay.scorers.common import flag

NAMES_LIMIT = 200
DETAIL_LIMIT = 300


def trajectory_matches(called: list[str], reference: list[str], mode: str) -> bool:
    """agentevals' trajectory match of the called tool names against the reference ones."""
    if mode == "strict":
        return called == reference
    made, wanted = Counter(called), Counter(reference)
    if mode == "unordered":
        return made == wanted
    if mode == "subset":
        return made <= wanted
    return made >= wanted  # superset


@register("tools")
class Tools(CheckScorer):
    """Tool-call precision, recall and F1, trajectory match, argument match, forbidden calls
    and steps, against `expect.tools` (see the module's docstring)."""

    name = "tools"
    metrics = (
        "tools_correct",
        "tool_precision",
        "tool_recall",
        "tool_f1",
        "trajectory_match",
        "args_match",
        "forbidden_calls",
        "within_max_steps",
        "steps",
        "tool_calls",
        "model_turns",
        BLOCKER,
    )
    primary = ("tools_correct",)

    def __init__(self, forbidden_blocks: bool = True) -> None:
        if not isinstance(forbidden_blocks, bool):
            raise InputError(
                f"ERROR: scorer 'tools': forbidden_blocks must be true or false,"
                f" got {forbidden_blocks!r}"
            )
        self.forbidden_blocks = forbidden_blocks

    async def score(self, ctx: ScoreContext) -> Score | None:
        """The trial's metrics; when `tools_correct` is 0, `notes` says each expectation
        missed (see `assess`)."""
        try:
            found = self.assess(ctx)
        except LimitExceeded as exc:
            return Score.of(ctx.trial, self.name, {}, error=str(exc))
        if found is None:
            return None
        metrics, problems = found
        return Score.of(ctx.trial, self.name, metrics, **({"notes": problems} if problems else {}))

    def check(self, ctx: ScoreContext) -> Metrics | None:
        found = self.assess(ctx)
        return None if found is None else found[0]

    def assess(self, ctx: ScoreContext) -> tuple[Metrics, str] | None:
        """The metrics, and what was missed in words (`; `-joined; empty when nothing was):
        `lookup_lease never called (must_call)`, `called forbidden tool delete_account (step
        3)`, `escalate: argument reason missing`, `12 steps > max_steps 8`, ... LimitExceeded
        (naming the tool) when an argument schema runs past a limit."""
        expect = ctx.case.expect
        trajectory = ctx.trial.trajectory
        if expect is None or expect.tools is None or trajectory is None:
            return None
        tools: ToolsExpect = expect.tools
        calls = tool_calls(trajectory)
        names = [call.name for call in calls]
        metrics: Metrics = {
            "steps": float(len(trajectory)),
            "tool_calls": float(len(calls)),
            "model_turns": float(sum(isinstance(s, ModelTurn) for s in trajectory)),
        }
        problems = [
            f"{name} never called (must_call)"
            for name in tools.must_call or ()
            if name not in names
        ]
        expected = set(tools.must_call or ()) | set(tools.args or {})
        if tools.match != "subset":
            expected |= set(tools.order or ())
        if expected:
            hits = len(expected & set(names))
            recall = hits / len(expected)
            metrics["tool_recall"] = recall
            if names:
                precision = hits / len(set(names))
                metrics["tool_precision"] = precision
                total = precision + recall
                metrics["tool_f1"] = 2 * precision * recall / total if total else 0.0
            else:
                metrics["tool_f1"] = 0.0
        if tools.order is not None:
            matched = trajectory_matches(names, tools.order, tools.match)
            metrics["trajectory_match"] = flag(matched)
            if not matched:
                problems.append(
                    f"calls {_names(names)} do not match order {_names(tools.order)}"
                    f" ({tools.match})"
                )
        if tools.args:
            found = []
            for tool, wanted in tools.args.items():
                made = [c for c in calls if c.name == tool]
                hit = any(_matches(tool, c.arguments, wanted) for c in made)
                found.append(hit)
                if not hit:
                    problems.append(_args_problem(tool, made, wanted))
            metrics["args_match"] = sum(found) / len(found)
        if tools.must_not_call is not None:
            forbidden = set(tools.must_not_call)
            count = 0
            for number, step in enumerate(trajectory, start=1):
                if isinstance(step, ToolCall) and step.name in forbidden:
                    count += 1
                    problems.append(f"called forbidden tool {step.name} (step {number})")
            metrics["forbidden_calls"] = float(count)
            metrics[BLOCKER] = flag(count > 0 and self.forbidden_blocks)
        if tools.max_steps is not None:
            within = len(trajectory) <= tools.max_steps
            metrics["within_max_steps"] = flag(within)
            if not within:
                problems.append(f"{len(trajectory)} steps > max_steps {tools.max_steps}")
        metrics["tools_correct"] = flag(not problems)
        return metrics, "; ".join(problems)


def _names(names: list[str]) -> str:
    return cut("[" + ", ".join(names) + "]", NAMES_LIMIT)


def _matches(tool: str, arguments: dict[str, Any], wanted: dict[str, Any]) -> bool:
    try:
        return arguments_match(arguments, wanted)
    except LimitExceeded as exc:
        raise LimitExceeded(f"{tool}: arguments: {exc}") from None


def _args_problem(tool: str, made: list[ToolCall], wanted: dict[str, Any]) -> str:
    """Why no call of `tool` meets its `args`: never called, or the first call's first
    difference (the schema's most relevant error for a JSON Schema)."""
    if not made:
        return f"{tool} never called (args expected)"
    if is_schema(wanted):
        error = schema_error(schema_validator(wanted), made[0].arguments)
        detail = f"arguments do not match the schema: {error}"
    else:
        detail = subset_difference(made[0].arguments, wanted) or "arguments do not match"
    more = f" (none of its {len(made)} calls matches; the first shown)" if len(made) > 1 else ""
    return f"{tool}: {cut(detail, DETAIL_LIMIT)}{more}"
