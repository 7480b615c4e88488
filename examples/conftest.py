"""The claude-code example's project carries tests of its own for the agent to run inside
that folder (`examples/claude-code/project/`); a pytest run above it (`pytest --assay-suite
examples/...` from a checkout) does not collect them."""

collect_ignore_glob = ["claude-code/project/*"]
