"""`assay judge-bench` without `--data`: the sets' pinned public files are fetched once (here
from a mirror on 127.0.0.1 serving the third-party data folder, or files made by the test),
checked by SHA-256 and cached under ASSAY_CACHE (the test's own folder, see conftest)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from assay.api.judgebench import fetch, load_items
from assay.api.judgebench.sets import SETS

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / os.environ.get("ASSAY_EXTERNAL_DATA", "../shared/data")
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="external data not available")
SHA = re.compile(r"^[0-9a-f]{64}$")


def cached_files() -> list[Path]:
    root = fetch.cache_dir()
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def one_file_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes, pinned: bytes
) -> Path:
    """A mirror folder serving `content` as llmbar-natural's one file, pinned to `pinned`'s hash."""
    folder = tmp_path / "mirror"
    path = "llmbar/Dataset/LLMBar/Natural/dataset.json"
    (folder / path).parent.mkdir(parents=True)
    (folder / path).write_bytes(content)
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"{hashlib.sha256(pinned).hexdigest()}  {path}\n", encoding="utf-8")
    monkeypatch.setattr(fetch, "PINNED", sums)
    return folder


ITEMS = json.dumps(
    [{"input": f"Say {i}.", "output_1": f"{i}", "output_2": f"It is {i}.", "label": 1 + i % 2}
     for i in range(6)]
).encode()  # fmt: skip


def test_every_set_pins_its_files_at_upstream_commits() -> None:
    """Each set has pinned files, each a raw.githubusercontent.com URL at a 40-hex commit."""
    assert set(fetch.SET_FILES) == set(SETS)
    for name in SETS:
        files = fetch.set_files(name)
        assert files and any(f.path.endswith("/LICENSE") for f in files), name
        for f in files:
            assert SHA.match(f.sha256), f
            url = f.url()
            repo = f.repository
            assert re.match(r"^[0-9a-f]{40}$", repo.commit)
            assert url.startswith(f"https://raw.githubusercontent.com/{repo.name}/{repo.commit}/")
    assert fetch.set_files("pandalm")[1].url("http://m/x/") == "http://m/x/pandalm/testset-v1.json"
    assert fetch.set_files("pandalm")[1].url().endswith("/data/testset-v1.json")


def test_the_cache_follows_assay_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_CACHE", str(tmp_path / "elsewhere"))
    assert fetch.cache_dir() == tmp_path / "elsewhere" / "judge-bench"
    monkeypatch.delenv("ASSAY_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert fetch.cache_dir() == tmp_path / "home" / ".cache" / "assay" / "judge-bench"


def test_a_fetched_file_is_checked_cached_and_not_fetched_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, serve_folder: Any
) -> None:
    mirror = serve_folder(one_file_set(tmp_path, monkeypatch, ITEMS, ITEMS))
    items = load_items(["llmbar-natural"], None, None, mirror.url)
    assert len(items) == 6 and sorted(i.gold for i in items) == ["a"] * 3 + ["b"] * 3
    assert mirror.requests == ["/llmbar/Dataset/LLMBar/Natural/dataset.json"]
    (cached,) = cached_files()
    assert cached.read_bytes() == ITEMS
    load_items(["llmbar-natural"], None, None, mirror.url)
    assert len(mirror.requests) == 1  # read from the cache
    cached.write_bytes(b"[]")  # a damaged cache file is fetched again
    assert len(load_items(["llmbar-natural"], None, None, mirror.url)) == 6
    assert len(mirror.requests) == 2 and cached.read_bytes() == ITEMS


def test_another_hash_is_exit_2_with_the_url_and_nothing_cached(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, serve_folder: Any
) -> None:
    mirror = serve_folder(one_file_set(tmp_path, monkeypatch, ITEMS, b"the pinned bytes"))
    result = cli("judge-bench", "--judge", "mock:gold", "--set", "llmbar-natural",
                 "--mirror", mirror.url, "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2, result.stderr
    url = f"{mirror.url}llmbar/Dataset/LLMBar/Natural/dataset.json"
    assert url in result.stderr and "SHA-256" in result.stderr and "--data DIR" in result.stderr
    assert "Traceback" not in result.stderr
    assert cached_files() == [] and not (tmp_path / "s.db").exists()


def test_an_unreachable_source_is_exit_2_naming_the_url(cli: Any, tmp_path: Path) -> None:
    """The mirror from the environment (conftest: a closed port on 127.0.0.1) is used."""
    result = cli("judge-bench", "--judge", "mock:gold", "--set", "pandalm",
                 "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2
    assert "cannot fetch http://127.0.0.1:9/no-network-in-tests/pandalm/" in result.stderr
    assert "--data DIR" in result.stderr and "--mirror URL" in result.stderr
    assert "Traceback" not in result.stderr and cached_files() == []
    assert not (tmp_path / "s.db").exists()


def test_a_missing_file_on_the_mirror_is_exit_2(
    cli: Any, tmp_path: Path, serve_folder: Any
) -> None:
    mirror = serve_folder(tmp_path)
    result = cli("judge-bench", "--judge", "mock:gold", "--set", "llmbar-natural",
                 "--mirror", mirror.url, "--store", tmp_path / "s.db")  # fmt: skip
    assert result.code == 2 and "HTTP 404" in result.stderr and mirror.url in result.stderr


@needs_data
def test_the_pinned_hashes_are_the_public_files(tmp_path: Path) -> None:
    """Every pinned file is byte-identical to the third-party folder's copy, which its
    SOURCE.txt maps to the pinned repository, commit and upstream path."""
    for pinned in fetch.pinned_files():
        local = DATA / pinned.path
        assert hashlib.sha256(local.read_bytes()).hexdigest() == pinned.sha256, pinned.path
        folder, rest = pinned.path.split("/", 1)
        source = (DATA / folder / "SOURCE.txt").read_text(encoding="utf-8")
        repo = pinned.repository
        assert f"github.com/{repo.name}" in source and repo.commit in source
        assert re.search(
            rf"^\s+{re.escape(rest)}\s+<-\s+{re.escape(repo.upstream(rest))}\s", source, re.M
        )


@needs_data
def test_without_data_every_set_runs_from_the_mirror(
    cli: Any, tmp_path: Path, serve_folder: Any
) -> None:
    mirror = serve_folder(DATA)
    common = ["judge-bench", "--judge", "mock:gold", "--limit", 5, "--json"]
    result = cli(*common, "--mirror", mirror.url, "--store", tmp_path / "s.db")
    assert result.code == 0, result.stderr
    sets = json.loads(result.stdout)["sets"]
    assert set(sets) == set(SETS) and all(f["accuracy"] == 1.0 for f in sets.values())
    assert len(cached_files()) == len(fetch.pinned_files()) == len(set(mirror.requests))
    assert load_items(SETS, None, None, mirror.url) == load_items(SETS, None, DATA)
    again = cli(*common, "--mirror", mirror.url, "--store", tmp_path / "t.db")
    assert again.code == 0 and len(mirror.requests) == len(fetch.pinned_files())
