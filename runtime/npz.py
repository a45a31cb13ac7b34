"""Reading weights and inputs from ``.npz`` archives, for every place that loads one.

``np.load`` alone is not a loader for untrusted files: a plain ``.npy`` comes back as an array
(not a mapping), a truncated archive raises ``zipfile.BadZipFile``, an archive member that is
not in ``.npy`` format comes back as raw ``bytes``, a foreign file is reported as "pickled
data", and a member's header may declare terabytes. ``read_npz`` turns each of these into one
``NpzError`` saying what is wrong; pickles are never loaded.
"""

from __future__ import annotations

import io
import mmap
import os
import weakref
import zipfile
import zlib
from collections.abc import Iterable

import numpy as np
from numpy.lib.array_utils import byte_bounds

from xrelay.dialects.relay.constant import ParamsChangedError, file_mapping_of


class NpzError(ValueError):
    """A file that is not an ``.npz`` archive of numeric arrays."""


class ParamsMapping(mmap.mmap):
    """A params file mapped read-only (``map_npz``) that knows whether the file changed since.

    Reading a mapping whose file was truncated is a SIGBUS, and one rewritten in place
    changes the constants under the module: ``check_unchanged`` (called by
    ``numpy_from_dense`` before every read of a mapped constant) compares the open file's
    size, modification and change times with those it had when mapped and raises
    ``ParamsChangedError`` if any differ. The file's descriptor stays open, so a file renamed
    over (what ``export`` does) leaves the mapped one, and the mapping, intact."""

    path: str
    _fd: int
    _stamp: tuple[int, int, int]

    def check_unchanged(self) -> None:
        st = os.fstat(self._fd)
        if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) != self._stamp:
            raise ParamsChangedError(
                f"{self.path}: the params file changed on disk (truncated or rewritten in place) "
                "since a module was loaded from it; load the module again (write a new file and "
                "rename it over the old one to replace a loaded module's params)"
            )


def _params_mapping(f: io.BufferedReader, path: str) -> ParamsMapping:
    mapped = ParamsMapping(f.fileno(), 0, access=mmap.ACCESS_READ)
    mapped.path = os.fspath(path)
    mapped._fd = os.dup(f.fileno())
    weakref.finalize(mapped, os.close, mapped._fd)
    st = os.fstat(mapped._fd)
    mapped._stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return mapped


def private_copy(array: np.ndarray) -> np.ndarray:
    """``array`` itself, or, for a view of a mapped params file (``map_npz``), a read-only copy
    in memory of its own (after checking the file is unchanged), the file's pages handed
    back: what a kernel reads at every run must not depend on the file staying as it was."""
    mapped = file_mapping_of(array)
    if mapped is None:
        return array
    check = getattr(mapped, "check_unchanged", None)
    if check is not None:
        check()
    copy = np.array(array, copy=True)
    copy.flags.writeable = False
    release_pages(array)
    return copy


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


def map_npz(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` archive as read-only views of the file mapped into memory,
    where every member is stored uncompressed (``np.savez``, what ``export`` writes) as a
    numeric C-ordered ``.npy``; otherwise ``read_npz(path)``'s copies.

    A mapped array costs no memory until it is read, and its pages can be handed back after
    a kernel has made its own copy (``release_pages``): a loaded module then does not hold
    oneDNN's weights twice. The mapping is a ``ParamsMapping``: a read of a constant after
    the file was truncated or rewritten in place raises ``ParamsChangedError`` (through
    ``numpy_from_dense``) instead of a SIGBUS or changed constants, and the executors give
    their run-time kernels private copies (``private_copy``)."""
    try:
        arrays = _map_members(path)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        arrays = None
    return read_npz(path) if arrays is None else arrays


def _map_members(path: str | os.PathLike[str]) -> dict[str, np.ndarray] | None:
    """``map_npz``'s mapping, or None where a member cannot be mapped (``read_npz`` then
    reads the file and says what is wrong with it, if anything)."""
    with open(path, "rb") as f, zipfile.ZipFile(f) as archive:
        infos = archive.infolist()
        size = os.fstat(f.fileno()).st_size
        if not infos or size == 0:
            return None
        places: list[tuple[str, np.dtype, tuple[int, ...], int]] = []
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
                return None
            f.seek(info.header_offset)
            local = f.read(30)
            if len(local) != 30 or local[:4] != b"PK\x03\x04":
                return None
            start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
            f.seek(start)
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                return None
            offset = f.tell()
            count = 1
            for d in shape:
                count *= d
            if fortran or any(d < 0 for d in shape) or dtype.hasobject or dtype.itemsize == 0 or count * dtype.itemsize > info.file_size - (offset - start):
                return None
            places.append((info.filename[: -len(".npy")], dtype, tuple(shape), offset))
        mapped = _params_mapping(f, path)
    arrays = {}
    for name, dtype, shape, offset in places:
        count = 1
        for d in shape:
            count *= d
        if offset + count * dtype.itemsize > size:
            return None
        arrays[name] = np.frombuffer(mapped, dtype, count, offset).reshape(shape)
    return arrays


def release_pages(array: np.ndarray) -> int:
    """Hand back to the OS the resident pages of a ``map_npz`` array (a read of it later
    faults them in again from the file); returns the bytes advised, 0 for any other array."""
    mapped = file_mapping_of(array)
    if mapped is None or array.nbytes == 0 or not hasattr(mmap, "MADV_DONTNEED"):
        return 0
    base = np.frombuffer(mapped, np.uint8).ctypes.data
    first, end = byte_bounds(array)
    lo, hi = first - base, end - base
    page = mmap.PAGESIZE
    lo -= lo % page
    hi = min(-(-hi // page) * page, len(mapped))
    mapped.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
    return hi - lo


def release_files(arrays: Iterable[np.ndarray]) -> int:
    """Hand back every resident page of the params files that ``arrays`` view (``map_npz``),
    whole files: reading one array also maps the pages around it that the page cache holds
    (the kernel's fault-around, up to 64 KB), its neighbours' included, even after those
    were handed back one by one (``release_pages``). Returns the bytes advised."""
    files = {id(m): m for m in map(file_mapping_of, arrays) if m is not None}
    if not hasattr(mmap, "MADV_DONTNEED"):
        return 0
    for mapped in files.values():
        mapped.madvise(mmap.MADV_DONTNEED)
    return sum(len(m) for m in files.values())


def resident_bytes(path: str | os.PathLike[str]) -> int:
    """Bytes of the file ``path`` resident in this process's mappings of it (Linux's
    ``/proc/self/smaps``; 0 where it cannot be read)."""
    want, total, inside = os.path.realpath(path), 0, False
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                head = line.split()
                if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                    inside = line.rstrip("\n").endswith(want)
                elif inside and head[:1] == ["Rss:"]:
                    total += int(head[1]) * 1024
    except OSError:
        return 0
    return total
