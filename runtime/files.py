"""Output files written whole or not at all: ``write_atomic`` is how every output file is
written (the tools', ``export_library``'s); scratch directories that go even when the process
is stopped: ``scratch_dir``.

The data goes to a temporary file (``mkstemp``: a random name, ``O_EXCL``) in the destination's
directory, which is renamed over the destination only once it is complete and on disk; a
failure leaves an existing file as it was. A new file gets the permissions any new file gets
(``0o666`` minus the umask), an existing one keeps its own.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; raises ``OSError`` on failure.

    A symbolic link is written through (its target is replaced, the link stays); an existing
    file keeps its permission bits, a new one gets the usual ``0o666`` minus the umask.
    """
    target = os.path.realpath(os.fspath(path))
    if os.path.isdir(target):
        raise IsADirectoryError(21, "Is a directory", os.fspath(path))
    directory = os.path.dirname(target)
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _mode_for(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:  # a new file: what open(..., "w") would have given it
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def scratch_dir(prefix: str) -> Iterator[str]:
    """A temporary directory (named ``<prefix>XXXXXXXX`` in ``$TMPDIR``) removed on leaving,
    also when the process is stopped with SIGTERM (``timeout``, a CI runner, ``kill``): the
    default SIGTERM ends Python without unwinding, which left exported models and quantized
    copies of hundreds of MB behind. The handler (installed once, from the main thread, when
    SIGTERM still has its default) raises ``SystemExit(143)``, so ``with`` blocks run their
    cleanup."""
    _exit_on_sigterm()
    with tempfile.TemporaryDirectory(prefix=prefix) as path:
        yield path


def _exit_on_sigterm() -> None:
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_exit)


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)
