"""The Typer application every command module registers on."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from importlib import import_module
from typing import Annotated, Any

import typer
from typer import _click as click  # Typer >= 0.29 ships its own copy of Click
from typer._click.utils import make_default_short_help
from typer.core import TyperGroup
from typer.main import get_command_from_info, get_command_name, get_group_from_info

# Every command, in the order the pipeline uses them (`assay --help` lists them so), with the
# summary `assay --help` shows for it. Command NAME lives in the module assay.cli.NAME (or the
# one MODULES names), imported
# only when that command runs or shows its own --help: the command line starts fast because
# `assay --help` imports no command module (tests/test_cli_help.py checks each summary is the
# start of its command's docstring, so the two cannot drift apart).
COMMANDS = {
    "validate": "Check a case catalogue; every problem is reported as ERROR: PATH:LINE: message.",
    "run": "Run cases × conditions × trials; exit 0 when every trial answered, 3 when incomplete.",
    "import": "Convert a promptfoo or Inspect AI run into assay cases, trials and score rows,"
    " so that assay score, report and review gate, report and review it.",
    "judge": "Judge trials; exit 0 when every item was judged, 3 when some failed (resumable).",
    "review": "Human review in the browser: score or compare responses, then export the answers.",
    "view": "Explore the store's runs in the browser (read-only): the verdict, the case matrix"
    " with filters, each case's responses side by side with a word diff, two runs compared,"
    " each suite's history.",
    "score": "Summarise Score rows and gate the candidate: exit 0 PASS, 1 FAIL or INCONCLUSIVE,"
    " 2 bad input, 3 INCOMPLETE (a case errored, was not run or was not scored).",
    "calibrate": "Compare every judge rater with the human reference, per dimension"
    " (advisory unless --enforce).",
    "bias": "Audit each judge for position bias and length bias.",
    "judge-bench": "Benchmark a judge on public human-labelled pairwise sets",
    "winrate": "Raw win rate (ties half) with its standard error, and optionally the LC win rate.",
    "rank": "Rank models by Bradley–Terry strength (games scored as winrate scores them, judges pooled).",
    "report": "Write the reports: Markdown for a PR comment, JSON (assay schema report), JUnit"
    " XML, and a self-contained HTML page.",
    "history": "Rolling agreement with human spot checks, score drift between runs, length bias,"
    " alerts.",
    "rubric": "Ask a model for a rubric (one level per scale point, guidelines, edge cases).",
    "schema": "Print the JSON Schema of a record (case, trial, score, comparison, label, rubric,"
    " report) or of a command's JSON output",
    "demo": "Run the support-agent example (a LangGraph agent with and without guardrails) as"
    " baseline against candidate",
}
PIPELINE_ORDER = list(COMMANDS)
# The commands whose module is not named after them (`import` is a Python keyword, `judge-bench`
# is not an identifier).
MODULES = {"import": "assay.cli.importing", "judge-bench": "assay.cli.judge_bench"}


def build_command(name: str) -> click.Command:
    """The click command (or group, for `review`) of the command NAME registered on `app`,
    built the way Typer builds the commands it knows when the application starts."""
    for info in app.registered_commands:
        callback = info.callback
        if callback is not None and (info.name or get_command_name(callback.__name__)) == name:
            return get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
    for group in app.registered_groups:
        if group.name == name:
            return get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
                suggest_commands=app.suggest_commands,
            )
    raise KeyError(name)


class LazyCommands(MutableMapping[str, click.Command]):
    """The group's commands by name; a command's module is imported on first lookup.

    Every name of COMMANDS is a key from the start (so listing, "did you mean" suggestions and
    dispatch see them all); looking one up imports assay.cli.NAME, whose `@app.command()`
    registers the function on `app`, and builds its click command the way Typer does."""

    def __init__(self, loaded: MutableMapping[str, click.Command]) -> None:
        self.loaded = dict(loaded)

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            if name not in COMMANDS:
                raise KeyError(name)
            import_module(MODULES.get(name, f"assay.cli.{name}"))
            self.loaded[name] = build_command(name)
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self.loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(COMMANDS), **self.loaded})

    def __len__(self) -> int:
        return len({**dict.fromkeys(COMMANDS), **self.loaded})


class PipelineGroup(TyperGroup):
    """The command group: commands load on first use and are listed in pipeline order."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: index for index, name in enumerate(PIPELINE_ORDER)}
        return sorted(names, key=lambda name: rank.get(name, len(rank)))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of `assay --help`, from COMMANDS: no command module is imported."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, make_default_short_help(COMMANDS[name], limit)) for name in PIPELINE_ORDER]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="assay",
    cls=PipelineGroup,
    help="Evaluate LLM prompts, models and agents before they ship: run, score, judge, gate, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def print_version(wanted: bool) -> None:
    """`assay --version`: the version and the store schema version it reads and writes (for bug
    reports and CI logs). Imports happen only here, so `assay --help` stays fast."""
    if not wanted:
        return
    from importlib.metadata import PackageNotFoundError, version

    from assay.api.defaults import SCHEMA_VERSION

    try:
        installed = version("assay")
    except PackageNotFoundError:
        installed = "unknown (not installed)"
    typer.echo(f"assay {installed} (store schema version {SCHEMA_VERSION})")
    raise typer.Exit()


@app.callback()
def options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=print_version,
            is_eager=True,
            help="Print assay's version and its store schema version, then exit.",
        ),
    ] = False,
) -> None:
    """Options that come before the command."""
