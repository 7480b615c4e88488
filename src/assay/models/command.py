"""Agent CLIs as models: `claude[:MODEL]`, `codex[:MODEL]` and `command:ARGV`.

Each call runs the program directly (never through a shell) in its own process group and a
fresh temporary working directory, so it cannot see or change the repository assay runs
from; a timeout or cancellation kills the whole group, grandchildren included (also those
that left it with `setsid`), and a call never waits on pipes a detached grandchild holds. The prompt is
one literal argument (after `--` for claude and codex, at `{prompt}` for `command:`) or, when
`command:` has no `{prompt}` placeholder, the process's stdin. A prompt longer than one
argument may be (128 KiB) goes on stdin for claude and codex, and is refused before the run
for a `command:` with `{prompt}`. Output is read by the parser
of the response format (`text`, `claude-json`, `codex-jsonl`; see cli_formats).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.core.errors import InputError
from assay.core.limits import MAX_REPLY_BYTES
from assay.core.redact import scrub_cut
from assay.models.base import Message, ModelError, Request, Response
from assay.models.cli_formats import FORMATS, PARSERS
from assay.models.pricing import Price, claude_price
from assay.models.process import Finished, run_process
from assay.models.registry import ModelOptions

PLACEHOLDER = "{prompt}"
# The longest single argument Linux passes to a program (MAX_ARG_STRLEN, 32 pages, with its
# NUL): a longer prompt goes on stdin (claude, codex) or is refused before the run.
MAX_ARG_BYTES = 128 * 1024 - 1
DETAIL_LIMIT = 4000

CLAUDE_ARGV = [
    "claude",
    "--disable-slash-commands",
    "--print",
    "--output-format",
    "stream-json",
    "--verbose",  # stream-json needs it: every event, one a line (the trial's trajectory)
    "--no-session-persistence",
    "--setting-sources",
    "",
]
CODEX_ARGV = [
    "codex",
    "exec",
    "--ephemeral",
    "--ignore-user-config",
    "--sandbox",
    "read-only",
    "--skip-git-repo-check",
    "--json",
]


def prompt_text(messages: list[Message]) -> str:
    """One prompt for a CLI: system text first; several turns become a labelled transcript."""
    system = [m.content for m in messages if m.role == "system"]
    turns = [m for m in messages if m.role != "system"]
    if len(turns) == 1:
        body = turns[0].content
    else:
        body = "\n\n".join(f"{m.role.capitalize()}: {m.content}" for m in turns)
    return "\n\n".join([*system, body])


@contextlib.contextmanager
def working_directory(configured: Path | None) -> Iterator[Path]:
    """The configured directory, or a fresh temporary one removed after the call."""
    if configured is not None:
        yield configured
        return
    with tempfile.TemporaryDirectory(prefix="assay-call-", ignore_cleanup_errors=True) as path:
        yield Path(path)


def _detail(finished: Finished) -> str:
    """The error detail: stderr's end and stdout's start, each scrubbed before it is cut
    (stderr is already the tail of what the process wrote: models/process.py)."""
    parts = []
    if finished.stderr.strip():
        parts.append(
            "stderr:\n" + scrub_cut(finished.stderr, DETAIL_LIMIT, tail=True, cut_before=True)
        )
    if finished.stdout.strip():
        parts.append("stdout:\n" + scrub_cut(finished.stdout, DETAIL_LIMIT))
    return "\n".join(parts)


class CommandModel:
    """A CLI run once per call; its output parsed by a response format.

    An agent: one call may run many model turns, so the budget reserves a share of what is
    left for it (engine/calls.py), which claude is handed as `--max-budget-usd`.
    """

    agent = True

    def __init__(
        self,
        spec: str,
        argv: list[str],
        response_format: str,
        *,
        price: Price | None,
        workdir: Path | None = None,
        model: str | None = None,
        budget_flag: bool = False,
        metered: bool = True,
        prompt_after_dashes: bool = False,
        stdin_args: list[str] | None = None,
        max_output: int = MAX_REPLY_BYTES,
    ) -> None:
        self.spec = spec
        self.argv = argv
        self.prompt_after_dashes = prompt_after_dashes
        # what tells the CLI to read its prompt from stdin, for one too long for an argument
        self.stdin_args = stdin_args
        # a relative program path means the launch directory, not the call's temporary one
        program = argv[0]
        self.exec_argv = [str(Path(program).resolve()) if os.sep in program else program, *argv[1:]]
        self.response_format = response_format
        self.parser = PARSERS[response_format]
        self.price = price
        self.workdir = workdir
        self.model = model
        self.budget_flag = budget_flag
        self.metered = metered
        self.max_output = max_output  # stdout beyond this is an error, not an answer
        # the text format reports no usage: a price has nothing to meter (models/registry.py)
        self.unpriceable = (
            f"its --format {response_format} reports no token usage or cost, so no price can"
            " meter it (claude-json and codex-jsonl do)"
            if response_format == "text"
            else None
        )

    def identity(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "argv": self.argv,
            "format": self.response_format,
            "workdir": str(self.workdir) if self.workdir else None,
        }

    def command_line(self, request: Request) -> tuple[list[str], str | None]:
        """The argv of one call and what goes on stdin (None: stdin closed)."""
        prompt = prompt_text(request.messages)
        argv = list(self.exec_argv)
        if self.budget_flag and request.budget_usd is not None:
            # what the engine reserved for this call: the CLI stops its turns there
            argv += ["--max-budget-usd", f"{request.budget_usd:.6f}"]
        too_long = len(prompt.encode()) > MAX_ARG_BYTES
        if self.prompt_after_dashes:
            if too_long and self.stdin_args is not None:
                return [*argv, *self.stdin_args], prompt
            return [*argv, "--", prompt], None
        if any(PLACEHOLDER in arg for arg in argv):
            if too_long:
                raise ModelError(
                    self.prompt_refusal(request.messages) or "prompt too long", billed=False
                )
            return [arg.replace(PLACEHOLDER, prompt) for arg in argv], None
        return argv, prompt

    def prompt_refusal(self, messages: list[Message]) -> str | None:
        """Why these messages cannot be passed to the CLI (None: they can): a prompt over
        `MAX_ARG_BYTES` that only fits in an argument. Checked before a run starts
        (engine/session.py), so it is refused there rather than failing every call."""
        takes_stdin = self.prompt_after_dashes and self.stdin_args is not None
        by_argument = self.prompt_after_dashes or any(PLACEHOLDER in a for a in self.argv)
        size = len(prompt_text(messages).encode())
        if takes_stdin or not by_argument or size <= MAX_ARG_BYTES:
            return None
        return (
            f"{self.spec}: the prompt is {size:,} bytes, and one argument is limited to "
            f"{MAX_ARG_BYTES + 1:,} bytes (128 KiB): drop {PLACEHOLDER} from the command so "
            "the prompt goes on stdin, or shorten it"
        )

    async def generate(self, request: Request) -> Response:
        argv, stdin = self.command_line(request)
        with working_directory(self.workdir) as cwd:
            finished = await run_process(argv, stdin, cwd, request.timeout_s, self.max_output)
        if finished.returncode != 0:
            raise self._exit_error(finished)
        try:
            parsed = self.parser(finished.stdout)
        except ModelError as exc:
            exc.detail = exc.detail or _detail(finished)
            exc.cost_usd = exc.cost_usd if self.metered else None
            # it ran and finished, but what it spent cannot be read: at its worst case
            exc.billed = self.metered and exc.cost_usd is None
            raise
        return self._response(parsed)

    def _exit_error(self, finished: Finished) -> ModelError:
        status = finished.returncode
        how = f"killed by signal {-status}" if status < 0 else f"exited with status {status}"
        name = Path(self.argv[0]).name
        cost: float | None = None  # what its output says it spent
        try:
            parsed = self.parser(finished.stdout)
        except ModelError as exc:
            if "printed nothing" not in str(exc) and "no result" not in str(exc):
                exc.args = (f"{name} {how}: {exc}",)
                exc.detail = _detail(finished)
                exc.cost_usd = exc.cost_usd if self.metered else None
                exc.billed = self.metered and exc.cost_usd is None
                return exc
        else:
            cost = self._response(parsed).cost_usd
        last = finished.stderr.strip().splitlines()[-1:] or [""]
        message = f"{name} {how}" + (
            f": {scrub_cut(last[0], 300, cut_before=True)}" if last[0] else ""
        )
        # it ran: what it spent until it failed counts (at its reservation when unreported)
        return ModelError(
            message, detail=_detail(finished), cost_usd=cost, billed=self.metered and cost is None
        )

    def _response(self, parsed: Response) -> Response:
        """The parsed answer with this runner's metering and model name applied."""
        cost = parsed.cost_usd
        if not self.metered:
            cost = None
        elif cost is None and self.price is not None and self.response_format != "text":
            cost = self.price.cost(parsed.input_tokens, parsed.output_tokens)
        return dataclasses.replace(parsed, cost_usd=cost, model=parsed.model or self.model)

    async def aclose(self) -> None:
        return None


def _require_program(spec: str, program: str) -> None:
    if shutil.which(program) is None:
        raise InputError(f"ERROR: model spec {spec!r}: {program!r} is not on PATH")


def create_claude(rest: str, options: ModelOptions) -> CommandModel:
    """`claude[:MODEL]`: Claude Code in print mode, stream-json events (its trajectory), no tools,
    no settings.

    Metered by `--price`, else by the model's price (aliases such as `sonnet` included; bare
    `claude` at the most expensive Claude price, see pricing.claude_price)."""
    spec = f"claude:{rest}" if rest else "claude"
    _require_program(spec, "claude")
    argv = list(CLAUDE_ARGV)
    if rest:
        argv += ["--model", rest]
    argv += ["--tools", ""]
    price = options.price or claude_price(rest)
    return CommandModel(
        spec,
        argv,
        "claude-json",
        price=price,
        workdir=options.workdir,
        model=rest or None,
        budget_flag=True,
        prompt_after_dashes=True,
        stdin_args=[],  # `claude --print` without a prompt argument reads it from stdin
        max_output=options.max_reply_bytes,
    )


def create_codex(rest: str, options: ModelOptions) -> CommandModel:
    """`codex[:MODEL]`: `codex exec` in a read-only sandbox with JSONL events. Codex reports
    tokens but no cost: metered by `--price` (its usage at that price), else unmetered."""
    spec = f"codex:{rest}" if rest else "codex"
    _require_program(spec, "codex")
    argv = list(CODEX_ARGV) + (["--model", rest] if rest else [])
    return CommandModel(
        spec,
        argv,
        "codex-jsonl",
        price=options.price,
        workdir=options.workdir,
        model=rest or None,
        metered=options.price is not None,
        prompt_after_dashes=True,
        stdin_args=["-"],  # `codex exec -` reads the prompt from stdin
        max_output=options.max_reply_bytes,
    )


def create_command(rest: str, options: ModelOptions) -> CommandModel:
    """`command:ARGV`: any CLI; ARGV split like shell words, `{prompt}` or stdin."""
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise InputError(f"ERROR: model spec 'command:{rest}': {exc}") from None
    if not argv:
        raise InputError(
            "ERROR: model spec 'command:': give the command, e.g. command:'my-cli {prompt}'"
        )
    if options.response_format not in FORMATS:
        raise InputError(
            f"ERROR: --format: unknown response format {options.response_format!r}"
            f" (known: {', '.join(FORMATS)})"
        )
    program = argv[0]
    if os.sep not in program and shutil.which(program) is None:
        raise InputError(f"ERROR: model spec 'command:{rest}': {program!r} is not on PATH")
    return CommandModel(
        f"command:{rest}",
        argv,
        options.response_format,
        # a price meters the usage a format reports; `text` reports none (`unpriceable`)
        price=options.price if options.response_format != "text" else None,
        workdir=options.workdir,
        max_output=options.max_reply_bytes,
    )
