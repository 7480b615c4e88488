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
  step limit).

A case without `expect.tools`, or a trial without a recorded trajectory (a runner that
reports none), is not scored.
"""

from __future__ import annotations

from collections import Counter

from assay.core.errors import InputError
from assay.core.trajectory import (
    ModelTurn,
    ToolsExpect,
    arguments_match,
    tool_calls,
)
from assay.scorers.base import BLOCKER, CheckScorer, Metrics, ScoreContext, register
from assay.scorers.common import flag


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

    def check(self, ctx: ScoreContext) -> Metrics | None:
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
        passed = all(name in names for name in tools.must_call or ())
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
            passed = passed and matched
        if tools.args:
            found = [
                any(c.name == tool and arguments_match(c.arguments, wanted) for c in calls)
                for tool, wanted in tools.args.items()
            ]
            metrics["args_match"] = sum(found) / len(found)
            passed = passed and all(found)
        if tools.must_not_call is not None:
            forbidden = set(tools.must_not_call)
            count = sum(name in forbidden for name in names)
            metrics["forbidden_calls"] = float(count)
            metrics[BLOCKER] = flag(count > 0 and self.forbidden_blocks)
            passed = passed and count == 0
        if tools.max_steps is not None:
            within = len(trajectory) <= tools.max_steps
            metrics["within_max_steps"] = flag(within)
            passed = passed and within
        metrics["tools_correct"] = flag(passed)
        return metrics
