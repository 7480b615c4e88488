"""The clinic knowledge base: synthetic cards `{id, title, text}` in kb.jsonl, searched with
BM25 (bm25s)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import bm25s
from bm25s.stopwords import STOPWORDS_EN

KB_PATH = Path(__file__).resolve().parent.parent / "kb.jsonl"
_SUFFIXES = ("ing", "ed", "es", "s")
# English stopwords plus the words every patient question shares.
STOPWORDS = sorted(
    {*STOPWORDS_EN, "what", "how", "can", "do", "does", "my", "me", "get", "why", "i", "clinic"}
)


@dataclass(frozen=True)
class Card:
    id: str
    title: str
    text: str


def stem(words: list[str]) -> list[str]:
    """A deliberately small suffix stripper: `vaccines` and `vaccine` meet, `booking` and `book`."""
    out = []
    for word in words:
        for suffix in _SUFFIXES:
            if len(word) > len(suffix) + 3 and word.endswith(suffix):
                word = word[: -len(suffix)]
                break
        out.append(word)
    return out


def words(text: str) -> list[str]:
    """Lower-case stemmed words of a text, as the index sees them."""
    return stem(re.findall(r"[a-z0-9]+", text.lower()))


def load_cards(path: Path = KB_PATH) -> list[Card]:
    cards = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            cards.append(Card(row["id"], row["title"], row["text"]))
    return cards


class KnowledgeBase:
    """BM25 over title and text of every card."""

    def __init__(self, cards: list[Card]) -> None:
        self.cards = cards
        self.by_id = {card.id: card for card in cards}
        corpus = [f"{card.title}. {card.title}. {card.text}" for card in cards]
        tokens = bm25s.tokenize(corpus, stopwords=STOPWORDS, stemmer=stem, show_progress=False)
        self.index = bm25s.BM25()
        self.index.index(tokens, show_progress=False)
        self.vocabulary = {w for card in corpus for w in words(card)}

    def search(self, query: str, k: int = 3) -> list[tuple[Card, float]]:
        """The k best cards for a query with their scores (cards scoring 0 are left out)."""
        tokens = bm25s.tokenize([query], stopwords=STOPWORDS, stemmer=stem, show_progress=False)
        if not tokens.vocab:
            return []
        k = min(k, len(self.cards))
        docs, scores = self.index.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [
            (self.cards[int(i)], float(s)) for i, s in zip(docs[0], scores[0], strict=True) if s > 0
        ]


@lru_cache(maxsize=1)
def default_kb() -> KnowledgeBase:
    return KnowledgeBase(load_cards())
