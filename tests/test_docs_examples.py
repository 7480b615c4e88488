"""Every example in the README and the docs/ pages runs (offline, on mock models), or says why not.

The convention, for each fenced block of a page, by its language and the HTML comment on the
line just before it (invisible on GitHub and on the site):

- `bash`: each command (`\\` continues a line) runs in a folder of the page's own, where
  `examples/` and `tests/` are the repository's; the blocks of a page run in order, so a later
  one may read what an earlier one wrote. A command must be `assay ...`; it exits with the
  code its comment names (`# PASS: exit 0`), else 0 or 1 (a gate's verdict), never with a
  traceback.
- `console`: each `$ assay ...` line runs the same way and prints the lines shown below it.
- `python`: runs with the page's folder as its working directory; a block whose first line is
  `# NAME.py` is that file, written there (and compiled) for the commands after it.
- `json`, `toml`, `yaml`: parse (a `json` block may be one object or one per line).
- `<!-- not run: REASON -->`: the block is skipped, for the reason given (a server that runs
  until Ctrl+C, an API key, a cluster).
- `<!-- run by tests/FILE.py -->`: a test of its own runs the block with closer checks; that
  file must exist and read this page.
- `<!-- excerpt of PATH -->`: every line of the block, but `...`, is a line of that file.
- Other blocks (`text`, none) are output or diagrams, shown as they are.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```", re.M | re.S)
MARKER = re.compile(r"<!--\s*(not run|run by|excerpt of)\s*:?\s*(.*?)\s*-->\s*$")
CHECKED = {"bash", "console", "python", "json", "toml", "yaml"}


@dataclass
class Block:
    page: str
    line: int
    language: str
    code: str
    marker: tuple[str, str] | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[str]:
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
    return ["README.md", *found]


def blocks(page: str) -> list[Block]:
    """The page's fenced blocks, each with the marker comment on the line before it."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n ").rsplit("\n", 1)[-1]
        marked = MARKER.search(before)
        found.append(
            Block(
                page=page,
                line=text.count("\n", 0, match.start()) + 1,
                language=match.group(2),
                code=textwrap.dedent(match.group(3)),
                marker=(marked.group(1), marked.group(2)) if marked else None,
            )
        )
    return found


def commands(code: str) -> list[tuple[list[str], str]]:
    """Each command of a bash block, as its argv and its comment."""
    joined = code.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command, *comment = re.split(r"\s#\s", f"{line} ", maxsplit=1)
        found.append((shlex.split(command), "".join(comment)))
    return found


def expected_exit(comment: str) -> tuple[int, ...]:
    named = re.search(r"\bexit (\d)\b", comment)
    return (int(named.group(1)),) if named else (0, 1)


def run_assay(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert argv[0] == "assay", f"not an assay command (mark the block `not run`): {argv}"
    env = {**os.environ, "NO_COLOR": "1"}
    # A judge whose key is not set is disabled: no call leaves this machine.
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"):
        env.pop(key, None)
    return subprocess.run(
        [sys.executable, "-m", "assay", *argv[1:]],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def check_marker(block: Block) -> bool:
    """True when the block is run here; a marker's claim is checked."""
    if block.marker is None:
        return True
    kind, value = block.marker
    if kind == "not run":
        assert value, f"{block.where}: `not run` says why"
    elif kind == "run by":
        test = ROOT / value
        assert test.is_file(), f"{block.where}: {value} does not exist"
        name = Path(block.page).name
        assert name in test.read_text(encoding="utf-8"), f"{block.where}: {value} reads no {name}"
    else:
        source = (ROOT / value).read_text(encoding="utf-8")
        for line in block.code.splitlines():
            if line.strip() and line.strip() != "...":
                assert line.strip() in source, f"{block.where}: not in {value}: {line}"
    return False


def run_block(block: Block, folder: Path) -> None:
    where = block.where
    if block.language == "bash":
        for argv, comment in commands(block.code):
            done = run_assay(argv, folder)
            assert done.returncode in expected_exit(comment), (where, argv, done.stderr)
            assert "Traceback" not in done.stderr, (where, argv, done.stderr)
    elif block.language == "console":
        shown: list[list[str]] = []  # each command line with the lines printed below it
        for line in block.code.splitlines():
            if line.startswith("$ "):
                shown.append([line[2:]])
            elif shown and line.strip():
                shown[-1].append(line)
        for command, *printed in shown:
            done = run_assay(shlex.split(command), folder)
            for expected in printed:
                assert expected in done.stdout + done.stderr, (where, expected, done.stderr)
    elif block.language == "python":
        first = block.code.split("\n", 1)[0]
        named = re.fullmatch(r"# (\w+\.py)", first.strip())
        if named:
            (folder / named.group(1)).write_text(block.code, encoding="utf-8")
            compile(block.code, named.group(1), "exec")
        else:
            done = subprocess.run(
                [sys.executable, "-c", block.code],
                cwd=folder, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert done.returncode == 0, (where, done.stderr)
    elif block.language == "json":
        try:
            json.loads(block.code)
        except json.JSONDecodeError:
            for line in block.code.splitlines():
                json.loads(line)
    elif block.language == "toml":
        tomllib.loads(block.code)
    elif block.language == "yaml":
        yaml.safe_load(block.code)


@pytest.mark.parametrize("page", pages())
def test_the_page_examples_run(page: str, tmp_path: Path) -> None:
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    for block in blocks(page):
        if block.language in CHECKED and check_marker(block):
            run_block(block, tmp_path)


def test_the_pages_have_examples() -> None:
    """The parser finds the blocks: a fence it missed would go unchecked."""
    found = {page: blocks(page) for page in pages()}
    assert sum(len(b) for b in found.values()) >= 40
    for page in pages():
        text = (ROOT / page).read_text(encoding="utf-8")
        assert len(found[page]) * 2 == len(re.findall(r"^ *```", text, re.M)), page
