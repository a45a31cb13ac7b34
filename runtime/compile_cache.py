"""The private cache of the shared libraries xrelay compiles, and the one way they are built
and loaded.

Four things compile C on first use and load it with ``ctypes``: the C target's modules, the
native loop kernels, the int8 kernels and the oneDNN shim. Each goes through
``cached_library(name, key, build)``: the library ``<name>_<hash of key>.so`` of the cache is
loaded if it is there and trusted, else ``build`` compiles it (in a private temporary
directory) and it is published into the cache atomically, then loaded.

What is trusted: only libraries this user built. A library is loaded from a directory only
this user can write (owned by the user, not writable by group or others, nor any directory
above it unless root's or the user's and, if others may write it, sticky like ``/tmp``), and
only if the file itself is a regular file owned by the user and writable by nobody else. A
file that fails the check is never loaded: it is rebuilt and replaced. Staging files are made
with ``mkstemp`` (``O_EXCL``, a random name): nothing is opened under a name another user
could predict.

The key always includes the host's processor (its architecture and feature flags): the
libraries are compiled with ``-march=native``, so a cache shared between machines (a home
directory on NFS, a copied container) never hands an AVX-512 build to a CPU without it.

Where: ``$XRELAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/xrelay``, else ``~/.cache/xrelay``
(created with mode 0700). Without a usable home (a service user, ``HOME=/nonexistent``) it is
``$TMPDIR/xrelay-cache-<uid>``, created 0700 and checked like the others (a directory of that
name planted by another user fails the check). If none can be used, each process compiles
into a fresh ``mkdtemp`` directory of its own, removed at exit; a ``XRELAY_CACHE_DIR`` that
fails the check says why on stderr once.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import platform
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from xrelay.runtime.digests import sha256

__all__ = ["CACHE_ENV", "cache_dir", "cached_library", "host_cpu_flags", "host_processor", "untrusted_reason"]

CACHE_ENV = "XRELAY_CACHE_DIR"
"""An environment variable: the directory of xrelay's compiled libraries (see the module doc)."""

_STATE: dict[str, Path] = {}


@functools.cache
def host_cpu_flags() -> frozenset[str]:
    """The host CPU's feature flags from ``/proc/cpuinfo`` (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def host_processor() -> str:
    """What a ``-march=native`` build depends on: the architecture and the CPU's feature flags
    (the architecture alone where they cannot be read)."""
    return f"{platform.machine()} flags : {' '.join(sorted(host_cpu_flags()))}"


def untrusted_reason(path: Path, *, directory: bool) -> str | None:
    """Why ``path`` (a cache directory, or a library file) cannot be trusted, or None.

    Trusted: owned by this user, not writable by group or others, not a symbolic link, a
    directory or a regular file as asked; for a directory, every directory above it is
    root's or this user's and, if group or others may write it, sticky (``/tmp``)."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    kind = stat.S_ISDIR if directory else stat.S_ISREG
    if not kind(st.st_mode):
        return "is not a directory" if directory else "is not a regular file"
    if st.st_uid != os.geteuid():
        return f"is owned by another user (uid {st.st_uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    if directory:
        for parent in Path(os.path.abspath(path)).parents:
            try:
                pst = os.stat(parent)
            except OSError as e:
                return f"has a parent {parent} that cannot be read ({e.strerror or e})"
            if pst.st_uid not in (0, os.geteuid()):
                return f"is inside {parent}, owned by another user (uid {pst.st_uid})"
            if pst.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not pst.st_mode & stat.S_ISVTX:
                return f"is inside {parent}, which others can write (mode {stat.S_IMODE(pst.st_mode):o})"
    return None


def _private(path: Path) -> str | None:
    """Create ``path`` (mode 0700, parents too) if missing; why it cannot be used, or None."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        return f"cannot be created ({e.strerror or e})"
    return untrusted_reason(path, directory=True)


def _home_cache() -> Path | None:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "xrelay"
    home = os.path.expanduser("~")
    return Path(home) / ".cache" / "xrelay" if os.path.isabs(home) else None


def cache_dir() -> Path:
    """The directory libraries are cached in (chosen and checked once per setting of the
    environment variables it depends on)."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    setting = "\0".join([explicit, os.environ.get("XDG_CACHE_HOME", ""), os.path.expanduser("~"),
                         tempfile.gettempdir()])  # fmt: skip
    if setting not in _STATE:
        _STATE[setting] = _choose(explicit)
    return _STATE[setting]


def _choose(explicit: str) -> Path:
    chosen: Path | None = None
    if explicit:
        reason = _private(Path(explicit))
        if reason is None:
            chosen = Path(explicit)
        else:
            print(f"xrelay: {CACHE_ENV}={explicit} {reason}: not used; libraries are compiled "
                  "into a private temporary directory for this process", file=sys.stderr)  # fmt: skip
    else:
        shared = Path(tempfile.gettempdir()) / f"xrelay-cache-{os.geteuid()}"
        for candidate in (_home_cache(), shared):
            if candidate is not None and _private(candidate) is None:
                chosen = candidate
                break
    if chosen is None:
        chosen = Path(tempfile.mkdtemp(prefix="xrelay-cache-"))
        atexit.register(shutil.rmtree, chosen, ignore_errors=True)
    return chosen


def _note_compiling(name: str, directory: Path) -> None:
    """Tell a person at a terminal why the first run pauses (a kernel library compiles for
    tens of seconds, once per machine); logs and captured output stay as they were."""
    if sys.stderr is not None and sys.stderr.isatty():
        sys.stderr.write(f"xrelay: compiling {name} (once; cached in {directory})\n")
        sys.stderr.flush()


def build_errors() -> tuple[type[BaseException], ...]:
    """What a failed ``build`` raises, for an ``except`` around ``cached_library``: evaluated
    only when an exception arrives, so a process whose libraries are cached never imports
    ``subprocess`` (the builds import it)."""
    import subprocess

    return (OSError, subprocess.SubprocessError)


def cached_library(
    name: str,
    key: Sequence[str],
    build: Callable[[str], None],
    *,
    mode: int = ctypes.DEFAULT_MODE,
) -> ctypes.CDLL:
    """The library ``<name>_<hash of key>.so`` of the cache, loaded (see the module doc).

    ``key`` is everything else the library's bytes depend on (sources, compiler, flags); the
    host's processor is added here;
    ``build(out)`` compiles it to the path ``out`` (in a private temporary directory) and
    raises on failure, which propagates. ``OSError`` from loading propagates too."""
    digest = sha256("\0".join([*key, host_processor()]).encode()).hexdigest()[:16]
    directory = cache_dir()
    path = directory / f"{name}_{digest}.so"
    if os.path.lexists(path) and untrusted_reason(path, directory=False) is None:
        return ctypes.CDLL(str(path), mode=mode)
    _note_compiling(name, directory)
    with tempfile.TemporaryDirectory(prefix="xrelay-build-") as tmp:
        out = os.path.join(tmp, f"{name}.so")
        build(out)
        fd, staged = tempfile.mkstemp(dir=directory, prefix=f".{name}_{digest}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f, open(out, "rb") as src:
                shutil.copyfileobj(src, f)
            os.chmod(staged, 0o700)
            os.replace(staged, path)  # atomic: concurrent builders each publish a whole file
        except BaseException:
            try:
                os.unlink(staged)
            except OSError:
                pass
            raise
    return ctypes.CDLL(str(path), mode=mode)
