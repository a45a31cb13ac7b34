"""plan-devices on TVM's own text: cases of test_pass_plan_devices.py with their Relay text and
meta table verbatim (``tvm.relay.parse(text, "from_string", None, metatable)``), and the
printed form of a planned module parsed back.

test_let_on_cpu and test_tuple_get_item are TVM's as written, lets included: Relay wraps
every let-bound value in a fixed on_device (``let %l = on_device(add(%a, %b), ...)``) and
copies a let-bound variable without wrapping it again, but wraps a projection of a let-bound
tuple (``%t.0``) before its copy. Each also runs before and after (TVM's ``ref``)."""

from __future__ import annotations

import xrelay as tvm
from xrelay import relay
from xrelay.dialects import module_op
from xrelay.dialects.relay.device_analysis import function_devices, functions_by_name
from xrelay.relay.parser import parse
from xrelay.relay.text_printer import astext
from xrelay.testing.semantics import check_semantics
from xrelay.testing.structural import assert_structural_equal

CPU = tvm.VirtualDevice("cpu", target="llvm")  # device_type=1
GPU = tvm.VirtualDevice("cuda", target="cuda")  # device_type=2
METATABLE = {"VirtualDevice": [CPU, GPU]}


def _exercise(in_text, expected_text):
    actual = relay.transform.PlanDevices(GPU)(parse(in_text, "from_string", None, METATABLE))
    expected = parse(expected_text, "from_string", None, METATABLE)
    assert_structural_equal(actual, expected)
    assert str(actual) == str(expected)  # the device attributes too
    again = relay.transform.PlanDevices(GPU)(parse(expected_text, "from_string", None, METATABLE))
    assert str(again) == str(expected)
    return actual


def test_left_add_on_cpu():
    actual = _exercise(
        """
        #[version = "0.0.5"]
        def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32],
                  %c: Tensor[(5, 7), float32], %d: Tensor[(5, 7), float32]) {
          %0 = add(%a, %b);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
          %2 = add(%c, %d);
          subtract(%1, %2)
        }
        """,
        """
        #[version = "0.0.5"]
        def @main(%a {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32], %b {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32],
                  %c {virtual_device= meta[VirtualDevice][1]}: Tensor[(5, 7), float32], %d {virtual_device= meta[VirtualDevice][1]}: Tensor[(5, 7), float32],
                  virtual_device=meta[VirtualDevice][1]) {
          %0 = add(%a, %b);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          %2 = device_copy(%1, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          %3 = add(%c, %d);
          subtract(%2, %3)
        }
        """,
    )
    # the printed module (devices as VirtualDevice(...)) parses back to the same module
    back = parse(astext(module_op(actual)))
    assert str(back) == str(actual)


def test_global():
    _exercise(
        """
        #[version = "0.0.5"]
        def @f(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32]) -> Tensor[(5, 7), float32] {
          %0 = on_device(%b, virtual_device=meta[VirtualDevice][0]);
          add(%a, %0)
        }
        def @main(%x: Tensor[(5, 7), float32], %y: Tensor[(5, 7), float32]) -> Tensor[(5, 7), float32] {
          @f(%y, %x)
        }
        """,
        """
        #[version = "0.0.5"]
        def @f(%a {virtual_device=meta[VirtualDevice][1]}: Tensor[(5, 7), float32], %b {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32],
               virtual_device=meta[VirtualDevice][1]) -> Tensor[(5, 7), float32] {
          %0 = device_copy(%b, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          add(%a, %0)
        }
        def @main(%x {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32], %y {virtual_device=meta[VirtualDevice][1]}: Tensor[(5, 7), float32],
                  virtual_device=meta[VirtualDevice][1]) -> Tensor[(5, 7), float32] {
          @f(%y, %x)
        }
        """,
    )


def test_propogation():
    _exercise(
        """
        #[version = "0.0.5"]
        def @main(%x: Tensor[(5, 7), float32]) {
          %0 = negative(%x);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
          %2 = negative(%1);
          %3 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
          %4 = negative(%3);
          %5 = on_device(%2, virtual_device=meta[VirtualDevice][1]);
          %6 = on_device(%4, virtual_device=meta[VirtualDevice][1]);
          %7 = add(%5, %6);
          %8 = on_device(%7, virtual_device=meta[VirtualDevice][1]);
          %9 = negative(%8);
          on_device(%9, virtual_device=meta[VirtualDevice][0])
        }
        """,
        """
        #[version = "0.0.5"]
        def @main(%x {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32],
                  virtual_device=meta[VirtualDevice][0]) {
          %0 = negative(%x);
          %1 = on_device(%0, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          %2 = device_copy(%1, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          %3 = on_device(%0, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          %4 = device_copy(%3, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          %5 = negative(%2);
          %6 = negative(%4);
          %7 = add(%5, %6);
          %8 = on_device(%7, virtual_device=meta[VirtualDevice][1], constrain_result=True);
          %9 = device_copy(%8, src_virtual_device=meta[VirtualDevice][1], dst_virtual_device=meta[VirtualDevice][0]);
          negative(%9)
        }
        """,
    )


def test_let_on_cpu():
    # The device for a let-bound expression can flow from uses of the let-bound var.
    in_text = """
        #[version = "0.0.5"]
        def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32],
                  %c: Tensor[(5, 7), float32], %d: Tensor[(5, 7), float32]) {
          let %l = add(%a, %b);
          let %r = add(%c, %d);
          %0 = on_device(%l, virtual_device=meta[VirtualDevice][0]);
          subtract(%0, %r)
        }
    """
    _exercise(
        in_text,
        """
        #[version = "0.0.5"]
        def @main(%a {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32], %b {virtual_device=meta[VirtualDevice][0]}: Tensor[(5, 7), float32],
                  %c {virtual_device=meta[VirtualDevice][1]}: Tensor[(5, 7), float32], %d {virtual_device=meta[VirtualDevice][1]}: Tensor[(5, 7), float32],
                  virtual_device=meta[VirtualDevice][1]) {
          %0 = add(%a, %b);
          let %l = on_device(%0, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          let %r = on_device(add(%c, %d), virtual_device=meta[VirtualDevice][1], constrain_result=True);
          %1 = device_copy(%l, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          subtract(%1, %r)
        }
        """,
    )
    check_semantics(relay.transform.PlanDevices(GPU), parse(in_text, "from_string", None, METATABLE))


def test_tuple_get_item():
    # Note that the device copy should be placed after projection rather than before. This is
    # handled by a heuristic in the pass.
    in_text = """
        #[version = "0.0.5"]
        def @main(%x: Tensor[(3, 3, 4), float32]) {
          let %t = split(%x, indices_or_sections=3);
          %0 = on_device(%t, virtual_device=meta[VirtualDevice][0]);
          %1 = on_device(%t, virtual_device=meta[VirtualDevice][0]);
          %2 = %0.0;
          %3 = %1.1;
          %4 = subtract(%2, %3);
          on_device(%4, virtual_device=meta[VirtualDevice][1])
        }
    """
    _exercise(
        in_text,
        """
        #[version = "0.0.5"]
        def @main(%x {virtual_device=meta[VirtualDevice][0]}: Tensor[(3, 3, 4), float32],
                  virtual_device=meta[VirtualDevice][1]) {
          %0 = split(%x, indices_or_sections=3);
          let %t = on_device(%0, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          %1 = %t.0;
          %2 = on_device(%1, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          %3 = %t.1;
          %4 = on_device(%3, virtual_device=meta[VirtualDevice][0], constrain_result=True);
          %5 = device_copy(%2, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          %6 = device_copy(%4, src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][1]);
          subtract(%5, %6)
        }
        """,
    )
    check_semantics(relay.transform.PlanDevices(GPU), parse(in_text, "from_string", None, METATABLE))


def test_primitive():
    """Annotations on Primitive functions should be accepted, even though the body
    of the Primitive function is not considered during PlanDevices."""
    global_virtual_device = tvm.VirtualDevice(memory_scope="global")
    texture_virtual_device = tvm.VirtualDevice(memory_scope="global.texture")
    metatable = {
        "VirtualDevice": [
            global_virtual_device,
            texture_virtual_device,
        ]
    }

    mod = parse(
        """
        #[version = "0.0.5"]
        def @main(%data1: Tensor[(1, 32, 40, 40), float32],
                  %data2: Tensor[(1, 32, 40, 40), float32]) {
          %0 = fn (%a, Primitive=1) {
            layout_transform(%a, src_layout="NCHW", dst_layout="NCHW4c")
          };
          %1 = %0(%data1);
          %3 = %0(%data2);
          %5 = fn (%a {virtual_device=meta[VirtualDevice][0]},  // global
                   %b {virtual_device=meta[VirtualDevice][0]},  // global
                   virtual_device=meta[VirtualDevice][1],       // texture
                   Primitive=1) {
            add(%a, %b)
          };
          %6 = %5(%1, %3);
          %10 = fn (%a,
                    virtual_device=meta[VirtualDevice][0],      // global
                    Primitive=1) {
            layout_transform(%a, src_layout="NCHW4c", dst_layout="NCHW")
          };
          %10(%6)
        }
        """,
        "from_string",
        None,
        metatable,
    )
    primitives = {n: str(f) for n, f in functions_by_name(module_op(mod)).items() if n != "main"}
    # PlanDevices should succeed.
    mod = relay.transform.PlanDevices(GPU)(mod)
    # (beyond TVM, which only prints the result) the primitive functions are left as they
    # were, annotations included, and @main now carries its planned devices
    planned = functions_by_name(module_op(mod))
    assert {n: str(f) for n, f in planned.items() if n != "main"} == primitives
    params, result = function_devices(planned["main"])
    assert len(params) == 2 and not result.is_fully_unconstrained()
