"""What every output says of answers made by the embedded model (`llamacpp:gemma-3-270m`)."""

from __future__ import annotations

QUALITY_NOTE = (
    "made with the embedded Gemma 3 270M, a tiny model that runs the pipeline offline; "
    "its answers say nothing about quality"
)
