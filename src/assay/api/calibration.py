"""`assay.calibrate`: measure each judge against human labels, per dimension."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.errors import EXIT_GATE_FAILED, EXIT_OK, InputError
from assay.core.jsonl import load_records, read_text
from assay.measure.thresholds import DEFAULT_KAPPA, DEFAULT_SAFETY_DIMS
from assay.store import DEFAULT_STORE

if TYPE_CHECKING:
    from assay.measure.agreement import DimensionResult


@dataclass(slots=True)
class Calibration:
    """Per dimension, each judge's agreement with the human reference and its verdict."""

    dimensions: dict[str, DimensionResult]
    safety: dict[str, str]
    positive: str
    kappa: float
    enforced: bool

    @property
    def passed(self) -> bool:
        """Every judge of every dimension is calibrated (PASS)."""
        verdicts = [j.verdict for r in self.dimensions.values() for j in r.judges.values()]
        return bool(verdicts) and all(v == "PASS" for v in verdicts)

    @property
    def gate_failed(self) -> bool:
        """Enforced, and a safety dimension is not PASS (failed, under-sampled or absent)."""
        return self.enforced and any(status != "PASS" for status in self.safety.values())

    @property
    def exit_code(self) -> int:
        return EXIT_GATE_FAILED if self.gate_failed else EXIT_OK

    def as_json(self) -> dict[str, Any]:
        """`assay calibrate --json` (`assay schema calibration`)."""
        from assay.api.outputs import Calibration as Schema

        return Schema.model_validate(
            {
                "passed": self.passed,
                "enforced": self.enforced,
                "gate_failed": self.gate_failed,
                "positive": self.positive,
                "kappa_threshold": self.kappa,
                "safety": self.safety,
                "dimensions": {d: r.as_json() for d, r in self.dimensions.items()},
            }
        ).model_dump(mode="json")


def calibrate(
    labels: str | Path,
    *,
    positive: str = "FAIL",
    enforce: bool = False,
    safety_dims: Sequence[str] = DEFAULT_SAFETY_DIMS,
    kappa: float = DEFAULT_KAPPA,
    store: str | Path | None = DEFAULT_STORE,
) -> Calibration:
    """Compare every judge rater of the labels file with the human reference.

    With a `store` (default .assay/assay.db; None: not recorded) the results are recorded per
    judge configuration, where a suite's `require_calibrated_judge` gate finds them."""
    from assay.engine.plan import sha256_text
    from assay.measure.agreement import Thresholds, safety_status
    from assay.measure.agreement import calibrate as agreement

    if not 0.0 <= kappa <= 1.0:
        raise InputError(f"ERROR: --kappa: must be between 0 and 1, got {kappa}")
    path = Path(labels)
    if store is not None:
        from assay.core.writable import Output, check_outputs

        check_outputs([Output("--store", Path(store))], [("the labels (--labels)", path)])
    thresholds = Thresholds(kappa=kappa, positive=positive, safety_dims=tuple(safety_dims))
    from assay.core.records import Label

    records = load_records(path, Label)
    if not records:
        raise InputError(f"ERROR: {path}: no labels in the file")
    results = agreement(path, records, thresholds)
    if store is not None:
        from assay.store import Store
        from assay.store.calibrations import save_calibration

        handle = Store(Path(store))
        try:
            save_calibration(handle, results, sha256_text(read_text(path)))
        finally:
            handle.close()
    return Calibration(
        dimensions=results,
        safety=safety_status(results, thresholds),
        positive=positive,
        kappa=kappa,
        enforced=enforce,
    )
