"""The parser's cache of op signatures stays bounded in a process that parses many modules."""

from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.dialects.relay import base


def _zeros(sizes, pad: int = 0) -> str:
    lines = [
        f'  %z{n} = relay.zeros {{shape = [{n}], dtype = "float32"}} : (){" " * pad} -> tensor<{n}xf32>'
        for n in sizes
    ]
    return "func.func @main() {\n" + "\n".join(lines) + "\n  func.return\n}\n"


def test_distinct_signatures_do_not_grow_the_cache_past_its_bound():
    base._TYPE_CACHE.clear()
    sizes = range(1, base._TYPE_CACHE_ENTRIES + 1000)
    module = Parser(make_context(), _zeros(sizes)).parse_module()
    assert 0 < len(base._TYPE_CACHE) <= base._TYPE_CACHE_ENTRIES
    # the cache changes nothing but speed: every op still has its own type
    types = [op.results[0].type for op in module.walk() if op.name == "relay.zeros"]
    assert [t.get_shape() for t in types] == [(n,) for n in sizes]


def test_long_signatures_are_parsed_but_not_kept():
    base._TYPE_CACHE.clear()
    module = Parser(make_context(), _zeros([7], pad=base._TYPE_CACHE_KEY_CHARS)).parse_module()
    assert [op.results[0].type.get_shape() for op in module.walk() if op.name == "relay.zeros"] == [(7,)]
    assert not base._TYPE_CACHE
    Parser(make_context(), _zeros([7])).parse_module()
    assert len(base._TYPE_CACHE) == 1
