"""Reading weights and inputs from ``.npz`` archives, for every place that loads one.

``np.load`` alone is not a loader for untrusted files: a plain ``.npy`` comes back as an array
(not a mapping), a truncated archive raises ``zipfile.BadZipFile``, an archive member that is
not in ``.npy`` format comes back as raw ``bytes``, a foreign file is reported as "pickled
data", and a member's header may declare terabytes. ``read_npz`` turns each of these into one
``NpzError`` saying what is wrong; pickles are never loaded.
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib

import numpy as np


class NpzError(ValueError):
    """A file that is not an ``.npz`` archive of numeric arrays."""


def read_npz(source: str | os.PathLike[str] | bytes) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` archive (a path or its bytes), by name.

    Raises ``OSError`` when the file cannot be read and ``NpzError`` when it is not an
    archive of ``.npy`` arrays (the message says why, without the file's name: the caller
    names the file and what it was for)."""
    file = io.BytesIO(bytes(source)) if isinstance(source, bytes | bytearray | memoryview) else source
    try:
        data = np.load(file, allow_pickle=False)
    except ValueError:
        # Neither the .npy nor the zip magic: numpy assumes a pickle and refuses it.
        raise NpzError("not an .npz archive") from None
    except EOFError:
        raise NpzError("empty file, not an .npz archive") from None
    except (zipfile.BadZipFile, zlib.error) as e:
        raise NpzError(f"a damaged .npz archive ({e})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise NpzError("a single .npy array, not an .npz archive of named arrays")
    arrays: dict[str, np.ndarray] = {}
    with data:
        for name in data.files:
            try:
                value = data[name]
            except MemoryError:
                raise NpzError(f"array '{name}' declares more bytes than can be allocated") from None
            except (ValueError, EOFError, zipfile.BadZipFile, zlib.error, OSError) as e:
                raise NpzError(f"array '{name}': {e}") from None
            if not isinstance(value, np.ndarray):
                raise NpzError(f"member '{name}' is not an .npy array")
            arrays[name] = value
    return arrays
