"""``relay-opt``: xrelay's optimizer driver (xDSL's ``xDSLOptMain`` with xrelay's dialects and passes).

    relay-opt model.mlir -p 'simplify-inference,fold-constant,fuse-ops' [--params weights.npz]

Passes run through xrelay's pass infrastructure, so Relay's instruments work from the command
line (``--pass-timing``, ``--print-ir-after-all``, ``-O3``, ...; see ``tools/opt_flags.py``).
Weights: ``--params FILE.npz`` resolves ``relay.constant @name`` references and binds ``main``'s
parameters of the same names to constants (Relay's ``bind_params_by_name``); ``--emit-params
OUT.npz`` prints named and large constants by reference and saves their data there.

Devices: ``--register-device 'mcu:dram=0:64,sram=262144:16'`` registers a device that runs on
the host with its memory scopes (capacity in bytes, 0 unbounded, and alignment; the first scope
is the default), so ``plan-devices{default-device=mcu}`` and ``lower-to-memory`` know it.

Every error (a parse error with file, line and column, a verifier error naming the op, an unknown
pass with the known ones) is one message on stderr and exit code 1, never a Python traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from io import BytesIO, StringIO
from types import UnionType
from typing import IO, Any, Union, get_args, get_origin

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from xrelay.backend.engines import resolve_pass
from xrelay.dialects import get_all_dialects
from xrelay.dialects.verify import verify_module
from xrelay.runtime.npz import NpzError, read_npz
from xrelay.tools._io import foreign_model, write_output
from xrelay.transforms import get_all_passes


class RelayOptMain(xDSLOptMain):
    """The optimizer driver; closed over xrelay's passes plus cse, dce and canonicalize."""

    def __init__(self, args: Sequence[str] | None = None):
        self.params: dict[str, np.ndarray] | None = None
        self.emitted: dict[str, np.ndarray] = {}
        super().__init__(description="xrelay optimizer driver", args=args)
        if self.args.input_file and (foreign := foreign_model(self.args.input_file)):
            raise ToolError(foreign)
        if self.args.input_format is not None:
            self.args.frontend = self.args.input_format
        if self.args.params is not None:
            self.params = load_params(self.args.params)

    def register_all_dialects(self):
        super().register_all_dialects()
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_targets(self):
        # xDSL's other targets (llvm, x86-asm, riscv-asm, wat, ...) print their own dialects,
        # never a relay module: only MLIR text applies (relay-build emits C).
        super().register_all_targets()
        self.available_targets = {"mlir": self.available_targets["mlir"]}

    def register_all_passes(self):
        from xrelay.backend.pipeline import PIPELINES

        for name, factory in {**get_all_passes(), **PIPELINES}.items():
            self.register_pass(name, factory)

    def register_all_frontends(self):
        super().register_all_frontends()

        def parse_relay(io: IO[bytes]) -> ModuleOp:  # Relay's text format (.relay files)
            from xrelay.relay.parser import parse

            return parse(io.read().decode(), self.get_input_name()).module

        self.available_frontends["relay"] = parse_relay

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--params",
            metavar="FILE.npz",
            help="weights: resolve `relay.constant @name` and bind main's parameters of those names",
        )
        arg_parser.add_argument(
            "--no-bind-params",
            action="store_true",
            help="with --params, only resolve constant references; keep main's parameters",
        )
        arg_parser.add_argument(
            "--emit-params",
            metavar="OUT.npz",
            help="print named and large constants by reference and save their data to OUT.npz",
        )
        arg_parser.add_argument(
            "--elide-large-constants",
            metavar="N",
            type=int,
            help="print the data of constants with more than N elements as __elided__ (not parseable)",
        )
        arg_parser.add_argument(
            "--input-format",
            choices=["mlir", "relay"],
            help="read MLIR or Relay's text format (default: by the file's extension, .relay is Relay)",
        )
        arg_parser.add_argument(
            "--output-format",
            choices=["mlir", "relay"],
            default="mlir",
            help="print the result as MLIR (default) or in Relay's text format",
        )
        arg_parser.add_argument(
            "--load-pass-plugin",
            action="append",
            default=[],
            metavar="FILE.py",
            help="load passes from a Python file (xDSL ModulePass classes with a name, and "
            "Relay-style passes made with module_pass/function_pass); repeatable",
        )
        add_register_device_argument(arg_parser)
        _refuse_other_targets(arg_parser)
        # opt_flags hook: Relay's instruments and opt levels
        from xrelay.tools import opt_flags

        opt_flags.add_arguments(arg_parser)

    def setup_pipeline(self):
        for path in self.args.load_pass_plugin:
            for name, factory in load_pass_plugin(path).items():
                if name in self.available_passes:
                    raise ToolError(f"pass plugin '{path}': a pass named '{name}' exists already")
                self.register_pass(name, factory)
        # Devices named in the pipeline's options must exist before it is built.
        register_devices(self.args.register_device)
        # Relay's names work in -p too (FuseOps for fuse-ops): they are mapped to CLI names.
        import dataclasses

        from xdsl.utils.arg_spec import parse_pipeline

        from xrelay.transforms.infra import PassLookupError, get_pass_class

        specs = []
        for spec in parse_pipeline(self.args.passes):
            if spec.name not in self.available_passes:
                try:
                    spec = dataclasses.replace(spec, name=get_pass_class(spec.name).name)
                except PassLookupError:
                    pass
            specs.append(spec)
        unknown = [s.name for s in specs if s.name not in self.available_passes]
        if unknown:
            raise ValueError(f"Unrecognized passes: {unknown}")
        # engines named in options (merge-composite{pattern-table=dnnl}) get their tables
        passes = [resolve_pass(_pass_from_spec(self.available_passes[spec.name](), spec)) for spec in specs]
        self.pipeline = PassPipeline(tuple(passes))

    def prepare_output(self) -> IO[str]:
        # xDSL opens -o for writing before parsing: a parse error, a failing pass or `-o` naming
        # the input left it empty. The text is collected here and written by `run` on success.
        if self.args.output_file is None:
            return super().prepare_output()
        self.pending_output = _PendingOutput()
        return self.pending_output

    def run(self):
        self.pending_output: _PendingOutput | None = None
        super().run()
        if self.args.emit_params is not None:  # first: the text refers to these weights
            write_output(self.args.emit_params, self.emitted, ToolError)
        if self.pending_output is not None:
            write_output(self.args.output_file, self.pending_output.text, ToolError)

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        from xrelay.dialects.relay import params_source

        data = chunk.read()
        if _only_comments(data):
            # an empty module, as mlir-opt reads an empty input (xDSL refuses it): the chunk
            # before the first `// -----` of a --print-ir-after-all dump is one
            return ModuleOp([])
        with params_source(self.params):
            return super().parse_chunk(BytesIO(data), file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp):
        if not self.args.disable_verify:
            verify_module(prog)
        if self.params is not None and not self.args.no_bind_params:
            from xrelay.transforms.bind_params import bind_params_by_name

            bind_params_by_name(prog, self.params)
        from xrelay.tools import opt_flags

        opt_flags.run_pipeline(self.args, self.ctx, prog, list(self.pipeline.passes))

    def output_resulting_program(self, prog: ModuleOp) -> str:
        from xrelay.dialects.relay import print_options

        if self.args.output_format == "relay":
            from xrelay.relay.text_printer import astext

            return astext(prog)

        if self.args.emit_params is None and self.args.elide_large_constants is None:
            return super().output_resulting_program(prog)
        external = self.emitted if self.args.emit_params is not None else None
        with print_options(external=external, elide_larger_than=self.args.elide_large_constants):
            return super().output_resulting_program(prog)


def load_pass_plugin(path: str) -> dict[str, Any]:
    """The passes a plugin file defines, by name: its xDSL ``ModulePass`` classes (with a
    ``name``) and its Relay-style passes (``module_pass``/``function_pass`` objects at module
    level, or classes decorated with them), each as a factory of a ``ModulePass`` class.
    Loading runs the file's code: it is the user's own, named on the command line."""
    import importlib.util

    from xrelay.transforms.infra import Pass

    if not os.path.isfile(path):
        raise ToolError(f"pass plugin '{path}': no such file")
    module_name = "relay_opt_plugin_" + "".join(c if c.isalnum() else "_" for c in path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ToolError(f"pass plugin '{path}': not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        if os.environ.get("XRELAY_TRACEBACK"):
            raise
        raise ToolError(f"pass plugin '{path}': {type(e).__name__}: {e}") from None
    found: dict[str, Any] = {}
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, ModulePass):
            if value.__module__ == module_name and isinstance(getattr(value, "name", None), str):
                found[value.name] = (lambda cls=value: cls)
        elif isinstance(value, Pass):
            found[value.info.name] = (lambda p=value: _carrier(p))
    if not found:
        raise ToolError(
            f"pass plugin '{path}' defines no pass (an xDSL ModulePass subclass with a name, "
            "or a module_pass/function_pass object)"
        )
    return found


def _carrier(relay_pass: Any) -> type[ModulePass]:
    """An xDSL ``ModulePass`` class standing for a Relay-style pass (``as_pass`` unwraps it, so
    the instruments see the pass once, under its own name)."""
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Carrier(ModulePass):
        name = relay_pass.info.name

        def apply(self, ctx, op: ModuleOp) -> None:
            relay_pass(op)

    Carrier.relay_pass = relay_pass
    Carrier.__name__ = Carrier.__qualname__ = f"{relay_pass.info.name}Carrier"
    return Carrier


def closed_stdout() -> int:
    """The exit code after the reader of stdout went away; stdout is pointed at /dev/null so
    Python's flush at exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141  # 128 + SIGPIPE, what a shell reports for a command killed by it


def _only_comments(data: bytes) -> bool:
    """Whether a chunk of input holds nothing but white space and ``//`` comments."""
    return all(not line.strip() or line.lstrip().startswith(b"//") for line in data.splitlines())


class _PendingOutput(StringIO):
    """The output text, kept when xDSL closes the stream so it can be written atomically."""

    text = ""

    def close(self) -> None:
        if not self.closed:
            self.text = self.getvalue()
        super().close()


def add_register_device_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--register-device NAME:SCOPE=SIZE:ALIGN,...`` (relay-opt and relay-run)."""
    parser.add_argument(
        "--register-device",
        action="append",
        default=[],
        metavar="NAME:SCOPE=SIZE:ALIGN,...",
        help="register a device that runs on the host, with its memory scopes (size 0: unbounded)",
    )


def _refuse_other_targets(parser: argparse.ArgumentParser) -> None:
    """``-t llvm`` (a target of xdsl-opt) is one ``ToolError`` saying what relay-opt writes,
    instead of argparse's usage text."""
    usage_error = parser.error

    def error(message: str) -> Any:
        if message.startswith("argument -t/--target: invalid choice"):
            name = message.split("'")[1] if "'" in message else "?"
            raise ToolError(
                f"-t {name}: relay-opt writes MLIR text only (-t mlir; --output-format relay for "
                "Relay's text); relay-build emits C"
            )
        return usage_error(message)

    parser.error = error  # type: ignore[method-assign]


def register_devices(specs: Sequence[str]) -> None:
    """Register the ``--register-device`` specs; a bad one is a ``ToolError`` naming it."""
    from xrelay.dialects.relay.devices import DeviceError, register_device_spec

    for spec in specs:
        try:
            register_device_spec(spec)
        except DeviceError as e:
            raise ToolError(f"--register-device '{spec}': {e}") from None


def load_params(path: str, what: str = "params") -> dict[str, np.ndarray]:
    """The arrays of an ``.npz`` file; any problem with it is one ``ToolError``."""
    try:
        return read_npz(path)
    except OSError as e:
        raise ToolError(f"cannot read {what} '{path}': {e.strerror or e}") from None
    except NpzError as e:
        raise ToolError(f"cannot read {what} '{path}': {e}") from None


class ToolError(Exception):
    """An error a tool reports as one line, without a traceback."""


def report(exc: BaseException, prog: str = "relay-opt") -> int:
    """Print an exception the way the tools report errors; return the exit code."""
    if isinstance(exc, ParseError):
        sys.stderr.write(f"{exc}\n")
    elif isinstance(exc, DiagnosticException):
        # xDSL attaches the whole module as a note; for real models that is megabytes, so show
        # only the lines around the marked op.
        sys.stderr.write(f"{prog}: error: {exc}\n")
        for note in getattr(exc, "__notes__", []):
            sys.stderr.write(_excerpt(str(note)))
    else:
        sys.stderr.write(f"{prog}: error: {exc}\n")
    return 1


def _excerpt(note: str, context: int = 2) -> str:
    lines = note.splitlines()
    marks = [i for i, line in enumerate(lines) if line.lstrip().startswith("^")]
    if not marks:
        return ""
    lo, hi = max(0, marks[0] - context), min(len(lines), marks[0] + context + 2)
    return "\n".join(lines[lo:hi]) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    tool = None
    try:
        tool = RelayOptMain(args=argv)
        tool.run()
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    except (ParseError, DiagnosticException, ToolError) as e:
        return report(e)
    except ArgSpecParseError as e:
        return report(ToolError(f"bad pass pipeline: {e}"))
    except FileNotFoundError as e:
        return report(ToolError(f"no such file: '{e.filename}'"))
    except UnicodeDecodeError as e:  # a binary file (a ValueError: before the next clause)
        name = tool.get_input_name() if tool is not None else "the input"
        return report(ToolError(f"cannot read '{name}': not UTF-8 text (byte {e.start})"))
    except (ValueError, LookupError, TypeError) as e:
        # unknown pass names, bad pass options, unknown file extensions ...
        return report(ToolError(_explain(e)))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # stdout closed early (`relay-opt m.mlir | head`): stop quietly
        return closed_stdout()
    except RecursionError:  # xDSL parses, verifies and prints regions recursively
        return report(ToolError("the input is nested too deeply to process"))
    except Exception as e:  # a bug in a pass: still one message, unless asked for the traceback
        if os.environ.get("XRELAY_TRACEBACK"):
            raise
        return report(
            ToolError(f"internal error: {type(e).__name__}: {e} (set XRELAY_TRACEBACK=1 for details)")
        )
    return 0


_EXPECTS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _expects(hint: Any) -> str:
    """What a pass option's type accepts, in words."""
    args = [a for a in get_args(hint) if a is not type(None)]
    if get_origin(hint) in (Union, UnionType) and len(args) == 1:
        return _expects(args[0])
    if get_origin(hint) is tuple and args:
        return f"a comma-separated list of {_EXPECTS.get(args[0], str(args[0])).split(' ', 1)[-1]}s"
    return _EXPECTS.get(hint, str(hint))


def _pass_from_spec(cls: type, spec: ArgSpec) -> Any:
    """The pass ``cls`` with the options of ``spec``, or a ``ToolError`` naming the pass, the
    option, what it takes and the pass's options. An integer is accepted where a number
    (float) is expected, as MLIR's options do (xDSL alone refuses ``time-limit=2``)."""
    import dataclasses
    import typing

    from xdsl.utils.hints import isa

    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls)
    names = ", ".join(n.replace("_", "-") for n in fields) or "none"
    params = {}
    for key, values in spec.parameters.items():
        name = key.replace("-", "_")
        if name not in fields:
            raise ToolError(f"pass '{spec.name}': unknown option '{key}' (options: {names})")
        hint = hints[name]
        accepts = [hint, *get_args(hint)]
        if float in accepts or tuple[float, ...] in accepts:
            values = tuple(float(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values)
        optional = not values and type(None) in get_args(hint)
        if not (optional or (len(values) == 1 and isa(values[0], hint)) or isa(values, hint)):
            given = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
            raise ToolError(
                f"pass '{spec.name}': option '{key}' takes {_expects(hint)}, "
                f"not '{given}' (options: {names})"
            )
        params[key] = values
    try:
        return cls.from_pass_spec(ArgSpec(spec.name, params))
    except Exception as e:  # anything else xDSL refuses, still naming the pass
        raise ToolError(f"pass '{spec.name}': {e} (options: {names})") from None


def _explain(e: Exception) -> str:
    text = str(e)
    if "Unrecognized passes" in text:
        known = ", ".join(sorted(get_all_passes()))
        return f"{text}\nknown passes: {known}"
    return text


if __name__ == "__main__":
    sys.exit(main())
