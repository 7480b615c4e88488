"""Red-flag rules: explicit, readable patterns that decide escalation or refusal.

Escalation rules come first: a person must see anything urgent or unsafe for the customer,
even when the request is also out of scope. A rule matches when every one of its patterns
matches the request (case-insensitive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ACTIVE_WATER = (
    r"(right now|at the moment|currently|water everywhere|is (flooding|pouring|gushing|spreading"
    r"|coming (in|through|out))|keeps? (pouring|rising|spreading)|burst|won'?t stop|gushing|pouring)"
)


@dataclass(frozen=True)
class Rule:
    """A red flag: its name, what it decides, when it fires, and what the customer hears."""

    name: str
    kind: str  # "escalation" or "refusal"
    patterns: tuple[str, ...]
    reply: str
    cite: tuple[str, ...] = field(default=())

    def matches(self, text: str) -> bool:
        return all(re.search(p, text, re.IGNORECASE) for p in self.patterns)


ESCALATE_SAFETY = (
    "This sounds urgent, so I am passing it to a person on our team right now."
    " Until they reach you: stay out of standing water, do not touch anything electrical,"
    " close the main water supply with the valve lever if you can do so safely, and call your"
    " local emergency number if anyone is at risk."
)

RULES: tuple[Rule, ...] = (
    Rule(
        "self_harm",
        "escalation",
        (r"(kill myself|end my life|suicid|hurt myself|don'?t want to (live|be alive))",),
        "I am really sorry you are feeling this way. I am connecting you with a person now."
        " If you are in danger, please call your local emergency number or a crisis line.",
    ),
    Rule(
        "electrical_hazard",
        "escalation",
        (
            r"(spark|electrical panel|fuse ?box|breaker|outlet|socket|wiring|wires|power strip|shock)",
            r"(water|leak|flood|wet|drip)",
        ),
        ESCALATE_SAFETY,
        ("kb-leak-emergency-steps",),
    ),
    Rule(
        "gas_smoke_fire",
        "escalation",
        (r"(smell(s|ing)? (of )?gas|gas leak|smoke|burning smell|on fire|flames)",),
        "Please leave the building now and call your local emergency number from outside."
        " I am alerting a person on our team as well.",
    ),
    Rule(
        "active_leak_valve_failed",
        "escalation",
        (
            r"valve.{0,40}(won'?t|will not|doesn'?t|does not|didn'?t|did not|isn'?t|is not|failed to)"
            r".{0,20}(close|shut|turn|move)",
            ACTIVE_WATER,
        ),
        ESCALATE_SAFETY,
        ("kb-valve-wont-close", "kb-leak-emergency-steps"),
    ),
    Rule(
        "active_flooding",
        "escalation",
        (r"(water|leak|flood|pipe|ceiling)", ACTIVE_WATER),
        ESCALATE_SAFETY,
        ("kb-leak-emergency-steps",),
    ),
    Rule(
        "account_compromise",
        "escalation",
        (
            r"(hacked|someone (else )?(has )?(logged|signed) (in|into)|unauthori[sz]ed|"
            r"(didn'?t|did not) (make|authori[sz]e)|strange (login|sign-in)|not me who)",
        ),
        "I have flagged this to our account security team; a person will contact you shortly."
        " Meanwhile, reset your password and sign out all devices from Account > Security.",
        ("kb-account-security",),
    ),
    Rule(
        "legal_threat",
        "escalation",
        (r"\b(lawyer|attorney|sue|suing|lawsuit|legal action|small claims|court)\b",),
        "I am handing this to a member of our customer relations team, who will reply in"
        " person. Thank you for your patience.",
    ),
    Rule(
        "covert_surveillance",
        "refusal",
        (
            r"(spy|snoop|secretly|without (them|him|her|my \w+|the \w+|anyone) knowing|track|"
            r"see what .{0,20} (does|is doing))",
            r"(neighbou?r|tenant|ex\b|roommate|wife|husband|partner|landlord|someone|people|them)",
        ),
        "I can't help with monitoring other people without their knowledge or consent.",
    ),
    Rule(
        "other_peoples_accounts",
        "refusal",
        (
            r"(someone else'?s|another (person|customer|user)'?s?|my (ex|neighbou?r|landlord|tenant"
            r"|roommate)'?s?)\b.{0,20}\b(account|password|login|data|history|address|details)",
        ),
        "I can't help with getting into another person's account or data."
        " Each person can manage only the homes they own or were invited to.",
    ),
    Rule(
        "tampering",
        "refusal",
        (
            r"(hack|jailbreak|root|crack|flash|modify|bypass|defeat|disable|override)",
            r"(firmware|safety|interlock|shut-?off limit|voice (lock|restriction)|certificat"
            r"|alarm permanently|automatic shut-?off for good|the limit)",
        ),
        "I can't help with defeating the safety features or the firmware of Tidewell devices;"
        " doing so can let a leak go unnoticed and voids the warranty.",
    ),
    Rule(
        "fraud",
        "refusal",
        (
            r"(fake|forge|falsif|backdate|make up|invent|exaggerat|inflate|pretend)",
            r"(claim|invoice|receipt|photo|event log|certificate|damage|guarantee|insurance)",
        ),
        "I can't help with making a claim or a document look different from what happened.",
    ),
)

# Topics the knowledge base does not cover even though they mention water or homes.
OUT_OF_SCOPE = (
    r"(\bdrink|water quality|tax(es)?\b|stock market|invest|recipe|poem|haiku|"
    r"homework|medical|diagnos|weather|lottery|crypto)"
)
OUT_OF_SCOPE_REPLY = (
    "I can only help with Tidewell products, plans and accounts, so I can't answer that."
    " For anything about your Tidewell system, ask away."
)
# Below this BM25 score the best card shares too little with the question to answer it.
MIN_SCORE = 1.0


@dataclass(frozen=True)
class Decision:
    """What the guardrail decided: answer, refusal or escalation, and why."""

    kind: str
    rule: str | None = None
    reply: str | None = None
    cite: tuple[str, ...] = ()


def decide(question: str, top_score: float) -> Decision:
    """Apply the red-flag rules in order, then the out-of-scope checks."""
    for rule in RULES:
        if rule.matches(question):
            return Decision(rule.kind, rule.name, rule.reply, rule.cite)
    if re.search(OUT_OF_SCOPE, question, re.IGNORECASE):
        return Decision("refusal", "out_of_scope_topic", OUT_OF_SCOPE_REPLY)
    if top_score < MIN_SCORE:
        return Decision("refusal", "out_of_scope_no_match", OUT_OF_SCOPE_REPLY)
    return Decision("answer")
