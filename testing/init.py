"""Parameter initialisers for the built-in workloads, as ``tvm.relay.testing.init``.

An initializer is called with a parameter's name and an array to fill; it dispatches on the
name's suffix like Relay's ``Initializer``: ``*weight`` -> ``_init_weight`` (Xavier by
default), ``*bias`` / ``*beta`` / ``*mean`` -> 0, ``*gamma`` / ``*var`` -> 1. Randomness comes
from a ``numpy.random.Generator`` so workloads are reproducible from a seed.
"""

from __future__ import annotations

import abc

import numpy as np

from xrelay.dialects.relay import numpy_dtype
from xrelay.relay import IRModule
from xrelay.relay.expr import Expr, Function
from xrelay.transforms.infra import mark_types_inferred

__all__ = ["Constant", "Initializer", "Xavier", "create_workload"]


class Initializer(abc.ABC):
    """Fill parameters by name suffix; subclasses choose how weights are drawn."""

    def __init__(self, rng: np.random.Generator | int | None = None):
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def __call__(self, name: str, arr: np.ndarray) -> None:
        if name.endswith("weight"):
            self._init_weight(name, arr)
        elif name.endswith(("bias", "beta", "mean")):
            arr[...] = 0
        elif name.endswith(("gamma", "var")):
            arr[...] = 1
        else:
            self._init_default(name, arr)

    @abc.abstractmethod
    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        """Fill a ``*weight`` parameter (the subclass's distribution)."""

    def _init_default(self, name: str, arr: np.ndarray) -> None:
        raise ValueError(
            f"unknown parameter '{name}': its name must end in weight, bias, gamma, beta, "
            "mean or var"
        )


class Xavier(Initializer):
    """Xavier/Glorot initialisation (Relay's defaults: uniform, fan average, magnitude 3).

    ``scale = sqrt(magnitude / factor)`` where factor is fan_in, fan_out or their average;
    fan_in = shape[1] * prod(shape[2:]) and fan_out = shape[0] * prod(shape[2:]).
    """

    def __init__(
        self,
        rnd_type: str = "uniform",
        factor_type: str = "avg",
        magnitude: float = 3,
        rng: np.random.Generator | int | None = None,
    ):
        super().__init__(rng)
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError(f"unknown rnd_type '{rnd_type}' (uniform or gaussian)")
        if factor_type not in ("avg", "in", "out"):
            raise ValueError(f"unknown factor_type '{factor_type}' (avg, in or out)")
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f"Xavier needs a weight of rank >= 2, '{name}' has shape {shape}")
        receptive = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * receptive, shape[0] * receptive
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            arr[...] = self.rng.uniform(-scale, scale, shape)
        else:
            arr[...] = self.rng.normal(0, scale, shape)


class Constant(Initializer):
    """Every weight set to ``value`` (for tests that want exact numbers)."""

    def __init__(self, value: float = 0.0):
        super().__init__(None)
        self.value = value

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        arr[...] = self.value


def create_workload(
    net: Expr, initializer: Initializer | None = None, seed: int = 0
) -> tuple[IRModule, dict[str, np.ndarray]]:
    """``(mod, params)``: ``net`` as ``main`` and an array for every parameter but ``data``.

    Arrays are filled by name suffix (see ``xrelay.testing.init``), in parameter order, from
    ``numpy.random.default_rng(seed)`` unless ``initializer`` brings its own generator.
    """
    mod = IRModule.from_expr(net)
    mark_types_inferred(mod.module)  # Relay's create_workload runs InferType
    fn = net if isinstance(net, Function) else mod["main"]
    if initializer is None:
        initializer = Xavier(rng=np.random.default_rng(seed))
    params: dict[str, np.ndarray] = {}
    for p in fn.params:
        if p.name_hint == "data":
            continue
        t = p.checked_type
        arr = np.zeros(tuple(t.get_shape()), dtype=numpy_dtype(t))
        initializer(p.name_hint, arr)
        params[p.name_hint] = arr
    return mod, params
