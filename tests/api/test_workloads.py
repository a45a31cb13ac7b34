"""Built-in workloads: structure, names, parameter initialisation, text round trips."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.dialects.relay import tensor_type
from xrelay.testing import count_ops, create_workload, mlp, mobilenet, resnet

# names printed by tvm.relay.testing.resnet for ResNet-18 (seed 001), in parameter order
_SEED_R18_PREFIX = (
    "data bn_data_gamma bn_data_beta bn_data_moving_mean bn_data_moving_var conv0_weight "
    "bn0_gamma bn0_beta bn0_moving_mean bn0_moving_var stage1_unit1_bn1_gamma "
    "stage1_unit1_bn1_beta stage1_unit1_bn1_moving_mean stage1_unit1_bn1_moving_var "
    "stage1_unit1_conv1_weight stage1_unit1_bn2_gamma stage1_unit1_bn2_beta "
    "stage1_unit1_bn2_moving_mean stage1_unit1_bn2_moving_var stage1_unit1_conv2_weight "
    "stage1_unit1_sc_weight stage1_unit2_bn1_gamma"
).split()


@pytest.fixture(scope="module")
def r18():
    return resnet.get_workload(num_layers=18)


def _expected_counts(units: list[int], bottleneck: bool, imagenet_stem: bool) -> dict[str, int]:
    """Op counts derived from the structure (docs/relay-semantics.md §7)."""
    n_units = sum(units)
    per_unit = 3 if bottleneck else 2
    stages = len(units)
    return {
        # bn_data + (bn0) + per-unit bns + tail bn1
        "nn.batch_norm": 1 + int(imagenet_stem) + per_unit * n_units + 1,
        # conv0 + per-unit convs + one shortcut conv per stage (its first unit)
        "nn.conv2d": 1 + per_unit * n_units + stages,
        "add": n_units,
        "nn.relu": int(imagenet_stem) + per_unit * n_units + 1,
        "nn.max_pool2d": int(imagenet_stem),
        "nn.dense": 1,
        "nn.bias_add": 1,
        "nn.softmax": 1,
        "nn.global_avg_pool2d": 1,
        "nn.batch_flatten": 1,
    }


def test_resnet18_op_counts(r18):
    mod, _ = r18
    counts = {k: v for k, v in count_ops(mod).items()}
    want = _expected_counts([2, 2, 2, 2], bottleneck=False, imagenet_stem=True)
    assert counts == {k: v for k, v in want.items() if v}
    assert want["nn.batch_norm"] == 19 and want["nn.conv2d"] == 21 and want["add"] == 8


def test_resnet18_params_names_and_types(r18):
    mod, params = r18
    main = mod["main"]
    names = [p.name_hint for p in main.params]
    assert names[: len(_SEED_R18_PREFIX)] == _SEED_R18_PREFIX
    assert names[-2:] == ["fc1_weight", "fc1_bias"]
    assert set(params) == set(names) - {"data"}
    assert params["conv0_weight"].shape == (64, 3, 7, 7)
    assert params["stage2_unit1_sc_weight"].shape == (128, 64, 1, 1)
    assert params["fc1_weight"].shape == (1000, 512)
    assert main.checked_type.ret_type == tensor_type((1, 1000), "float32")


def test_resnet18_structure_details(r18):
    mod, _ = r18
    text = mod.mlir_text()
    # bn_data has scale=false, epsilon 2e-5; conv0 is 7x7/2 with padding 3
    assert "relay.nn.batch_norm %data, %bn_data_gamma, %bn_data_beta, %bn_data_moving_mean, %bn_data_moving_var {epsilon = 2.0e-05, scale = false}" in text
    assert "{strides = [2, 2], padding = [3, 3, 3, 3], channels = 64, kernel_size = [7, 7]}" in text
    assert "relay.nn.max_pool2d" in text and "pool_size = [3, 3], strides = [2, 2], padding = [1, 1, 1, 1]" in text
    # the shortcut conv of stage 1 reads the pre-activated input, like conv1
    main = mod["main"]
    sc = next(
        n for n in relay.analysis.post_order(main)
        if isinstance(n, relay.Call) and n.op.name == "nn.conv2d" and n.args[1].name_hint == "stage1_unit1_sc_weight"
    )  # fmt: skip
    conv1 = next(
        n for n in relay.analysis.post_order(main)
        if isinstance(n, relay.Call) and n.op.name == "nn.conv2d" and n.args[1].name_hint == "stage1_unit1_conv1_weight"
    )  # fmt: skip
    assert sc.args[0] is conv1.args[0] and sc.args[0].op.name == "nn.relu"


def test_resnet18_text_round_trip(r18):
    mod, _ = r18
    text = mod.mlir_text()
    assert xrelay.IRModule.from_text(text).mlir_text() == text


def test_resnet50_bound_params_save_load_round_trip(tmp_path):
    mod, params = resnet.get_workload(num_layers=50)
    counts = count_ops(mod)
    want = _expected_counts([3, 4, 6, 3], bottleneck=True, imagenet_stem=True)
    assert counts["nn.batch_norm"] == want["nn.batch_norm"] == 51
    assert counts["nn.conv2d"] == want["nn.conv2d"] == 53
    assert counts["add"] == 16
    text = mod.mlir_text()
    assert xrelay.IRModule.from_text(text).mlir_text() == text
    mod["main"] = relay.bind_params_by_name(mod["main"], params)
    assert [p.name_hint for p in mod["main"].params] == ["data"]
    stored = mod.save(tmp_path / "r50.mlir", tmp_path / "r50.npz")
    assert set(stored) == set(params)
    text = (tmp_path / "r50.mlir").read_text()
    assert "relay.constant @stage4_unit3_conv3_weight : tensor<2048x512x1x1xf32>" in text
    loaded = xrelay.IRModule.load(tmp_path / "r50.mlir", tmp_path / "r50.npz")
    loaded.save(tmp_path / "again.mlir", tmp_path / "again.npz")
    assert (tmp_path / "again.mlir").read_text() == text
    with np.load(tmp_path / "again.npz") as again:
        for name in ("conv0_weight", "fc1_weight", "stage3_unit6_bn2_gamma"):
            assert np.array_equal(again[name], params[name])
    elided = mod.mlir_text(elide_large_constants=64)
    assert "relay.constant @conv0_weight dense_resource<__elided__> : tensor<64x3x7x7xf32>" in elided


def test_params_initialised_by_suffix_and_deterministic(r18):
    _, params = r18
    assert np.all(params["bn0_gamma"] == 1) and np.all(params["bn0_beta"] == 0)
    assert np.all(params["bn0_moving_mean"] == 0) and np.all(params["bn0_moving_var"] == 1)
    assert np.all(params["fc1_bias"] == 0)
    w = params["conv0_weight"]
    fan_in, fan_out = 3 * 49, 64 * 49
    scale = np.sqrt(3.0 / ((fan_in + fan_out) / 2))
    assert np.abs(w).max() <= scale and np.abs(w).max() > 0.95 * scale
    assert w.dtype == np.float32
    _, same = resnet.get_workload(num_layers=18, num_classes=10)
    _, other = resnet.get_workload(num_layers=18, num_classes=10, seed=1)
    assert np.array_equal(same["conv0_weight"], w)
    assert not np.array_equal(other["conv0_weight"], w)


def test_cifar_resnet_uses_three_stages_and_small_stem():
    mod, params = resnet.get_workload(num_layers=20, image_shape=(3, 28, 28), num_classes=10)
    counts = count_ops(mod)
    want = _expected_counts([3, 3, 3], bottleneck=False, imagenet_stem=False)
    assert counts == {k: v for k, v in want.items() if v}
    assert params["conv0_weight"].shape == (16, 3, 3, 3)
    assert "stage4_unit1_bn1_gamma" not in params


def test_resnet_nhwc_uses_hwio_kernels():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(224, 224, 3), layout="NHWC", num_classes=10)
    assert params["conv0_weight"].shape == (7, 7, 3, 64)
    assert params["bn0_gamma"].shape == (64,)
    assert mod["main"].checked_type.ret_type == tensor_type((1, 10), "float32")


def test_resnet_rejects_unknown_depth():
    with pytest.raises(ValueError, match="19 layers"):
        resnet.get_workload(num_layers=19)


def test_mobilenet_structure():
    mod, params = mobilenet.get_workload(batch_size=2, num_classes=10)
    counts = count_ops(mod)
    assert counts["nn.conv2d"] == 27 and counts["nn.batch_norm"] == 27
    assert params["separable_conv_block_1_depthwise_conv1_weight"].shape == (32, 1, 3, 3)
    assert params["separable_conv_block_13_conv2_weight"].shape == (1024, 1024, 1, 1)
    assert params["fc_weight"].shape == (10, 1024)
    main = mod["main"]
    assert main.checked_type.ret_type == tensor_type((2, 10), "float32")
    text = mod.mlir_text()
    assert "groups = 32" in text and "groups = 1024" in text


def test_mobilenet_nhwc():
    mod, params = mobilenet.get_workload(image_shape=(224, 224, 3), layout="NHWC", num_classes=5)
    assert params["separable_conv_block_1_depthwise_conv1_weight"].shape == (3, 3, 32, 1)
    assert mod["main"].checked_type.ret_type == tensor_type((1, 5), "float32")


def test_mlp_workload():
    mod, params = mlp.get_workload(batch_size=4)
    assert [p.name_hint for p in mod["main"].params] == [
        "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias",
    ]  # fmt: skip
    assert params["fc1_weight"].shape == (128, 784)
    assert mod["main"].checked_type.ret_type == tensor_type((4, 10), "float32")
    assert count_ops(mod) == {"nn.batch_flatten": 1, "nn.dense": 3, "nn.bias_add": 3, "nn.relu": 2, "nn.softmax": 1}


def test_create_workload_with_custom_initializer():
    from xrelay.testing.init import Constant

    x = relay.var("data", shape=(1, 4))
    w = relay.var("w_weight", shape=(2, 4))
    net = relay.nn.dense(x, w)
    mod, params = create_workload(net, Constant(0.5))
    assert list(params) == ["w_weight"] and np.all(params["w_weight"] == 0.5)
    bad = relay.nn.relu(relay.var("thing", shape=(2,)))
    with pytest.raises(ValueError, match="unknown parameter 'thing'"):
        create_workload(bad)
