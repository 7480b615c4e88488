"""The structured-output form each OpenAI-compatible server accepted (`server_forms`).

Keyed by base URL and model name: a later run against the same server starts with the form
that answered, instead of sending again the forms it refused (models/forms.py).
"""

from __future__ import annotations

from assay.store.db import Store, now_iso


def remembered_form(store: Store, base_url: str, model: str) -> str | None:
    """The form the server at `base_url` last accepted for `model`, or None."""
    row = store.db.execute(
        "SELECT form FROM server_forms WHERE base_url = ? AND model = ?", (base_url, model)
    ).fetchone()
    return str(row[0]) if row else None


def queue_form(store: Store, base_url: str, model: str, form: str) -> None:
    """Remember the form that answered, at the next flush."""
    store.queue(
        "INSERT INTO server_forms (base_url, model, form, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(base_url, model) DO UPDATE SET form = excluded.form,"
        " updated_at = excluded.updated_at",
        (base_url, model, form, now_iso()),
    )
