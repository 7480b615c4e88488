"""Between the page and the store: what each response slot shows, and parsing answers.

Slots are numbered as shown ("Response 1", "Response 2"); the mapping to condition names
stays here, on the server, and never reaches the page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.datastructures import FormData

from assay.core.trajectory_text import shown_lines
from assay.review.items import ReviewItem

if TYPE_CHECKING:
    from assay.review.config import ReviewConfig

MAX_NOTES = 10_000


class FormError(ValueError):
    """A posted answer that cannot be saved; the page is shown again with the message."""


def conditions_shown(config: ReviewConfig, item: ReviewItem) -> list[str]:
    """Condition names in the order shown (Response 1, Response 2; the one response of a
    single-condition item): server side only."""
    if item.single:
        return [item.key.a]
    first = config.first.get(item.key, item.key.a)
    second = item.key.b if first == item.key.a else item.key.a
    return [first, second]


def response_slots(
    config: ReviewConfig, item: ReviewItem, answer: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """What the page shows per response; no condition name ever goes in here."""
    slots = []
    responses = (answer or {}).get("responses", {})
    for number, condition in enumerate(conditions_shown(config, item), start=1):
        trial = item.trial_of(condition)
        given = responses.get(condition, {})
        slots.append(
            {
                "number": number,
                "missing": trial is None,
                "error": trial.error if trial is not None else None,
                "text": trial.response if trial is not None else "",
                "steps": shown_lines(trial.trajectory) if trial is not None else [],
                "scorable": item.scorable(condition),
                "scores": given.get("scores", {}),
                "blocker": bool(given.get("blocker")),
                "notes": given.get("notes") or "",
            }
        )
    return slots


def shown_winner(config: ReviewConfig, item: ReviewItem, answer: dict[str, Any] | None) -> str:
    """A stored verdict ("a"/"b"/"tie") as the reviewer saw it: "1", "2" or "tie"."""
    if config.mode != "pairwise" or not answer or "winner" not in answer:
        return ""
    winner = answer["winner"]
    if winner == "tie":
        return "tie"
    condition = item.key.a if winner == "a" else item.key.b
    return str(conditions_shown(config, item).index(condition) + 1)


def notes_field(form: FormData, name: str) -> str:
    """The notes as the reviewer wrote them: spaces, indentation and blank lines kept (export
    passes them on verbatim); only the browser's CRLF line breaks become LF, and notes of
    nothing but whitespace are no notes."""
    value = form.get(name)
    text = value if isinstance(value, str) else ""
    if len(text) > MAX_NOTES:
        raise FormError(f"Notes are limited to {MAX_NOTES} characters.")
    return text.replace("\r\n", "\n").replace("\r", "\n") if text.strip() else ""


def parse_scores(config: ReviewConfig, item: ReviewItem, form: FormData) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    missing: list[str] = []
    for number, condition in enumerate(conditions_shown(config, item), start=1):
        if not item.scorable(condition):
            continue
        scores: dict[str, int] = {}
        for metric in config.rubric.judged_criteria():
            raw = form.get(f"r{number}_{metric.name}")
            if isinstance(raw, str) and raw.isdigit() and int(raw) in config.rubric.points:
                scores[metric.name] = int(raw)
            else:
                missing.append(
                    metric.label if item.single else f"Response {number}: {metric.label}"
                )
        responses[condition] = {
            "scores": scores,
            "blocker": form.get(f"r{number}_blocker") == "on",
            "notes": notes_field(form, f"r{number}_notes"),
        }
    if missing:
        low, high = config.rubric.points[0], config.rubric.points[-1]
        raise FormError(
            f"Score every metric from {low} to {high}. Missing: " + ", ".join(missing) + "."
        )
    return {"responses": responses, "first": conditions_shown(config, item)[0]}


def parse_pairwise(config: ReviewConfig, item: ReviewItem, form: FormData) -> dict[str, Any]:
    shown = conditions_shown(config, item)
    raw = form.get("winner")
    if raw == "tie":
        winner = "tie"
    elif raw in ("1", "2"):
        winner = "a" if shown[int(str(raw)) - 1] == item.key.a else "b"
    else:
        raise FormError("Pick Response 1, Response 2 or a tie.")
    trial_a, trial_b = item.trial_of(item.key.a), item.trial_of(item.key.b)
    return {
        "winner": winner,
        "first": shown[0],
        "notes": notes_field(form, "notes"),
        "len_a": len(trial_a.response) if trial_a else 0,
        "len_b": len(trial_b.response) if trial_b else 0,
    }


def posted_answer(config: ReviewConfig, item: ReviewItem, form: FormData) -> dict[str, Any]:
    """What was posted, in the stored answer's shape, to show the form again as it was."""
    shown = conditions_shown(config, item)
    if config.mode == "pairwise":
        raw = form.get("winner")
        notes = form.get("notes")
        partial: dict[str, Any] = {"notes": notes if isinstance(notes, str) else ""}
        if raw in ("1", "2"):
            partial["winner"] = "a" if shown[int(str(raw)) - 1] == item.key.a else "b"
        elif raw == "tie":
            partial["winner"] = "tie"
        return partial
    responses = {}
    for number, condition in enumerate(shown, start=1):
        scores = {}
        for metric in config.rubric.judged_criteria():
            raw = form.get(f"r{number}_{metric.name}")
            if isinstance(raw, str) and raw.isdigit() and int(raw) in config.rubric.points:
                scores[metric.name] = int(raw)
        notes = form.get(f"r{number}_notes")
        responses[condition] = {
            "scores": scores,
            "blocker": form.get(f"r{number}_blocker") == "on",
            "notes": notes if isinstance(notes, str) else "",
        }
    return {"responses": responses}
