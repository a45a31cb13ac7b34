"""``from_pytorch(script_module, input_infos)``: Relay's TorchScript entry point.

TorchScript is in maintenance in PyTorch; its graphs run on the same ATen operators as eager
mode. A scripted or traced module is converted to an ExportedProgram by torch's own
converter (``torch._export.converter.TS2EPConverter``, run on inputs of the given shapes), an
eager ``nn.Module`` by ``torch.export.export``; either is then imported by
``from_exported_program``. Shapes are specialised to ``input_infos``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from xrelay.frontends.torch import aten  # noqa: F401 - the converters register themselves
from xrelay.frontends.torch.importer import (
    TORCH_DTYPES,
    TorchImportError,
    _Importer,
)
from xrelay.frontends.torch.program import decompositions


def _input_info(info: Any) -> tuple[str, list[int], str]:
    """Relay's input_infos entry: ``(name, shape)`` or ``(name, (shape, dtype))``."""
    try:
        name, spec = info
    except (TypeError, ValueError):
        raise TorchImportError(f"input_infos entries are (name, shape) or (name, (shape, dtype)), got {info!r}") from None
    dtype = "float32"
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], str):
        spec, dtype = spec
    try:
        shape = [int(d) for d in spec]
    except (TypeError, ValueError):
        raise TorchImportError(f"input '{name}': shape must be a list of ints, got {spec!r}") from None
    if any(d < 0 for d in shape):
        raise TorchImportError(f"input '{name}': negative dimension in {shape}")
    if dtype not in TORCH_DTYPES.values():
        raise TorchImportError(f"input '{name}': dtype '{dtype}' is not supported")
    return str(name), shape, dtype


def from_pytorch(
    script_module: Any,
    input_infos: Sequence[Any],
    custom_convert_map: Any = None,
    default_dtype: str = "float32",
    freeze_params: bool = False,
) -> tuple[Any, dict[str, np.ndarray]]:
    """Convert a TorchScript (or eager) module to Relay: ``(mod, params)``.

    ``input_infos`` lists ``(name, shape)`` or ``(name, (shape, dtype))`` in the order the
    module's ``forward`` takes them; ``main``'s inputs get these names. ``custom_convert_map``
    is Relay's hook for converters of unknown ops; it is not supported (give ``None``).
    """
    import torch

    from xrelay.relay import IRModule

    if custom_convert_map:
        raise TorchImportError("custom_convert_map is not supported")
    if not isinstance(script_module, torch.nn.Module):
        raise TorchImportError(f"expected a torch.jit.ScriptModule or nn.Module, got {type(script_module).__name__}")
    infos = [_input_info(i) for i in input_infos]
    names = {n for n, _, _ in infos}
    if len(names) != len(infos):
        raise TorchImportError("input_infos names must be distinct")
    gen = torch.Generator().manual_seed(0)
    examples = []
    for _, shape, dtype in infos:
        tdt = getattr(torch, dtype)
        if dtype.startswith("float") or dtype == "bfloat16":
            examples.append(torch.randn(shape, generator=gen).to(tdt))
        else:
            examples.append(torch.zeros(shape, dtype=tdt))

    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the converter warns about every unused buffer
            if isinstance(script_module, torch.jit.ScriptModule):
                from torch._export.converter import TS2EPConverter

                # the converter leaves dimensions symbolic: export its module again, static
                converted = TS2EPConverter(script_module, tuple(examples)).convert()
                ep = torch.export.export(converted.module(), tuple(examples))
            else:
                ep = torch.export.export(script_module.eval(), tuple(examples))
            ep = ep.run_decompositions(decompositions())
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TorchImportError(f"torch could not capture the module with inputs {infos}: {first}") from None
    result = _Importer(ep, freeze_params, input_names=[n for n, _, _ in infos]).run()
    return IRModule.from_module_op(result.module), result.params
