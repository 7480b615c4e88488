"""Red-flag rules: explicit, readable patterns that decide escalation or refusal.

Not a medical device and not medical advice: these rules exist to show how an evaluation
gates a triage assistant, over synthetic data written for this example.

Escalation comes first, and self-harm first of all: a disclosure of self-harm gets the
crisis reply even when the message also asks for something the assistant refuses. Then the
urgent red flags (call emergency services), then the refusals. A rule matches when every one
of its patterns matches the message (case-insensitive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rule:
    """A red flag: its name, what it decides, when it fires, and what the patient hears."""

    name: str
    kind: str  # "escalation" or "refusal"
    patterns: tuple[str, ...]
    reply: str
    cite: tuple[str, ...] = field(default=())
    route: str | None = None  # escalations: "crisis" (self-harm) or "emergency"

    def matches(self, text: str) -> bool:
        return all(re.search(p, text, re.IGNORECASE) for p in self.patterns)


CRISIS = (
    "I'm really sorry you're going through this, and I'm glad you told me. You deserve support"
    " right now. If you might act on these thoughts or you are in danger, call your local"
    " emergency number now. You can also contact a crisis line at any hour, or tell someone you"
    " trust and stay with them. I have flagged this conversation so a member of our clinical"
    " team contacts you today."
)
EMERGENCY = (
    "This could be a medical emergency. Call your local emergency number now or go to the"
    " nearest emergency department; do not wait for a clinic appointment. I have also flagged"
    " this conversation to our clinical team."
)
NOT_A_CLINICIAN = (
    " I'm the clinic's information assistant, not a clinician. Please book an appointment"
    " (or a same-day appointment if it can't wait) and a clinician will help you."
)


def emergency(name: str, *patterns: str) -> Rule:
    """An urgent red flag: the person is told to call emergency services now."""
    return Rule(name, "escalation", patterns, EMERGENCY, ("kb-emergency-symptoms",), "emergency")


RULES: tuple[Rule, ...] = (
    Rule(
        "self_harm",
        "escalation",
        (
            r"(kill(ing)? myself|end(ing)? (it all|my life|things)|suicid|(hurt(ing)?|harm(ing)?"
            r"|cut(ting)?) myself|self[- ]harm|(don'?t|do not) want to (live|be alive|be here)"
            r"|(never|not|don'?t) (want to )?wake up|better off without me"
            r"|(no|any) (point|reason) (in )?(living|going on|to live)"
            r"|take all (of )?my (pills|tablets|medication))",
        ),
        CRISIS,
        ("kb-mental-health",),
        "crisis",
    ),
    emergency(
        "chest_pain",
        r"(chest (pain|hurts|is (tight|hurting))|tight chest|(pain|tightness|pressure|crushing)"
        r" (in|across|on) (my|his|her|the) chest|heart attack)",
    ),
    emergency(
        "stroke_signs",
        r"(face (is )?(droop|drooping|dropped|fallen)|slurr(ed|ing)"
        r"|(can'?t|cannot) (lift|raise) (his|her|my|their|one) arm"
        r"|(arm|leg|side) (has )?(gone )?(weak|numb|dead)|stroke)",
    ),
    emergency(
        "breathing_difficulty",
        r"((can'?t|cannot|struggling to|hard to|unable to|difficulty) (catch (my|his|her) )?"
        r"breath|gasping|lips (are |have )?(gone |turned |turning )?blue|choking)",
    ),
    emergency(
        "anaphylaxis",
        r"(anaphyla|(throat|tongue|lips|face) (is |are )?(swell|swollen|closing|puff)|epi-?pen)",
    ),
    emergency(
        "severe_bleeding",
        r"(bleed|blood)",
        r"(won'?t stop|will not stop|isn'?t stopping|not stopping|soak(ed|ing)|spurt"
        r"|pouring|heavily|a lot of blood|lots of blood)",
    ),
    emergency(
        "unconscious_or_seizure",
        r"(unconscious|unresponsive|won'?t wake|not waking|seizure|having a fit|fitting)",
    ),
    Rule(
        "other_patients_records",
        "refusal",
        (
            r"(someone else'?s|another patient'?s?|other patients'?|my (husband|wife|partner"
            r"|neighbou?r|boss|ex|friend|brother|sister|mother|father|mum|dad|son|daughter|"
            r"colleague|flatmate)'?s?)",
            r"(record|result|notes|history|diagnos|what .{0,20} (came|come|was) in for)",
        ),
        "I can't share or look up another person's health information. Staff can share a"
        " patient's information only with that patient or someone they authorised in writing.",
        ("kb-confidentiality",),
    ),
    Rule(
        "diagnosis_request",
        "refusal",
        (
            r"(diagnos|what('?s| is) wrong with me|do i have (cancer|diabetes|an? \w+ infection"
            r"|\w+itis)|is (it|this|that)( \w+)? (cancer|serious|\w+itis)"
            r"|what (illness|condition|disease) (do i|have i))",
        ),
        "I can't tell what is causing your symptoms." + NOT_A_CLINICIAN,
    ),
    Rule(
        "dosage_request",
        "refusal",
        (
            r"(how (much|many)|what dose|dosage|(double|increase|raise) (my|the|his|her) (\w+ )?"
            r"dose|more than (the|it says)|prescribe me|\bmg\b|milligram)",
            r"(take|give|dose|prescri|pills?|tablets?|medic|antibiotic|paracetamol|ibuprofen"
            r"|insulin|sertraline|codeine)",
        ),
        "I can't advise on medicine doses or prescribe; follow the leaflet or the dose your"
        " clinician gave you, and ask a pharmacist about anything else." + NOT_A_CLINICIAN,
    ),
)

# Topics the clinic's cards do not cover even though they may share a word with them.
OUT_OF_SCOPE = (
    r"(recipe|poem|haiku|stock|invest|crypto|lottery|football|weather|homework|essay"
    r"|horoscope|mortgage|car insurance)"
)
OUT_OF_SCOPE_REPLY = (
    "I can only help with Elmstead Clinic's services: appointments, prescriptions, vaccinations,"
    " test results and self-care information. I can't answer that."
)
# Below this BM25 score the best card shares too little with the question to answer it.
MIN_SCORE = 1.0


@dataclass(frozen=True)
class Decision:
    """What the guardrail decided: answer, refusal or escalation (and where to), and why."""

    kind: str
    rule: str | None = None
    reply: str | None = None
    cite: tuple[str, ...] = ()
    route: str | None = None


def decide(question: str, top_score: float) -> Decision:
    """Apply the red-flag rules in order, then the out-of-scope checks."""
    for rule in RULES:
        if rule.matches(question):
            return Decision(rule.kind, rule.name, rule.reply, rule.cite, rule.route)
    if re.search(OUT_OF_SCOPE, question, re.IGNORECASE):
        return Decision("refusal", "out_of_scope_topic", OUT_OF_SCOPE_REPLY)
    if top_score < MIN_SCORE:
        return Decision("refusal", "out_of_scope_no_match", OUT_OF_SCOPE_REPLY)
    return Decision("answer")
