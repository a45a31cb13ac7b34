"""Built libraries as TVM's runtime modules: the factory ``relay.build`` returns,
``export_library`` to one file and ``load_module`` back; ``load`` reads the three files of
``GraphModule.export`` back (TVM's ``relay.backend.executor_factory``).

All of it is run time: a process that loads an export and runs it imports nothing from
``xrelay.transforms`` or ``xrelay.backend`` (``tests/runtime/test_deployed_imports.py``); the
checks that take the program's liveness, plan and graph JSON use their run-time modules
(``runtime.liveness``, ``runtime.memory_plan``, ``runtime.graph_json``).

``GraphExecutorFactoryModule`` is TVM's graph-executor factory: ``factory["default"](dev)``
creates a new ``GraphModule`` (its own arenas) each time; ``get_graph_json()``,
``get_lib()`` (the planned program, a ``ModuleOp``), ``get_params()`` and the legacy
``graph, lib, params = factory``. The device must be the host CPU (``xrelay.cpu(0)``);
another device is an error naming it.

``factory.export_library(path)`` writes the whole library as one file, whatever its name
(``"compiled_lib.so"`` works): a zip archive holding a manifest, the graph JSON, the planned
program as MLIR text and the params in TVM's binary format. ``load_module(path)`` reads it
back into a factory, checking the archive, the manifest and that the graph describes the
program. The file is written atomically (a temporary file renamed into place), with the
permissions any new file gets (the umask), or those of the file it replaces.

An archive is not trusted: before a member is inflated, the sizes its directory declares are
checked against the memory limit (``XRELAY_MEMORY_LIMIT``, else the machine's memory); each
member is read in chunks and stopped where it inflates past its declared size; a member named
twice is refused. Every failure is one ``ModuleLoadError`` naming the archive and the member
at fault as ``ar`` and ``ld`` name archive members (``lib.so(lib.mlir):3:5: ...``,
``lib.so(params.params): ...``), never a raw ``MemoryError`` or a temporary file.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects.relay.constant import ConstantOp, file_mapping_of
from xrelay.dialects.relay.dtypes import too_large
from xrelay.error import TVMError
from xrelay.runtime.device import check_runnable
from xrelay.runtime.files import write_atomic
from xrelay.runtime.graph_executor import GraphModule
from xrelay.runtime.graph_json import (
    GraphJsonError,
    graph_json,
    parse_program,
    read_export,
    verify_export,
)
from xrelay.runtime.npz import release_files
from xrelay.runtime.params import ParamsFormatError, load_param_dict, save_param_dict

__all__ = [
    "GraphExecutorFactoryModule", "ModuleLoadError", "export_library", "from_export", "load",
    "load_module",
]  # fmt: skip



FORMAT = "xrelay-graph-executor-library"
VERSION = 1
_MEMBERS = ("manifest.json", "graph.json", "lib.mlir", "params.params")


class ModuleLoadError(TVMError, ValueError):
    """A file that is not a library written by ``export_library``, or a damaged one."""


class GraphExecutorFactoryModule:
    """What ``relay.build`` returns and ``load_module`` loads (see the module doc)."""

    type_key = "GraphExecutorFactory"

    def __init__(self, module: Any, mod_name: str = "default"):
        self.module = module
        self.libmod_name = mod_name

    def __getitem__(self, key: str) -> Any:
        if key != self.libmod_name:
            raise KeyError(
                f"the built module is named '{self.libmod_name}', not {key!r} "
                "(relay.build(..., mod_name=...) chooses the name)"
            )
        return self._create

    def _create(self, *devices: Any) -> Any:
        for dev in devices:
            for d in dev if isinstance(dev, list | tuple) else [dev]:
                check_runnable(d, "create a graph executor")
        return GraphModule(self.module.program.clone(), entry=self.module.entry)

    def get_graph_json(self) -> str:
        """TVM's graph-executor JSON of the planned program."""
        return json.dumps(graph_json(self.module.program, self.module.entry, self.libmod_name))

    def get_lib(self) -> Any:
        """The planned program (a ``ModuleOp``), xrelay's counterpart of the compiled library."""
        return self.module.program

    def get_params(self) -> dict[str, np.ndarray]:
        """The constants of ``@main`` by graph name (``p0, p1, ...``)."""
        return dict(self.module.get_params())

    def export(self, graph_json_path: str, lib_mlir_path: str, params_npz_path: str) -> None:
        """Write graph JSON, program and params (see ``GraphModule.export``)."""
        self.module.export(graph_json_path, lib_mlir_path, params_npz_path)

    def export_library(self, file_name: str | os.PathLike, *args: Any, **kwargs: Any) -> None:
        """Write the library as one file (see the module doc); TVM's compiler options
        (``fcompile``, ``cc``, ...) do not apply and are ignored."""
        export_library(self.module, file_name, self.libmod_name)

    def __iter__(self) -> Any:
        # TVM's legacy ``graph, lib, params = relay.build(...)``.
        return iter((self.get_graph_json(), self.get_lib(), self.get_params()))

    def __repr__(self) -> str:
        return f"<GraphExecutorFactoryModule {self.libmod_name}>"


def export_library(module: Any, file_name: str | os.PathLike, mod_name: str = "default") -> None:
    """Write ``module`` (a ``GraphModule``) as one library file (see the module doc)."""
    path = Path(file_name)
    with tempfile.TemporaryDirectory() as tmp:
        g, lib, npz = (os.path.join(tmp, n) for n in ("graph.json", "lib.mlir", "params.npz"))
        module.export(g, lib, npz)
        with np.load(npz, allow_pickle=False) as data:
            params = save_param_dict({k: data[k] for k in data.files})
        manifest = {"format": FORMAT, "version": VERSION, "mod_name": mod_name, "entry": module.entry}
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("manifest.json", json.dumps(manifest))
            z.write(g, "graph.json")
            z.write(lib, "lib.mlir")
            z.writestr("params.params", bytes(params))
    # atomically, with the permissions of any new file (the umask), or an existing file's
    write_atomic(path, archive.getvalue())


def load_module(path: str | os.PathLike, fmt: str = "") -> GraphExecutorFactoryModule:
    """``tvm.runtime.load_module``: a library written by ``export_library``, as a factory.

    The archive is not trusted (see the module doc): every failure is one ``ModuleLoadError``
    naming the archive and, where one is at fault, its member (``lib.so(lib.mlir):3:5: ...``)."""
    name = str(path)
    members = _read_members(name)
    manifest = _json_member(name, "manifest.json", members["manifest.json"])
    where = f"{name}(manifest.json)"
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModuleLoadError(f"{where}: not an xrelay library (its format is not {FORMAT!r})")
    if manifest.get("version") != VERSION:
        raise ModuleLoadError(
            f"{where}: library format version {manifest.get('version')!r}; this xrelay reads {VERSION}"
        )
    mod_name, entry = manifest.get("mod_name"), manifest.get("entry")
    if not isinstance(mod_name, str) or not isinstance(entry, str):
        raise ModuleLoadError(f"{where}: the manifest lacks mod_name/entry")
    try:
        params = load_param_dict(members["params.params"])
    except ParamsFormatError as e:
        raise ModuleLoadError(f"{name}(params.params): {e}") from None
    doc = _json_member(name, "graph.json", members["graph.json"])
    text = _text_member(name, "lib.mlir", members["lib.mlir"])
    try:
        program = parse_program(text, {k: v.numpy() for k, v in params.items()}, f"{name}(lib.mlir)")
        module = from_export(doc, program, name, entry=entry)
    except GraphJsonError as e:
        raise ModuleLoadError(str(e) if str(e).startswith(name) else f"{name}: {e}") from None
    except MemoryError:
        raise ModuleLoadError(f"{name}: out of memory while loading the library") from None
    return GraphExecutorFactoryModule(module, mod_name)


_CHUNK = 1 << 20


def _read_members(name: str) -> dict[str, bytes]:
    """The members of the archive ``name`` by name, each read only after the sizes the archive
    declares were checked against the memory limit, and stopped where it inflates past its
    declared size; every failure a ``ModuleLoadError`` naming the archive and the member."""
    try:
        z = zipfile.ZipFile(name)
    except FileNotFoundError:
        raise ModuleLoadError(f"{name}: no such file") from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as e:
        # NotImplementedError: a zip version or feature zipfile does not read
        raise ModuleLoadError(
            f"{name} is not a library written by export_library (an xrelay library is a zip "
            f"archive): {e}"
        ) from None
    with z:
        infos: dict[str, zipfile.ZipInfo] = {}
        for info in z.infolist():
            if info.filename in infos and info.filename in _MEMBERS:
                raise ModuleLoadError(f"{name}({info.filename}): the archive holds it twice")
            infos[info.filename] = info
        missing = [m for m in _MEMBERS if m not in infos]
        if missing:
            raise ModuleLoadError(f"{name} is not an xrelay library: it lacks {', '.join(missing)}")
        total = sum(infos[m].file_size for m in _MEMBERS)
        largest = max(_MEMBERS, key=lambda m: infos[m].file_size)
        refusal = too_large("the library", total)
        if refusal:
            raise ModuleLoadError(
                f"{name}({largest}): declares {infos[largest].file_size} bytes; {refusal}"
            )
        return {m: _read_member(z, infos[m], name) for m in _MEMBERS}


def _read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> bytes:
    where = f"{name}({info.filename})"
    out = bytearray()
    try:
        with z.open(info) as f:
            while chunk := f.read(_CHUNK):
                out += chunk
                if len(out) > info.file_size:
                    raise ModuleLoadError(
                        f"{where}: damaged archive: inflates past the {info.file_size} bytes it declares"
                    )
    except ModuleLoadError:
        raise
    except MemoryError:
        raise ModuleLoadError(f"{where}: out of memory ({info.file_size} bytes declared)") from None
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError) as e:  # fmt: skip
        # RuntimeError: an encrypted member; NotImplementedError: a compression zipfile lacks
        raise ModuleLoadError(f"{where}: damaged archive: {e}") from None
    return bytes(out)


def _text_member(name: str, member: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModuleLoadError(f"{name}({member}): not UTF-8 text (byte {e.start})") from None


def _json_member(name: str, member: str, data: bytes) -> Any:
    text = _text_member(name, member, data)
    try:
        return json.loads(text)
    except ValueError as e:
        raise ModuleLoadError(f"{name}({member}): not JSON: {e}") from None
    except RecursionError:
        raise ModuleLoadError(f"{name}({member}): nested too deeply to read") from None


def load(
    graph_json_path: str | os.PathLike,
    lib_mlir_path: str | os.PathLike,
    params_npz_path: str | os.PathLike,
    *,
    max_pool_bytes: int | None = None,
    **kwargs: Any,
) -> GraphModule:
    """Read an export (``GraphModule.export``) back into a runnable ``GraphModule``.

    ``kwargs`` go to its constructor. The files are not trusted: before anything is
    allocated, every memory pool must fit ``max_pool_bytes`` (default ``XRELAY_MAX_POOL_BYTES``,
    else 4 GiB), the plan must pass ``verify-memory-plan``, and the graph JSON must be the one
    the program gives (``graph_json.verify_export``); each failure is one ``GraphJsonError``.
    """
    doc, program = read_export(graph_json_path, lib_mlir_path, params_npz_path)
    return from_export(doc, program, f"{graph_json_path} with {lib_mlir_path}",
                       max_pool_bytes=max_pool_bytes, **kwargs)  # fmt: skip


def from_export(
    doc: Any, program: ModuleOp, where: str, *, max_pool_bytes: int | None = None, **kwargs: Any
) -> GraphModule:
    """A runnable ``GraphModule`` of an export's graph JSON (``doc``) and parsed program, after
    ``load``'s checks (``where`` names the export in their errors)."""
    verify_export(doc, program, kwargs.get("entry", "main"), where, max_pool_bytes)
    # the check read every constant; those mapped from the params file go back to disk, and
    # come back one at a time as the executor reorders them (oneDNN) or reads them (native)
    constants = (op.numpy() for op in program.walk() if isinstance(op, ConstantOp))
    mapped = [a for a in constants if file_mapping_of(a) is not None]
    release_files(mapped)
    module = GraphModule(program, **kwargs)
    # each read also mapped its neighbours' pages (fault-around), some after they went back
    # (0.8 MB of SqueezeNet's 5 MB): the executor holds its copies now, the files go back
    release_files(mapped)
    return module
