"""Bias controls applied before judging: anonymisation and the same-family check.

`anonymise` replaces self-identifying phrases ("As ChatGPT, ...", "I'm Claude, made by
Anthropic") and model or vendor names with neutral words, so a judge cannot favour (or
disfavour) a response because of who wrote it. `family` maps a model spec or model name to
its family, so a judge grading its own family's output draws a warning (self-preference).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# family -> pattern matching its model names (after the provider prefix of a spec).
FAMILIES: dict[str, str] = {
    "openai": r"gpt|chatgpt|o[134](?:-|$)|davinci|openai",
    "anthropic": r"claude|anthropic",
    "google": r"gemma|gemini|bard|palm",
    "meta": r"llama",
    "mistral": r"mistral|mixtral|codestral|ministral",
    "qwen": r"qwen|qwq",
    "deepseek": r"deepseek",
    "microsoft": r"phi-?\d",
    "xai": r"grok",
    "cohere": r"command-r|cohere|aya",
}
# provider prefixes that say nothing about the family (the model name after them does).
NEUTRAL_PREFIXES = {"openai", "anthropic", "llamacpp", "command", "python", "mock"}

MODEL_NAMES = re.compile(
    r"\b(?:Chat\s?GPT|GPT-?\d[\w.-]*|GPT|o[134](?:-mini|-pro)?|Claude(?:[\s-]\d(?:\.\d)?)?"
    r"(?:[\s-](?:Opus|Sonnet|Haiku|Instant))?(?:[\s-]\d(?:\.\d)?)?|Gemini(?:[\s-][\w.]+)?|"
    r"Gemma(?:[\s-]?\d[\w.-]*)?|Bard|PaLM\s?2?|Llama(?:[\s-]?\d[\w.-]*)?|Mistral(?:[\s-]\w+)?|"
    r"Mixtral|Qwen[\w.-]*|DeepSeek(?:[\s-][\w.]+)?|Phi-\d[\w.-]*|Grok(?:[\s-]?\d)?|Copilot|"
    r"Command[\s-]R\+?)\b",
    re.IGNORECASE,
)
VENDORS = re.compile(
    r"\b(?:OpenAI|Anthropic|Google\s+DeepMind|DeepMind|Google|Meta\s+AI|Meta|Mistral\s+AI|"
    r"Alibaba(?:\s+Cloud)?|Microsoft|xAI|Cohere)\b"
)
SELF_INTRO = re.compile(
    r"\b(As an?|I am an?|I'm an?)\s+(?:large\s+)?(?:language\s+model|AI(?:\s+(?:language\s+model|"
    r"assistant|model))?)\s+(?:developed|created|made|built|trained)\s+by\s+[\w\s]+?(?=[,.;:!?]|$)",
    re.IGNORECASE | re.MULTILINE,
)
MODEL_WORD = "the assistant"
VENDOR_WORD = "its developer"


def anonymise(text: str) -> str:
    """Neutralise self-identification and model/vendor names (case preserved elsewhere)."""
    text = SELF_INTRO.sub(lambda m: f"{m.group(1)} AI assistant", text)
    text = MODEL_NAMES.sub(MODEL_WORD, text)
    return VENDORS.sub(VENDOR_WORD, text)


def family(name: str | None) -> str | None:
    """The family of a spec (`openai:gpt-4o` → openai) or model name, or None if unknown."""
    if not name:
        return None
    prefix, sep, rest = name.partition(":")
    text = (rest if sep and prefix in NEUTRAL_PREFIXES else name).lower()
    if sep and prefix == "mock":
        return None
    if sep and prefix in {"claude"}:
        return "anthropic"
    if sep and prefix in {"codex"}:
        return "openai"
    text = text.rsplit("/", 1)[-1]
    for fam, pattern in FAMILIES.items():
        if re.search(rf"(?:^|[^a-z]){pattern}", text):
            return fam
    return None


def scripted(name: str) -> bool:
    """A scripted mock model (`mock`, `mock:fair`): no family, and nothing to prefer."""
    return name == "mock" or name.startswith("mock:")


def model_name(name: str) -> str:
    """A spec's model name, lower case (`openai:My-Tune` → `my-tune`; a name as it is)."""
    prefix, sep, rest = name.partition(":")
    return (rest if sep and prefix in NEUTRAL_PREFIXES else name).lower()


def unknown_relation(judge: str, generators: Iterable[str | None]) -> str | None:
    """Why a judge cannot be told apart from the models that wrote the responses, or None:
    it is one of them (`judges responses it wrote`), or its family is unknown while a
    (non-mock) model wrote responses (an unknown family is unknown, not different)."""
    if scripted(judge):
        return None
    written = [g for g in generators if g and not scripted(g)]
    if any(g == judge or model_name(g) == model_name(judge) for g in written):
        return "judges responses it wrote itself"
    if written and family(judge) is None:
        return (
            "is of an unknown model family: it may share one with a model that wrote the responses"
        )
    return None


def shared_families(judge: str, generators: Iterable[str | None]) -> set[str]:
    """Families the judge shares with any generator (spec or model name)."""
    mine = family(judge)
    if mine is None:
        return set()
    return {mine for g in generators if family(g) == mine}
