"""PyTorch importers: ``torch.export`` programs (``from_exported_program``) and TorchScript
modules (``from_pytorch``, Relay's signature) to the relay dialect.

torch is imported when a model is imported, not with this package: ``xrelay`` works without
torch installed (``pip install 'xrelay[frontends]'`` brings it).
"""

from xrelay.frontends.torch.importer import CONVERTERS, TorchImport, TorchImportError
from xrelay.frontends.torch.program import (
    from_exported_program,
    import_exported_program,
    load_exported_program,
)
from xrelay.frontends.torch.script import from_pytorch

__all__ = [
    "CONVERTERS",
    "TorchImport",
    "TorchImportError",
    "from_exported_program",
    "from_pytorch",
    "import_exported_program",
    "load_exported_program",
]
