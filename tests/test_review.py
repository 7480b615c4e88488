"""The review app: queue order, stored presentation order, answers, export, security."""

from __future__ import annotations

import json
import re
import threading
from html import escape
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from starlette.testclient import TestClient

from assay.api.schemas import schema_of
from assay.core.records import Comparison, Label, ScoreRow
from assay.core.rubric import DEFAULT_RUBRIC
from assay.review import ReviewConfig, ReviewStore, create_app, open_review_set
from assay.review.queue import queue_order
from assay.store import Store
from assay.store.review import ItemKey
from assay.web.security import CONTENT_SECURITY_POLICY, session_cookie, token_cookie
from conftest import make_case, write_jsonl

METRICS = ["correctness", "autonomy", "actionability", "safety", "concision"]
TOKEN = "s3cret-token-for-tests"


def trial(case_id: str, condition: str, text: str, number: int = 1, **extra: Any) -> dict[str, Any]:
    row = {
        "case_id": case_id,
        "trial": number,
        "condition": condition,
        "runner": "mock",
        "response": text,
    }
    row.update(extra)
    return row


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(4)])
    rows = []
    for i in range(4):
        rows.append(trial(f"c{i}", "baseline", f"first answer {i} <script>alert(1)</script>"))
        rows.append(trial(f"c{i}", "candidate", f"second answer {i}"))
    rows[-1] = trial("c3", "candidate", "", error="model timed out")
    trials = write_jsonl(tmp_path / "trials.jsonl", rows)
    return {"cases": cases, "trials": trials, "store": tmp_path / "store.db", "dir": tmp_path}


def make_client(
    files: dict[str, Path], mode: str = "scores", token: str | None = None
) -> TestClient:
    review = open_review_set(
        trials_path=files["trials"],
        cases_path=files["cases"],
        run_id=None,
        store_path=files["store"],
        a="baseline",
        b="candidate",
        mode=mode,
    )
    config = ReviewConfig(review=review, store=ReviewStore(files["store"]), mode=mode, token=token)
    return TestClient(create_app(config), base_url="http://127.0.0.1:8765", follow_redirects=False)


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert match, "the page has no CSRF field"
    return match.group(1)


def all_scores(slot: int, value: int) -> dict[str, str]:
    return {f"r{slot}_{m}": str(value) for m in METRICS}


def answer_item(client: TestClient, index: int, form: dict[str, str]) -> Any:
    page = client.get(f"/item/{index}")
    assert page.status_code == 200
    return client.post(f"/item/{index}", data={"csrf": csrf_of(page.text), **form})


# -- queue order and presentation order ---------------------------------------------------
def test_cascade_queue_items_come_first_oldest_first(files: dict[str, Path]) -> None:
    client = make_client(files)
    store = ReviewStore(files["store"])
    with store.transaction() as db:
        db.execute(
            "INSERT INTO review_queue VALUES ('c2', 1, 'candidate', 'baseline', 'judges split',"
            " 'cascade', '2026-01-02T00:00:00Z')"
        )
        db.execute(
            "INSERT INTO review_queue VALUES ('c3', 1, NULL, NULL, 'low confidence', 'cascade',"
            " '2026-01-01T00:00:00Z')"
        )
        db.execute(
            "INSERT INTO review_queue VALUES ('c0', 1, 'other', 'baseline', 'x', 'cascade',"
            " '2026-01-01T00:00:00Z')"
        )
    items = open_review_set(
        trials_path=files["trials"],
        cases_path=files["cases"],
        run_id=None,
        store_path=files["store"],
        a="baseline",
        b="candidate",
        mode="scores",
    ).items
    order = [i.key.case_id for i in queue_order(items, store.queued())]
    assert order == ["c3", "c2", "c0", "c1"]
    # the reviewer's first item is the oldest flagged one, and it says it was flagged
    first = client.get("/next?reviewer=ann")
    assert first.headers["location"] == "/item/3"
    assert "flagged for human review" in client.get("/item/3").text


def test_presentation_order_is_random_per_pair_and_stored(tmp_path: Path) -> None:
    store = ReviewStore(tmp_path / "s.db")
    keys = [ItemKey(f"c{i}", 1, "baseline", "candidate") for i in range(60)]
    drawn = store.assign_order("d", keys)
    assert set(drawn.values()) == {"baseline", "candidate"}  # both orders occur
    assert ReviewStore(tmp_path / "s.db").assign_order("d", keys) == drawn  # kept on restart
    again = store.assign_order("other-dataset", keys)
    assert again != drawn  # drawn afresh for another dataset (2^-60 chance of a false fail)


def test_pages_never_name_the_conditions(files: dict[str, Path]) -> None:
    for mode in ("scores", "pairwise"):
        client = make_client(files, mode=mode)
        pages = [client.get("/?reviewer=ann").text]
        pages += [client.get(f"/item/{i}").text for i in range(4)]
        for html in pages:
            assert "baseline" not in html and "candidate" not in html
        assert "Response 1" in pages[1] and "Response 2" in pages[1]


def test_model_output_is_escaped(files: dict[str, Path]) -> None:
    client = make_client(files)
    client.get("/?reviewer=ann")
    html = client.get("/item/0").text
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_errored_trial_is_shown_as_error_and_not_scored(files: dict[str, Path]) -> None:
    client = make_client(files)
    client.get("/?reviewer=ann")
    html = client.get("/item/3").text
    assert "This trial errored, so it is not scored: model timed out" in html
    assert html.count('type="radio"') == len(METRICS) * 5  # one response to score
    slot = 1 if 'name="r1_correctness"' in html else 2
    reply = answer_item(client, 3, all_scores(slot, 4))
    assert reply.status_code == 303
    answers = ReviewStore(files["store"]).answers()
    assert list(answers[0].answer["responses"]) == ["baseline"]


# -- answers ------------------------------------------------------------------------------
def test_answers_are_saved_at_once_and_shown_again(files: dict[str, Path]) -> None:
    client = make_client(files)
    client.get("/?reviewer=ann")
    form = {**all_scores(1, 5), **all_scores(2, 2), "r2_blocker": "on", "r2_notes": "unsafe"}
    reply = answer_item(client, 0, form)
    assert reply.status_code == 303
    assert reply.headers["location"] == "/next?after=0&reviewer=ann"
    assert client.get(reply.headers["location"]).headers["location"] == "/item/1"
    (saved,) = ReviewStore(files["store"]).answers()
    assert saved.reviewer == "ann"
    page = client.get("/item/0").text  # Response 1 is whichever text the page shows first
    shown_first = (
        "baseline" if page.index("first answer 0") < page.index("second answer 0") else "candidate"
    )
    other = "candidate" if shown_first == "baseline" else "baseline"
    assert saved.answer["responses"][shown_first]["scores"]["correctness"] == 5
    assert saved.answer["responses"][other]["scores"]["correctness"] == 2
    assert saved.answer["responses"][other]["blocker"] is True
    page = client.get("/item/0").text
    assert page.count(" checked") == 2 * len(METRICS) + 1
    assert ">unsafe</textarea>" in page


def test_the_page_shows_the_default_rubric(files: dict[str, Path]) -> None:
    client = make_client(files)
    client.get("/?reviewer=ann")
    page = client.get("/item/0").text
    for criterion in DEFAULT_RUBRIC.judged_criteria():
        assert f">{criterion.label}<" in page and escape(criterion.description) in page
        assert all(escape(level.description) in page for level in criterion.levels)


def test_incomplete_scores_are_refused_with_the_form_kept(files: dict[str, Path]) -> None:
    client = make_client(files)
    client.get("/?reviewer=ann")
    reply = answer_item(client, 0, {**all_scores(1, 3), "r2_correctness": "9"})
    assert reply.status_code == 400
    assert "Missing: Response 2: Correctness" in reply.text
    assert reply.text.count(" checked") == len(METRICS)
    assert ReviewStore(files["store"]).answers() == []


def test_each_reviewer_has_their_own_queue_and_agreement_is_shown(
    files: dict[str, Path],
) -> None:
    ann, bob = make_client(files), make_client(files)
    ann.get("/?reviewer=ann")
    bob.get("/?reviewer=bob")
    for index, (x, y) in enumerate([(5, 1), (4, 2), (2, 4)]):
        answer_item(ann, index, {**all_scores(1, x), **all_scores(2, y)})
        answer_item(bob, index, {**all_scores(1, x), **all_scores(2, y)})
    answer_item(ann, 3, all_scores(1 if 'r1_correctness"' in ann.get("/item/3").text else 2, 3))
    assert ann.get("/next").headers["location"] == "/done"
    assert bob.get("/next").headers["location"] == "/item/3"
    home = ann.get("/").text
    assert re.search(r"<td>ann</td><td>4 / 4</td>", home)
    assert re.search(r"<td>bob</td><td>3 / 4</td>", home)
    assert re.search(r"<td>correctness</td><td>ordinal</td>\s*<td>1.000</td>", home)


def test_concurrent_answers_all_land(tmp_path: Path) -> None:
    store = ReviewStore(tmp_path / "s.db")
    errors: list[BaseException] = []

    def work(reviewer: str) -> None:
        try:
            for i in range(10):
                key = ItemKey(f"c{i}", 1, "baseline", "candidate")
                store.save_answer("d", reviewer, "pairwise", key, {"winner": "a"})
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"r{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(store.answers()) == 6 * 10


def test_pairwise_answers_map_back_to_conditions(files: dict[str, Path]) -> None:
    client = make_client(files, mode="pairwise")
    client.get("/?reviewer=ann")
    first = ReviewStore(files["store"]).assign_order(
        open_review_set(
            trials_path=files["trials"],
            cases_path=files["cases"],
            run_id=None,
            store_path=files["store"],
            a="baseline",
            b="candidate",
            mode="pairwise",
        ).dataset,
        [ItemKey("c0", 1, "baseline", "candidate")],
    )[ItemKey("c0", 1, "baseline", "candidate")]
    assert answer_item(client, 0, {"winner": "1"}).status_code == 303
    (saved,) = ReviewStore(files["store"]).answers()
    assert saved.answer["winner"] == ("a" if first == "baseline" else "b")
    assert 'value="1" checked' in client.get("/item/0").text
    # c3's candidate errored: nothing to compare, and posting is refused
    assert "Nothing to compare here" in client.get("/item/3").text
    assert answer_item(client, 3, {"winner": "tie"}).status_code == 400


# -- export -------------------------------------------------------------------------------
def validate_lines(path: Path, model: type[Any], schema: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        model.model_validate(row)
        jsonschema.validate(row, schema_of(schema))
    return rows


def test_export_writes_valid_scores_labels_and_comparisons(
    files: dict[str, Path], cli: Any
) -> None:
    scores_client = make_client(files)
    scores_client.get("/?reviewer=ann")
    answer_item(scores_client, 0, {**all_scores(1, 4), **all_scores(2, 2), "r1_blocker": "on"})
    pair_client = make_client(files, mode="pairwise")
    pair_client.get("/?reviewer=bob")
    answer_item(pair_client, 1, {"winner": "tie", "notes": "both fine"})
    out = files["dir"]
    result = cli(
        "review", "export", "--store", files["store"], "--output", out / "scores.jsonl",
        "--labels", out / "labels.jsonl", "--comparisons", out / "comparisons.jsonl", "--json",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert result.json() == {
        "answers": 2,
        "scores": 2,
        "labels": 13,
        "comparisons": 1,
        "output": str(out / "scores.jsonl"),
    }
    scores = validate_lines(out / "scores.jsonl", ScoreRow, "score")
    assert {(r["condition"], r["source"]) for r in scores} == {
        ("baseline", "human:ann"),
        ("candidate", "human:ann"),
    }
    assert all(set(METRICS) <= set(r) for r in scores)
    assert sum(r["blocker"] for r in scores) == 1
    labels = validate_lines(out / "labels.jsonl", Label, "label")
    assert {"item_id": "c1:1:baseline|candidate", "dimension": "winner", "rater": "human:bob",
            "value": "tie"} in labels  # fmt: skip
    assert {lab["dimension"] for lab in labels} == {*METRICS, "blocker", "winner"}
    (comparison,) = validate_lines(out / "comparisons.jsonl", Comparison, "comparison")
    assert comparison["verdict"] == "tie" and comparison["judge"] == "human:bob"
    assert comparison["passes"][0]["order"] in ("ab", "ba")
    assert comparison["len_a"] == len("first answer 1 <script>alert(1)</script>")
    # narrowed to one reviewer, or to a dataset that has no answers
    only = out / "bob.jsonl"
    result = cli("review", "export", "--store", files["store"], "--output", only,
                 "--comparisons", out / "bob-c.jsonl", "--reviewer", "bob", "--json")  # fmt: skip
    assert (result.json()["scores"], result.json()["comparisons"]) == (0, 1)
    result = cli("review", "export", "--store", files["store"], "--output", only, "--dataset", "x")
    assert result.code == 0 and "no review answers in the store match" in result.stderr
    assert only.read_text() == ""


def test_export_refuses_one_file_for_two_outputs(files: dict[str, Path], cli: Any) -> None:
    ReviewStore(files["store"])
    path = files["dir"] / "x.jsonl"
    result = cli("review", "export", "--store", files["store"], "--output", path, "--labels", path)
    assert result.code == 2 and "each needs its own file" in result.stderr
    assert not path.exists()


def test_review_a_run_from_the_store(files: dict[str, Path]) -> None:
    store = Store(files["store"])
    store.save_run("run-1", {})
    for seq, line in enumerate(files["trials"].read_text().splitlines()):
        record = {**json.loads(line), "run_id": "run-1"}
        store.queue_trial("run-1", f"k{seq}", seq, record)
    store.close()
    review = open_review_set(
        trials_path=None,
        cases_path=files["cases"],
        run_id="run-1",
        store_path=files["store"],
        a="baseline",
        b="candidate",
        mode="scores",
    )
    assert review.dataset == "run-1"
    assert [i.key.case_id for i in review.items] == ["c0", "c1", "c2", "c3"]


def test_bad_inputs_exit_2(files: dict[str, Path], cli: Any) -> None:
    base = ["review", "serve", "--cases", files["cases"], "--store", files["store"]]
    result = cli(*base, "--trials", files["trials"], "--mode", "pairwise", "--b", "nope")
    assert result.code == 2 and "no trials of condition 'nope'" in result.stderr
    result = cli(*base, "--trials", files["trials"], "--mode", "stars")
    assert result.code == 2 and "--mode" in result.stderr
    result = cli(*base)
    assert result.code == 2 and "--trials FILE" in result.stderr
    result = cli(*base, "--run", "missing")
    assert result.code == 2 and "has no trials" in result.stderr


# -- security -----------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::"])
def test_refuses_to_listen_beyond_loopback_without_token(
    files: dict[str, Path], cli: Any, host: str
) -> None:
    result = cli("review", "--trials", files["trials"], "--cases", files["cases"],
                 "--store", files["store"], "--host", host)  # fmt: skip
    assert result.code == 2
    assert f"--host {host}: refusing to listen beyond loopback without --token" in result.stderr


def test_token_required_on_every_request(files: dict[str, Path]) -> None:
    client = make_client(files, token=TOKEN)
    for path in ("/", "/item/0", "/static/review.js", "/nope"):
        reply = client.get(path)
        assert reply.status_code == 401, path
        assert reply.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert client.get("/?token=wrong").status_code == 401
    assert client.post("/item/0", data={"winner": "1"}).status_code == 401
    bearer = client.get("/", headers={"Authorization": f"Bearer {TOKEN}"})
    assert bearer.status_code == 200
    once = client.get(f"/?token={TOKEN}&reviewer=ann")
    assert once.status_code == 303 and once.headers["location"] == "/?reviewer=ann"
    cookie = next(
        c for c in once.headers.get_list("set-cookie") if c.startswith(token_cookie("review"))
    )
    assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
    assert client.get("/item/0?reviewer=ann").status_code == 200  # the cookie carries it now


def test_every_response_has_the_security_headers(files: dict[str, Path]) -> None:
    client = make_client(files)
    for path in ("/", "/?reviewer=ann", "/item/0", "/item/99", "/static/review.css", "/next"):
        headers = client.get(path).headers
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
    policy = CONTENT_SECURITY_POLICY
    for directive in ("default-src 'none'", "script-src 'self'", "style-src 'self'",
                      "form-action 'self'", "frame-ancestors 'none'"):  # fmt: skip
        assert directive in policy
    assert "unsafe" not in policy
    html = client.get("/item/0").text
    assert "<script>" not in html and " style=" not in html and "<style" not in html
    assert re.search(r" on[a-z]+=", html) is None


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "127.0.0.2"])
def test_loopback_host_headers_are_served(files: dict[str, Path], host: str) -> None:
    client = make_client(files)
    assert client.get("/", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example:8765", "evil.example", "10.0.0.1:8765", ""])
def test_other_host_headers_are_refused_without_token(files: dict[str, Path], host: str) -> None:
    """DNS rebinding: a page on evil.example resolved to 127.0.0.1 gets nothing."""
    client = make_client(files)
    reply = client.get("/", headers={"Host": host})
    assert reply.status_code == 403
    assert reply.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    with_token = make_client(files, token=TOKEN)  # a token-guarded server may have any name
    reply = with_token.get("/", headers={"Host": host, "Authorization": f"Bearer {TOKEN}"})
    assert reply.status_code == 200


def test_posts_need_the_csrf_token(files: dict[str, Path]) -> None:
    client = make_client(files)
    client.get("/?reviewer=ann")
    form = {**all_scores(1, 3), **all_scores(2, 3)}
    assert client.post("/item/0", data=form).status_code == 403
    assert client.post("/item/0", data={**form, "csrf": "0" * 64}).status_code == 403
    assert client.post("/reviewer", data={"reviewer": "eve"}).status_code == 403
    # a token from another session is worthless
    other = make_client(files)
    foreign = csrf_of(other.get("/?reviewer=bob").text)
    assert client.post("/item/0", data={**form, "csrf": foreign}).status_code == 403
    # without a session cookie at all
    token = csrf_of(client.get("/item/0").text)
    client.cookies.delete(session_cookie("review"))
    assert client.post("/item/0", data={**form, "csrf": token}).status_code == 403
    assert ReviewStore(files["store"]).answers() == []


def test_reviewer_form_sets_the_reviewer(files: dict[str, Path]) -> None:
    client = make_client(files)
    token = csrf_of(client.get("/").text)
    reply = client.post("/reviewer", data={"csrf": token, "reviewer": "carol"})
    assert reply.status_code == 303 and reply.headers["location"] == "/next"
    assert "reviewer: <strong>carol</strong>" in client.get("/item/0").text
    bad = client.post("/reviewer", data={"csrf": token, "reviewer": "<b>x</b>"})
    assert bad.status_code == 400


def test_serve_command_runs_and_stops_on_interrupt(files: dict[str, Path]) -> None:
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    command = [sys.executable, "-m", "assay", "review", "--trials", str(files["trials"]),
               "--cases", str(files["cases"]), "--store", str(files["store"]), "--port", "0"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        match = re.match(r"review: (http://127\.0\.0\.1:\d+/) \(4 items, 4 to review", first)
        assert match, first
        with urllib.request.urlopen(match.group(1) + "?reviewer=ann", timeout=10) as reply:
            assert reply.status == 200
            assert reply.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_short_tokens_are_refused(files: dict[str, Path], cli: Any) -> None:
    result = cli("review", "serve", "--trials", files["trials"], "--cases", files["cases"],
                 "--store", files["store"], "--host", "0.0.0.0", "--token", "abc")  # fmt: skip
    assert result.code == 2 and "--token: use at least 12 characters" in result.stderr


# -- one condition alone ------------------------------------------------------------------
@pytest.fixture
def single(tmp_path: Path) -> dict[str, Path]:
    """A single-condition run: one system's responses, to label for calibration."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [make_case(f"c{i}") for i in range(3)])
    rows = [trial(f"c{i}", "gpt-4o-mini", f"the only answer {i}") for i in range(3)]
    trials = write_jsonl(tmp_path / "single.jsonl", rows)
    return {"cases": cases, "trials": trials, "store": tmp_path / "store.db", "dir": tmp_path}


def single_client(files: dict[str, Path], a: str | None, b: str | None) -> TestClient:
    review = open_review_set(
        trials_path=files["trials"],
        cases_path=files["cases"],
        run_id=None,
        store_path=files["store"],
        a=a,
        b=b,
        mode="scores",
    )
    assert review.single and review.a == review.b == "gpt-4o-mini"
    config = ReviewConfig(review=review, store=ReviewStore(files["store"]), mode="scores")
    return TestClient(create_app(config), base_url="http://127.0.0.1:8765", follow_redirects=False)


@pytest.mark.parametrize(("a", "b"), [(None, None), ("gpt-4o-mini", "gpt-4o-mini")])
def test_a_single_condition_run_is_scored_one_response_at_a_time(
    single: dict[str, Path], cli: Any, a: str | None, b: str | None
) -> None:
    client = single_client(single, a, b)
    client.get("/?reviewer=ann")
    page = client.get("/item/0").text
    assert "the only answer 0" in page and page.count('class="response"') == 1
    assert "Response 2" not in page and 'name="winner"' not in page  # no preference asked
    assert "gpt-4o-mini" not in page
    assert page.count('type="radio"') == len(METRICS) * 5
    refused = answer_item(client, 0, {"r1_correctness": "4"})
    assert refused.status_code == 400 and "Missing: Autonomy" in refused.text
    assert answer_item(client, 0, {**all_scores(1, 4), "r1_notes": "fine"}).status_code == 303
    assert answer_item(client, 1, {**all_scores(1, 2), "r1_blocker": "on"}).status_code == 303
    out = single["dir"] / "human.jsonl"
    done = cli("review", "export", "--store", single["store"], "--output", out, "--json")
    assert done.code == 0, done.stderr
    scores = validate_lines(out, ScoreRow, "score")
    assert [(r["case_id"], r["condition"], r["correctness"]) for r in scores] == [
        ("c0", "gpt-4o-mini", 4.0),
        ("c1", "gpt-4o-mini", 2.0),
    ]
    assert [r["blocker"] for r in scores] == [False, True]


def test_a_single_condition_cannot_be_compared(single: dict[str, Path], cli: Any) -> None:
    base = ["review", "serve", "--cases", single["cases"], "--store", single["store"]]
    same = cli(*base, "--trials", single["trials"], "--mode", "pairwise",
               "--a", "gpt-4o-mini", "--b", "gpt-4o-mini")  # fmt: skip
    assert same.code == 2 and "pairwise compares two conditions" in same.stderr
    absent = cli(*base, "--trials", single["trials"], "--a", "gpt-4o", "--b", "gpt-4o")
    assert absent.code == 2 and "no trials of condition 'gpt-4o'" in absent.stderr
