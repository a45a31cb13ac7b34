"""The ahead-of-time C program of a planned memory-dialect module: ``model.c`` and ``model.h``.

``emit_program(planned, name)`` turns ``@main`` of a planned program (after
``lower-to-memory`` and ``plan-memory``) into one C99 translation unit:

* one ``static`` function per primitive function (``c_function``);
* every pool as a static array of exactly its planned size, aligned to the pool's alignment
  and placed in the section the user names (``XRELAY_SECTION``);
* every storage as a constant offset into its pool (the plan's offsets, nothing computed at
  run time);
* the weights as ``const`` arrays (``constants="arrays"``), or as offsets into one blob the
  caller hands over (``constants="blob"``: ``<name>.bin``, checked by size);
* ``int <name>_run(const <name>_inputs *, <name>_outputs *)`` running every step in order.

No allocation, no dependency beyond libc and libm. The header declares the two structs, one
pointer per input and output, named after ``@main``'s arguments (``output0``, ... for results).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import SSAValue

from xrelay.backend.c.c_function import (
    C_KEYWORDS,
    CFunction,
    CodegenError,
    c_identifier,
    c_literal,
    c_storage_type,
    c_type,
    emit_function,
    static_shape,
    stored_dtype,
)
from xrelay.dialects.memory import (
    SCRATCH_ATTR,
    AliasOp,
    AllocStorageOp,
    AllocTensorOp,
    CopyOp,
    InvokeOp,
    KillOp,
    PoolOp,
)
from xrelay.dialects.relay import ConstantOp, byte_size, dtype_of
from xrelay.runtime.native import library as native_library

KERNELS_HEADER = Path(__file__).with_name("xrelay_kernels.h")
"""The loop nests generated C calls (convolution, dense, pools, softmax)."""

WINOGRAD_HEADERS = {
    "xrelay_winograd.h": Path(__file__).with_name("xrelay_winograd.h"),
    "winograd_core.h": Path(native_library.HERE, "winograd_core.h"),
    "winograd4.h": Path(native_library.HERE, "winograd4.h"),
}
"""The headers of the C target's Winograd convolution (``xrelay_winograd.h``, which includes
the native engine's transforms), shipped only with a program that has one."""

POOL_CACHE_LINE = 64
"""The alignment every pool's static array gets beside its planned one (``XRELAY_POOL_ALIGNED``):
with the planned 16, int8 ResNet-18's and MobileNetV2's programs ran 5 % slower (64-byte vector
loads crossing lines; same process, alternating, load 1.4-1.5: 16.38 -> 15.59 ms and 6.39 -> 6.04
ms). At most 63 bytes of padding per pool; RAM is the plan's sizes either way."""

BLOB_ALIGN = 64


def extra_headers(functions) -> dict[str, Path]:
    """The headers ``functions`` (``CFunction``) need beside ``xrelay_kernels.h``, by file name."""
    return dict(WINOGRAD_HEADERS) if any(f.uses_winograd for f in functions) else {}


def _includes(functions) -> list[str]:
    """The ``#include`` lines of the headers ``functions`` need beside ``xrelay_kernels.h`` (the
    top one of each set: it includes the others)."""
    return ['#include "xrelay_winograd.h"'] if any(f.uses_winograd for f in functions) else []


def primitive_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data != "main" and not op.is_declaration
    ]


def annotate_scratch(module: ModuleOp) -> dict[str, CFunction]:
    """Emit every primitive function of a fused module and state its scratch need
    (``SCRATCH_ATTR``), so that ``lower-to-memory`` gives each step the workspace the C
    needs. Returns the emitted functions by symbol."""
    out = {}
    functions = primitive_functions(module)
    for fn in functions:
        cfn = emit_function(fn)
        fn.attributes[SCRATCH_ATTR] = IntegerAttr(cfn.scratch_bytes, i64)
        out[fn.sym_name.data] = cfn
    return out


@dataclass
class MemorySummary:
    """What the program needs, in bytes: RAM per pool, ROM for the weights."""

    pools: dict[str, int]
    constants: int
    code: int | None = None
    """Bytes of machine code (``.text`` of the compiled object), when it was compiled."""

    @property
    def ram(self) -> int:
        return sum(self.pools.values())

    def format(self) -> str:
        lines = ["memory summary (bytes)"]
        for name, size in self.pools.items():
            lines.append(f"  RAM  pool {name:<16} {size:>12,}")
        lines.append(f"  RAM  total {'':<16} {self.ram:>12,}")
        lines.append(f"  ROM  constants {'':<12} {self.constants:>12,}")
        code = "not compiled" if self.code is None else f"{self.code:>12,}"
        lines.append(f"  ROM  code {'':<17} {code}")
        return "\n".join(lines)


@dataclass
class CProgram:
    """The emitted program: ``source`` (model.c), ``header`` (model.h), ``blob`` (weights
    when ``constants="blob"``), and its ``summary``."""

    name: str
    source: str
    header: str
    summary: MemorySummary
    inputs: list[tuple[str, TensorType]]
    outputs: list[tuple[str, TensorType]]
    blob: bytes | None = None
    functions: dict[str, CFunction] = field(default_factory=dict)

    @property
    def extra_headers(self) -> dict[str, Path]:
        """The headers besides ``xrelay_kernels.h`` some function needs (``WINOGRAD_HEADERS``)."""
        return extra_headers(self.functions.values())

    @property
    def support(self) -> dict[str, str]:
        """The headers the C includes besides its own (``xrelay_kernels.h``), by file name."""
        return {KERNELS_HEADER.name: KERNELS_HEADER.read_text(),
                **{n: p.read_text() for n, p in self.extra_headers.items()}}  # fmt: skip

    def steps_source(self) -> str:
        """Only the primitive functions (and their constants), exported: what the xrelay
        runtime calls step by step. It does not depend on the plan, so one compiled library
        serves every plan of a model."""
        lines = [f"/* The step functions of {self.name}.c, for the xrelay runtime. */",
                 "#include <math.h>", "#include <stdint.h>", "#include <string.h>", "",
                 '#include "xrelay_kernels.h"', *_includes(self.functions.values()), "",
                 "#define XRELAY_FN", ""]  # fmt: skip
        for cfn in self.functions.values():
            lines += cfn.constants
        for cfn in self.functions.values():
            lines += [cfn.source, ""]
        return "\n".join(lines)

    def main_source(self) -> str:
        """``main.c``: a program running the model once. Without arguments it runs on inputs
        of zeros; with ``[<name>.bin] <inputs...> <outputs...>`` it reads each input from a
        raw file (exactly its bytes, as the target stores them) and writes each output to
        one. Either way it prints each output's shape, first values and sum. Its buffers are
        static arrays of exactly the inputs' and outputs' sizes: no allocation either."""
        n = self.name
        blob = self.blob is not None
        usage = " ".join([*([f"{n}.bin"] if blob else []), *(f"{a}.bin" for a, _ in self.inputs),
                          *(f"{o}.bin" for o, _ in self.outputs)])  # fmt: skip
        lines = [f"/* main.c: runs {n} once (generated by xrelay's C target).",
                 f" *   ./{n}{'' if blob else '            on inputs of zeros'}",
                 f" *   ./{n} {usage}   raw files in and out */",
                 "#include <stdio.h>", "#include <stdint.h>", "", f'#include "{n}.h"',
                 '#include "xrelay_kernels.h"', "",
                 "/* Reads exactly `size` bytes of `path` into `dst`; 0, or -1 with a message. */",
                 "static int read_exactly(const char *path, void *dst, size_t size) {",
                 '  FILE *f = fopen(path, "rb");',
                 '  if (!f) { fprintf(stderr, "cannot open %s\\n", path); return -1; }',
                 "  const size_t got = fread(dst, 1, size, f);",
                 "  const int extra = fgetc(f) != EOF;",
                 "  fclose(f);",
                 "  if (got != size || extra) {",
                 '    fprintf(stderr, "%s: expected exactly %lu bytes\\n", path, (unsigned long)size);',
                 "    return -1;", "  }", "  return 0;", "}", "",
                 "static int write_all(const char *path, const void *src, size_t size) {",
                 '  FILE *f = fopen(path, "wb");',
                 "  const int ok = f && fwrite(src, 1, size, f) == size;",
                 "  if (f && fclose(f) != 0) return -1;",
                 '  if (!ok) { fprintf(stderr, "cannot write %s\\n", path); return -1; }',
                 "  return 0;", "}", ""]  # fmt: skip
        if blob:
            # uint64_t elements: the weights' offsets are read as any type up to 8 bytes
            lines.append(f"static uint64_t blob[({n.upper()}_BLOB_SIZE + 7) / 8];")
        for a, t in [*self.inputs, *self.outputs]:
            lines.append(f"static {c_storage_type(t, a)} buf_{a}[{max(1, math.prod(t.get_shape()))}];")
        nargs = len(self.inputs) + len(self.outputs) + int(blob)
        files = "argc > 1" if not blob else "1"
        lines += ["", "int main(int argc, char **argv) {",
                  f"  if (argc != {nargs + 1}{'' if blob else ' && argc != 1'}) {{",
                  f'    fprintf(stderr, "usage: %s {usage}\\n", argv[0]);', "    return 2;", "  }"]  # fmt: skip
        k = 1
        if blob:
            size = f"{n.upper()}_BLOB_SIZE"
            lines.append(f"  if (read_exactly(argv[{k}], blob, {size}) || {n}_set_blob(blob, {size})) return 1;")
            k += 1
        for a, _ in self.inputs:
            lines.append(f"  if ({files} && read_exactly(argv[{k}], buf_{a}, sizeof buf_{a})) return 1;")
            k += 1
        lines.append(f"  const {n}_inputs in = {{{', '.join(f'buf_{a}' for a, _ in self.inputs) or '0'}}};")
        lines.append(f"  {n}_outputs out = {{{', '.join(f'buf_{o}' for o, _ in self.outputs) or '0'}}};")
        lines.append(f'  if ({n}_run(&in, &out) != 0) {{ fprintf(stderr, "{n}_run failed\\n"); return 1; }}')
        for o, t in self.outputs:
            shape = "x".join(str(d) for d in t.get_shape()) or "scalar"
            sd = stored_dtype(t)
            value = f"(double)xr_{sd}_to_f32(buf_{o}[i])" if sd else f"(double)buf_{o}[i]"
            lines += ["  {", "    double sum = 0;",
                      f'    printf("{o} ({shape} {dtype_of(t.element_type)}):");',
                      f"    for (size_t i = 0; i < sizeof buf_{o} / sizeof buf_{o}[0]; ++i) {{",
                      f"      sum += {value};",
                      f'      if (i < 5) printf(" %g", {value});', "    }",
                      '    printf("  sum %g\\n", sum);', "  }",
                      f"  if ({files} && write_all(argv[{k}], buf_{o}, sizeof buf_{o})) return 1;"]  # fmt: skip
            k += 1
        lines += ["  return 0;", "}", ""]
        return "\n".join(lines)

    def write(self, out_dir: str | Path, main: bool = False) -> list[Path]:
        """Write ``<name>.c``, ``<name>.h``, ``xrelay_kernels.h`` (``<name>.bin`` with the
        weights in a blob, ``main.c`` with ``main``) into ``out_dir`` atomically (each file
        through a temporary renamed on success)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = {
            f"{self.name}.c": self.source.encode(),
            f"{self.name}.h": self.header.encode(),
            KERNELS_HEADER.name: KERNELS_HEADER.read_bytes(),
            **{n: p.read_bytes() for n, p in self.extra_headers.items()},
        }
        if main:
            files["main.c"] = self.main_source().encode()
        if self.blob is not None:
            files[f"{self.name}.bin"] = self.blob
        written = []
        for fname, data in files.items():
            path = out / fname
            tmp = out / f".{fname}.tmp"
            tmp.write_bytes(data)
            tmp.replace(path)
            written.append(path)
        return written


SECTION = re.compile(r"[A-Za-z0-9_.$]{1,200}\Z")
"""A linker section name the C target accepts: letters, digits, ``_``, ``.`` and ``$`` (GNU
and vendor linker scripts' ``.bss.xrelay.sram``, ``.bss.$SRAM_OC``); nothing that could end
the C string literal it is written into."""


def check_sections(sections: dict[str, str], pools: Sequence[str]) -> None:
    """A ``CodegenError`` unless every key names a pool of the program and every value is a
    linker section name (``SECTION``)."""
    for pool, section in sections.items():
        if not isinstance(section, str) or not SECTION.match(section):
            raise CodegenError(
                f"section {section!r} of pool '{pool}' is not a linker section name (1 to 200 "
                "letters, digits, '_', '.' or '$')"
            )
        if pool not in pools:
            raise CodegenError(
                f"a section is given for pool '{pool}', which the program does not have (its "
                f"pools: {', '.join(pools) or 'none'})"
            )


class CNames:
    """Fresh C identifiers from user names (arguments, pools): every character outside
    ``[A-Za-z0-9_]`` becomes ``_``, a leading digit gets a ``_`` before it, a C keyword one
    after it, and a name already given gets ``_1``, ``_2``, ... (``%a.b`` and ``%a_b`` are
    ``a_b`` and ``a_b_1``), so the C compiles whatever the names were."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint) or "_"
        if base[0].isdigit():
            base = f"_{base}"
        if base in C_KEYWORDS:
            base = f"{base}_"
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


def emit_program(
    module: ModuleOp,
    name: str = "model",
    constants: str = "arrays",
    sections: dict[str, str] | None = None,
) -> CProgram:
    """The C program of planned ``module`` (see the module docstring).

    ``sections`` maps a pool to the linker section of its array (default
    ``.bss.xrelay.<pool>``). Raises ``CodegenError`` naming what cannot be emitted.
    """
    c_identifier(name, "program name")
    if constants not in ("arrays", "blob"):
        raise CodegenError(f"constants must be 'arrays' or 'blob', not '{constants}'")
    sections = sections or {}
    main = next(
        (op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"),
        None,
    )
    if main is None:
        raise CodegenError("the module has no @main")
    pools = {op.sym_name.data: op for op in module.ops if isinstance(op, PoolOp)}
    check_sections(sections, list(pools))
    pool_names = CNames()
    pool_c = {p: f"{name}_pool_{pool_names.fresh(p)}" for p in pools}
    functions = {fn.sym_name.data: fn for fn in primitive_functions(module)}
    emitted: dict[str, CFunction] = {}

    def c_fn(sym: str) -> CFunction:
        if sym not in emitted:
            if sym not in functions:
                raise CodegenError(f"@main invokes @{sym}, which is not a primitive function")
            emitted[sym] = emit_function(functions[sym], f"{name}_{c_identifier(sym, 'function')}")
        return emitted[sym]

    body: list[str] = []
    ptr: dict[SSAValue, str] = {}
    storage: dict[SSAValue, str] = {}
    const_defs: list[str] = []
    blob = bytearray()
    const_bytes = 0
    inputs = []
    input_names = CNames()
    for i, arg in enumerate(main.body.block.args):
        aname = input_names.fresh(arg.name_hint or f"input{i}")
        ctype = c_storage_type(arg.type, f"input '{aname}'")
        static_shape(arg.type, f"input '{aname}'")
        inputs.append((aname, arg.type))
        ptr[arg] = f"(({ctype} *)inputs->{aname})"
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    outputs = [(f"output{r}", v.type) for r, v in enumerate(ret.operands)]
    out_of: dict[SSAValue, int] = {}
    for r, v in enumerate(ret.operands):
        c_type(v.type, f"output {r}")
        static_shape(v.type, f"output {r}")
        out_of.setdefault(v, r)
    # A returned view (memory.alias) of an external output's tensor: the tensor is that output.
    for op in reversed(list(main.body.block.ops)):
        if isinstance(op, AliasOp) and op.results[0] in out_of:
            out_of.setdefault(op.source, out_of[op.results[0]])
    used_pools = {}
    for op in main.body.block.ops:
        if isinstance(op, ConstantOp):
            v = op.results[0]
            ctype = c_storage_type(v.type, "a constant")
            data = np.ascontiguousarray(op.numpy())
            if ctype != c_type(v.type, "a constant"):
                data = data.view(np.uint16)  # float16/bfloat16: their bits
            const_bytes += data.nbytes
            cname = f"{name}_const{len(const_defs) if constants == 'arrays' else len(blob)}"
            if constants == "arrays":
                values = ", ".join(c_literal(x, ctype) for x in data.reshape(-1).tolist())
                const_defs.append(
                    f"static const {ctype} {cname}[{max(data.size, 1)}] = {{{values}}};"
                )
                ptr[v] = cname
            else:
                offset = -(-len(blob) // BLOB_ALIGN) * BLOB_ALIGN
                blob.extend(b"\0" * (offset - len(blob)))
                blob.extend(data.tobytes())
                ptr[v] = f"((const {ctype} *)({name}_blob + {offset}))"
        elif isinstance(op, AllocStorageOp):
            v = op.results[0]
            if op.external is not None:
                storage[v] = ""  # the caller's buffer: bound by the tensor placed in it
                continue
            pool = op.pool.data if op.pool is not None else None
            if pool is None or op.offset is None:
                raise CodegenError("the program is not planned: run plan-memory first")
            if pool not in pools or pools[pool].size is None:
                raise CodegenError(f"pool '{pool}' is not declared with a size")
            used_pools[pool] = pools[pool]
            storage[v] = f"({pool_c[pool]} + {op.offset.value.data})"
        elif isinstance(op, AllocTensorOp):
            v = op.results[0]
            ctype = c_storage_type(v.type, "a tensor")
            base = storage[op.storage]
            if base == "":
                if v not in out_of:
                    raise CodegenError("an external storage that is not an output has no C lowering")
                ptr[v] = f"(({ctype} *)outputs->output{out_of[v]})"
            else:
                ptr[v] = f"(({ctype} *)({base} + {op.offset.value.data}))"
        elif isinstance(op, AliasOp):
            ctype = c_storage_type(op.results[0].type, "an alias")
            ptr[op.results[0]] = f"(({ctype} *)(void *){ptr[op.source]})"
        elif isinstance(op, CopyOp):
            n = byte_size(op.source.type)
            body.append(f"  memcpy((void *){ptr[op.dest]}, (const void *){ptr[op.source]}, {n});")
        elif isinstance(op, InvokeOp):
            sym = op.callee.root_reference.data
            cfn = c_fn(sym)
            args = [ptr[a] for a in op.inputs] + [ptr[o] for o in op.outs]
            if op.workspace:
                args.append(f"(uint8_t *){storage[op.workspace[0]]}")
            elif cfn.scratch_bytes:
                raise CodegenError(
                    f"@{sym} needs {cfn.scratch_bytes} bytes of scratch but its step has no "
                    "workspace (build for the C target: xrelay.backend.c.annotate_scratch)"
                )
            else:
                args.append("(uint8_t *)0")
            step = op.step.value.data if op.step is not None else "?"
            body.append(f"  {cfn.name}({', '.join(args)});  /* step {step} */")
        elif isinstance(op, KillOp | func.ReturnOp):
            continue
        else:
            raise CodegenError(f"{op.name} in @main has no C lowering")
    for r, v in enumerate(ret.operands):
        dest = f"outputs->output{r}"
        # Already there when the value is that output's buffer (or a view of it).
        if not re.search(rf"outputs->output{r}\b", ptr[v]):
            body.append(f"  memcpy((void *){dest}, (const void *){ptr[v]}, {byte_size(v.type)});")
    summary = MemorySummary({p: pools[p].size.value.data for p in used_pools}, const_bytes)
    header = _header(name, inputs, outputs, constants == "blob", len(blob))
    arrays = {pool_c[p]: (op, sections.get(p, f".bss.xrelay.{pool_c[p][len(name) + 6:]}"))
              for p, op in used_pools.items()}  # fmt: skip
    source = _source(name, header, arrays, const_defs, emitted, body, constants == "blob", len(blob))
    return CProgram(name, source, header, summary, inputs, outputs,
                    bytes(blob) if constants == "blob" else None, emitted)  # fmt: skip


def _header(name, inputs, outputs, with_blob: bool, blob_size: int) -> str:
    guard = f"{name.upper()}_H"
    lines = [
        f"/* {name}.h: generated by xrelay's C target. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "typedef struct {",
    ]
    for n, t in inputs:
        lines.append(f"  const {c_storage_type(t, n)} *{n}; /* {_shape_text(t)} */")
    lines.append(f"}} {name}_inputs;")
    lines.append("")
    lines.append("typedef struct {")
    for n, t in outputs:
        lines.append(f"  {c_storage_type(t, n)} *{n}; /* {_shape_text(t)} */")
    lines.append(f"}} {name}_outputs;")
    lines.append("")
    if with_blob:
        lines += [
            f"#define {name.upper()}_BLOB_SIZE {blob_size}u",
            f"/* The weights: the {name}.bin the C was emitted with ({blob_size} bytes), read",
            " * where it lives (flash, a mapped file); returns 0, or -1 on a wrong size. */",
            f"int {name}_set_blob(const void *blob, size_t size);",
        ]
    lines += [
        "/* Runs every step; returns 0 (or -1 when the weights blob was not set). */",
        f"int {name}_run(const {name}_inputs *inputs, {name}_outputs *outputs);",
        "",
        f"#endif /* {guard} */",
        "",
    ]
    return "\n".join(lines)


def _shape_text(t: TensorType) -> str:
    return "x".join(str(d) for d in t.get_shape()) + f" {t.element_type}"


def _source(name, header, arrays, const_defs, emitted, body, with_blob, blob_size):
    """``arrays``: each pool's C array name -> (its ``memory.pool``, its checked section)."""
    lines = [
        f"/* {name}.c: generated by xrelay's C target. C99, libc and libm, no allocation. */",
        "#include <math.h>",
        "#include <stdint.h>",
        "#include <string.h>",
        "",
        f'#include "{name}.h"',
        '#include "xrelay_kernels.h"',
        *_includes(emitted.values()),
        "",
        "/* Primitive functions are static; the xrelay runtime defines XRELAY_FN empty to call",
        " * each step's function itself. */",
        "#ifndef XRELAY_FN",
        "#define XRELAY_FN static",
        "#endif",
        "/* Each pool's array goes to a section of its own; define XRELAY_SECTION empty to",
        " * leave placement to the linker. */",
        "#ifndef XRELAY_SECTION",
        "#if defined(__GNUC__) && !defined(__APPLE__)",
        '#define XRELAY_SECTION(s) __attribute__((section(s)))',
        "#else",
        "#define XRELAY_SECTION(s)",
        "#endif",
        "#endif",
        "#if defined(__GNUC__)",
        "#define XRELAY_ALIGNED(n) __attribute__((aligned(n)))",
        "#else",
        "#define XRELAY_ALIGNED(n)",
        "#endif",
        "/* Each pool also starts on a cache line (the planned buffers are 64-byte multiples apart,",
        " * so the kernels' vector loads then stay within lines); define XRELAY_POOL_ALIGNED empty",
        " * to keep only the planned alignment. */",
        "#ifndef XRELAY_POOL_ALIGNED",
        f"#define XRELAY_POOL_ALIGNED XRELAY_ALIGNED({POOL_CACHE_LINE})",
        "#endif",
        "",
    ]
    for cname, (pool, section) in arrays.items():
        size = pool.size.value.data
        align = pool.alignment.value.data
        lines.append(f"/* pool {cname[len(name) + 6:]}: {size} bytes, planned */")
        lines.append(
            f'static uint8_t {cname}[{max(size, 1)}] XRELAY_ALIGNED({align}) XRELAY_POOL_ALIGNED '
            f'XRELAY_SECTION("{section}");'
        )
    lines.append("")
    if with_blob:
        lines += [
            f"static const uint8_t *{name}_blob;",
            "",
            f"int {name}_set_blob(const void *blob, size_t size) {{",
            f"  if (size != {blob_size}u) return -1;",
            f"  {name}_blob = (const uint8_t *)blob;",
            "  return 0;",
            "}",
            "",
        ]
    lines += const_defs
    for cfn in emitted.values():
        lines += cfn.constants
    lines.append("")
    for cfn in emitted.values():
        lines.append(cfn.source)
        lines.append("")
    lines.append(f"int {name}_run(const {name}_inputs *inputs, {name}_outputs *outputs) {{")
    if with_blob:
        lines.append(f"  if (!{name}_blob) return -1;")
    lines.append("  (void)inputs;")
    lines += body
    lines.append("  return 0;")
    lines.append("}")
    lines.append("")
    return "\n".join(lines)
