"""``tvm.relay.prelude``: Relay's Prelude, the standard ``List``, ``Option`` and ``Tree`` types
and the functions on them, read from ``relay/std/prelude.rly`` (docs/design.md, decision 9).

xrelay's Prelude has Relay's first-order functions (``hd``, ``tl``, ``nth``, ``update``,
``length``, ``concat``, ``sum``, ``id``) and its higher-order ones (``map``, ``foldl``,
``foldr``, ``foldr1``, ``filter``, ``rev``, ``compose``, ``flip``, ``iterate``, ``tmap``,
``size``; functions are values, closures). Those whose values hold tuples (``zip``,
``map_accuml``, ``map_accumr``, ``unfoldl``, ``unfoldr``) are not there: a tuple is several
values in xrelay's IR (docs/design.md, decision 3), so a list cannot hold one; asking for one
raises naming it. Relay's tensor-array functions (``get_global_var("tensor_array", "int32")``)
are not built either.
"""

from __future__ import annotations

from typing import Any

from xrelay.error import TVMError
from xrelay.relay.module import IRModule

__all__ = ["Prelude", "PreludeError", "StaticTensorArrayOps"]


class PreludeError(TVMError):
    """A part of Relay's Prelude xrelay refuses by design: the functions whose values hold
    tuples (a tuple is several values, docs/design.md decision 3) and the tensor arrays."""

_TUPLE_VALUED = ("zip", "map_accuml", "map_accumr", "unfoldl", "unfoldr")


class Prelude:
    """The Prelude added to ``mod`` (a new module when None), as ``tvm.relay.prelude.Prelude``:
    ``p.mod.get_type("List")`` is ``(List, Cons, Nil)``, ``p.mod.get_global_var("hd")`` the
    function; the names are also attributes (``p.hd``, ``p.Cons``, ``p.List``)."""

    def __init__(self, mod: IRModule | None = None) -> None:
        self.mod = mod if mod is not None else IRModule()
        self.mod.import_from_std("prelude.rly")
        for gtv, td in self.mod.type_definitions.items():
            setattr(self, gtv.name_hint, gtv)
            for c in td.constructors:
                setattr(self, c.name_hint, c)
        for gv in self.mod.get_global_vars():
            setattr(self, gv.name_hint, gv)

    def __getattr__(self, name: str) -> Any:
        # only called for names not set in __init__: Relay's tuple-valued functions
        if name in _TUPLE_VALUED:
            return _TupleValued(name)
        raise AttributeError(f"'Prelude' object has no attribute '{name}'")

    @staticmethod
    def _no_dtype(name: str, dtype: Any) -> None:
        if dtype is not None:
            raise PreludeError(
                f"Prelude: {name} for dtype {dtype}: Relay's tensor-array functions are not built by xrelay"
            )

    def get_name(self, canonical: str, dtype: Any = None) -> str:
        """The name of ``canonical`` in the module (Relay adds ``_<dtype>`` for tensor arrays)."""
        self._no_dtype(canonical, dtype)
        return canonical

    def get_global_var(self, canonical: str, dtype: Any = None) -> Any:
        """The GlobalVar of the Prelude function ``canonical``."""
        self._no_dtype(canonical, dtype)
        if canonical in _TUPLE_VALUED:
            _TupleValued(canonical)()
        return self.mod.get_global_var(canonical)

    def get_type(self, canonical: str, dtype: Any = None) -> Any:
        """The GlobalTypeVar of the Prelude type ``canonical``."""
        self._no_dtype(canonical, dtype)
        return self.mod.get_global_type_var(canonical)

    def get_ctor(self, ty_name: str, canonical: str, dtype: Any = None) -> Any:
        """The constructor ``canonical`` of type ``ty_name``."""
        self._no_dtype(canonical, dtype)
        for c in self.mod.get_type(ty_name)[1:]:
            if c.name_hint == canonical:
                return c
        raise ValueError(f"type {ty_name} has no constructor {canonical}")


class _TupleValued:
    """``p.zip`` and Relay's other Prelude functions on lists of tuples: calling one says why
    it is not there."""

    def __init__(self, name: str) -> None:
        self.name_hint = name

    def __call__(self, *args: Any) -> Any:
        raise PreludeError(
            f"Prelude: @{self.name_hint} builds or takes lists of tuples, and a tuple is several "
            "values in xrelay's IR, never one value a list holds (docs/design.md, decisions 3 and 9)"
        )

    def __repr__(self) -> str:
        return f"<Relay's @{self.name_hint}: not in xrelay's Prelude (lists of tuples)>"


class StaticTensorArrayOps:
    """Relay's tensor arrays of a static shape: not built by xrelay (its Prelude has no tensor
    arrays); constructing one raises."""

    def __init__(self, prelude: Prelude, dtype: str, shape: Any, batch_dim: Any = None) -> None:
        raise PreludeError(
            "relay.prelude.StaticTensorArrayOps: Relay's tensor-array functions are not built by xrelay"
        )
