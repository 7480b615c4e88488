"""The TOML suite file: one file that says what to run, how to score it and how to gate it.

Paths inside a suite (cases, skills) are relative to the suite file.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import InputError
from assay.jsonl import describe_validation_error, read_text

DEFAULT_MODEL = "llamacpp:gemma-3-270m"


class SuiteModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RunSection(SuiteModel):
    """[run]: engine limits and call parameters."""

    concurrency: int = Field(default=8, ge=1, le=1024)
    max_tokens: int = Field(default=512, ge=1)
    temperature: float = 0.0
    timeout: float = Field(default=120.0, gt=0)
    retries: int = Field(default=4, ge=0)
    budget_usd: float | None = Field(default=None, ge=0)
    allow_unmetered: bool = False
    base_url: str | None = None
    price: str | None = None
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None


class ConditionSection(SuiteModel):
    """[[conditions]]: a named variant; its model defaults to the suite's."""

    name: str = Field(min_length=1)
    model: str | None = None
    skill: str | None = None
    system: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)


class Suite(SuiteModel):
    """A whole suite file."""

    name: str = "suite"
    description: str | None = None
    cases: str = "cases.jsonl"
    model: str = DEFAULT_MODEL
    trials: int = Field(default=3, ge=1)
    output: str | None = None
    run: RunSection = Field(default_factory=RunSection)
    conditions: list[ConditionSection] = Field(
        default_factory=lambda: [ConditionSection(name="baseline")], min_length=1
    )
    scoring: dict[str, Any] = Field(default_factory=dict)
    gate: dict[str, Any] = Field(default_factory=dict)
    judge: dict[str, Any] = Field(default_factory=dict)
    report: dict[str, Any] = Field(default_factory=dict)
    root: Path = Field(default=Path("."), exclude=True)

    def path(self, relative: str) -> Path:
        """Resolve a path written in the suite against the suite's folder."""
        return (self.root / relative) if not Path(relative).is_absolute() else Path(relative)


def _line_of_key(text: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def load_suite(path: Path) -> Suite:
    """Parse and validate a suite file; errors name the file, line and field."""
    text = read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = found.group(1) if found else "1"
        raise InputError(f"ERROR: {path}:{line}: invalid TOML: {exc}") from None
    except RecursionError:
        raise InputError(f"ERROR: {path}: invalid TOML: nested too deeply") from None
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        messages = []
        for problem, err in zip(describe_validation_error(exc), exc.errors(), strict=True):
            keys = [str(p) for p in err["loc"] if isinstance(p, str)]
            line = _line_of_key(text, keys[-1]) if keys else None
            where = f"{path}:{line}" if line else f"{path}"
            messages.append(f"ERROR: {where}: {problem}")
        raise InputError(messages) from None
    suite.root = path.parent
    return suite
