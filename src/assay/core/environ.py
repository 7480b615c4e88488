"""Environment variables the command line sets for assay's own process, and the user's
environment for what assay starts.

`assay` (the command line; the Python API leaves the environment alone) sets
PYDANTIC_DISABLE_PLUGINS=__all__ when the user has not set it at all: otherwise pydantic
scans every installed distribution's entry points for plugins when it builds its first
validator (a cost that grows with the environment), and assay's own models use no plugin.
A value the user set, even an empty one, is left as it is.

The system under test keeps the user's environment: a process assay starts (`command:`,
claude, codex; models/process.py) gets `user_env()`, without what assay added, and a
system that runs inside assay's process (`python:`) or on Ray workers started from it has
the variable removed first (`restore_user_env`), so pydantic loads the user's plugins for
it as it would without assay.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

CLI_DEFAULTS: Mapping[str, str] = {"PYDANTIC_DISABLE_PLUGINS": "__all__"}
"""What the command line sets for its own process when the user has not set it."""

_added: dict[str, str] = {}


def set_cli_defaults() -> None:
    """Set each of `CLI_DEFAULTS` that is not set at all (the command line's first step)."""
    for name, value in CLI_DEFAULTS.items():
        if name not in os.environ:
            os.environ[name] = value
            _added[name] = value


def user_env() -> dict[str, str] | None:
    """The environment for a process assay starts: the user's, without what
    `set_cli_defaults` added; None (inherit assay's) when it added nothing."""
    if not _added:
        return None
    env = dict(os.environ)
    for name, value in _added.items():
        if env.get(name) == value:
            del env[name]
    return env


def restore_user_env() -> None:
    """Remove from this process what `set_cli_defaults` added (before the system under
    test runs in it, or starts processes that inherit it)."""
    for name, value in _added.items():
        if os.environ.get(name) == value:
            del os.environ[name]
    _added.clear()
