"""Models: one async protocol, chosen by spec string."""

from assay.models.base import Message, Model, ModelError, Request, Response
from assay.models.pricing import Price
from assay.models.registry import ModelOptions, create_model, model_price, register

__all__ = [
    "Message",
    "Model",
    "ModelError",
    "ModelOptions",
    "Price",
    "Request",
    "Response",
    "create_model",
    "model_price",
    "register",
]
