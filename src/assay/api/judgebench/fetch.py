"""The public sets' files, fetched on first use from their upstream repositories and cached.

`data/SHA256SUMS` pins every file a set's reader needs (and each repository's licence), by
its path in the public layout (the layout `--data DIR` reads, as the upstream repositories
have the files) and its SHA-256. Each file is fetched once from
`https://raw.githubusercontent.com/<repository>/<pinned commit>/<upstream path>`, or from
`<mirror>/<path in the public layout>` with `--mirror URL` (or ASSAY_JUDGE_BENCH_MIRROR:
any http(s) or file URL serving a copy of that layout), checked against its pinned SHA-256
and written atomically under the cache (`judge-bench/` in `core.paths.cache_root`:
`~/.cache/assay`, ASSAY_CACHE to move it). A cached file is checked again before each use
and fetched again when it differs. A network failure or a file with another SHA-256 is an
InputError (exit 2) naming the URL and what to do; nothing is written for it.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from assay.core.errors import InputError
from assay.core.jsonl import write_bytes_atomic
from assay.core.paths import cache_root

MIRROR_ENV = "ASSAY_JUDGE_BENCH_MIRROR"
PINNED = Path(__file__).parent / "data" / "SHA256SUMS"
TIMEOUT_S = 60.0
MAX_BYTES = 64 * 2**20
"""No pinned file is near this; a reply longer than it is not read further."""


@dataclass(frozen=True, slots=True)
class Repository:
    """An upstream repository at a pinned commit; `folder` is its place in the public layout,
    `prefix` the folder its data files sit in upstream (its licence sits at the top)."""

    name: str
    commit: str
    folder: str
    prefix: str = ""

    def upstream(self, path: str) -> str:
        return path if path == "LICENSE" else self.prefix + path


REPOSITORIES = (
    Repository("princeton-nlp/LLMBar", "900616bff90b6c6c8e1681f7d079250637c55992", "llmbar"),
    Repository("bcdnlp/PRD", "35fb99e5d5c7a2f3535811f1edbe417da7563957", "prd_vicuna80", "data/"),
    Repository("WeOpenML/PandaLM", "3871806e72b4832f815ecafd24d3503c73403f48", "pandalm", "data/"),
)
SET_FILES: dict[str, tuple[str, ...]] = {
    "llmbar-natural": ("llmbar/LICENSE", "llmbar/Dataset/LLMBar/Natural/"),
    "llmbar-adversarial": ("llmbar/LICENSE", "llmbar/Dataset/LLMBar/Adversarial/"),
    "prd-vicuna80": ("prd_vicuna80/",),
    "pandalm": ("pandalm/",),
}
"""Per set, the prefixes (in the public layout) of the pinned files its reader needs."""


@dataclass(frozen=True, slots=True)
class PinnedFile:
    """One file of a public set: its path in the public layout and its SHA-256."""

    path: str
    sha256: str

    @property
    def repository(self) -> Repository:
        folder = self.path.split("/", 1)[0]
        return next(r for r in REPOSITORIES if r.folder == folder)

    def url(self, mirror: str | None = None) -> str:
        if mirror:
            return f"{mirror.rstrip('/')}/{self.path}"
        repo = self.repository
        upstream = repo.upstream(self.path.split("/", 1)[1])
        return f"https://raw.githubusercontent.com/{repo.name}/{repo.commit}/{upstream}"


def pinned_files() -> list[PinnedFile]:
    """Every pinned file, from `data/SHA256SUMS` (the `sha256sum` format)."""
    found = []
    for line in PINNED.read_text(encoding="utf-8").splitlines():
        sha256, _, path = line.partition("  ")
        found.append(PinnedFile(path, sha256))
    return found


def set_files(name: str) -> list[PinnedFile]:
    """The pinned files set `name`'s reader needs."""
    prefixes = SET_FILES[name]
    return [f for f in pinned_files() if f.path.startswith(prefixes)]


def cache_dir() -> Path:
    """The judge-bench cache: a folder in the sets' public layout."""
    return cache_root() / "judge-bench"


def sha256_of(path: Path) -> str | None:
    """The file's SHA-256, or None when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


ADVICE = (
    "on a machine that cannot reach it, pass --data DIR (a folder holding the sets in their"
    " public layout) or --mirror URL (or ASSAY_JUDGE_BENCH_MIRROR) serving that layout"
)


def download(pinned: PinnedFile, mirror: str | None, target: Path) -> None:
    """Fetch one pinned file to `target`, whole and checked, or raise an InputError."""
    url = pinned.url(mirror)
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as reply:
            data = reply.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as error:
        raise InputError(
            f"ERROR: judge-bench: cannot fetch {url}: HTTP {error.code}; {ADVICE}"
        ) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise InputError(f"ERROR: judge-bench: cannot fetch {url}: {reason}; {ADVICE}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != pinned.sha256:
        raise InputError(
            f"ERROR: judge-bench: {url}: SHA-256 {digest} is not the pinned {pinned.sha256}"
            f" ({pinned.path}); nothing was cached; {ADVICE}"
        )
    try:
        write_bytes_atomic(target, data)
    except InputError as error:
        hint = "set ASSAY_CACHE to a folder assay can write, or pass --data DIR"
        raise InputError([f"{m}; {hint}" for m in error.messages]) from None


def fetch_set(name: str, mirror: str | None = None) -> Path:
    """A folder in the public layout holding every file set `name` needs: the cache, after
    fetching the files it lacks (or holds with another SHA-256). `mirror` defaults to
    ASSAY_JUDGE_BENCH_MIRROR, then the upstream repositories."""
    base = mirror or os.environ.get(MIRROR_ENV) or None
    root = cache_dir()
    for pinned in set_files(name):
        target = root / pinned.path
        if sha256_of(target) != pinned.sha256:
            download(pinned, base, target)
    return root
