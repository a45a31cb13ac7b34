"""The real-model zoo: torchvision and Hugging Face architectures with random weights.

The one place that builds the models of ``benchmarks/zoo.py``, ``tests/extras`` and the
``torch.export`` frontend's checks, so all of them run the very same networks:

    from xrelay.testing import zoo
    module, args = zoo.torch_model("efficientnet_b0")   # torch.nn.Module in eval mode, inputs
    path = zoo.onnx_path("efficientnet_b0")              # exported once, then cached
    feeds = zoo.inputs("efficientnet_b0")                # {ONNX input name: numpy array}

Nothing is downloaded: torchvision builders get ``weights=None``, Hugging Face models are
built from a config object (``BertConfig()`` is bert-base), never ``from_pretrained``. Random
initialisation alone leaves a network whose output barely depends on its input (batch-norm
gammas of 1 and betas of 0, identity running statistics under weights drawn for training,
layer norms of 1 and 0, zero biases), and comparing such outputs tests nothing. So each
model is made *meaningful* by one general recipe (``randomize``):

1. every parameter or buffer whose elements are all equal (a constant the init left: norm
   scales and shifts, zero biases, layer scales) gets random values around its value;
2. batch-norm running statistics are measured on random images (cumulative average over
   ``CALIBRATION_BATCHES`` batches in training mode, then ``eval()``), so every normalised
   activation has unit scale whatever the random weights did upstream;
3. ``check_input_dependence`` requires that two different inputs give outputs that differ
   by at least 1 % of the output's magnitude (after the above, they differ by far more).

Export: torch's default ONNX exporter (``torch.onnx.export``, opset 20, one file, weights
inside), into ``$XRELAY_ZOO_CACHE`` (default ``~/.cache/xrelay-zoo``), outside the
repository, keyed by the model name, the seed and the versions of torch, torchvision and
transformers; written atomically. Without torch, an export that another environment cached
(another key) is used, with a warning, so the benchmarks run from a venv without the extra.
torch, torchvision and transformers come with the ``zoo`` extra (``pip install -e '.[zoo]'``,
``make venv-extras``) and are imported only when a model is built.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from xrelay.testing import zoo_nets

__all__ = [
    "EXTRA_MODELS",
    "MODELS",
    "ZooError",
    "ZooModel",
    "cache_dir",
    "check_input_dependence",
    "inputs",
    "onnx_model",
    "onnx_path",
    "randomize",
    "save_torch_export",
    "torch_model",
    "write_cached",
]

OPSET = 20
"""Opset of the exported files (torch's default exporter)."""

CALIBRATION_BATCHES = 4
"""Random-image batches (of 8) that measure the batch-norm running statistics."""

SEQ = 128
"""Sequence length of the transformer models."""

ZOO_VERSION = 1
"""Part of every cache key: bump it when a builder or the recipe changes what is exported."""


class ZooError(RuntimeError):
    """A zoo model cannot be built or exported (unknown name, missing extra, dead output)."""


@dataclass(frozen=True)
class ZooModel:
    """One architecture: how to build it and what it takes."""

    name: str
    kind: str
    """``"cnn"`` (one image ``[1, 3, size, size]``), ``"text"`` (token ids and a mask) or
    ``"signal"`` (one standard-normal tensor of ``shape``: audio, spectrogram frames)."""
    build: Callable[[], Any]
    """Returns the ``torch.nn.Module`` with its init's random weights (before ``randomize``)."""
    image: int = 224
    input_names: tuple[str, ...] = ("input",)
    description: str = ""
    seq: int = SEQ
    """Sequence length of a ``"text"`` model (CLIP's text tower has 77 positions)."""
    shape: tuple[int, ...] = ()
    """The input's shape of a ``"signal"`` model."""
    library: str = ""
    """A library beyond torch, torchvision and transformers whose version keys the cache
    (``"timm"``)."""


def _tv(fn: str, family: str = "", **kwargs: Any) -> Callable[[], Any]:
    """``torchvision.models[.family].fn(weights=None, **kwargs)``; a segmentation model
    (``family="segmentation"``, no backbone weights either) returns its ``"out"`` map."""

    def build() -> Any:
        import torchvision.models as tvm

        if family == "segmentation":
            return _Picked.wrap(tvm.segmentation.__dict__[fn](weights=None, weights_backbone=None, **kwargs), "out")
        return getattr(getattr(tvm, family) if family else tvm, fn)(weights=None, **kwargs)

    return build


class _Picked:
    """Wraps a model returning a dict so it returns one of its entries."""

    @staticmethod
    def wrap(model: Any, key: str) -> Any:
        import torch

        class Picked(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, x: Any) -> Any:
                return self.inner(x)[key]

        return Picked(model)


class _FirstOutput:
    """Wraps a Hugging Face model so it returns one tensor (``last_hidden_state`` or logits)."""

    @staticmethod
    def wrap(model: Any, key: str, names: tuple[str, ...] = ("input_ids", "attention_mask")) -> Any:
        """``forward(*args)`` calls the model with ``args`` as the keyword arguments ``names``
        (GPT-2's second positional parameter is its cache, not the mask)."""
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self, inner: Any) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, *args: Any) -> Any:
                return getattr(self.inner(**dict(zip(names, args))), key)

        return Wrapped(model)


def _hf(kind: str) -> Callable[[], Any]:
    def build() -> Any:
        import transformers as tf

        if kind == "bert_base":
            # BertConfig() is bert-base-uncased's shape: 12 layers, hidden 768, 12 heads
            cfg = tf.BertConfig(attn_implementation="eager")
            return _FirstOutput.wrap(tf.BertModel(cfg, add_pooling_layer=False), "last_hidden_state")
        if kind == "distilbert":
            cfg = tf.DistilBertConfig(attn_implementation="eager")
            return _FirstOutput.wrap(tf.DistilBertModel(cfg), "last_hidden_state")
        if kind == "vit_hf":
            # ViTConfig() is google/vit-base-patch16-224's shape
            cfg = tf.ViTConfig(attn_implementation="eager")
            return _FirstOutput.wrap(tf.ViTModel(cfg, add_pooling_layer=False), "last_hidden_state", ("pixel_values",))
        if kind == "gpt2":
            # GPT2Config() is gpt2 (small): 12 layers, hidden 768, 12 heads
            cfg = tf.GPT2Config(attn_implementation="eager", use_cache=False)
            return _FirstOutput.wrap(tf.GPT2Model(cfg), "last_hidden_state")
        raise ZooError(f"no Hugging Face builder '{kind}'")

    return build


def _hf_config(model: str, config: str, key: str = "last_hidden_state",
               names: tuple[str, ...] = ("input_ids", "attention_mask"), part: str = "",
               **settings: Any) -> Callable[[], Any]:
    """A Hugging Face model ``transformers.<model>(transformers.<config>(**settings))`` with
    eager attention, returning ``key`` of its output; ``part`` names a sub-module to keep
    (``"encoder"``: ``model.get_encoder()``)."""

    def build() -> Any:
        import transformers as tf

        cfg = getattr(tf, config)(**settings)
        cfg._attn_implementation = "eager"
        net = getattr(tf, model)(cfg)
        if part == "encoder":
            net = net.get_encoder()
        return _FirstOutput.wrap(net, key, names)

    return build


def _optical_flow(fn: str) -> Callable[[], Any]:
    """``torchvision.models.optical_flow.fn(weights=None)`` over one tensor of two frames
    stacked on the channels (``[1, 6, H, W]``: the zoo's models take one input); returns
    the last flow estimate."""

    def build() -> Any:
        import torch
        import torchvision.models as tvm

        class TwoFrames(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inner = getattr(tvm.optical_flow, fn)(weights=None)

            def forward(self, x: Any) -> Any:
                return self.inner(x[:, :3], x[:, 3:])[-1]

        return TwoFrames()

    return build


def _speech_rnn(kind: str) -> Callable[[], Any]:
    """A DeepSpeech2-style acoustic encoder (frames of 80 mel bins, batch first): two
    bidirectional ``torch.nn.GRU`` or ``LSTM`` layers of 256, a linear layer to 29 characters."""

    def build() -> Any:
        import torch

        class SpeechRNN(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                rnn = torch.nn.GRU if kind == "GRU" else torch.nn.LSTM
                self.rnn = rnn(80, 256, num_layers=2, bidirectional=True, batch_first=True)
                self.head = torch.nn.Linear(512, 29)

            def forward(self, x: Any) -> Any:
                return self.head(self.rnn(x)[0])

        return SpeechRNN()

    return build


def _timm(name: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        try:
            import timm
        except ImportError as e:
            raise ZooError("the timm models need timm: pip install -e '.[zoo]'") from e
        return timm.create_model(name, pretrained=False, **kwargs)

    return build


_TEXT = ("input_ids", "attention_mask")

MODELS: dict[str, ZooModel] = {
    m.name: m
    for m in [
        ZooModel("resnet18", "cnn", _tv("resnet18")),
        ZooModel("resnet50", "cnn", _tv("resnet50")),
        ZooModel("googlenet", "cnn", _tv("googlenet", aux_logits=False, init_weights=True)),
        ZooModel("inception_v3", "cnn", _tv("inception_v3", aux_logits=False, init_weights=True), image=299),
        ZooModel("regnet_y_400mf", "cnn", _tv("regnet_y_400mf")),
        ZooModel("mobilenet_v2", "cnn", _tv("mobilenet_v2")),
        ZooModel("mnasnet1_0", "cnn", _tv("mnasnet1_0")),
        ZooModel("densenet121", "cnn", _tv("densenet121")),
        ZooModel("shufflenet_v2_x1_0", "cnn", _tv("shufflenet_v2_x1_0")),
        ZooModel("squeezenet1_0", "cnn", _tv("squeezenet1_0")),
        ZooModel("mobilenet_v3_large", "cnn", _tv("mobilenet_v3_large")),
        ZooModel("efficientnet_b0", "cnn", _tv("efficientnet_b0")),
        ZooModel("convnext_tiny", "cnn", _tv("convnext_tiny")),
        ZooModel("swin_t", "cnn", _tv("swin_t")),
        ZooModel("vit_b_16", "cnn", _tv("vit_b_16")),
        ZooModel("vit_hf", "cnn", _hf("vit_hf"), input_names=("pixel_values",),
                 description="transformers ViTModel, ViTConfig() (vit-base-patch16-224)"),
        ZooModel("bert_base", "text", _hf("bert_base"), input_names=_TEXT,
                 description="transformers BertModel, BertConfig() (bert-base), seq 128"),
        ZooModel("distilbert", "text", _hf("distilbert"), input_names=_TEXT,
                 description="transformers DistilBertModel, DistilBertConfig(), seq 128"),
        ZooModel("gpt2", "text", _hf("gpt2"), input_names=_TEXT,
                 description="transformers GPT2Model, GPT2Config() (gpt2 small), seq 128"),
    ]
}  # fmt: skip
"""Every zoo model by name, in the order the benchmark prints them."""

_PIXELS = ("pixel_values",)
_SMALL_LLAMA = dict(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                    num_key_value_heads=4, max_position_embeddings=512)

EXTRA_MODELS: dict[str, ZooModel] = {
    m.name: m
    for m in [
        # torchvision
        ZooModel("resnext50_32x4d", "cnn", _tv("resnext50_32x4d")),
        ZooModel("wide_resnet50_2", "cnn", _tv("wide_resnet50_2")),
        ZooModel("vgg11_bn", "cnn", _tv("vgg11_bn")),
        ZooModel("alexnet", "cnn", _tv("alexnet")),
        ZooModel("efficientnet_v2_s", "cnn", _tv("efficientnet_v2_s")),
        ZooModel("efficientnet_b3", "cnn", _tv("efficientnet_b3")),
        ZooModel("regnet_x_400mf", "cnn", _tv("regnet_x_400mf")),
        ZooModel("mobilenet_v3_small", "cnn", _tv("mobilenet_v3_small")),
        ZooModel("shufflenet_v2_x0_5", "cnn", _tv("shufflenet_v2_x0_5")),
        ZooModel("squeezenet1_1", "cnn", _tv("squeezenet1_1")),
        ZooModel("mnasnet0_5", "cnn", _tv("mnasnet0_5")),
        ZooModel("maxvit_t", "cnn", _tv("maxvit_t")),
        ZooModel("swin_v2_t", "cnn", _tv("swin_v2_t")),
        ZooModel("convnext_small", "cnn", _tv("convnext_small")),
        ZooModel("vit_b_32", "cnn", _tv("vit_b_32")),
        # Hugging Face transformers, from config objects
        ZooModel("roberta", "text", _hf_config("RobertaModel", "RobertaConfig", add_pooling_layer=False),
                 input_names=_TEXT, description="RobertaModel, RobertaConfig() (roberta-base), seq 128"),
        ZooModel("albert", "text", _hf_config("AlbertModel", "AlbertConfig", hidden_size=768, num_attention_heads=12,
                                               intermediate_size=3072),
                 input_names=_TEXT, description="AlbertModel, albert-base's shape, seq 128"),
        ZooModel("electra", "text", _hf_config("ElectraModel", "ElectraConfig"),
                 input_names=_TEXT, description="ElectraModel, ElectraConfig() (electra-small), seq 128"),
        ZooModel("deberta_v2", "text", _hf_config("DebertaV2Model", "DebertaV2Config", hidden_size=768,
                                                   num_hidden_layers=6, num_attention_heads=12, intermediate_size=3072),
                 input_names=_TEXT, description="DebertaV2Model, hidden 768, 6 layers, seq 128"),
        ZooModel("t5_encoder", "text", _hf_config("T5EncoderModel", "T5Config"),
                 input_names=_TEXT, description="T5EncoderModel, T5Config() (t5-small), seq 128"),
        ZooModel("bart_encoder", "text", _hf_config("BartModel", "BartConfig", part="encoder", d_model=768,
                                                     encoder_layers=6, encoder_attention_heads=12,
                                                     encoder_ffn_dim=3072),
                 input_names=_TEXT, description="BartModel's encoder, bart-base's shape, seq 128"),
        ZooModel("gpt_neo", "text", _hf_config("GPTNeoModel", "GPTNeoConfig", hidden_size=768, num_layers=12,
                                                num_heads=12, attention_types=[[["global", "local"], 6]],
                                                window_size=64, use_cache=False),
                 input_names=_TEXT, description="GPTNeoModel, gpt-neo-125M's shape (local window 64), seq 128"),
        ZooModel("opt", "text", _hf_config("OPTModel", "OPTConfig", use_cache=False),
                 input_names=_TEXT, description="OPTModel, OPTConfig() (opt-125m), seq 128"),
        ZooModel("llama_small", "text", _hf_config("LlamaModel", "LlamaConfig", use_cache=False, **_SMALL_LLAMA),
                 input_names=_TEXT, description="LlamaModel, hidden 512, 4 layers, 8 heads, 4 KV heads, seq 128"),
        ZooModel("clip_text", "text", _hf_config("CLIPTextModel", "CLIPTextConfig"), seq=77,
                 input_names=_TEXT, description="CLIPTextModel, CLIPTextConfig() (ViT-B/32's text tower), seq 77"),
        ZooModel("clip_vision", "cnn", _hf_config("CLIPVisionModel", "CLIPVisionConfig", names=_PIXELS),
                 input_names=_PIXELS, description="CLIPVisionModel, CLIPVisionConfig() (ViT-B/32)"),
        ZooModel("deit", "cnn", _hf_config("DeiTModel", "DeiTConfig", names=_PIXELS, add_pooling_layer=False),
                 input_names=_PIXELS, description="DeiTModel, DeiTConfig() (deit-base)"),
        ZooModel("beit", "cnn", _hf_config("BeitModel", "BeitConfig", names=_PIXELS,
                                            use_relative_position_bias=True),
                 input_names=_PIXELS, description="BeitModel, beit-base with relative position bias"),
        ZooModel("segformer", "cnn", _hf_config("SegformerModel", "SegformerConfig", names=_PIXELS),
                 input_names=_PIXELS, description="SegformerModel, SegformerConfig() (mit-b0)"),
        ZooModel("wav2vec2", "signal", _hf_config("Wav2Vec2Model", "Wav2Vec2Config", names=("input_values",)),
                 shape=(1, 16000), input_names=("input_values",),
                 description="Wav2Vec2Model, Wav2Vec2Config() (wav2vec2-base), one second at 16 kHz"),
        ZooModel("whisper_encoder", "signal", _hf_config("WhisperModel", "WhisperConfig", names=("input_features",),
                                                          part="encoder"),
                 shape=(1, 80, 3000), input_names=("input_features",),
                 description="WhisperModel's encoder, WhisperConfig() (whisper-tiny's shape), 30 s of 80 mel bins"),
        # timm, pretrained=False
        *(ZooModel(n, "cnn", _timm(n), image=size, library="timm") for n, size in [
            ("ghostnet_100", 224), ("rexnet_100", 224), ("efficientnet_lite0", 224), ("mobilevitv2_050", 256),
            ("levit_128s", 224), ("poolformer_s12", 224), ("cspdarknet53", 256), ("dla34", 224),
            ("hrnet_w18_small", 224), ("res2net50_26w_4s", 224), ("inception_v4", 299), ("xception41", 299),
            ("dpn68", 224), ("selecsls42b", 224), ("tresnet_m", 224),
        ]),
        # this session's third round: families the first two did not have
        *(ZooModel(n, "cnn", _timm(n), image=size, library="timm") for n, size in [
            ("mixer_s16_224", 224), ("resmlp_12_224", 224), ("nfnet_l0", 224), ("repvgg_a0", 224),
            ("pit_ti_224", 224), ("efficientformer_l1", 224), ("fastvit_t8", 256), ("edgenext_xx_small", 256),
            ("mobileone_s0", 224), ("convnextv2_atto", 224), ("lcnet_050", 224), ("coat_lite_tiny", 224),
            ("botnet26t_256", 256), ("halonet26t", 256), ("efficientvit_b0", 224), ("mobilenetv4_conv_small", 224),
            ("inception_next_tiny", 224), ("eva02_tiny_patch14_224", 224), ("starnet_s1", 224), ("hgnet_tiny", 224),
            ("ese_vovnet19b_dw", 224), ("crossvit_tiny_240", 240),
        ]),
        # a fourth try's: MixConv (split, depthwise kernels 3x3-11x11, concat), gated CNN blocks and
        # bidirectional LSTMs over rows and columns (ONNX LSTM, unrolled)
        *(ZooModel(n, "cnn", _timm(n), image=size, library="timm") for n, size in [
            ("tf_mixnet_s", 224), ("mambaout_femto", 224), ("sequencer2d_s", 224),
        ]),
        # a fifth round's timm families: window/grid attention with conv stems, class-attention,
        # gated positional attention, cross-covariance attention, spatial-reduction attention,
        # partial convolutions, focal modulation, pooling attention
        *(ZooModel(n, "cnn", _timm(n), image=size, library="timm") for n, size in [
            ("tiny_vit_5m_224", 224), ("gcvit_xxtiny", 224), ("coatnet_0_rw_224", 224), ("convit_tiny", 224),
            ("xcit_nano_12_p16_224", 224), ("pvt_v2_b0", 224), ("mobilevit_xxs", 256), ("efficientformerv2_s0", 224),
            ("ghostnetv2_100", 224), ("fasternet_t0", 224), ("rdnet_tiny", 224), ("cs3darknet_s", 256),
            ("davit_tiny", 224), ("focalnet_tiny_srf", 224), ("mvitv2_tiny", 224), ("caformer_s18", 224),
        ]),
        ZooModel("mobilebert", "text", _hf_config("MobileBertModel", "MobileBertConfig", add_pooling_layer=False),
                 input_names=_TEXT, description="MobileBertModel, MobileBertConfig() (mobilebert-uncased), seq 128"),
        ZooModel("squeezebert", "text", _hf_config("SqueezeBertModel", "SqueezeBertConfig"), input_names=_TEXT,
                 description="SqueezeBertModel (grouped 1-D convolutions), SqueezeBertConfig(), seq 128"),
        ZooModel("bloom_small", "text", _hf_config("BloomModel", "BloomConfig", hidden_size=512, n_layer=4, n_head=8,
                                                    use_cache=False),
                 input_names=_TEXT, description="BloomModel (ALiBi), hidden 512, 4 layers, 8 heads, seq 128"),
        ZooModel("mpnet", "text", _hf_config("MPNetModel", "MPNetConfig", add_pooling_layer=False), input_names=_TEXT,
                 description="MPNetModel (relative position buckets), MPNetConfig() (mpnet-base), seq 128"),
        ZooModel("dinov2_small", "cnn", _hf_config("Dinov2Model", "Dinov2Config", names=_PIXELS, hidden_size=384,
                                                    num_attention_heads=6),
                 input_names=_PIXELS, description="Dinov2Model, dinov2-small's shape (layer scale)"),
        ZooModel("qwen2_small", "text", _hf_config("Qwen2Model", "Qwen2Config", use_cache=False, **_SMALL_LLAMA),
                 input_names=_TEXT, description="Qwen2Model, hidden 512, 4 layers, 8 heads, 4 KV heads, seq 128"),
        ZooModel("phi_small", "text", _hf_config("PhiModel", "PhiConfig", hidden_size=512, intermediate_size=2048,
                                                  num_hidden_layers=4, num_attention_heads=8, use_cache=False),
                 input_names=_TEXT, description="PhiModel (partial rotary, parallel blocks), hidden 512, 4 layers"),
        ZooModel("convbert", "text", _hf_config("ConvBertModel", "ConvBertConfig"), input_names=_TEXT,
                 description="ConvBertModel (span-based dynamic convolution), ConvBertConfig(), seq 128"),
        # a fourth round: Hugging Face families none of the above has
        ZooModel("hubert", "signal", _hf_config("HubertModel", "HubertConfig", names=("input_values",)),
                 shape=(1, 16000), input_names=("input_values",),
                 description="HubertModel, HubertConfig() (hubert-base), one second at 16 kHz"),
        ZooModel("wavlm", "signal", _hf_config("WavLMModel", "WavLMConfig", names=("input_values",)),
                 shape=(1, 16000), input_names=("input_values",),
                 description="WavLMModel (gated relative position bias), WavLMConfig() (wavlm-base), one second"),
        ZooModel("yolos_tiny", "cnn", _hf_config("YolosModel", "YolosConfig", names=_PIXELS, hidden_size=192,
                                                  num_attention_heads=3, intermediate_size=768,
                                                  image_size=[224, 224]),
                 input_names=_PIXELS, description="YolosModel, yolos-tiny's shape (100 detection tokens), 224 pixels"),
        ZooModel("gpt_bigcode", "text", _hf_config("GPTBigCodeModel", "GPTBigCodeConfig", use_cache=False),
                 input_names=_TEXT, description="GPTBigCodeModel (multi-query attention), GPTBigCodeConfig(), seq 128"),
        ZooModel("falcon_small", "text", _hf_config("FalconModel", "FalconConfig", hidden_size=512, num_hidden_layers=4,
                                                     num_attention_heads=8, num_kv_heads=4, vocab_size=32000,
                                                     new_decoder_architecture=True, use_cache=False),
                 input_names=_TEXT, description="FalconModel (new decoder architecture: parallel attention and MLP, "
                                                "4 KV heads), hidden 512, 4 layers, seq 128"),
        ZooModel("mistral_small", "text", _hf_config("MistralModel", "MistralConfig", use_cache=False, head_dim=64,
                                                      sliding_window=64, **_SMALL_LLAMA),
                 input_names=_TEXT, description="MistralModel (sliding window 64), hidden 512, 4 layers, seq 128"),
        ZooModel("gemma_small", "text", _hf_config("GemmaModel", "GemmaConfig", use_cache=False, head_dim=64,
                                                    vocab_size=32000, **_SMALL_LLAMA),
                 input_names=_TEXT, description="GemmaModel (tanh GELU gate, scaled embeddings), hidden 512, 4 layers"),
        ZooModel("fnet", "text", _hf_config("FNetModel", "FNetConfig", names=("input_ids",)),
                 input_names=("input_ids",), description="FNetModel (Fourier mixing), FNetConfig() (fnet-base), seq 128"),
        ZooModel("funnel", "text", _hf_config("FunnelModel", "FunnelConfig"), input_names=_TEXT,
                 description="FunnelModel (pooling between blocks, upsampling decoder), FunnelConfig(), seq 128"),
        # a fifth round: torchvision's video models (3-D convolutions)
        *(ZooModel(n, "signal", _tv(n, "video"), shape=(1, 3, 8, 112, 112),
                   description=f"torchvision.models.video.{n}, 8 frames of 112 x 112")
          for n in ("r3d_18", "mc3_18", "r2plus1d_18")),
        # torchvision's segmentation models (dilated convolutions, bilinear upsampling)
        *(ZooModel(n, "cnn", _tv(n, "segmentation"), description=f"torchvision segmentation {n}, its 'out' map")
          for n in ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large")),
        *(ZooModel(n, "cnn", _timm(n), image=size, library="timm") for n, size in [
            ("gernet_s", 224), ("skresnet18", 224), ("hardcorenas_a", 224),
        ]),
        # a sixth round's families: cascaded group attention, transformer in transformer, spatial
        # gating, single-head attention, additive attention, blur pools, efficient
        # channel attention (a 1-D convolution over channels), global context, inception-resnet,
        # outlook attention (unfold, then fold: ONNX Col2Im)
        *(ZooModel(n, "cnn", _timm(n), image=size, library="timm") for n, size in [
            ("efficientvit_m0", 224), ("visformer_tiny", 224), ("tnt_s_patch16_224", 224), ("regnetz_b16", 224),
            ("repghostnet_050", 224), ("densenetblur121d", 224), ("gmlp_s16_224", 224), ("repvit_m0_9", 224),
            ("shvit_s1", 224), ("swiftformer_xs", 224), ("ecaresnet26t", 256),
            ("gcresnet33ts", 256), ("inception_resnet_v2", 299), ("nextvit_small", 224), ("volo_d1_224", 224),
        ]),
        # nested blocks with aggregation, locally-grouped and sub-sampled attention, mask-unit
        # attention: their attention is 5-D, which torch's ONNX exporter cannot write from
        # F.scaled_dot_product_attention, so timm builds them for export (its own switch:
        # the attention written as matmuls and a softmax)
        *(ZooModel(n, "cnn", _timm(n, exportable=True), image=size, library="timm") for n, size in [
            ("nest_tiny", 224), ("twins_svt_small", 224), ("hiera_tiny_224", 224),
        ]),
        # class attention with talking heads: a trained network's layer scales, not their 1e-5
        # start (with it the 24 blocks barely touch the class token: the output ignores the input)
        ZooModel("cait_xxs24_224", "cnn", _timm("cait_xxs24_224", init_values=1.0), library="timm"),
        # recurrent speech encoders (ONNX GRU and LSTM, bidirectional, unrolled over 100 frames)
        *(ZooModel(f"speech_bi{k.lower()}", "signal", _speech_rnn(k), shape=(1, 100, 80),
                   description=f"two bidirectional {k} layers of 256 over 100 frames of 80 mel bins, "
                               "a linear layer to 29 characters (DeepSpeech2's shape)") for k in ("GRU", "LSTM")),
        # families no exported library covers, written in torch (testing.zoo_nets)
        *(ZooModel(n, kind, zoo_nets.net(n), image=image or 224, shape=shape, description=text)
          for n, (kind, image, shape, text) in zoo_nets.NETS.items()),
        ZooModel("roformer", "text", _hf_config("RoFormerModel", "RoFormerConfig"), input_names=_TEXT,
                 description="RoFormerModel (rotary positions in an encoder), RoFormerConfig(), seq 128"),
        ZooModel("nystromformer", "text", _hf_config("NystromformerModel", "NystromformerConfig"), input_names=_TEXT,
                 description="NystromformerModel (Nystrom attention: 64 landmarks, iterative pseudo-inverse, "
                             "depthwise convolution over values), NystromformerConfig(), seq 128"),
        # an eighth round: super-resolution with windows, convolutional token embeddings, depth
        # from a hierarchical encoder, a speech encoder's 1-D subsampling, optical flow (a
        # correlation volume, lookups by grid_sample, a convolutional GRU iterated), separable
        # 3-D convolutions
        ZooModel("swin2sr", "cnn", _hf_config("Swin2SRForImageSuperResolution", "Swin2SRConfig", key="reconstruction",
                                               names=_PIXELS, embed_dim=60, depths=[4, 4], num_heads=[6, 6],
                                               image_size=64, window_size=8, upscale=2,
                                               upsampler="pixelshuffledirect"),
                 image=64, input_names=_PIXELS,
                 description="Swin2SRForImageSuperResolution (lightweight: embed 60, 2 x 4 blocks), x2, 64 x 64"),
        ZooModel("cvt_13", "cnn", _hf_config("CvtModel", "CvtConfig", names=_PIXELS), input_names=_PIXELS,
                 description="CvtModel, CvtConfig() (cvt-13)"),
        ZooModel("glpn", "cnn", _hf_config("GLPNForDepthEstimation", "GLPNConfig", key="predicted_depth",
                                           names=_PIXELS),
                 input_names=_PIXELS, description="GLPNForDepthEstimation, GLPNConfig() (its depth map)"),
        ZooModel("speech2text_encoder", "signal", _hf_config("Speech2TextModel", "Speech2TextConfig",
                                                              names=("input_features",), part="encoder"),
                 shape=(1, 300, 80), input_names=("input_features",),
                 description="Speech2TextModel's encoder, Speech2TextConfig() (s2t-small), 300 frames of 80 bins"),
        ZooModel("raft_small", "signal", _optical_flow("raft_small"), shape=(1, 6, 128, 128),
                 description="torchvision raft_small (12 flow updates), two 128 x 128 frames stacked"),
        ZooModel("s3d", "signal", _tv("s3d", "video"), shape=(1, 3, 16, 224, 224),
                 description="torchvision.models.video.s3d, 16 frames of 224 x 224"),
    ]
}  # fmt: skip
"""Architectures beyond the benchmark's default list (``benchmarks/zoo.py --more``): more
torchvision models, Hugging Face models built from config objects, timm models with
``pretrained=False``; the same recipe and cache."""


def _spec(name: str) -> ZooModel:
    spec = MODELS.get(name) or EXTRA_MODELS.get(name)
    if spec is None:
        raise ZooError(f"no zoo model '{name}' (known: {', '.join(MODELS)}; more: {', '.join(EXTRA_MODELS)})")
    return spec


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:  # the zoo extra is optional
        raise ZooError(
            "the zoo needs torch, torchvision and transformers: pip install -e '.[zoo]' "
            "(or make venv-extras)"
        ) from e
    return torch


def inputs(name: str, seed: int = 0) -> dict[str, np.ndarray]:
    """The model's inputs by ONNX input name: a standard-normal image, or token ids
    uniform over the first 1000 ids of the vocabulary with an attention mask whose last
    quarter is padding (so masking matters)."""
    spec = _spec(name)
    rng = np.random.default_rng(seed)
    if spec.kind == "cnn":
        image = rng.standard_normal((1, 3, spec.image, spec.image)).astype(np.float32)
        return {spec.input_names[0]: image}
    if spec.kind == "signal":
        return {spec.input_names[0]: rng.standard_normal(spec.shape).astype(np.float32)}
    seq = spec.seq
    ids = rng.integers(0, 1000, size=(1, seq), dtype=np.int64)
    mask = np.ones((1, seq), np.int64)
    mask[:, seq - seq // 4 :] = 0
    return dict(zip(spec.input_names, (ids, mask)))


def _torch_args(name: str, seed: int = 0) -> tuple[Any, ...]:
    torch = _torch()
    return tuple(torch.from_numpy(a) for a in inputs(name, seed).values())


def randomize(module: Any, image: int = 224, seed: int = 0, shape: tuple[int, ...] = ()) -> Any:
    """Give ``module`` (a torch model) parameters that make its output depend on its input.

    Every floating parameter and buffer whose elements are all equal gets random values:
    ``v * U(0.5, 1.5)`` where the constant ``v`` is non-zero (norm scales, layer scales),
    ``N(0, 0.1)`` where it is zero (shifts, biases). Then, when the model has batch norms,
    their running statistics are measured on ``CALIBRATION_BATCHES`` batches of 8 random
    images of ``image`` pixels, or of 8 random inputs of ``shape`` (after its batch
    dimension: video clips) when it is given (cumulative averages in training mode). Returns
    the module in ``eval()`` mode.
    """
    torch = _torch()
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        tensors = [("parameter", n, p) for n, p in module.named_parameters()]
        tensors += [("buffer", n, b) for n, b in module.named_buffers()]
        for _, name, t in tensors:
            if not t.is_floating_point() or t.numel() < 2 or name.endswith(("running_mean", "running_var")):
                continue
            flat = t.reshape(-1)
            if not bool(torch.all(flat == flat[0])):
                continue
            v = float(flat[0])
            if v != 0.0:
                t.mul_(torch.empty(t.shape).uniform_(0.5, 1.5, generator=gen))
            else:
                t.copy_(torch.empty(t.shape).normal_(0.0, 0.1, generator=gen))
    norms = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    module.eval()
    if norms:
        for m in norms:
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
            m.train()
        with torch.no_grad():
            for _ in range(CALIBRATION_BATCHES):
                module(torch.randn(8, *(shape[1:] or (3, image, image)), generator=gen))
        for m in norms:
            m.eval()
    return module


def check_input_dependence(run: Callable[[tuple[Any, ...]], Any], a: tuple[Any, ...],
                           b: tuple[Any, ...], what: str, at_least: float = 0.01) -> float:
    """Require ``run(a)`` and ``run(b)`` (numpy-convertible outputs) to differ by at least
    ``at_least`` of their largest magnitude, and to be finite; returns the relative
    difference. Raises ``ZooError`` naming ``what`` otherwise."""
    x = np.asarray(run(a), np.float64)
    y = np.asarray(run(b), np.float64)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ZooError(f"{what}: the output is not finite")
    scale = max(float(np.max(np.abs(x))), float(np.max(np.abs(y))), 1e-30)
    rel = float(np.max(np.abs(x - y))) / scale
    if rel < at_least:
        raise ZooError(
            f"{what}: two different inputs give outputs within {rel:.1e} of each other "
            f"(relative): the output does not depend on the input"
        )
    return rel


def torch_model(name: str, seed: int = 0) -> tuple[Any, tuple[Any, ...]]:
    """``(module, args)``: the zoo model ``name`` in eval mode with random, meaningful
    weights (``randomize``; the same weights for the same seed), and its example inputs
    (``inputs(name, seed)`` as torch tensors, in the order of ``forward``'s arguments).
    The output is checked to depend on the input (``check_input_dependence``)."""
    spec = _spec(name)
    torch = _torch()
    torch.manual_seed(seed)
    module = randomize(spec.build(), spec.image, seed, spec.shape if spec.kind == "signal" else ())
    args = _torch_args(name, seed)
    other = _torch_args(name, seed + 1)

    def run(a: tuple[Any, ...]) -> Any:
        with torch.no_grad():
            return module(*a).numpy()

    check_input_dependence(run, args, other, f"zoo model '{name}'")
    return module, args


def cache_dir() -> str:
    """Where exported files live: ``$XRELAY_ZOO_CACHE`` or ``~/.cache/xrelay-zoo``."""
    return os.environ.get("XRELAY_ZOO_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "xrelay-zoo"
    )


def _key(name: str, seed: int) -> str:
    import importlib.metadata as md

    versions = []
    library = (_spec(name).library,) if _spec(name).library else ()
    for dist in ("torch", "torchvision", "transformers", "onnxscript", *library):
        try:
            versions.append(f"{dist}={md.version(dist)}")
        except md.PackageNotFoundError:
            versions.append(f"{dist}=-")
    if name in zoo_nets.NETS:  # (written here: their source keys the export too)
        with open(zoo_nets.__file__, "rb") as f:
            versions.append(hashlib.sha256(f.read()).hexdigest()[:12])
    text = f"{name}|{seed}|{ZOO_VERSION}|{OPSET}|{'|'.join(versions)}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def onnx_path(name: str, seed: int = 0) -> str:
    """The ONNX file of the zoo model, exported on first use (torch's default exporter,
    opset 20) and cached; see the module docstring."""
    spec = _spec(name)
    directory = cache_dir()
    path = os.path.join(directory, f"{name}-s{seed}-{_key(name, seed)}.onnx")
    if os.path.exists(path):
        return path
    if not _has_torch():
        other = _other_export(directory, name, seed)
        if other is not None:
            return other
    torch = _torch()
    module, args = torch_model(name, seed)
    write_cached(path, lambda tmp: torch.onnx.export(
        module,
        args,
        tmp,
        input_names=list(spec.input_names),
        output_names=["output"],
        opset_version=OPSET,
        external_data=False,
        verbose=False,
    ))  # fmt: skip
    return path


def _has_torch() -> bool:
    return importlib.util.find_spec("torch") is not None


def _other_export(directory: str, name: str, seed: int) -> str | None:
    """Without torch the key cannot be matched (it names torch's version), but an export
    that another environment cached is the same network: the newest one, with a warning."""
    pattern = re.compile(rf"{re.escape(name)}-s{seed}-[0-9a-f]{{12}}\.onnx")
    try:
        found = [e for e in os.scandir(directory) if pattern.fullmatch(e.name) and e.is_file()]
    except OSError:
        return None
    if not found:
        return None
    newest = max(found, key=lambda e: e.stat().st_mtime_ns)
    warnings.warn(
        f"torch is not installed: using the cached export {newest.path} of '{name}' "
        "(made with the zoo extra's versions of another environment)",
        stacklevel=3,
    )
    return newest.path


def write_cached(path: str, write: Callable[[str], Any]) -> None:
    """Make the cache file ``path`` atomically: ``write(tmp)`` writes a temporary file beside
    it, which then replaces ``path`` (readable by all, as the cache is shared)."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    # the destination's extension: torch.export.save warns about a .pt2 file named otherwise
    suffix = os.path.splitext(path)[1]
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's file is private; the cache is not
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def onnx_model(name: str, seed: int = 0) -> Any:
    """The exported model as an ``onnx.ModelProto`` (see ``onnx_path``)."""
    import onnx

    return onnx.load(onnx_path(name, seed))


def save_torch_export(name: str, path: str, seed: int = 0) -> None:
    """``torch.export`` the zoo model ``name`` (``torch_model``: its weights and example
    inputs) and write the program to ``path`` with ``torch.export.save`` (atomically)."""
    torch = _torch()
    module, args = torch_model(name, seed)
    program = torch.export.export(module, args)
    write_cached(os.path.abspath(path), lambda tmp: torch.export.save(program, tmp))


def main(argv: list[str] | None = None) -> int:
    """``python -m xrelay.testing.zoo NAME -o FILE.pt2|FILE.onnx``: one zoo model as a
    ``torch.export`` program (``.pt2``) or an ONNX file (the cached export, copied)."""
    import argparse
    import shutil
    import sys

    ap = argparse.ArgumentParser(prog="python -m xrelay.testing.zoo", description="Write one zoo model (random weights) as a torch.export program or an ONNX file.")
    ap.add_argument("name", help=f"one of: {', '.join([*MODELS, *EXTRA_MODELS])}")
    ap.add_argument("-o", "--output", required=True, help="FILE.pt2 (torch.export.save) or FILE.onnx")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        if args.output.endswith(".pt2"):
            save_torch_export(args.name, args.output, args.seed)
        elif args.output.endswith(".onnx"):
            src = onnx_path(args.name, args.seed)
            write_cached(os.path.abspath(args.output), lambda tmp: shutil.copyfile(src, tmp))
        else:
            ap.error(f"{args.output}: the output must end in .pt2 or .onnx")
    except (ZooError, OSError) as e:
        print(f"zoo: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
