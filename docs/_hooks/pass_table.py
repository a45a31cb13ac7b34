"""A mkdocs hook: ``<!-- pass-options -->`` in a page becomes the table of every registered
pass with its Relay name, opt level and options (defaults), read from the pass registry when
the guide is built, so the table cannot fall behind the code."""

from __future__ import annotations

import dataclasses
from typing import Any

MARKER = "<!-- pass-options -->"


def _default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "(required)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(map(str, value)) or "(none)"
    return "(none)" if value is None else str(value)


def pass_options_table() -> str:
    from xrelay.transforms.infra import pass_info_of, registered_pass_classes, relay_name_of

    rows = ["| CLI name | Relay name | opt level | options (default) |", "|---|---|---|---|"]
    for name, cls in sorted(registered_pass_classes().items()):
        info = pass_info_of(cls)
        fields = [f for f in dataclasses.fields(cls) if f.init] if dataclasses.is_dataclass(cls) else []
        options = ", ".join(f"`{f.name.replace('_', '-')}={_default(f)}`" for f in fields) or "–"
        rows.append(f"| `{name}` | {relay_name_of(cls)} | {info.opt_level} | {options} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return markdown.replace(MARKER, pass_options_table()) if MARKER in markdown else markdown
