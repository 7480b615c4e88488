"""LLMBar: position consistency and first-position preference from two-order judge outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from datasets import llmbar
from external_data import DATA, need

from conftest import invoke


def direct_counts(path: Path) -> tuple[int, int, int, int]:
    """(two-order rows, consistent, both chose position (a), both chose position (b)) read
    straight from the result file, without assay's records."""
    both = consistent = first = second = 0
    for row in json.loads(path.read_text(encoding="utf-8")):
        result = row["results"][0]
        unswapped, swapped = result["swap = False"]["winner"], result["swap = True"]["winner"]
        if unswapped is None or swapped is None:
            continue
        both += 1
        consistent += unswapped == swapped
        # position (a) shows output_1 unswapped and output_2 swapped
        first += unswapped == "1" and swapped == "2"
        second += unswapped == "2" and swapped == "1"
    return both, consistent, first, second


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = need(llmbar.FOLDER)
    files = [f for f in llmbar.result_files(DATA) if "LLMBar" in str(f.relative_to(folder))]
    rows = [row for f in files for row in llmbar.comparisons(DATA, f)]
    path = tmp_path_factory.mktemp("llmbar") / "comparisons.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = invoke("bias", "--comparisons", path, "--json")
    assert result.code == 0, result.stderr
    judges: dict[str, Any] = result.json()["judges"]
    totals: dict[str, list[int]] = {}
    for f in files:
        counts = direct_counts(f)
        total = totals.setdefault(llmbar.judge_of(f), [0, 0, 0, 0])
        for k in range(4):
            total[k] += counts[k]
    return {"judges": judges, "direct": totals}


def test_position_figures_match_the_raw_outputs(audit: dict[str, Any]) -> None:
    assert len(audit["direct"]) == 12
    for judge, (both, consistent, first, second) in audit["direct"].items():
        figures = audit["judges"][judge]
        assert figures["two_order_comparisons"] == both, judge
        assert figures["position_consistency"] == pytest.approx(consistent / both), judge
        assert (figures["first_position_wins"], figures["second_position_wins"]) == (
            first,
            second,
        ), judge


def test_known_judge_behaviour(audit: dict[str, Any]) -> None:
    judges = audit["judges"]
    gpt4 = judges["GPT-4/Vanilla"]
    # GPT-4 is the most position-consistent judge and shows no significant position preference
    assert gpt4["position_consistency"] == max(j["position_consistency"] for j in judges.values())
    assert gpt4["position_consistency"] > 0.85 and not gpt4["flagged"]
    # the weaker judges prefer the response shown first, by a wide margin
    for name in ("ChatGPT/Vanilla", "ChatGPT-0301/Vanilla", "Falcon/Vanilla"):
        assert judges[name]["flagged"] and judges[name]["first_position_share"] > 0.85, name
        assert judges[name]["position_consistency"] < 0.7, name
