"""The addresses of the viewer's pages, in one place: the server's (absolute paths with the
ids percent-encoded and the filters in the query string) or a static export's (relative paths
to files, `assay view --export`), so every template links the same way in both."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import quote, urlencode

UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(value: str) -> str:
    """A file name for an id: its safe characters, with a short hash of the id when any was
    dropped or it was cut (two ids never share a name; none is hidden, empty or too long)."""
    slug = UNSAFE.sub("_", value).strip("._")[:60]
    if slug == value and slug:
        return slug
    return f"{slug or 'id'}-{hashlib.sha256(value.encode('utf-8')).hexdigest()[:10]}"


@dataclass(frozen=True, slots=True)
class Links:
    """Where each page is. `root` leads from the current page to the top (the server's `/`,
    or `../../` from an exported case page); `static` is an export's layout."""

    root: str = "/"
    static: bool = False

    def home(self, suite: str | None = None) -> str:
        if self.static:
            return self.root + "index.html"
        return self.root + (f"?{urlencode({'suite': suite})}" if suite else "")

    def run(self, run_id: str, query: dict[str, str] | None = None) -> str:
        """The run page; in an export only the page number of `query` counts (its pages
        are files, and filtering needs the server)."""
        if self.static:
            page = (query or {}).get("page", "1")
            name = "index.html" if page == "1" else f"page-{page}.html"
            return f"{self.root}runs/{file_name(run_id)}/{name}"
        return f"{self.root}runs/{quote(run_id, safe='')}" + (
            f"?{urlencode(query)}" if query else ""
        )

    def case(self, run_id: str, case_id: str) -> str:
        if self.static:
            return f"{self.root}runs/{file_name(run_id)}/cases/{file_name(case_id)}.html"
        return f"{self.root}runs/{quote(run_id, safe='')}/cases/{quote(case_id, safe='')}"

    def response(self, run_id: str, case_id: str, condition: str, trial: int) -> str:
        """One trial's whole response as text: the server's route, or the export's file
        beside the case page."""
        if self.static:  # a folder named as the case page beside it: one name per trial
            name = f"{file_name(case_id)}/{file_name(condition)}-{trial}.txt"
            return f"{self.root}runs/{file_name(run_id)}/cases/{name}"
        query = urlencode({"case": case_id, "condition": condition, "trial": trial})
        return f"{self.root}runs/{quote(run_id, safe='')}/response?{query}"

    def compare(self, a: str | None = None, b: str | None = None) -> str:
        if self.static:
            if a is None or b is None:
                return self.home()
            return f"{self.root}compare/{file_name(a)}--{file_name(b)}.html"
        return f"{self.root}compare" + (f"?{urlencode({'a': a, 'b': b})}" if a and b else "")

    def history(self, suite: str) -> str:
        if self.static:
            return f"{self.root}suites/{file_name(suite)}.html"
        return f"{self.root}suites/{quote(suite, safe='')}/history"

    def asset(self, name: str) -> str:
        return f"{self.root}static/{name}"


SERVER = Links()
