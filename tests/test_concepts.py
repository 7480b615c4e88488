"""One definition of each shared concept: the Rubric (judges, review app, gate, schema) and
Krippendorff's alpha (judge panels, review app, calibrate)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import get_type_hints

import krippendorff
import numpy as np
import pytest

import assay
from assay.api.schemas import SCHEMAS
from assay.core import rubric as core_rubric
from assay.core.errors import InputError
from assay.core.rubric import (
    DEFAULT_RUBRIC,
    DEFAULT_WEIGHTS,
    Rubric,
    load_rubric,
    resolve_criteria,
)
from assay.measure.agreement import human_alpha
from assay.measure.alpha import AlphaLevel, krippendorff_alpha
from assay.review.agreement import score_agreement
from assay.review.app import ReviewConfig
from assay.review.items import ItemKey
from assay.scorers import judge
from assay.scorers.judge import config as judge_config
from assay.store.review import Answer

SRC = Path(assay.__file__).resolve().parent


def all_modules() -> list[ModuleType]:
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages([str(SRC)], prefix="assay.")
        if not info.name.startswith("assay.__main__")
    ]


# -- one Rubric -----------------------------------------------------------------------------


def test_every_consumer_uses_the_one_rubric_class() -> None:
    assert judge.Rubric is Rubric
    assert get_type_hints(judge_config.JudgeConfig)["rubric"] == Rubric | None
    assert get_type_hints(ReviewConfig)["rubric"] is Rubric
    assert SCHEMAS["rubric"] is Rubric
    assert inspect.signature(load_rubric).return_annotation in ("Rubric", Rubric)
    defined = {
        f"{module.__name__}.{name}"
        for module in all_modules()
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and value.__module__ == module.__name__
        and name in {"Rubric", "Metric", "Criterion"}
    }
    assert defined == {"assay.core.rubric.Rubric", "assay.core.rubric.Criterion"}


def test_review_app_judges_and_gate_share_the_default_rubric() -> None:
    config = ReviewConfig(review=None, store=None)  # type: ignore[arg-type]
    assert config.rubric is DEFAULT_RUBRIC
    names = [c.name for c in DEFAULT_RUBRIC.judged_criteria()]
    assert names == ["correctness", "autonomy", "actionability", "safety", "concision"]
    assert list(DEFAULT_WEIGHTS.values()) == [0.3, 0.2, 0.2, 0.2, 0.1]
    assert list(DEFAULT_WEIGHTS) == names
    judged, scale = resolve_criteria(None, "1-5", concision=False)
    assert scale == "1-5"
    assert [(c.name, c.description) for c in judged] == [
        (c.name, c.description) for c in DEFAULT_RUBRIC.judged_criteria()
    ]
    gate = Rubric.from_weights()
    assert isinstance(gate, Rubric) and list(gate.weights) == names
    assert gate.weights == pytest.approx(DEFAULT_WEIGHTS)
    assert gate.bounds == (1.0, 5.0)


def test_default_metrics_describe_every_level_for_reviewers() -> None:
    for criterion in DEFAULT_RUBRIC.judged_criteria():
        assert criterion.label == criterion.name.capitalize()
        assert [level.score for level in criterion.levels] == list(DEFAULT_RUBRIC.points)
        assert all(criterion.describe(p) for p in DEFAULT_RUBRIC.points)


def test_a_weights_only_rubric_weighs_any_metric_on_its_scale() -> None:
    rubric = Rubric.from_weights({"correctness": 3, "citation_coverage": 1}, (0.0, 10.0))
    assert rubric.weights == {"correctness": 0.75, "citation_coverage": 0.25}
    assert rubric.bounds == (0.0, 10.0)
    assert rubric.weighted({"correctness": 8.0, "citation_coverage": 4.0}) == pytest.approx(7.0)
    assert rubric.weighted({"citation_coverage": 4.0}) == pytest.approx(4.0)
    assert rubric.weighted({"safety": 5.0}) is None
    assert DEFAULT_RUBRIC.bounds == (1.0, 5.0)  # the copy leaves the default as it was
    with pytest.raises(InputError, match="low"):
        Rubric.from_weights(None, (5.0, 1.0))
    with pytest.raises(InputError, match="at least one weight"):
        Rubric.from_weights({"correctness": 0})


def test_a_file_rubric_weighs_its_criteria() -> None:
    rubric = Rubric.model_validate(
        {
            "name": "Help",
            "description": "Solves it",
            "scale": "1-3",
            "levels": [{"score": i, "label": f"l{i}", "description": f"d{i}"} for i in (1, 2, 3)],
            "criteria": [
                {"name": "tone", "description": "Tone", "weight": 1},
                {"name": "facts", "description": "Facts", "weight": 3},
            ],
        }
    )
    assert rubric.weights == {"tone": 0.25, "facts": 0.75}
    assert rubric.bounds == (1.0, 3.0) and rubric.points == (1, 2, 3)
    assert "weights" not in rubric.model_dump() and "bounds" not in rubric.model_dump()


def test_rubric_module_keeps_the_names_judges_import() -> None:
    for name in ("Criterion", "Level", "EdgeCase", "Scale", "Strictness", "SCALES"):
        assert hasattr(core_rubric, name), name
    for name in ("resolve_criteria", "scale_bounds", "load_rubric", "dump_rubric", "slug"):
        assert callable(getattr(core_rubric, name)), name


# -- one Krippendorff's alpha ---------------------------------------------------------------

MATRIX = [
    [1.0, 2.0, 3.0, 3.0, None, 1.0],
    [1.0, 2.0, 2.0, 3.0, 2.0, None],
    [None, 3.0, 3.0, 3.0, 2.0, 1.0],
]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_is_the_librarys(level: AlphaLevel) -> None:
    data = np.array([[np.nan if v is None else v for v in row] for row in MATRIX])
    expected = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    assert krippendorff_alpha(MATRIX, level) == pytest.approx(expected, abs=1e-12)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-12)
    assert krippendorff_alpha(MATRIX, level, digits=4) == round(expected, 4)


def test_only_the_alpha_module_calls_the_library() -> None:
    users = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if re.search(r"^\s*(import|from) krippendorff\b", path.read_text("utf-8"), re.M)
    )
    assert users == ["measure/alpha.py"]


def test_alpha_is_none_when_undefined() -> None:
    assert krippendorff_alpha([[1.0, 2.0]], "nominal") is None  # one rater
    assert krippendorff_alpha([[], []], "nominal") is None  # no units
    assert krippendorff_alpha([[2.0, 2.0], [2.0, None]], "interval") is None  # no variation
    assert krippendorff_alpha([[None, None], [None, None]], "interval") is None


def test_review_app_and_calibrate_report_the_same_alpha() -> None:
    ratings = {"ann": [1, 2, 3, 3, 5], "bob": [1, 2, 2, 3, 4]}
    answers = [
        Answer(
            dataset="d",
            reviewer=reviewer,
            mode="scores",
            key=ItemKey(case_id=f"c{i}", trial=1, a="a", b="b"),
            answer={"responses": {"a": {"scores": {"correctness": value}, "blocker": False}}},
            answered_at="2026-01-01T00:00:00Z",
        )
        for reviewer, values in ratings.items()
        for i, value in enumerate(values)
    ]
    review = next(
        a for a in score_agreement(answers, ["correctness"]) if a.dimension == "correctness"
    )
    by_item: dict[str, dict[str, float | str]] = {
        f"c{i}": {f"human:{r}": float(values[i]) for r, values in ratings.items()} for i in range(5)
    }
    calibrate, items = human_alpha(by_item, numeric=True, rating_scale=True)
    matrix = [[float(v) for v in values] for values in ratings.values()]
    # one level for a 1-5 rating scale everywhere (it was interval α 0.8296 in calibrate,
    # ordinal α 0.8358 in the review app), checked against the library itself
    expected = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"))
    assert items == 5 and calibrate == review.alpha == pytest.approx(expected, abs=1e-12)
