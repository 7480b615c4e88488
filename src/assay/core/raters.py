"""How raters and calibration items are named, shared by every producer of Labels.

`assay review export` (humans) and `assay judge --labels` (judges) write Labels that
`assay calibrate` pairs by `item_id`; the judge rater is the Score row's `source`, so a
calibration stored for `judge:<model>` + prompt hash is found again from the rows it gates.

- rater: `human:<reviewer>` or `judge:<model>` (a panel: `judge:<m1>+<m2>`, the panel's
  aggregate; a cascade's screen tier: `judge:<screen model>` with the screen prompt's hash);
- item: `CASE:TRIAL:CONDITION` for one response, `CASE:TRIAL:A|B` for a comparison.
"""

from __future__ import annotations


def human_rater(reviewer: str) -> str:
    """The `source` / `rater` / `judge` value of a human reviewer."""
    return f"human:{reviewer}"


def judge_rater(model: str) -> str:
    """The `source` / `rater` value of a judge model (spec, or `m1+m2` for a panel)."""
    return model if model.startswith("judge:") else f"judge:{model}"


def item_id(case_id: str, trial: int, condition: str) -> str:
    """The calibration item one response is: `CASE:TRIAL:CONDITION`."""
    return f"{case_id}:{trial}:{condition}"


def pair_item_id(case_id: str, trial: int, a: str, b: str) -> str:
    """The calibration item one pairwise comparison is: `CASE:TRIAL:A|B`."""
    return f"{case_id}:{trial}:{a}|{b}"
