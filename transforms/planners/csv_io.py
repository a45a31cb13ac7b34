"""
MiniMalloc CSV problems: ``id,lower,upper,size`` rows with half-open lifetimes.

Reading converts ``[lower, upper)`` to the inclusive ``[lower, upper - 1]`` of ``Buffer``;
writing emits the input columns plus ``offset`` (and ``pool`` when a plan uses several
pools), keeping the input's row order.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from xrelay.runtime.memory_plan import Buffer, Plan, PlanError

REQUIRED_COLUMNS = ("id", "lower", "upper", "size")


def read_minimalloc_csv(path: str | Path, alignment: int = 1) -> list[Buffer]:
    """Buffers of a MiniMalloc CSV file; ``PlanError`` names the bad line."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise PlanError(f"{path}: no such file") from None
    except OSError as err:
        raise PlanError(f"{path}: cannot read: {err.strerror}") from None
    return parse_minimalloc_csv(text, str(path), alignment)


def parse_minimalloc_csv(text: str, source: str = "<csv>", alignment: int = 1) -> list[Buffer]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise PlanError(f"{source}: empty file (expected header {','.join(REQUIRED_COLUMNS)})")
    header = [h.strip() for h in header]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise PlanError(
            f"{source}:1: header lacks column(s) {', '.join(missing)} "
            f"(expected {','.join(REQUIRED_COLUMNS)})"
        )
    col = {c: header.index(c) for c in REQUIRED_COLUMNS}
    buffers: list[Buffer] = []
    seen: set[str] = set()
    for row in reader:
        line = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise PlanError(f"{source}:{line}: expected {len(header)} fields, got {len(row)}")
        name = row[col["id"]].strip()
        try:
            lower, upper, size = (int(row[col[c]]) for c in ("lower", "upper", "size"))
        except ValueError:
            raise PlanError(
                f"{source}:{line}: lower, upper and size must be integers: {','.join(row)}"
            ) from None
        if upper <= lower:
            raise PlanError(f"{source}:{line}: buffer '{name}' has empty lifetime [{lower}, {upper})")
        if size < 0:
            raise PlanError(f"{source}:{line}: buffer '{name}' has negative size {size}")
        if name in seen:
            raise PlanError(f"{source}:{line}: duplicate id '{name}'")
        seen.add(name)
        buffers.append(Buffer(name, size, lower, upper - 1, alignment))
    return buffers


def format_minimalloc_csv(buffers: Sequence[Buffer], plan: Plan, with_pool: bool) -> str:
    """The solution as CSV: ``id,lower,upper,size,offset[,pool]`` (half-open again)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*REQUIRED_COLUMNS, "offset"] + (["pool"] if with_pool else []))
    for b in buffers:
        pool, offset = plan.offsets[b.name]
        writer.writerow([b.name, b.start, b.end + 1, b.size, offset] + ([pool] if with_pool else []))
    return out.getvalue()
