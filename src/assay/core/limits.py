"""Limits on what assay accepts from the systems it calls.

`MAX_REPLY_BYTES` is the default cap on one reply: an HTTP body (`openai:`, `anthropic:`) or
a CLI's stdout (`command:`, `claude`, `codex`). A longer one is an errored call naming the
cap, and nothing of it is kept; `[run] max_reply_bytes` and `--max-reply-bytes` change it.
A model's answer is a few kilobytes (128k output tokens are about half a megabyte), so the
default leaves room for agents' verbose event streams while a server that never ends its
body, or sends gigabytes, costs at most this much memory per call in flight.
"""

from __future__ import annotations

MAX_REPLY_BYTES = 8 * 1024 * 1024
