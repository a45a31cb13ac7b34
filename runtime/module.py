"""Built libraries as TVM's runtime modules: the factory ``relay.build`` returns,
``export_library`` to one file and ``load_module`` back.

``GraphExecutorFactoryModule`` is TVM's graph-executor factory: ``factory["default"](dev)``
creates a new ``GraphModule`` (its own arenas) each time; ``get_graph_json()``,
``get_lib()`` (the planned program, a ``ModuleOp``), ``get_params()`` and the legacy
``graph, lib, params = factory``. The device must be the host CPU (``xrelay.cpu(0)``);
another device is an error naming it.

``factory.export_library(path)`` writes the whole library as one file, whatever its name
(``"compiled_lib.so"`` works): a zip archive holding a manifest, the graph JSON, the planned
program as MLIR text and the params in TVM's binary format. ``load_module(path)`` reads it
back into a factory, checking the archive, the manifest and that the graph describes the
program; a file that is not such an archive is one ``ModuleLoadError`` naming the file.
The file is written atomically (a temporary file renamed into place).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from xrelay.error import TVMError
from xrelay.runtime.device import check_runnable

__all__ = ["GraphExecutorFactoryModule", "ModuleLoadError", "export_library", "load_module"]

FORMAT = "xrelay-graph-executor-library"
VERSION = 1
_MEMBERS = ("manifest.json", "graph.json", "lib.mlir", "params.params")
_MAX_MEMBER_BYTES = 1 << 34  # 16 GiB: refuse archives claiming more (a corrupt or hostile file)


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
        from xrelay.runtime.graph_executor import GraphModule

        for dev in devices:
            for d in dev if isinstance(dev, list | tuple) else [dev]:
                check_runnable(d, "create a graph executor")
        return GraphModule(self.module.program.clone(), entry=self.module.entry)

    def get_graph_json(self) -> str:
        """TVM's graph-executor JSON of the planned program."""
        from xrelay.backend.graph_json import graph_json

        return json.dumps(graph_json(self.module.program, self.module.entry, self.libmod_name))

    def get_lib(self) -> Any:
        """The planned program (a ``ModuleOp``), xrelay's counterpart of the compiled library."""
        return self.module.program

    def get_params(self) -> dict[str, np.ndarray]:
        """The constants of ``@main`` by graph name (``p0, p1, ...``)."""
        return dict(self.module.get_params())

    def export(self, graph_json_path: str, lib_mlir_path: str, params_npz_path: str) -> None:
        """Write graph JSON, program and params (see ``xrelay.backend.graph_json.export``)."""
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
    from xrelay.backend.graph_json import export
    from xrelay.runtime.params import save_param_dict

    path = Path(file_name)
    with tempfile.TemporaryDirectory() as tmp:
        g, lib, npz = (os.path.join(tmp, n) for n in ("graph.json", "lib.mlir", "params.npz"))
        export(module, g, lib, npz)
        with np.load(npz, allow_pickle=False) as data:
            params = save_param_dict({k: data[k] for k in data.files})
        manifest = {"format": FORMAT, "version": VERSION, "mod_name": mod_name, "entry": module.entry}
        fd, part = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=path.parent or ".")
        os.close(fd)
        try:
            with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("manifest.json", json.dumps(manifest))
                z.write(g, "graph.json")
                z.write(lib, "lib.mlir")
                z.writestr("params.params", bytes(params))
            os.replace(part, path)
        except BaseException:
            if os.path.exists(part):
                os.unlink(part)
            raise


def load_module(path: str | os.PathLike, fmt: str = "") -> GraphExecutorFactoryModule:
    """``tvm.runtime.load_module``: a library written by ``export_library``, as a factory."""
    from xrelay.backend.graph_json import GraphJsonError
    from xrelay.runtime.graph_executor import load
    from xrelay.runtime.params import ParamsFormatError, load_param_dict

    name = str(path)
    try:
        z = zipfile.ZipFile(name)
    except FileNotFoundError:
        raise ModuleLoadError(f"{name}: no such file") from None
    except (zipfile.BadZipFile, OSError) as e:
        raise ModuleLoadError(
            f"{name} is not a library written by export_library (an xrelay library is a zip "
            f"archive): {e}"
        ) from None
    with z:
        infos = {i.filename: i for i in z.infolist()}
        missing = [m for m in _MEMBERS if m not in infos]
        if missing:
            raise ModuleLoadError(f"{name} is not an xrelay library: it lacks {', '.join(missing)}")
        big = [m for m in _MEMBERS if infos[m].file_size > _MAX_MEMBER_BYTES]
        if big:
            raise ModuleLoadError(f"{name}: {big[0]} claims {infos[big[0]].file_size} bytes; refusing")
        try:
            manifest = json.loads(z.read("manifest.json"))
            members = {m: z.read(m) for m in _MEMBERS[1:]}
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
            raise ModuleLoadError(f"{name}: damaged archive: {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModuleLoadError(f"{name} is not an xrelay library (manifest format is not {FORMAT!r})")
    if manifest.get("version") != VERSION:
        raise ModuleLoadError(
            f"{name}: library format version {manifest.get('version')!r}; this xrelay reads {VERSION}"
        )
    mod_name, entry = manifest.get("mod_name"), manifest.get("entry")
    if not isinstance(mod_name, str) or not isinstance(entry, str):
        raise ModuleLoadError(f"{name}: the manifest lacks mod_name/entry")
    try:
        params = load_param_dict(members["params.params"])
    except ParamsFormatError as e:
        raise ModuleLoadError(f"{name}: params: {e}") from None
    with tempfile.TemporaryDirectory() as tmp:
        g, lib, npz = (os.path.join(tmp, n) for n in ("graph.json", "lib.mlir", "params.npz"))
        Path(g).write_bytes(members["graph.json"])
        Path(lib).write_bytes(members["lib.mlir"])
        np.savez(npz, **{k: v.numpy() for k, v in params.items()})
        try:
            module = load(g, lib, npz, entry=entry)
        except GraphJsonError as e:
            raise ModuleLoadError(f"{name}: {e}") from None
        except Exception as e:  # parse and verification errors of the program text
            raise ModuleLoadError(f"{name}: the library does not load: {e}") from None
    return GraphExecutorFactoryModule(module, mod_name)
