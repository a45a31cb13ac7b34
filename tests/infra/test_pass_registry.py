"""The explicit pass registry (``xrelay.transforms.PASSES``) and Relay's PassInfo levels."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from xdsl.passes import ModulePass

import xrelay.transforms as transforms
from xrelay.transforms import PASSES, get_all_passes
from xrelay.transforms.fuse_ops import FuseOpsPass
from xrelay.transforms.infra import PassContext, Sequential, as_pass, pass_info_of


@pytest.mark.parametrize("cli_name", sorted(PASSES))
def test_every_registered_pass_loads_from_the_file_named_after_it(cli_name):
    cls = get_all_passes()[cli_name]()
    assert cls.name == cli_name
    assert cls.__module__ == "xrelay.transforms." + cli_name.replace("-", "_")


def test_every_pass_class_is_registered():
    defined = {}
    for info in pkgutil.iter_modules(transforms.__path__):
        module = importlib.import_module(f"xrelay.transforms.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, ModulePass)
                and value.__module__ == module.__name__
                and isinstance(getattr(value, "name", None), str)
            ):
                defined[value.name] = f"{info.name}.{value.__name__}"
    missing = {k: v for k, v in defined.items() if PASSES.get(k) != v}
    assert not missing, f"add these lines to PASSES in transforms/__init__.py: {missing}"


def test_upstream_passes_are_offered_too():
    passes = get_all_passes()
    assert {"cse", "dce", "canonicalize"} <= set(passes)
    assert passes["cse"]().name == "cse"


def test_relay_opt_level_is_the_pass_info_level_when_the_pass_has_an_opt_level_option():
    # FuseOps: PassInfo opt_level 0 (Relay's), its own option opt_level (fuse_opt_level) -1
    assert FuseOpsPass.relay_opt_level == 0
    assert FuseOpsPass().opt_level == -1
    assert FuseOpsPass(opt_level=3).opt_level == 3
    info = pass_info_of(FuseOpsPass)
    assert (info.name, info.opt_level) == ("FuseOps", 0)
    # so a Sequential at opt_level 0 runs it, whatever its option says
    ran = []

    class Spy:
        def run_before_pass(self, mod, info):
            ran.append(info.name)

    from xrelay.instrument import pass_instrument

    with PassContext(opt_level=0, instruments=[pass_instrument(Spy)()]):
        from xdsl.dialects.builtin import ModuleOp

        Sequential([as_pass(FuseOpsPass(opt_level=2))])(ModuleOp([]))
    assert "FuseOps" in ran
