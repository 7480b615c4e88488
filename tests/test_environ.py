"""The command line's environment defaults (assay.core.environ): PYDANTIC_DISABLE_PLUGINS is
set in assay's own process when the user has not set it, never seen by the system under test,
and a value the user set (even empty) is left alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay.core import environ

VAR = "PYDANTIC_DISABLE_PLUGINS"

# A `command:` system that answers with what its environment holds for VAR.
REPORTER = "import os; print('seen=' + os.environ.get('PYDANTIC_DISABLE_PLUGINS', 'unset'))"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != VAR}
    return {**env, **extra}


def cli_process_state(env: dict[str, str]) -> dict[str, object]:
    """VAR as the `assay schema case` process sees it at its exit, and whether pydantic
    scanned for plugins (its cache is filled by the scan)."""
    code = (
        "import atexit, json, os, sys\n"
        "def show():\n"
        "    import pydantic.plugin._loader as loader\n"
        "    sys.stderr.write(json.dumps({'var': os.environ.get('PYDANTIC_DISABLE_PLUGINS'),"
        " 'scanned': loader._plugins is not None}) + '\\n')\n"
        "atexit.register(show)\n"
        "sys.argv = ['assay', 'schema', 'case']\n"
        "from assay.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    state: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return state


def test_the_command_line_skips_pydantics_plugin_scan() -> None:
    assert cli_process_state(clean_env()) == {"var": "__all__", "scanned": False}


@pytest.mark.parametrize("value", ["", "0", "some_plugin"])
def test_a_value_the_user_set_is_left_alone(value: str) -> None:
    assert cli_process_state(clean_env(**{VAR: value})) == {"var": value, "scanned": True}


def run_reporter(tmp_path: Path, model: str, env: dict[str, str]) -> str:
    """`assay run` of one case with MODEL in a fresh folder (nothing cached); the trial's
    response text."""
    tmp_path = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
    tmp_path.mkdir()
    case = {"id": "c1", "category": "general", "prompt": "Q?", "risk": "low", "criteria": ["ok"]}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "run",
            "--model",
            model,
            "--cases",
            "cases.jsonl",
            "--output",
            "trials.jsonl",
            "--store",
            "store.db",
            "--allow-unmetered",
            "--trials",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    trial = json.loads((tmp_path / "trials.jsonl").read_text().splitlines()[0])
    return str(trial["response"]).strip()


def test_a_command_system_gets_the_users_environment(tmp_path: Path) -> None:
    model = f'command:{sys.executable} -c "{REPORTER}"'
    assert run_reporter(tmp_path, model, clean_env()) == "seen=unset"
    assert run_reporter(tmp_path, model, clean_env(**{VAR: ""})) == "seen="


def test_a_python_system_gets_the_users_environment(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(
        "import os\n\ndef answer(case, settings):\n"
        "    return os.environ.get('PYDANTIC_DISABLE_PLUGINS', 'unset')\n"
    )
    model = f"python:{tmp_path / 'agent.py'}:answer"
    assert run_reporter(tmp_path, model, clean_env()) == "unset"
    assert run_reporter(tmp_path, model, clean_env(**{VAR: "1"})) == "1"


def test_user_env_and_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VAR, raising=False)
    monkeypatch.setattr(environ, "_added", {})
    assert environ.user_env() is None  # nothing added: children inherit assay's environment
    environ.set_cli_defaults()
    assert os.environ[VAR] == "__all__"
    child = environ.user_env()
    assert child is not None and VAR not in child and child["PATH"] == os.environ["PATH"]
    environ.restore_user_env()
    assert VAR not in os.environ and environ.user_env() is None
