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

TEXT_FORMATS = (".mlir", ".relay", ".csv")
"""The text files the tools read (a problem ``.csv`` for relay-plan)."""


def foreign_model(path: str) -> str | None:
    """The message for a model file given to a tool that reads relay text, else None: a model
    by its extension, or a binary file of another extension than the tools' own (relay and
    MLIR text never hold a NUL byte or bytes that are not UTF-8), which relay-import reads by
    its content. A ``.mlir``/``.relay``/``.csv`` file that is not text keeps the reader's
    message (the byte at fault)."""
    ext = os.path.splitext(path)[1].lower()
    what = MODEL_FORMATS.get(ext) or (None if ext in TEXT_FORMATS else _binary_kind(path))
    if what is None:
        return None
    stem = os.path.splitext(os.path.basename(path))[0] or "model"
    return (
        f"'{path}' is {what}, not relay text: import it first with "
        f"'relay-import {path} -o {stem}.mlir --params {stem}.npz'"
    )


def _binary_kind(path: str) -> str | None:
    """What a binary file looks like ("a TFLite model", ...), or None for text (or a file
    that cannot be read: the tool's own reading reports that)."""
    if path == "-" or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    try:
        head.decode("utf-8")
        text = b"\0" not in head
    except UnicodeDecodeError as e:
        text = e.start >= len(head) - 3 and b"\0" not in head  # a character cut at 4096 bytes
    if text:
        return None
    if head[4:8] == b"TFL3":
        return "a TFLite model"
    if head[:4] == b"PK\x03\x04":
        return "a zip archive (a torch.export model?)"
    return "a binary file (an ONNX model?)"


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
