"""The review app's token: a guessable one (twelve spaces, `aaaaaaaaaaaa`, a repeated
pattern, a common password) is refused before the server starts, on loopback and on 0.0.0.0
alike, and the refusal suggests a random token that is accepted."""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import pytest

from assay.web.security import suggest_token, token_weakness
from conftest import make_case, write_jsonl

WEAK = [" " * 12, "a" * 12, "aaaaaaaaaaaaaaaaaaaa", "abababab1212", "password1234 ", "\t" * 16,
        "abcdefghijklmnop", "123456789012", "Password1234", "qwerty123456", "iloveyou1234",
        "P@ssw0rd!2024", "Summer2024!!", "assayreview2024"]  # fmt: skip


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    trials = write_jsonl(
        tmp_path / "trials.jsonl",
        [{"case_id": "c0", "trial": 1, "condition": "baseline", "runner": "mock",
          "response": "an answer"}],
    )  # fmt: skip
    return ["--trials", str(trials), "--cases", str(cases), "--store", str(tmp_path / "r.db")]


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
@pytest.mark.parametrize("token", WEAK)
def test_weak_tokens_are_refused_before_the_server_starts(
    files: list[str], cli: Any, host: str, token: str
) -> None:
    result = cli("review", "serve", *files, "--host", host, "--port", "0", "--token", token)
    assert result.code == 2, result.stdout  # a started server would block here
    assert "ERROR: --token: " in result.stderr and "review:" not in result.stdout
    suggested = re.search(r"for example: --token (\S+)", result.stderr)
    assert suggested and token_weakness(suggested.group(1)) is None


def test_random_tokens_are_accepted() -> None:
    for _ in range(200):
        assert token_weakness(secrets.token_urlsafe(16)) is None
        assert token_weakness(secrets.token_hex(16)) is None
        assert token_weakness(suggest_token()) is None
    assert token_weakness("s3cret-token-for-tests") is None
    assert token_weakness(secrets.token_urlsafe(96)) is None  # longer than zxcvbn reads


def test_a_common_password_is_named_as_such() -> None:
    assert "common" in str(token_weakness("Password1234"))


def test_no_token_beyond_loopback_suggests_one(files: list[str], cli: Any) -> None:
    result = cli("review", "serve", *files, "--host", "0.0.0.0", "--port", "0")
    assert result.code == 2
    suggested = re.search(r"for example: --token (\S+);", result.stderr)
    assert suggested and token_weakness(suggested.group(1)) is None
