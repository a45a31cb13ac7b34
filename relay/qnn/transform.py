"""``relay.qnn.transform``: the qnn lowering passes by their Relay names."""

from __future__ import annotations

from typing import Any

from xrelay.relay.transform import _lookup_factory


def CanonicalizeOps() -> Any:  # noqa: N802 - Relay's name
    """Relay's ``qnn.transform.CanonicalizeOps``: every qnn op to integer relay ops."""

    return _lookup_factory("QnnCanonicalize")()


def Legalize() -> Any:  # noqa: N802 - Relay's name
    """Relay's ``qnn.transform.Legalize``: target rewrites of qnn ops before canonicalization."""

    return _lookup_factory("QnnLegalize")()
