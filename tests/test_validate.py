"""`assay validate`: every kind of problem, with file and line, in one pass."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import make_case, write_jsonl


def lines(*rows: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


def test_valid_catalogue(cli, cases_file: Path) -> None:
    result = cli("validate", "--cases", cases_file)
    assert result.code == 0
    assert result.stdout.strip() == "Evaluation cases are valid."


def test_every_problem_reported_with_line_numbers(cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        lines(
            make_case("ok"),
            "{not json",
            "[1, 2]",
            {"id": "x", "category": "c", "prompt": "p", "risk": "low"},
            make_case(
                "",
            ),
            make_case("ok"),
            make_case("r", risk="urgent"),
            make_case("k", criteria=[]),
            make_case("k2", criteria=["fine", "  "]),
            make_case("t", turns="not a list", expect={"refuse": "yes"}),
            make_case("n", criteria="text"),
        ),
        encoding="utf-8",
    )
    result = cli("validate", "--cases", path)
    assert result.code == 2
    errors = result.stderr.strip().splitlines()
    assert all(e.startswith(f"ERROR: {path}:") for e in errors), errors
    text = result.stderr
    assert f"{path}:2: invalid JSON" in text
    assert f"{path}:3: expected a JSON object, got list" in text
    assert f"{path}:4: criteria: required field is missing" in text
    assert f"{path}:5: id:" in text
    assert f"{path}:6: id: duplicate id 'ok' (first on line 1)" in text
    assert f"{path}:7: risk:" in text
    assert f"{path}:8: criteria:" in text
    assert f"{path}:9: criteria:" in text
    assert f"{path}:10: turns:" in text and f"{path}:10: expect.refuse:" in text
    assert f"{path}:11: criteria:" in text
    assert "Traceback" not in text


def test_blank_lines_and_bom_are_fine(cli, tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(make_case("a")) + "\n\n  \n").encode())
    assert cli("validate", "--cases", path).code == 0


def test_not_utf8_is_one_clear_error(cli, tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(json.dumps(make_case("a")).encode() + b"\n" + b'{"id": "caf\xe9"}\n')
    result = cli("validate", "--cases", path)
    assert result.code == 2
    (line,) = result.stderr.strip().splitlines()
    offset = len(json.dumps(make_case("a"))) + 1 + len('{"id": "caf')
    assert line == f"ERROR: {path}:2: file is not valid UTF-8 (byte {offset})"


def test_missing_file_and_empty_catalogue(cli, tmp_path: Path) -> None:
    missing = cli("validate", "--cases", tmp_path / "nope.jsonl")
    assert missing.code == 2 and "file not found" in missing.stderr
    empty = write_jsonl(tmp_path / "empty.jsonl", [])
    result = cli("validate", "--cases", empty)
    assert result.code == 2 and "no cases" in result.stderr


def test_optional_fields_types(cli, tmp_path: Path) -> None:
    good = make_case(
        "g",
        reference="gold",
        context=[{"id": "d1", "text": "doc"}],
        turns=["more"],
        expect={"refuse": False, "escalate": True, "cite_one_of": ["d1"], "retrieve": ["d1"]},
        tags=["a"],
        metadata={"k": 1},
    )
    bad = make_case("b", context=[{"id": 3, "text": "doc"}], tags="x", metadata=[], reference=5)
    path = write_jsonl(tmp_path / "c.jsonl", [good, bad])
    result = cli("validate", "--cases", path)
    assert result.code == 2
    for field in ("context.0.id", "tags", "metadata", "reference"):
        assert f"{path}:2: {field}:" in result.stderr
    assert ":1:" not in result.stderr


def test_duplicate_id_reported_on_a_line_with_other_errors(cli, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [make_case("a"), make_case("a", turns="no")])
    result = cli("validate", "--cases", path)
    assert result.code == 2
    assert f"{path}:2: turns:" in result.stderr
    assert f"{path}:2: id: duplicate id 'a' (first on line 1)" in result.stderr


def test_patterns_and_schemas_that_cannot_be_bounded_are_refused(cli, tmp_path: Path) -> None:
    """A regex that does not compile, a JSON Schema `$ref` outside the schema (a URL, a
    file) or to itself, and `unevaluatedProperties` with `patternProperties`: exit 2 naming
    file, line and field, before any call."""
    dialect = "https://json-schema.org/draft/2020-12/schema"

    def args(schema: dict[str, object]) -> dict[str, object]:
        return {"tools": {"args": {"escalate": {"$schema": dialect, **schema}}}}

    path = write_jsonl(
        tmp_path / "cases.jsonl",
        [
            make_case("ok", expect={"regex": r"^\w+$", **args({"$ref": "#/$defs/a", "$defs": {"a": {}}})}),
            make_case("r", expect={"regex": "(unclosed"}),
            make_case("web", expect=args({"$ref": "http://127.0.0.1:9/s.json"})),
            make_case("file", expect={"json_schema": {"$ref": "file:///etc/passwd"}}),
            make_case("self", expect=args({"$ref": "#"})),
            make_case("loop", expect=args({"properties": {"x": {"$ref": "#/properties/y"},
                                                          "y": {"$ref": "#/properties/x"}}})),
            make_case("p", expect={"json_schema": {"properties": {"x": {"pattern": "(?<"}}}}),
            make_case(
                "u",
                expect=args({"unevaluatedProperties": False, "patternProperties": {"^x": {}}}),
            ),
        ],
    )  # fmt: skip
    result = cli("validate", "--cases", path)
    assert result.code == 2, result.stdout
    text = result.stderr
    assert f"{path}:2: expect.regex: " in text and "invalid regular expression" in text
    assert f"{path}:3: expect.tools.args.escalate: " in text and "http://127.0.0.1:9" in text
    assert f"{path}:4: expect.json_schema: " in text and "file:///etc/passwd" in text
    assert f"{path}:5: expect.tools.args.escalate: " in text and "refers to itself" in text
    assert f"{path}:6: expect.tools.args.escalate: " in text and "refers to itself" in text
    assert f"{path}:7: expect.json_schema: " in text
    assert f"{path}:8: expect.tools.args.escalate: " in text and "unevaluatedProperties" in text
    assert f"{path}:1:" not in text and "Traceback" not in text
