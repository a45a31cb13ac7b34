"""What the tools share about files and messages: atomic output files, the model files they
send to ``relay-import``, and the note before a slow first use.

Every tool writes its outputs through ``write_atomic`` (``xrelay.runtime.files``): the data goes to a temporary file in
the destination's directory, which is renamed over the destination only once it is complete.
A failure (a parse error, a bad option, a full disk, Ctrl-C) therefore leaves an existing file
as it was, and ``relay-opt a.mlir -o a.mlir`` reads ``a.mlir`` before anything replaces it.
"""

from __future__ import annotations

import io
import os
import sys

import numpy as np

from xrelay.runtime.files import write_atomic

MODEL_FORMATS = {
    ".onnx": "an ONNX model",
    ".pt2": "a torch.export archive",
    ".tflite": "a TFLite model",
}
"""Model files the other tools do not read, by extension: ``relay-import`` turns them into
relay text and a weights ``.npz``."""


def foreign_model(path: str) -> str | None:
    """The message for a model file given to a tool that reads relay text, else None."""
    what = MODEL_FORMATS.get(os.path.splitext(path)[1].lower())
    if what is None:
        return None
    stem = os.path.splitext(os.path.basename(path))[0] or "model"
    return (
        f"'{path}' is {what}, not relay text: import it first with "
        f"'relay-import {path} -o {stem}.mlir --params {stem}.npz'"
    )


def note_first_optimal(prog: str, algorithm: str | None) -> None:
    """Say so before ``optimal``'s first run on this machine, which compiles its search."""
    if algorithm != "optimal":
        return
    from xrelay.transforms.planners import _bnb

    if not _bnb.compiled():
        sys.stderr.write(
            f"{prog}: compiling the optimal planner's search (its first run on this machine, "
            "about 20 s; cached afterwards)\n"
        )
        sys.stderr.flush()


def save_npz_atomic(path: str | os.PathLike[str], arrays: dict[str, np.ndarray]) -> None:
    """``np.savez`` to exactly ``path`` (no ``.npz`` appended), atomically like ``write_atomic``."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_atomic(path, buffer.getvalue())


def write_output(
    path: str, data: str | bytes | dict[str, np.ndarray], error: type[Exception] = OSError
) -> None:
    """A tool's output file: text/bytes or (a dict) an ``.npz``, atomically; a failure is
    raised as ``error("cannot write 'PATH': REASON")`` for the tool to report as one line."""
    try:
        if isinstance(data, dict):
            save_npz_atomic(path, data)
        else:
            write_atomic(path, data)
    except OSError as e:
        raise error(f"cannot write '{path}': {e.strerror or e}") from None
