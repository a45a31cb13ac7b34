"""The entry points of the torch.export importer: ``from_exported_program``,
``import_exported_program`` and ``load_exported_program`` (``.pt2`` files); see
``xrelay.frontends.torch.importer`` for what an import gives."""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from xrelay.frontends.torch import aten  # noqa: F401 - the converters register themselves
from xrelay.frontends.torch.importer import TorchImport, TorchImportError, _Importer

# ============================================================================================
# Entry points
# ============================================================================================


def load_exported_program(path: str | os.PathLike) -> Any:
    """``torch.export.load(path)`` with one clear error for a file that is not a saved program."""
    import torch

    p = os.fspath(path)
    if not os.path.exists(p):
        raise TorchImportError(f"no such file: {p}")
    logger = logging.getLogger("torch.export")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # torch logs a traceback before raising; the error says it
    try:
        return torch.export.load(p)
    except Exception as e:  # zip, pickle, version and schema errors alike
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TorchImportError(
            f"cannot read {p} as a torch.export program (torch.export.save's .pt2): {first}"
        ) from None
    finally:
        logger.setLevel(level)


def decompositions() -> dict[Any, Any]:
    """torch's core ATen decompositions but ``aten._safe_softmax``'s: its converter imports it
    as ``nn.softmax`` and a guard ``drop-softmax-guard`` can drop, where torch's decomposition
    would leave five elementwise ops and a reduction around the softmax."""
    import torch

    table = torch.export.default_decompositions()
    table.pop(torch.ops.aten._safe_softmax.default, None)
    return table


def import_exported_program(
    ep: Any, freeze_params: bool = False, decompose: bool = True
) -> TorchImport:
    """Import ``ep`` (an ExportedProgram or the path of a ``.pt2`` file): see ``TorchImport``."""
    if isinstance(ep, str | os.PathLike):
        ep = load_exported_program(ep)
    if not (hasattr(ep, "graph_signature") and hasattr(ep, "graph_module")):
        raise TorchImportError(f"expected a torch.export.ExportedProgram, got {type(ep).__name__}")
    if decompose:
        try:
            ep = ep.run_decompositions(decompositions())
        except Exception as e:
            raise TorchImportError(f"torch could not decompose the program to core ATen: {e}") from None
    return _Importer(ep, freeze_params).run()


def from_exported_program(
    ep: Any, freeze_params: bool = False, decompose: bool = True
) -> tuple[Any, dict[str, np.ndarray]]:
    """Convert a ``torch.export`` ExportedProgram to Relay: ``(mod, params)``.

    Weights (parameters, buffers, lifted constants) become parameters of ``main`` after the
    user inputs and are returned in ``params`` by their fully qualified names; with
    ``freeze_params=True`` they are named constants and ``params`` is empty. ``mod`` is an
    ``xrelay.relay.IRModule``. Raises ``TorchImportError`` (a ``ValueError``).
    """
    from xrelay.relay import IRModule

    result = import_exported_program(ep, freeze_params, decompose)
    return IRModule.from_module_op(result.module), result.params

