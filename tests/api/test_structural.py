"""xrelay.testing.structural: the comparison the ported TVM tests rely on can fail."""

from __future__ import annotations

import pytest

from xrelay import relay
from xrelay.testing.structural import assert_structural_equal, structural_equal


def _fn(build):
    x = relay.var("x", shape=(2, 3))
    y = relay.var("y", shape=(2, 3))
    return relay.Function([x, y], build(x, y))


def test_names_and_print_order_do_not_matter():
    a = _fn(lambda x, y: relay.Tuple((relay.exp(x), relay.log(y))))
    x2 = relay.var("p", shape=(2, 3))
    y2 = relay.var("q", shape=(2, 3))
    log = relay.log(y2)  # built first: printed first
    b = relay.Function([x2, y2], relay.Tuple((relay.exp(x2), log)))
    assert_structural_equal(a, b)


@pytest.mark.parametrize(
    ("other", "why"),
    [
        (lambda x, y: relay.add(y, x), "sharing differs"),
        (lambda x, y: relay.subtract(x, y), "different ops"),
        (lambda x, y: relay.add(x, relay.const(1.0)), "a parameter against an op result"),
        (lambda x, y: relay.add(x, x), "sharing differs"),
    ],
)
def test_differences_are_named(other, why):
    a = _fn(lambda x, y: relay.add(x, y))
    with pytest.raises(AssertionError, match=why):
        assert_structural_equal(a, _fn(other))


def test_attributes_constants_and_sharing():
    two_exps = _fn(lambda x, y: relay.add(relay.exp(x), relay.exp(x)))

    def shared(x, y):
        e = relay.exp(x)
        return relay.add(e, e)

    assert not structural_equal(two_exps, _fn(shared))
    assert structural_equal(_fn(shared), _fn(shared))
    assert not structural_equal(
        _fn(lambda x, y: relay.sum(x, axis=0)), _fn(lambda x, y: relay.sum(x, axis=1))
    )
    assert not structural_equal(
        _fn(lambda x, y: relay.add(x, relay.const(1.0))), _fn(lambda x, y: relay.add(x, relay.const(2.0)))
    )
    assert structural_equal(
        _fn(lambda x, y: relay.add(x, relay.const(1.0))), _fn(lambda x, y: relay.add(x, relay.const(1.0)))
    )


def test_constants_compare_by_their_bytes_as_tvms_ndarray_equality():
    import numpy as np

    def with_const(values):
        return _fn(lambda x, y: relay.add(x, relay.const(np.array(values, dtype="float32"))))

    nan = float("nan")
    # the same NaN bits are equal (uninitialised arrays in TVM's test_defuse_complex hold NaNs)
    assert structural_equal(with_const([1.0, nan, 3.0]), with_const([1.0, nan, 3.0]))
    # 0.0 and -0.0 are different bytes, though numpy calls them equal
    assert not structural_equal(with_const([0.0, 1.0, 2.0]), with_const([-0.0, 1.0, 2.0]))
    assert not structural_equal(with_const([1.0, 2.0, 3.0]), with_const([1.0, 2.0, 4.0]))
