"""Limits on what an import reads and on the integers a record holds: an `.eval` archive that
decompresses beyond the limits (a zip bomb), a JSON source too large to parse, and a trial
number or token count beyond what the store and the reports hold are exit 2 naming the file
and the member or field, never a traceback, a MemoryError or an overflow later on."""

from __future__ import annotations

import json
import struct
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard

from assay.core.errors import InputError
from assay.core.jsonl import load_records
from assay.core.records import Comparison, ScoreRow, Trial
from conftest import make_case, write_jsonl

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
PROMPTFOO = FIXTURES / "promptfoo" / "results.json"
INSPECT_JSON = FIXTURES / "inspect" / "json" / "mock-a.json"
INSPECT_EVAL = FIXTURES / "inspect" / "eval" / "mock-a.eval"
ZSTD = 93  # the zip compression method Inspect writes .eval members with
HUGE = 10**40
MAX_INT = 2**53  # the largest integer a record holds (core/records.py)
MAX_TOTAL = 2 * 2**30  # the JSON one import reads at most (importers/reading.py)


def refused(cli: Any, tmp_path: Path, tool: str, *sources: Path) -> str:
    out = tmp_path / "out"
    done = cli("import", tool, *sources, "--output", out)
    assert done.code == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert not out.exists(), "nothing is written when the input is bad"
    return str(done.stderr)


def edited(source: Path, target: Path, change: Any) -> Path:
    data = json.loads(source.read_text(encoding="utf-8"))
    change(data)
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def zstd_eval(target: Path, members: dict[str, tuple[bytes, int | None]]) -> Path:
    """An `.eval` archive of zstandard members (method 93, as Inspect writes them): each
    name's content, declared in the archive with the given size (its own length when None)."""
    body, central = bytearray(), bytearray()
    for name, (content, declared) in members.items():
        frame = zstandard.ZstdCompressor().compress(content)
        raw = name.encode()
        size = len(content) if declared is None else declared
        crc = zlib.crc32(content)
        offset = len(body)
        body += struct.pack(
            "<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, ZSTD, 0, 0x21, crc, len(frame), size, len(raw), 0
        )
        body += raw + frame
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, ZSTD, 0, 0x21, crc,
            len(frame), size, len(raw), 0, 0, 0, 0, 0, offset,
        )  # fmt: skip
        central += raw
    end = struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(body), 0
    )
    target.write_bytes(bytes(body + central + end))
    return target


def log_members() -> dict[str, bytes]:
    """The fixture log's header and samples as the JSON of an `.eval` archive's members."""
    log = json.loads(INSPECT_JSON.read_text(encoding="utf-8"))
    samples = log.pop("samples")
    members = {"header.json": json.dumps(log).encode()}
    for sample in samples:
        members[f"samples/{sample['id']}_epoch_{sample['epoch']}.json"] = json.dumps(
            sample
        ).encode()
    return members


# -- archives and documents beyond the limits ---------------------------------------------


def test_the_helper_archive_is_a_log_assay_reads(cli: Any, tmp_path: Path) -> None:
    log = zstd_eval(tmp_path / "log.eval", {n: (c, None) for n, c in log_members().items()})
    done = cli("import", "inspect", log, "--output", tmp_path / "out", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["trials"] == 6


def test_an_archive_whose_members_add_up_beyond_the_total_is_refused_unread(
    cli: Any, tmp_path: Path
) -> None:
    """Five members that each declare 500 MiB (each under the limit of one document, 2.5 GiB
    together) are refused from the archive's directory, before any is decompressed."""
    members = {n: (c, None) for n, c in log_members().items()}
    sample = json.loads(members["samples/capital_epoch_1.json"][0])
    for epoch in range(2, 7):
        content = json.dumps({**sample, "epoch": epoch}).encode()
        members[f"samples/capital_epoch_{epoch}.json"] = (content, 500 * 2**20)
    bomb = zstd_eval(tmp_path / "bomb.eval", members)
    err = refused(cli, tmp_path, "inspect", bomb)
    assert f"ERROR: {bomb}: samples/capital_epoch_6.json: " in err  # the 5th crosses
    assert f"more than {MAX_TOTAL:,} bytes" in err


def test_a_member_that_decompresses_beyond_its_declared_size_stops_there(
    cli: Any, tmp_path: Path
) -> None:
    """A zstandard frame that declares its own content size (64 MiB) in a member the archive
    says is 1,000 bytes: decompression stops at the archive's size, it never holds the 64 MiB."""
    members = {n: (c, None) for n, c in log_members().items()}
    members["samples/bomb_epoch_1.json"] = (b" " * (64 * 2**20), 1000)
    bomb = zstd_eval(tmp_path / "bomb.eval", members)
    tracemalloc.start()
    try:
        err = refused(cli, tmp_path, "inspect", bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"ERROR: {bomb}: samples/bomb_epoch_1.json:" in err
    assert "more than the 1,000 bytes the archive declares" in err
    assert peak < 16 * 2**20, f"{peak:,} bytes held"


def test_the_total_limit_counts_every_member_and_file_of_one_import(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.importers import reading

    size = sum(len(c) for c in log_members().values())
    log = zstd_eval(tmp_path / "log.eval", {n: (c, None) for n, c in log_members().items()})
    monkeypatch.setattr(reading, "MAX_TOTAL", size + 100)  # one log fits, two do not
    done = cli("import", "inspect", log, "--output", tmp_path / "one")
    assert done.code == 0, done.stderr
    other = tmp_path / "other" / "log.json"
    other.parent.mkdir()
    edited(INSPECT_JSON, other, lambda d: d["eval"].update(model="openai-api/mockc/mock-c"))
    err = refused(cli, tmp_path, "inspect", log, other)
    assert f"ERROR: {other}: more than {size + 100:,} bytes" in err


def test_a_json_source_beyond_the_document_limit_is_refused(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.importers import reading

    monkeypatch.setattr(reading, "MAX_DOCUMENT", 10_000)
    assert PROMPTFOO.stat().st_size > 10_000
    err = refused(cli, tmp_path, "promptfoo", PROMPTFOO)
    assert f"ERROR: {PROMPTFOO}: larger than 10,000 bytes" in err
    assert f"ERROR: {INSPECT_JSON}: larger than 10,000 bytes" in refused(
        cli, tmp_path, "inspect", INSPECT_JSON
    )
    assert f"ERROR: {INSPECT_EVAL}: samples/" in refused(cli, tmp_path, "inspect", INSPECT_EVAL)


def test_running_out_of_memory_while_parsing_is_an_input_error(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(json, "loads", exhausted)
    err = refused(cli, tmp_path, "promptfoo", PROMPTFOO)
    assert f"ERROR: {PROMPTFOO}: too large to parse in the memory available" in err


# -- integers a record holds ---------------------------------------------------------------


def test_an_inspect_epoch_or_token_count_beyond_the_range_is_refused(
    cli: Any, tmp_path: Path
) -> None:
    def change(data: dict[str, Any]) -> None:
        data["samples"][0]["epoch"] = HUGE
        data["samples"][1]["output"]["usage"]["input_tokens"] = HUGE

    bad = edited(INSPECT_JSON, tmp_path / "log.json", change)
    err = refused(cli, tmp_path, "inspect", bad)
    assert f"ERROR: {bad}: samples[0].epoch: Input should be less than or equal to" in err
    assert f"ERROR: {bad}: samples[1].output.usage.input_tokens:" in err


def test_inspect_token_counts_that_add_up_beyond_the_range_are_refused(
    cli: Any, tmp_path: Path
) -> None:
    """Each model's count is in range, their sum over the sample's models is not."""

    def change(data: dict[str, Any]) -> None:
        usage = {"input_tokens": MAX_INT, "output_tokens": 1}
        data["samples"][2]["model_usage"] = {"judge": usage, "model": usage}

    bad = edited(INSPECT_JSON, tmp_path / "log.json", change)
    err = refused(cli, tmp_path, "inspect", bad)
    assert f"ERROR: {bad}: samples[2].model_usage: input tokens add up to more than" in err


def test_promptfoo_token_counts_beyond_the_range_are_refused(cli: Any, tmp_path: Path) -> None:
    def change(data: dict[str, Any]) -> None:
        data["results"]["results"][2]["tokenUsage"] = {"prompt": HUGE, "completion": -1}

    bad = edited(PROMPTFOO, tmp_path / "results.json", change)
    err = refused(cli, tmp_path, "promptfoo", bad)
    assert f"ERROR: {bad}: results.results[2].tokenUsage.prompt:" in err
    assert f"ERROR: {bad}: results.results[2].tokenUsage.completion:" in err


def trial(**change: Any) -> dict[str, Any]:
    row = {"case_id": "c0", "trial": 1, "condition": "baseline", "runner": "mock", "response": "ok"}
    return {**row, **change}


def test_records_bound_their_integers(tmp_path: Path) -> None:
    rows = [
        trial(trial=MAX_INT),  # the largest: kept
        trial(trial=MAX_INT + 1),
        trial(usage={"input_tokens": HUGE, "output_tokens": 1}),
        trial(usage={"input_tokens": 1, "output_tokens": -1}),
    ]
    path = write_jsonl(tmp_path / "trials.jsonl", rows)
    with pytest.raises(InputError) as caught:
        load_records(path, Trial)
    messages = caught.value.messages
    assert f"ERROR: {path}:2: trial: Input should be less than or equal to {MAX_INT}" in messages
    assert any(m.startswith(f"ERROR: {path}:3: usage.input_tokens:") for m in messages)
    assert any(m.startswith(f"ERROR: {path}:4: usage.output_tokens:") for m in messages)
    assert len(messages) == 3
    scores = write_jsonl(tmp_path / "scores.jsonl", [{**trial(trial=HUGE), "accuracy": 1.0}])
    with pytest.raises(InputError, match=r"scores.jsonl:1: trial: Input should be less"):
        load_records(scores, ScoreRow)
    pair = {"case_id": "c0", "a": "x", "b": "y", "verdict": "a", "trial": HUGE, "len_a": HUGE}
    comparisons = write_jsonl(tmp_path / "comparisons.jsonl", [pair])
    with pytest.raises(InputError) as caught:
        load_records(comparisons, Comparison)
    assert {m.split(": ")[2] for m in caught.value.messages} == {"trial", "len_a"}


def test_judge_refuses_a_trial_number_the_store_cannot_hold(cli: Any, tmp_path: Path) -> None:
    """An epoch of 10**40 once imported and then broke `assay judge` (an int too large for
    SQLite); a trials.jsonl that holds one is an input error before any call."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    trials = write_jsonl(tmp_path / "trials.jsonl", [trial(trial=HUGE)])
    done = cli(
        "judge", "--trials", trials, "--cases", cases, "--judge", "mock:fair",
        "--output", tmp_path / "scores.jsonl", "--store", tmp_path / "s.db",
    )  # fmt: skip
    assert done.code == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert f"{trials}:1: trial: Input should be less than or equal to" in done.stderr
    assert not (tmp_path / "scores.jsonl").exists()


def test_a_model_reporting_a_token_count_beyond_the_range_errors_its_trial(
    cli: Any, tmp_path: Path
) -> None:
    """What `assay run` writes, assay reads back: a usage outside 0 to 2^53 from a provider
    is the trial's error (it cannot be accounted for), not a record trials.jsonl refuses."""
    agent = tmp_path / "agent.py"
    agent.write_text(
        "def agent(case, settings):\n"
        f"    return {{'response': 'ok', 'usage': {{'input_tokens': {HUGE}, 'output_tokens': -5}}}}\n",
        encoding="utf-8",
    )
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case("c0")])
    out = tmp_path / "trials.jsonl"
    done = cli(
        "run", "--cases", cases, "--model", f"python:{agent}:agent", "--trials", "1",
        "--store", tmp_path / "s.db", "--output", out, "--allow-unmetered",
    )  # fmt: skip
    assert done.code == 3, (done.stdout, done.stderr)
    ((_, recorded),) = load_records(out, Trial)
    assert recorded.usage is None
    assert recorded.error is not None and "token counts outside 0 to 2^53" in recorded.error
