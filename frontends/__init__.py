"""Model importers: ONNX to the relay dialect (``from_onnx``)."""

from xrelay.frontends import (
    onnx_control,  # noqa: F401 - If, Loop and Scan register themselves
    onnx_nd,  # noqa: F401 - 1-D/3-D, resizing, gathers, norms register themselves
    onnx_ops2,  # noqa: F401 - logic, modulo, trigonometry, activations register themselves
    onnx_ops3,  # noqa: F401 - scans, scatters, einsum, grid sampling, recurrent layers register themselves
    onnx_ops4,  # noqa: F401 - NonZero, Compress, Unique, NonMaxSuppression register themselves
    onnx_ops5,  # noqa: F401 - crops, grids, Col2Im, STFT, windows, Det, MaxPool indices register themselves
    onnx_qnn,  # noqa: F401 - the quantized operators register themselves
    onnx_seq,  # noqa: F401 - sequences and optionals register themselves
)
from xrelay.frontends.onnx import (
    SUPPORTED_OPS,
    OnnxImport,
    OnnxImportError,
    from_onnx,
    import_onnx,
)

__all__ = ["SUPPORTED_OPS", "OnnxImport", "OnnxImportError", "from_onnx", "import_onnx"]
