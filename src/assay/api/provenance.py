"""Where and how long a run ran: its git commit and its wall time, recorded in the store
(`store/results.py`, `run_provenance`) after every `assay run`, for `assay view`'s runs list."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from assay.store import Store
from assay.store.results import add_run_time

COMMIT = re.compile(r"^[0-9a-f]{7,64}$")
COMMIT_VARIABLES = ("GITHUB_SHA", "CI_COMMIT_SHA", "BUILD_VCS_NUMBER", "GIT_COMMIT")


def git_commit(folder: Path | None = None) -> str | None:
    """The commit being evaluated: a CI's variable (GitHub Actions, GitLab, TeamCity,
    Jenkins), else `git rev-parse HEAD` in `folder` (the working folder); None outside git."""
    for name in COMMIT_VARIABLES:
        value = os.environ.get(name, "").strip().lower()
        if COMMIT.match(value):
            return value
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "rev-parse", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip()
    return value if done.returncode == 0 and COMMIT.match(value) else None


def record_run_time(store: Path, run_id: str, seconds: float) -> None:
    """Add this invocation's wall time to the run's in the store, with the git commit."""
    handle = Store(store)
    try:
        add_run_time(handle, run_id, seconds, git_commit())
    finally:
        handle.close()
