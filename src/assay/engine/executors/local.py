"""The default executor: call the model on this process's event loop."""

from __future__ import annotations

from assay.models.base import Model, Request, Response


class LocalExecutor:
    """Awaits `model.generate` directly."""

    name = "local"
    slots: int | None = None

    async def generate(self, model: Model, request: Request) -> Response:
        return await model.generate(request)

    async def aclose(self) -> None:
        return None
