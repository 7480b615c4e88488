"""Write constraints.txt from pip's resolution report (`make constraints`).

    pip install --dry-run --ignore-installed --report resolved.json -e '.[dev]'
    python .ci/constraints.py resolved.json > constraints.txt

Every distribution the report would install, pinned (`name==version`), except assay itself,
and pip as this interpreter has it (the Makefile upgrades pip under the same constraints).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

HEADER = """\
# Pinned versions of everything `pip install -e '.[dev]'` resolves to, for every install the
# Makefile makes (`pip install -c constraints.txt ...`): pip has nothing left to search.
# `make constraints` resolves afresh (the newest versions pyproject.toml allows) and rewrites
# this file.
"""


def main(report_path: str) -> None:
    with open(report_path, encoding="utf-8") as handle:
        report = json.load(handle)
    pins = {
        item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
        for item in report["install"]
        if item["metadata"]["name"].lower() != "assay"
    }
    pins["pip"] = version("pip")
    sys.stdout.write(HEADER + "".join(f"{name}=={pins[name]}\n" for name in sorted(pins)))


if __name__ == "__main__":
    main(sys.argv[1])
