"""The compile caches (C module, native kernels, int8 kernels, oneDNN shim) never load a
library the process did not build: the cache is a private directory (0700, owned by the user),
a library another user could have written is rebuilt instead of loaded, and without a usable
home the caches do not fall back to predictable names in the shared temporary directory.

Each scenario runs in a fresh interpreter (every cache loads once per process). ``CC`` is a
wrapper: with ``PLANT=1`` it "compiles" a planted library, whose constructor creates the file
``$PLANT_MARKER`` when it is loaded, so a test can fill the cache with planted files under the
very names the real build uses, make them look foreign (writable by others, or owned by
another user), and check that the next process does not load them.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CC = shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")

PLANTED_C = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
  const char *m = getenv("PLANT_MARKER");
  if (m) { FILE *f = fopen(m, "w"); if (f) { fputs("loaded", f); fclose(f); } }
}
"""

SCRIPT = textwrap.dedent(
    """
    import sys, warnings
    import numpy as np
    import xrelay
    from xrelay.relay.module import IRModule

    warnings.simplefilter("ignore")
    MODULE = '''func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
      %0 = relay.nn.relu %x : (tensor<1x4xf32>) -> tensor<1x4xf32>
      func.return %0 : tensor<1x4xf32>
    }
    '''
    ok = {}
    try:
        lib = xrelay.build(IRModule.from_text(MODULE), target="c")
        lib.set_input(x=np.array([[-1, 2, -3, 4]], "float32"))
        lib.run()
        ok["c"] = lib.get_output(0).numpy().tolist() == [[0, 2, 0, 4]]
    except Exception as e:
        ok["c"] = repr(e)
    if "all" in sys.argv:
        from xrelay.runtime.native.library import native_kernels
        from xrelay.runtime.native.fast_int8 import vnni_library
        from xrelay.runtime.dnnl.library import dnnl_library
        for key, get in (("native", native_kernels), ("int8", vnni_library), ("dnnl", dnnl_library)):
            try:
                ok[key] = get() is not None
            except Exception as e:
                ok[key] = repr(e)
    print(ok)
    """
)


@pytest.fixture
def plant(tmp_path):
    """An environment whose ``CC`` plants libraries when ``PLANT=1``."""
    wrapper = tmp_path / "cc-wrapper"
    planted = tmp_path / "planted.c"
    planted.write_text(PLANTED_C)
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$PLANT" = 1 ]; then\n'
        '  out=""; prev=""\n'
        '  for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done\n'
        f'  exec {CC} -shared -fPIC {planted} -o "$out"\n'
        "fi\n"
        f'exec {CC} "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XRELAY_", "PLANT"))}
    env["CC"] = str(wrapper)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def run(env, *args, **extra):
    res = subprocess.run([sys.executable, "-c", SCRIPT, *args], env={**env, **extra},
                         capture_output=True, text=True, timeout=900)  # fmt: skip
    assert res.returncode == 0, res.stderr
    return res


def _libraries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and ".so" in p.name)


def test_a_cached_library_others_could_write_is_rebuilt_not_loaded(tmp_path, plant):
    cache = tmp_path / "cache"
    marker = tmp_path / "loaded"
    run(plant, "all", XRELAY_CACHE_DIR=str(cache), PLANT="1")  # fills the cache with planted files
    libs = _libraries(cache)
    assert len(libs) >= 3, libs  # C module, native and int8 kernels (and the oneDNN shim)
    for lib in libs:
        lib.chmod(0o666)  # anyone could have replaced it
    res = run(plant, "all", XRELAY_CACHE_DIR=str(cache), PLANT_MARKER=str(marker))
    assert not marker.exists(), "a library writable by others was loaded"
    assert "'c': True" in res.stdout and "'native': True" in res.stdout, res.stdout
    assert "'int8': True" in res.stdout, res.stdout
    for lib in _libraries(cache):  # what replaced them: the process's own builds
        mode = stat.S_IMODE(lib.stat().st_mode)
        assert lib.stat().st_uid == os.geteuid() and not mode & 0o022, (lib, oct(mode))


def test_a_cache_directory_others_can_write_is_not_used(tmp_path, plant):
    cache = tmp_path / "cache"
    marker = tmp_path / "loaded"
    run(plant, XRELAY_CACHE_DIR=str(cache), PLANT="1")
    assert _libraries(cache)
    cache.chmod(0o777)
    res = run(plant, XRELAY_CACHE_DIR=str(cache), PLANT_MARKER=str(marker))
    assert not marker.exists(), "a library from a directory writable by others was loaded"
    assert "'c': True" in res.stdout, res.stdout
    assert "XRELAY_CACHE_DIR" in res.stderr and "writable by others" in res.stderr, res.stderr


def test_without_a_home_nothing_is_loaded_from_the_shared_temporary_directory(tmp_path, plant):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    marker = tmp_path / "loaded"
    home = tmp_path / "home"
    home.write_text("")  # a file: no ~/.cache under it, even for root
    env = {**plant, "HOME": str(home), "TMPDIR": str(shared)}
    env.pop("XDG_CACHE_HOME", None)
    run(env, PLANT="1")
    # Whatever the first process wrote there, make it look planted by another user.
    for lib in _libraries(shared):
        if os.geteuid() == 0:
            os.chown(lib, 65534, 65534)
        else:
            lib.chmod(0o666)
    res = run(env, PLANT_MARKER=str(marker))
    assert not marker.exists(), "a library from the shared temporary directory was loaded"
    assert "'c': True" in res.stdout, res.stdout
    # Nothing sits in the shared directory itself under a name another user could predict.
    assert not [p for p in shared.iterdir() if p.is_file()], list(shared.iterdir())
    for d in (p for p in shared.rglob("*") if p.is_dir()):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700 and d.stat().st_uid == os.geteuid(), d


# ---- the helper itself ----------------------------------------------------------------------

from xrelay.runtime import compile_cache  # noqa: E402


def test_untrusted_reasons(tmp_path, monkeypatch):
    d = tmp_path / "d"
    d.mkdir(mode=0o700)
    assert compile_cache.untrusted_reason(d, directory=True) is None
    d.chmod(0o777)
    assert "writable by others (mode 777)" in compile_cache.untrusted_reason(d, directory=True)
    d.chmod(0o755)
    lib = d / "x.so"
    lib.write_bytes(b"")
    lib.chmod(0o664)
    assert "writable by others (mode 664)" in compile_cache.untrusted_reason(lib, directory=False)
    lib.chmod(0o644)
    assert compile_cache.untrusted_reason(lib, directory=False) is None
    link = d / "link.so"
    link.symlink_to(lib)
    assert compile_cache.untrusted_reason(link, directory=False) == "is not a regular file"
    inner = d / "inner"
    inner.mkdir(mode=0o700)
    d.chmod(0o777)  # a parent others can write (not sticky): the inner directory can be swapped
    assert "which others can write" in compile_cache.untrusted_reason(inner, directory=True)
    d.chmod(0o1777)  # sticky, like /tmp
    assert compile_cache.untrusted_reason(inner, directory=True) is None
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 4242)
    assert "owned by another user" in compile_cache.untrusted_reason(lib, directory=False)


def _no_home(tmp_path, monkeypatch) -> None:
    """A home that is a file (no ~/.cache under it, even for root) and ``TMPDIR=tmp_path``."""
    home = tmp_path / "home"
    home.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XRELAY_CACHE_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(compile_cache.tempfile, "tempdir", None)


def test_the_cache_directory_without_a_home(tmp_path, monkeypatch):
    _no_home(tmp_path, monkeypatch)
    d = compile_cache.cache_dir()
    assert d == tmp_path / f"xrelay-cache-{os.geteuid()}"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_a_planted_shared_cache_directory_is_not_used(tmp_path, monkeypatch):
    _no_home(tmp_path, monkeypatch)
    planted = tmp_path / f"xrelay-cache-{os.geteuid()}"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    d = compile_cache.cache_dir()
    assert d != planted and d.parent == tmp_path and d.name.startswith("xrelay-cache-")
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def _counting_build(tmp_path, monkeypatch):
    """A cache in ``tmp_path`` and a ``build`` that compiles a one-function library and
    records each call: ``(source, calls, build)``."""
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "k.c"
    src.write_text("int xr_answer(void) { return 42; }\n")
    built: list[str] = []

    def build(out: str) -> None:
        built.append(out)
        subprocess.run([CC, "-shared", "-fPIC", str(src), "-o", out], check=True)

    return src, built, build


def test_cached_library_builds_once_and_rebuilds_what_it_cannot_trust(tmp_path, monkeypatch):
    src, built, build = _counting_build(tmp_path, monkeypatch)

    lib = compile_cache.cached_library("xrelay_test", ["k", src.read_text()], build)
    assert lib.xr_answer() == 42 and len(built) == 1
    (path,) = (tmp_path / "cache").glob("xrelay_test_*.so")
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    compile_cache.cached_library("xrelay_test", ["k", src.read_text()], build)
    assert len(built) == 1  # from the cache
    path.chmod(0o666)
    compile_cache.cached_library("xrelay_test", ["k", src.read_text()], build)
    assert len(built) == 2 and not stat.S_IMODE(path.stat().st_mode) & 0o022
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.endswith(".tmp")]


def test_first_compile_is_announced_only_at_a_terminal(tmp_path, monkeypatch, capsys):
    from xrelay.runtime import compile_cache

    class Tty:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    tty = Tty()
    monkeypatch.setattr(compile_cache.sys, "stderr", tty)
    compile_cache._note_compiling("native kernels", tmp_path)
    assert tty.text == f"xrelay: compiling native kernels (once; cached in {tmp_path})\n"
    monkeypatch.undo()
    compile_cache._note_compiling("native kernels", tmp_path)  # captured: not a terminal
    assert capsys.readouterr().err == ""


def test_a_library_built_on_another_processor_is_not_loaded(tmp_path, monkeypatch):
    """Libraries are compiled with -march=native: a cache shared by two machines (a home on
    NFS, a copied container) must not hand one CPU's build to another, so the processor is
    part of every cache key, whatever the caller passes."""
    from xrelay.runtime import compile_cache

    src, built, build = _counting_build(tmp_path, monkeypatch)

    assert compile_cache.host_processor().startswith(os.uname().machine)
    compile_cache.cached_library("xrelay_test", ["k"], build)
    compile_cache.cached_library("xrelay_test", ["k"], build)
    assert len(built) == 1
    monkeypatch.setattr(compile_cache, "host_processor", lambda: "x86_64 flags : fpu sse2")
    compile_cache.cached_library("xrelay_test", ["k"], build)
    assert len(built) == 2 and len(list((tmp_path / "cache").glob("xrelay_test_*.so"))) == 2
