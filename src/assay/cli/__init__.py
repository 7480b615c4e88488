"""The command line: one module per command group, no logic beyond parsing and printing.

A command's module is imported only when that command is used (cli/app.py: COMMANDS), so
`assay --help` and each command load just what they need."""

# ruff: noqa: E402  (the collector is set before the imports below build their objects)
from __future__ import annotations

import gc

# The collector's first threshold, in allocations (CPython's default is 700), set before the
# imports below. Start-up makes tens of thousands of objects that live as long as the process
# (modules, classes, pydantic validators), and a run keeps its records until it ends, while
# each call leaves short-lived garbage with reference cycles (asyncio and aiohttp objects): at
# 700 the collector traversed the long-lived ones over and over (~75 ms of a suite run's
# ~0.45 s CPU before its first call; ~150 collections and ~0.1 s in a W1 run of
# bench/process.py, ~320 and ~0.45 s in W2, thread time in `gc.callbacks`; at 20,000, 7-10
# collections, ~0.05 and ~0.11 s). Young cycles are still collected; peak memory is unchanged.
# The command line only: importing assay's API leaves the host's collector alone.
GC_THRESHOLD = (20_000, 20, 10)
gc.set_threshold(*GC_THRESHOLD)

import atexit
import sqlite3
import sys

import typer

from assay.cli.app import app
from assay.cli.output import err
from assay.core.environ import set_cli_defaults
from assay.core.errors import EXIT_INCOMPLETE, AssayError
from assay.core.redact import scrub

# Typer catches a KeyboardInterrupt raised inside a command and returns this code instead
# (typer/core.py `_main`: `except KeyboardInterrupt: raise Exit(130)`), even with
# standalone_mode=False, so the exception never reaches main(). No assay command exits 130
# by itself, so 130 means exactly "interrupted" here.
TYPER_INTERRUPTED = 130
INTERRUPTED = "ERROR: interrupted; run the same command again to resume\n"

# The process ends after its command: the interpreter's finalization would otherwise run
# full collections over every object the command made (after `assay run SUITE.toml` of
# 2,000 trials, ~0.13 s of its exit); frozen, they are just freed as modules are cleared.
atexit.register(gc.freeze)


def fail(exc: AssayError) -> None:
    """Print an error's messages (scrubbed; inert on GitHub Actions: `output.err`) and exit
    with its code."""
    for message in getattr(exc, "messages", [str(exc)]):
        err(scrub(message))
    sys.exit(exc.exit_code)


def main() -> None:
    """Entry point: map errors to the exit codes of docs/design.md, never printing a traceback.

    First sets the command line's environment defaults (`assay.core.environ`: no pydantic
    plugin scan in assay's own process; what assay starts gets the user's environment)."""
    set_cli_defaults()
    try:
        code = app(standalone_mode=False)
    except typer.TyperException as exc:  # usage errors: Typer prints them, exit 2
        show = getattr(exc, "show", None)
        if show is not None:
            show()
        sys.exit(getattr(exc, "exit_code", 2))
    except AssayError as exc:
        fail(exc)
    except sqlite3.DatabaseError as exc:  # a damaged page met after the store opened
        from assay.api.inputs import damaged_store

        damaged = damaged_store(exc)
        if damaged is None:
            raise
        fail(damaged)
    except (KeyboardInterrupt, typer.Abort):
        sys.stderr.write(INTERRUPTED)
        sys.exit(EXIT_INCOMPLETE)
    if code == TYPER_INTERRUPTED:  # docs/design.md: interrupted -> 3 (resumable)
        sys.stderr.write(INTERRUPTED)
        sys.exit(EXIT_INCOMPLETE)
    sys.exit(code if isinstance(code, int) else 0)
