"""Errors that map to assay's documented exit codes."""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_INPUT = 2
EXIT_INCOMPLETE = 3


class AssayError(Exception):
    """Base class of every error assay reports without a traceback."""

    exit_code = EXIT_INPUT


class InputError(AssayError):
    """Bad input or usage: one or more messages naming file, line and field (exit 2)."""

    def __init__(self, messages: str | list[str]) -> None:
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("\n".join(self.messages))


class Incomplete(AssayError):
    """Work that stopped before the end (budget, interruption, failed items): resumable by
    running the same command again (exit 3)."""

    exit_code = EXIT_INCOMPLETE

    def __init__(self, messages: str | list[str]) -> None:
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("\n".join(self.messages))


def location(path: object, line: int | None = None, field: str | None = None) -> str:
    """Format `PATH:LINE: field` the way every assay error message starts."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return f"{where}: {field}" if field else where
