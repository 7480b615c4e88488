"""`[gate] require_calibrated_judge`: a judge's scores count as evidence only once the judge
is calibrated (`assay calibrate`, stored per rater and prompt hash)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay.core.suite import GateSection
from assay.verdict.checks import Check
from assay.verdict.rows import ScoredTrial

if TYPE_CHECKING:
    from assay.store import Store


def judge_configurations(rows: Sequence[ScoredTrial]) -> list[tuple[str, str | None]]:
    """The judge configurations behind judge-sourced rows: (`judge:<model>`, prompt hash)."""
    found = {
        (r.source, r.judge_prompt_sha256 or None)
        for r in rows
        if r.source and r.source.startswith("judge:")
    }
    return sorted(found, key=lambda c: (c[0], c[1] or ""))


def calibration_checks(
    config: GateSection, rows: Sequence[ScoredTrial], store: Store | None
) -> list[Check]:
    """`require_calibrated_judge`: one check per judge configuration whose scores feed the gate.

    A configuration without a passing calibration (`assay calibrate`, stored per rater and
    prompt hash) makes the gate INCONCLUSIVE — its scores are not evidence yet, so the release
    is neither passed nor blamed on them; exit 1 all the same. No store: nothing is calibrated.
    """
    if not config.require_calibrated_judge:
        return []
    from assay.store.calibrations import require_calibrated_judge

    checks = []
    for rater, sha in judge_configurations(rows):
        shown = rater + (f" (prompt {sha[:12]})" if sha else "")
        if store is None:
            problems = [f"judge {shown}: no run store to read its calibration from"]
        else:
            problems = require_calibrated_judge(store, rater, sha, config.calibration_dimensions)
        if problems:
            reason = "require_calibrated_judge: " + "; ".join(problems)
            checks.append(Check(name=f"calibration:{rater}", status="inconclusive", reason=reason))
        else:
            checks.append(
                Check(
                    name=f"calibration:{rater}",
                    status="pass",
                    reason=f"judge {shown} is calibrated",
                )
            )
    return checks
