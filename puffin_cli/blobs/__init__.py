"""Blob types: one module per type, found through a registry keyed by type name.

A module in this package that defines a module-level ``HANDLER`` (a :class:`BlobHandler`) is
registered under ``HANDLER.type_name`` the first time a handler is looked up, so a new blob type
is one new file (listing it in :data:`KNOWN_MODULES` only spares its lookups the scan). Types
without a module are handled as opaque bytes, never as an error.
"""

from __future__ import annotations

import importlib

from puffin_cli.blobs.base import BlobHandler, BlobSummary, SummaryOptions

__all__ = ["BlobHandler", "BlobSummary", "SummaryOptions", "handler_for", "registered_types"]

_registry: dict[str, BlobHandler] | None = None

# The module of each type this package decodes, so that a lookup imports that module alone
# (start-up). A handler module missing here is still found by the scan in :func:`_load`;
# tests/test_imports.py checks that both agree.
KNOWN_MODULES = {
    "apache-datasketches-theta-v1": "theta",
    "deletion-vector-v1": "deletion_vector",
}


def _load() -> dict[str, BlobHandler]:
    global _registry
    if _registry is None:
        import pkgutil

        found: dict[str, BlobHandler] = {}
        for module_info in pkgutil.iter_modules(__path__):
            module = importlib.import_module(f"{__name__}.{module_info.name}")
            handler = getattr(module, "HANDLER", None)
            if handler is not None:
                found[handler.type_name] = handler
        _registry = found
    return _registry


def registered_types() -> list[str]:
    """The blob types this build decodes (everything else is opaque)."""
    return sorted(_load())


def handler_for(type_name: str) -> BlobHandler:
    """The handler for ``type_name``, or the opaque handler for a type we do not know."""
    module = KNOWN_MODULES.get(type_name)
    if module is not None:
        handler: BlobHandler = importlib.import_module(f"{__name__}.{module}").HANDLER
        return handler
    from puffin_cli.blobs.opaque import OPAQUE

    return _load().get(type_name, OPAQUE)
