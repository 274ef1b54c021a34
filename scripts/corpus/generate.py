#!/usr/bin/env python3
"""Generate the real-model corpus: standard exporters, random weights.

    ~/.cache/onnxc/corpus-venv/bin/python scripts/corpus/generate.py
        [-o DIR] [--only NAME,...] [--list] [--allow-network]

Run with the main venv's python (scripts/corpus/setup.sh). Writes into
DIR (default $ONNXC_CORPUS or target/corpus), per model NAME:
NAME.onnx, NAME.json and NAME.size{k}.npz (layout: corpus_common.py), and
manifest.json with every model's status, so a model that fails to export
is recorded, not lost.

Nothing is downloaded: every model is built from a config or a class with
random weights (torchvision weights=None, timm pretrained=False,
transformers *Config -> from_config, ultralytics from yolov8n.yaml). Each
model is exported in its own child process (a crash or hang in one
exporter cannot stop the others), with the hub libraries' offline switches
set and, where `unshare -n` works (root on Linux), inside a network
namespace with no network at all; --allow-network turns that off.

Keras models run in $ONNXC_CORPUS_VENV-tf and paddle in
$ONNXC_CORPUS_VENV-paddle (see setup.sh for why they are separate).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

REGISTRY = {}  # name -> (stack, fn)


def model(name, stack="main"):
    def deco(fn):
        REGISTRY[name] = (stack, fn)
        return fn

    return deco


# ---------------------------------------------------------------- helpers (child side)


def seed_all(seed=0):
    import numpy as np

    np.random.seed(seed)
    try:
        import torch

        torch.manual_seed(seed)
        torch.set_num_threads(1)
    except ImportError:
        pass


def img_sizes(shapes, seed=0):
    from corpus_common import random_feeds
    import numpy as np

    return [random_feeds({"input": (s, np.float32, "normal")}, seed + k) for k, s in enumerate(shapes)]


def torch_export(net, example, path, input_names, output_names, dynamic_axes, opset, dynamo=False, dynamic_shapes=None):
    """torch.onnx.export with the TorchScript exporter (or dynamo)."""
    import torch

    net.eval()
    with torch.no_grad():
        if dynamo:
            torch.onnx.export(
                net, example, path, dynamo=True, input_names=input_names, output_names=output_names,
                dynamic_shapes=dynamic_shapes, opset_version=opset, external_data=False,
            )
        else:
            kw = {}
            if "dynamo" in torch.onnx.export.__code__.co_varnames:
                kw["dynamo"] = False
            torch.onnx.export(
                net, example, path, input_names=input_names, output_names=output_names,
                dynamic_axes=dynamic_axes, opset_version=opset, do_constant_folding=True, **kw,
            )
    return f"torch {torch.__version__}"


def calibrate_bn(net, hw, batches=4):
    """Give BatchNorm layers the statistics of random inputs.

    Freshly initialized BN layers (mean 0, var 1) are the identity in eval
    mode, and without normalization the activations of deep nets with
    random weights shrink to ~1e-15 (depthwise convs under kaiming fan_out
    init) and the comparison with the oracle would pass on zeros.
    """
    import torch

    bns = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
    net.train()
    with torch.no_grad():
        for _ in range(batches):
            net(torch.randn(4, 3, *hw))
    net.eval()


def cnn_export(net, path, opset, shapes, dyn_hw=True, dynamo=False, out_name="logits", example_hw=(224, 224)):
    import torch

    calibrate_bn(net, example_hw)
    x = torch.randn(1, 3, *example_hw)
    axes = {"input": {0: "batch"}, out_name: {0: "batch"}}
    if dyn_hw:
        axes["input"].update({2: "height", 3: "width"})
    ds = None
    if dynamo:
        from torch.export import Dim

        b = Dim("batch", min=1, max=64)
        spec = {0: b}
        if dyn_hw:
            spec.update({2: Dim("height", min=32, max=1024), 3: Dim("width", min=32, max=1024)})
        ds = {"x": spec}
    ver = torch_export(net, (x,), path, ["input"], [out_name], axes, opset, dynamo=dynamo, dynamic_shapes=ds)
    return ver, img_sizes(shapes)


def tv(ctor_name, **kw):
    import torchvision
    import torchvision.models.segmentation as seg

    ctor = getattr(torchvision.models, ctor_name, None) or getattr(seg, ctor_name)
    return ctor(weights=None, **kw)


def timm_model(name, **kw):
    import timm

    return timm.create_model(name, pretrained=False, **kw)


# Input sizes: batch 1, and every dynamic dim at two values above 1.
CNN_SIZES = [[1, 3, 224, 224], [2, 3, 160, 192], [3, 3, 256, 128]]
SEQ_SIZES = [(1, 7), (3, 19), (2, 33)]  # (batch, sequence)
EXPORTER_TS = "torch.onnx.export (TorchScript)"
EXPORTER_DYNAMO = "torch.onnx.export (dynamo=True)"


# ---------------------------------------------------------------- torchvision / timm CNNs


@model("tv_resnet18")
def _(path):
    ver, sizes = cnn_export(tv("resnet18"), path, 17, CNN_SIZES)
    return dict(sizes=sizes, source="torchvision resnet18", exporter=EXPORTER_TS, version=ver, notes="dynamic batch, H, W")


@model("tv_resnet50_op11")
def _(path):
    ver, sizes = cnn_export(tv("resnet50"), path, 11, CNN_SIZES)
    return dict(sizes=sizes, source="torchvision resnet50", exporter=EXPORTER_TS, version=ver, notes="old opset 11 on purpose")


@model("tv_mobilenet_v3_small")
def _(path):
    ver, sizes = cnn_export(tv("mobilenet_v3_small"), path, 13, CNN_SIZES)
    return dict(sizes=sizes, source="torchvision mobilenet_v3_small", exporter=EXPORTER_TS, version=ver, notes="opset 13; HardSwish, SE blocks")


@model("tv_efficientnet_b0")
def _(path):
    ver, sizes = cnn_export(tv("efficientnet_b0"), path, 17, CNN_SIZES)
    return dict(sizes=sizes, source="torchvision efficientnet_b0", exporter=EXPORTER_TS, version=ver, notes="SiLU, SE, depthwise")


@model("tv_regnet_x_400mf")
def _(path):
    ver, sizes = cnn_export(tv("regnet_x_400mf"), path, 15, CNN_SIZES)
    return dict(sizes=sizes, source="torchvision regnet_x_400mf", exporter=EXPORTER_TS, version=ver, notes="grouped convs")


@model("tv_squeezenet1_1")
def _(path):
    ver, sizes = cnn_export(tv("squeezenet1_1"), path, 12, CNN_SIZES)
    return dict(sizes=sizes, source="torchvision squeezenet1_1", exporter=EXPORTER_TS, version=ver, notes="ceil_mode MaxPool, opset 12")


@model("tv_shufflenet_v2")
def _(path):
    ver, sizes = cnn_export(tv("shufflenet_v2_x0_5"), path, 17, CNN_SIZES)
    return dict(sizes=sizes, source="torchvision shufflenet_v2_x0_5", exporter=EXPORTER_TS, version=ver,
                notes="channel shuffle: Reshape/Transpose with a dynamic batch and H/W")


@model("timm_regnety_002")
def _(path):
    ver, sizes = cnn_export(timm_model("regnety_002"), path, 17, CNN_SIZES)
    return dict(sizes=sizes, source="timm regnety_002", exporter=EXPORTER_TS, version=ver, notes="SE, grouped convs")


@model("timm_convnext_atto")
def _(path):
    ver, sizes = cnn_export(timm_model("convnext_atto"), path, 17, CNN_SIZES)
    return dict(sizes=sizes, source="timm convnext_atto", exporter=EXPORTER_TS, version=ver,
                notes="ConvNeXt (atto: the tiny variant under 100 MB); 7x7 depthwise, LayerNorm, GELU")


@model("timm_vit_tiny")
def _(path):
    ver, sizes = cnn_export(timm_model("vit_tiny_patch16_224"), path, 17, [[1, 3, 224, 224], [3, 3, 224, 224], [2, 3, 224, 224]],
                             dyn_hw=False)
    return dict(sizes=sizes, source="timm vit_tiny_patch16_224", exporter=EXPORTER_TS, version=ver, notes="dynamic batch, fixed 224x224")


@model("tv_lraspp_mobilenet_v3")
def _(path):
    import torch

    class Seg(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = tv("lraspp_mobilenet_v3_large", weights_backbone=None, num_classes=5)

        def forward(self, x):
            return self.m(x)["out"]

    ver, sizes = cnn_export(Seg(), path, 16, [[1, 3, 224, 224], [2, 3, 160, 256], [3, 3, 256, 128]], out_name="mask")
    return dict(sizes=sizes, source="torchvision lraspp_mobilenet_v3_large", exporter=EXPORTER_TS, version=ver,
                notes="segmentation: Resize to the input's dynamic H/W")


@model("torch_unet_tiny")
def _(path):
    import torch
    from torch import nn

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = block(3, 8), block(8, 16), block(16, 32)
            self.pool = nn.MaxPool2d(2)
            self.u2 = nn.ConvTranspose2d(32, 16, 2, stride=2)
            self.d2 = block(32, 16)
            self.u1 = nn.ConvTranspose2d(16, 8, 2, stride=2)
            self.d1 = block(16, 8)
            self.head = nn.Conv2d(8, 2, 1)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(self.pool(a))
            c = self.e3(self.pool(b))
            d = self.d2(torch.cat([self.u2(c), b], 1))
            return self.head(self.d1(torch.cat([self.u1(d), a], 1)))

    # H, W multiples of 4 (two 2x2 pools, then skip Concats at each scale)
    shapes = [[1, 3, 96, 96], [2, 3, 64, 128], [3, 3, 48, 112]]
    ver, sizes = cnn_export(UNet(), path, 17, shapes, out_name="mask", example_hw=(96, 96))
    return dict(sizes=sizes, source="hand-written UNet (torch.nn)", exporter=EXPORTER_TS, version=ver,
                notes="MaxPool, ConvTranspose, skip Concat; dynamic batch, H, W")


@model("tv_resnet18_dynamo")
def _(path):
    ver, sizes = cnn_export(tv("resnet18"), path, 18, CNN_SIZES, dynamo=True)
    return dict(sizes=sizes, source="torchvision resnet18", exporter=EXPORTER_DYNAMO, version=ver, notes="torch.export + onnxscript")


@model("torch_lstm")
def _(path):
    import numpy as np
    import torch
    from corpus_common import random_feeds

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(16, 4)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.head(y)

    x = torch.randn(2, 5, 8)
    ver = torch_export(Tagger(), (x,), path, ["x"], ["tags"], {"x": {0: "batch", 1: "seq"}, "tags": {0: "batch", 1: "seq"}}, 14)
    sizes = [random_feeds({"x": (s, np.float32, "normal")}, k) for k, s in enumerate([[b, t, 8] for b, t in SEQ_SIZES])]
    return dict(sizes=sizes, source="torch.nn.LSTM 2 layers", exporter=EXPORTER_TS, version=ver, notes="dynamic batch, seq")


def squeeze_export(path, opset):
    """A speech-quality-style scorer (one MOS per utterance): Conv1d stack
    over [N, 1, T] audio, pooling over time, then `x.squeeze()` without a
    dim. The TorchScript exporter writes a Squeeze without axes, which at
    batch 1 squeezes the batch dim too (output rank 0, rank 1 above)."""
    import numpy as np
    import torch
    from torch import nn
    from corpus_common import random_feeds

    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = nn.Sequential(
                nn.Conv1d(1, 16, 9, stride=4, padding=4), nn.ReLU(), nn.MaxPool1d(2),
                nn.Conv1d(16, 32, 5, stride=2, padding=2), nn.ReLU(), nn.Conv1d(32, 1, 1),
            )
            self.pool = nn.AdaptiveAvgPool1d(1)

        def forward(self, x):
            return self.pool(self.f(x)).squeeze()

    x = torch.randn(2, 1, 4000)
    ver = torch_export(Scorer(), (x,), path, ["audio"], ["mos"], {"audio": {0: "batch", 2: "time"}, "mos": {0: "batch"}}, opset)
    sizes = [random_feeds({"audio": (s, np.float32, "normal")}, k) for k, s in enumerate([[1, 1, 3200], [3, 1, 4800], [2, 1, 8000]])]
    return dict(sizes=sizes, source="hand-written speech-quality scorer (torch.nn Conv1d)", exporter=EXPORTER_TS, version=ver,
                notes=f"opset {opset} x.squeeze(): Squeeze without axes of [N, 1, 1], a scalar at batch 1 (declared [batch]); "
                      "dynamic batch and time")


@model("torch_squeeze_op9")
def _(path):
    return squeeze_export(path, 9)


@model("torch_squeeze_op11")
def _(path):
    return squeeze_export(path, 11)


# ---------------------------------------------------------------- transformers (tiny configs)


def hf_feeds(names, vocab, shapes, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for b, s in shapes:
        f = {}
        for n in names:
            if n == "input_ids":
                f[n] = rng.integers(1, vocab, size=(b, s)).astype(np.int64)
            elif n == "attention_mask":
                m = np.ones((b, s), np.int64)
                if b > 1:
                    m[1, s - 3:] = 0  # a padded row
                f[n] = m
            elif n == "token_type_ids":
                t = np.zeros((b, s), np.int64)
                t[:, s // 2:] = 1
                f[n] = t
        out.append(f)
    return out


def hf_export(net, names, outputs, path, opset, vocab, out_axes=None):
    import torch

    net.eval()
    ex = hf_feeds(names, vocab, [(2, 8)])[0]
    args = tuple(torch.from_numpy(ex[n]) for n in names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    for o in outputs:
        axes[o] = (out_axes or {}).get(o, {0: "batch", 1: "sequence"})

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *a):
            r = self.m(**dict(zip(names, a)), return_dict=True)
            return tuple(r[o] for o in outputs)

    ver = torch_export(Wrap(net), args, path, names, outputs, axes, opset)
    import transformers

    return f"{ver}, transformers {transformers.__version__}"


def bert_tiny(path):
    from transformers import AutoModel, BertConfig

    cfg = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                     max_position_embeddings=128, attn_implementation="eager")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    ver = hf_export(AutoModel.from_config(cfg), names, ["last_hidden_state", "pooler_output"], path, 14, 1000,
                    out_axes={"pooler_output": {0: "batch"}})
    return dict(sizes=hf_feeds(names, 1000, SEQ_SIZES), source="transformers BertModel (tiny config)", exporter=EXPORTER_TS, version=ver,
                notes="dynamic batch x sequence, padded attention mask")


def gpt2_tiny(path):
    from transformers import AutoModelForCausalLM, GPT2Config

    cfg = GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=2, n_positions=128, use_cache=False, attn_implementation="eager")
    names = ["input_ids", "attention_mask"]
    ver = hf_export(AutoModelForCausalLM.from_config(cfg), names, ["logits"], path, 14, 1000)
    return dict(sizes=hf_feeds(names, 1000, SEQ_SIZES), source="transformers GPT2LMHeadModel (tiny config)", exporter=EXPORTER_TS,
                version=ver, notes="causal mask from the dynamic sequence length")


@model("hf_bert_tiny")
def _(path):
    return bert_tiny(path)


@model("hf_gpt2_tiny")
def _(path):
    return gpt2_tiny(path)


@model("hf_distilbert_tiny")
def _(path):
    from transformers import AutoModel, DistilBertConfig

    cfg = DistilBertConfig(vocab_size=1000, dim=64, n_layers=2, n_heads=2, hidden_dim=128, max_position_embeddings=128,
                           attn_implementation="eager")
    names = ["input_ids", "attention_mask"]
    ver = hf_export(AutoModel.from_config(cfg), names, ["last_hidden_state"], path, 17, 1000)
    return dict(sizes=hf_feeds(names, 1000, SEQ_SIZES), source="transformers DistilBertModel (tiny config)", exporter=EXPORTER_TS,
                version=ver, notes="opset 17")


@model("hf_t5_encoder_tiny")
def _(path):
    from transformers import T5Config, T5EncoderModel

    cfg = T5Config(vocab_size=1000, d_model=64, d_ff=128, d_kv=32, num_layers=2, num_heads=2, attn_implementation="eager")
    names = ["input_ids", "attention_mask"]
    ver = hf_export(T5EncoderModel(cfg), names, ["last_hidden_state"], path, 15, 1000)
    return dict(sizes=hf_feeds(names, 1000, SEQ_SIZES), source="transformers T5EncoderModel (tiny config)", exporter=EXPORTER_TS,
                version=ver, notes="relative position buckets (Log, Min, Where) over the dynamic sequence")


# ---------------------------------------------------------------- onnxruntime.quantization


QUANTIZED_ATOL = 0.02


def ort_quantize_dynamic(path, export, **kw):
    """Exports a float model with `export(tmp)`, then quantizes its MatMul
    weights to 8 bits as onnxruntime.quantization.quantize_dynamic does
    (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul)."""
    import onnxruntime
    from onnxruntime.quantization import quantize_dynamic

    tmp = path[: -len(".onnx")] + ".float.onnx"
    info = export(tmp)
    quantize_dynamic(tmp, path, **kw)
    os.remove(tmp)
    info["exporter"] += " + onnxruntime.quantization.quantize_dynamic"
    info["version"] += f", onnxruntime {onnxruntime.__version__}"
    # A float difference in the last bit can move an activation across a
    # rounding boundary of DynamicQuantizeLinear: one quantization step,
    # which the next layers carry. onnxruntime's own optimized and
    # unoptimized sessions differ by 0.004 on ort_bert_int8, so the oracle
    # allows a few steps (the weights' int8 products themselves are exact).
    info["atol"] = QUANTIZED_ATOL
    return info


@model("ort_bert_int8")
def _(path):
    from onnxruntime.quantization import QuantType
    from transformers import AutoModel, BertConfig

    def export(p):
        cfg = BertConfig(vocab_size=1000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024,
                         max_position_embeddings=256, attn_implementation="eager")
        names = ["input_ids", "attention_mask", "token_type_ids"]
        ver = hf_export(AutoModel.from_config(cfg), names, ["last_hidden_state"], p, 14, 1000)
        return dict(sizes=hf_feeds(names, 1000, [(1, 32), (4, 64), (2, 128)]), source="transformers BertModel (4 layers, hidden 256)",
                    exporter=EXPORTER_TS, version=ver)

    info = ort_quantize_dynamic(path, export, weight_type=QuantType.QInt8)
    info["notes"] = "int8 encoder: symmetric s8 weights, u8 activations, dynamic batch x sequence"
    return info


@model("ort_gpt2_int8_u8")
def _(path):
    from onnxruntime.quantization import QuantType
    from transformers import AutoModelForCausalLM, GPT2Config

    def export(p):
        cfg = GPT2Config(vocab_size=1000, n_embd=128, n_layer=2, n_head=2, n_positions=128, use_cache=False,
                         attn_implementation="eager")
        names = ["input_ids", "attention_mask"]
        ver = hf_export(AutoModelForCausalLM.from_config(cfg), names, ["logits"], p, 14, 1000)
        return dict(sizes=hf_feeds(names, 1000, SEQ_SIZES), source="transformers GPT2LMHeadModel (2 layers, hidden 128)",
                    exporter=EXPORTER_TS, version=ver)

    info = ort_quantize_dynamic(path, export, weight_type=QuantType.QUInt8, per_channel=True)
    info["notes"] = "u8 weights with per-column zero points (row sums of the activations)"
    return info


def t5_decoder_feeds(d_model, vocab, shapes, seed=0):
    """(batch, decoder length, encoder length) -> decoder inputs: token ids,
    the encoder's output, its mask (a padded row when batch > 1)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for b, s, e in shapes:
        m = np.ones((b, e), np.int64)
        if b > 1:
            m[1, e - 3:] = 0
        out.append({"input_ids": rng.integers(1, vocab, size=(b, s)).astype(np.int64),
                    "encoder_hidden_states": rng.standard_normal((b, e, d_model)).astype(np.float32),
                    "encoder_attention_mask": m})
    return out


@model("hf_t5_decoder_int8")
def _(path):
    import torch
    from onnxruntime.quantization import QuantType
    from transformers import T5Config, T5ForConditionalGeneration
    from transformers.modeling_outputs import BaseModelOutput

    def export(p):
        cfg = T5Config(vocab_size=1000, d_model=64, d_ff=128, d_kv=32, num_layers=2, num_decoder_layers=2, num_heads=2,
                       use_cache=False, attn_implementation="eager")
        t5 = T5ForConditionalGeneration(cfg)

        class Decoder(torch.nn.Module):
            """The decoder half as seq2seq exports split it: the encoder's
            output comes in, the LM head's logits go out."""

            def __init__(self):
                super().__init__()
                self.t5 = t5

            def forward(self, input_ids, encoder_hidden_states, encoder_attention_mask):
                enc = BaseModelOutput(last_hidden_state=encoder_hidden_states)
                return self.t5(encoder_outputs=enc, attention_mask=encoder_attention_mask, decoder_input_ids=input_ids,
                               use_cache=False, return_dict=True).logits

        names = ["input_ids", "encoder_hidden_states", "encoder_attention_mask"]
        ex = t5_decoder_feeds(64, 1000, [(2, 5, 8)], seed=1)[0]
        axes = {"input_ids": {0: "batch", 1: "decoder_sequence"}, "encoder_hidden_states": {0: "batch", 1: "encoder_sequence"},
                "encoder_attention_mask": {0: "batch", 1: "encoder_sequence"}, "logits": {0: "batch", 1: "decoder_sequence"}}
        ver = torch_export(Decoder(), tuple(torch.from_numpy(ex[n]) for n in names), p, names, ["logits"], axes, 14)
        import transformers

        # decoder length 1: one generation step without a cache
        sizes = t5_decoder_feeds(64, 1000, [(1, 4, 7), (3, 11, 19), (2, 1, 13)])
        return dict(sizes=sizes, source="transformers T5ForConditionalGeneration decoder + LM head (tiny config)",
                    exporter=EXPORTER_TS, version=f"{ver}, transformers {transformers.__version__}")

    info = ort_quantize_dynamic(path, export, weight_type=QuantType.QInt8)
    info["notes"] = ("int8 seq2seq decoder: causal self-attention with relative position buckets over the dynamic decoder "
                     "length, cross-attention over the encoder length with its padding mask; DynamicQuantizeLinear -> "
                     "MatMulInteger")
    return info


def ort_quantize_static(path, export, fmt, **kw):
    """Exports a float CNN with `export(tmp)` and quantizes it statically
    (calibrated on its own random inputs) in format `fmt`: QOperator
    (QuantizeLinear -> QLinearConv -> DequantizeLinear) or QDQ (the float
    ops between DequantizeLinear and QuantizeLinear pairs)."""
    import onnxruntime
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    tmp = path[: -len(".onnx")] + ".float.onnx"
    info = export(tmp)

    class Reader(CalibrationDataReader):
        def __init__(self, feeds):
            self.it = iter(feeds)

        def get_next(self):
            return next(self.it, None)

    quantize_static(tmp, path, Reader(info["sizes"]), quant_format=getattr(QuantFormat, fmt), **kw)
    os.remove(tmp)
    info["exporter"] += f" + onnxruntime.quantization.quantize_static ({fmt})"
    info["version"] += f", onnxruntime {onnxruntime.__version__}"
    info["atol"] = QUANTIZED_ATOL
    return info


@model("ort_resnet18_qop")
def _(path):
    def export(p):
        ver, sizes = cnn_export(tv("resnet18"), p, 17, CNN_SIZES)
        return dict(sizes=sizes, source="torchvision resnet18", exporter=EXPORTER_TS, version=ver)

    info = ort_quantize_static(path, export, "QOperator", op_types_to_quantize=["Conv"], per_channel=True)
    info["notes"] = "QLinearConv with per-channel s8 weights and u8 activations, dynamic batch, H, W"
    return info


@model("ort_mobilenet_v3_qdq")
def _(path):
    def export(p):
        ver, sizes = cnn_export(tv("mobilenet_v3_small"), p, 17, CNN_SIZES)
        return dict(sizes=sizes, source="torchvision mobilenet_v3_small", exporter=EXPORTER_TS, version=ver)

    info = ort_quantize_static(path, export, "QDQ", per_channel=True)
    info["notes"] = "QDQ: DequantizeLinear -> float op -> QuantizeLinear around every quantized op"
    return info


# ---------------------------------------------------------------- onnxruntime.transformers.optimizer


def ort_optimize(path, export, model_type, opt_level, **kw):
    """Exports a float model with `export(tmp)`, then runs onnxruntime's
    transformer optimizer on it for the CPU, as users prepare models for
    onnxruntime: opt_level 1 (basic) or 2 (extended) graph optimizations of
    an onnxruntime session, then the optimizer's own fusions into
    com.microsoft ops (Attention, SkipLayerNormalization, FastGelu, ...).
    The oracle is onnxruntime on the optimized model."""
    import onnx
    import onnxruntime
    from onnxruntime.transformers.optimizer import optimize_model

    tmp = path[: -len(".onnx")] + ".float.onnx"
    info = export(tmp)
    opt = optimize_model(tmp, model_type=model_type, opt_level=opt_level, use_gpu=False, **kw)
    opt.save_model_to_file(path)
    os.remove(tmp)
    info["exporter"] += f" + onnxruntime.transformers.optimizer (opt_level {opt_level})"
    info["version"] += f", onnxruntime {onnxruntime.__version__}"
    ms = sorted({n.op_type for n in onnx.load(path).graph.node if n.domain == "com.microsoft"})
    info["notes"] = f"optimize_model(model_type='{model_type}', opt_level={opt_level}, CPU): com.microsoft {', '.join(ms) or 'none'}"
    return info


def register_ort_optimized():
    """hf_{bert,gpt2}_tiny_ortopt{1,2}: the transformer optimizer at both
    levels over the tiny exports."""
    for model_type, export in (("bert", bert_tiny), ("gpt2", gpt2_tiny)):
        for level in (1, 2):
            def make(path, model_type=model_type, export=export, level=level):
                return ort_optimize(path, export, model_type, level, num_heads=2, hidden_size=64)

            model(f"hf_{model_type}_tiny_ortopt{level}")(make)


register_ort_optimized()


# ---------------------------------------------------------------- ultralytics


@model("yolov8n")
def _(path):
    import ultralytics
    from ultralytics import YOLO

    work = tempfile.mkdtemp(prefix="yolo-")
    cwd = os.getcwd()
    os.chdir(work)
    try:
        y = YOLO("yolov8n.yaml")  # built from the packaged yaml, random weights
        out = y.export(format="onnx", dynamic=True, imgsz=320, simplify=False, device="cpu", verbose=False)
        shutil.copyfile(out, path)
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
    import onnx

    m = onnx.load(path)
    opset = m.opset_import[0].version
    name = m.graph.input[0].name
    import numpy as np
    from corpus_common import random_feeds

    shapes = [[1, 3, 320, 320], [2, 3, 256, 384], [3, 3, 416, 224]]
    sizes = [random_feeds({name: (s, np.float32, "uniform")}, k) for k, s in enumerate(shapes)]
    return dict(sizes=sizes, source="ultralytics YOLOv8n (yolov8n.yaml)", exporter="ultralytics export(format='onnx', dynamic=True)",
                version=f"ultralytics {ultralytics.__version__}", notes=f"exporter default opset {opset}; H, W multiples of 32")


# ---------------------------------------------------------------- scikit-learn


def skl_data(n_features=10, n=300, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 - X[:, 2] > 0).astype(np.int64) + (X[:, 3] > 1).astype(np.int64)
    return X, y


SKL_ROWS = [1, 37, 4]  # the None batch


def skl_convert(est, path, n_features, zipmap=None):
    """ZIPMAP: False drops a classifier's ZipMap (probabilities as a
    tensor), True keeps skl2onnx's default (a sequence of {label: p} maps),
    None for a regressor (no option)."""
    import numpy as np
    import skl2onnx
    from skl2onnx.common.data_types import FloatTensorType

    opts = {id(est): {"zipmap": False}} if zipmap is False else None
    onx = skl2onnx.to_onnx(est, initial_types=[("input", FloatTensorType([None, n_features]))], options=opts)
    with open(path, "wb") as f:
        f.write(onx.SerializeToString())
    rng = np.random.default_rng(7)
    sizes = [{"input": rng.standard_normal((r, n_features)).astype(np.float32)} for r in SKL_ROWS]
    import sklearn

    return sizes, f"skl2onnx {skl2onnx.__version__}, scikit-learn {sklearn.__version__}"


@model("skl_scaler_logreg")
def _(path):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = skl_data()
    est = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500)).fit(X, y)
    sizes, ver = skl_convert(est, path, 10, zipmap=False)
    return dict(sizes=sizes, source="scikit-learn StandardScaler+LogisticRegression", exporter="skl2onnx.to_onnx", version=ver,
                notes="ai.onnx.ml Scaler/LinearClassifier or ONNX ops; zipmap off; None batch")


@model("skl_random_forest")
def _(path):
    from sklearn.ensemble import RandomForestClassifier

    X, y = skl_data()
    est = RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X, y)
    sizes, ver = skl_convert(est, path, 10, zipmap=False)
    return dict(sizes=sizes, source="scikit-learn RandomForestClassifier", exporter="skl2onnx.to_onnx", version=ver,
                notes="ai.onnx.ml TreeEnsembleClassifier; None batch")


@model("skl_gb_regressor")
def _(path):
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = skl_data()
    est = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y.astype("float32") + X[:, 4])
    sizes, ver = skl_convert(est, path, 10)
    return dict(sizes=sizes, source="scikit-learn GradientBoostingRegressor", exporter="skl2onnx.to_onnx", version=ver,
                notes="ai.onnx.ml TreeEnsembleRegressor; None batch")


@model("skl_logreg_zipmap")
def _(path):
    from sklearn.linear_model import LogisticRegression

    X, y = skl_data()
    est = LogisticRegression(max_iter=500).fit(X, y)
    sizes, ver = skl_convert(est, path, 10, zipmap=True)
    return dict(sizes=sizes, source="scikit-learn LogisticRegression (3 classes)", exporter="skl2onnx.to_onnx", version=ver,
                notes="skl2onnx's default ZipMap kept: LinearClassifier -> Normalizer -> Cast -> ZipMap, probabilities as "
                      "a sequence of {int64 label: float} maps (compared in their [N, 3] tensor form); None batch")


# ---------------------------------------------------------------- Keras (tf venv)


def tf_convert(keras_model, specs, path, opset=None):
    import tensorflow as tf
    import tf2onnx

    @tf.function(input_signature=specs)
    def fn(*xs):
        return keras_model(xs[0] if len(xs) == 1 else list(xs), training=False)

    kw = {"opset": opset} if opset else {}
    model_proto, _ = tf2onnx.convert.from_function(fn, input_signature=specs, output_path=path, **kw)
    return f"tf2onnx {tf2onnx.__version__}, tensorflow {tf.__version__}", model_proto


@model("keras_cnn", stack="tf")
def _(path):
    import numpy as np
    import tensorflow as tf
    from tensorflow import keras
    from corpus_common import random_feeds

    tf.random.set_seed(0)
    L = keras.layers
    inp = keras.Input(shape=(None, None, 3), name="image")
    h = L.Conv2D(16, 3, padding="same", activation="relu")(inp)
    h = L.BatchNormalization()(h)
    h = L.MaxPooling2D(2, padding="same")(h)
    h = L.DepthwiseConv2D(3, padding="same", activation="relu")(h)
    h = L.Conv2D(32, 3, strides=2, padding="same", activation="swish")(h)
    h = L.AveragePooling2D(2)(h)
    h = L.GlobalAveragePooling2D()(h)
    out = L.Dense(10, activation="softmax")(h)
    km = keras.Model(inp, out)
    ver, proto = tf_convert(km, [tf.TensorSpec([None, None, None, 3], tf.float32, name="image")], path)
    name = proto.graph.input[0].name
    shapes = [[1, 64, 64, 3], [3, 48, 80, 3], [2, 72, 36, 3]]
    sizes = [random_feeds({name: (s, np.float32, "normal")}, k) for k, s in enumerate(shapes)]
    return dict(sizes=sizes, source=f"Keras {keras.__version__} functional CNN (NHWC)", exporter="tf2onnx.convert.from_function",
                version=ver, notes="None batch/H/W; padding='same' convs and pools, NHWC<->NCHW Transposes")


@model("keras_lstm", stack="tf")
def _(path):
    import numpy as np
    import tensorflow as tf
    from tensorflow import keras
    from corpus_common import random_feeds

    tf.random.set_seed(0)
    L = keras.layers
    inp = keras.Input(shape=(None, 8), name="frames")
    h = L.LSTM(16, return_sequences=True)(inp)
    h = L.LSTM(16)(h)
    out = L.Dense(4)(h)
    km = keras.Model(inp, out)
    ver, proto = tf_convert(km, [tf.TensorSpec([None, None, 8], tf.float32, name="frames")], path)
    name = proto.graph.input[0].name
    sizes = [random_feeds({name: (s, np.float32, "normal")}, k) for k, s in enumerate([[b, t, 8] for b, t in SEQ_SIZES])]
    return dict(sizes=sizes, source=f"Keras {keras.__version__} 2-layer LSTM", exporter="tf2onnx.convert.from_function", version=ver,
                notes="None batch and time steps; initial state from Shape")


@model("keras_text_conv1d", stack="tf")
def _(path):
    import numpy as np
    import tensorflow as tf
    from tensorflow import keras
    from corpus_common import random_feeds

    tf.random.set_seed(0)
    L = keras.layers
    inp = keras.Input(shape=(None,), dtype="int32", name="tokens")
    h = L.Embedding(500, 16)(inp)
    h = L.Conv1D(32, 5, padding="same", activation="relu")(h)
    h = L.GlobalMaxPooling1D()(h)
    out = L.Dense(3, activation="sigmoid")(h)
    km = keras.Model(inp, out)
    ver, proto = tf_convert(km, [tf.TensorSpec([None, None], tf.int32, name="tokens")], path, opset=13)
    name = proto.graph.input[0].name
    sizes = [random_feeds({name: (s, np.int32, ("int", 0, 500))}, k) for k, s in enumerate([[1, 9], [4, 23], [2, 40]])]
    return dict(sizes=sizes, source=f"Keras {keras.__version__} Embedding+Conv1D text classifier", exporter="tf2onnx.convert.from_function",
                version=ver, notes="int32 token input, None batch and length, opset 13")


# ---------------------------------------------------------------- paddle (paddle venv)


@model("paddle_cnn", stack="paddle")
def _(path):
    import numpy as np
    import paddle
    from paddle import nn
    from corpus_common import random_feeds

    paddle.seed(0)

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.f = nn.Sequential(
                nn.Conv2D(3, 16, 3, padding=1), nn.BatchNorm2D(16), nn.ReLU(), nn.MaxPool2D(2, 2),
                nn.Conv2D(16, 32, 3, padding=1, groups=2), nn.Hardswish(), nn.AdaptiveAvgPool2D(1),
            )
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            return nn.functional.softmax(self.fc(paddle.flatten(self.f(x), 1)))

    net = Net()
    net.eval()
    spec = [paddle.static.InputSpec([None, 3, None, None], "float32", "image")]
    prefix = path[: -len(".onnx")]
    paddle.onnx.export(net, prefix, input_spec=spec, opset_version=11)
    if not os.path.exists(path):
        raise RuntimeError("paddle.onnx.export wrote no " + path)
    import paddle2onnx

    shapes = [[1, 3, 64, 64], [2, 3, 48, 80], [3, 3, 96, 40]]
    sizes = [random_feeds({"image": (s, np.float32, "normal")}, k) for k, s in enumerate(shapes)]
    return dict(sizes=sizes, source=f"PaddlePaddle {paddle.__version__} CNN", exporter="paddle.onnx.export (paddle2onnx)",
                version=f"paddle2onnx {paddle2onnx.__version__}", notes="opset 11; paddle2onnx declares unknown dims as -1")


def paddle_dims_to_minus1(path):
    """Declare paddle2onnx 2.x's unknown dims (dim_param
    'DynamicDimension.N') as -1, as paddle2onnx 0.x/1.x wrote them and as
    the PaddleOCR models shipped in PyPI packages still declare them."""
    import onnx

    m = onnx.load(path)
    g = m.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param.startswith("DynamicDimension"):
                d.Clear()
                d.dim_value = -1
    onnx.save(m, path)


@model("paddle_text_dir", stack="paddle")
def _(path):
    import numpy as np
    import paddle
    from paddle import nn
    from corpus_common import random_feeds

    paddle.seed(0)

    def conv_bn(i, o, k, s=1, groups=1, act=None):
        layers = [nn.Conv2D(i, o, k, stride=s, padding=k // 2, groups=groups, bias_attr=False), nn.BatchNorm2D(o, momentum=0.0)]
        return nn.Sequential(*layers, act()) if act else nn.Sequential(*layers)

    class SE(nn.Layer):
        def __init__(self, c):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2D(1)
            self.c1, self.c2 = nn.Conv2D(c, c // 4, 1), nn.Conv2D(c // 4, c, 1)

        def forward(self, x):
            return x * nn.functional.hardsigmoid(self.c2(nn.functional.relu(self.c1(self.pool(x)))))

    class Block(nn.Layer):  # MobileNetV3: expand, depthwise (+ SE), project
        def __init__(self, i, e, o, k, s, se, act):
            super().__init__()
            self.f = nn.Sequential(conv_bn(i, e, 1, act=act), conv_bn(e, e, k, s, groups=e, act=act),
                                   *([SE(e)] if se else []), conv_bn(e, o, 1))
            self.res = s == 1 and i == o

        def forward(self, x):
            return x + self.f(x) if self.res else self.f(x)

    class TextDirection(nn.Layer):  # PP-OCR's direction classifier: MobileNetV3-small x0.35
        def __init__(self):
            super().__init__()
            self.stem = conv_bn(3, 8, 3, 2, act=nn.Hardswish)
            self.blocks = nn.Sequential(
                Block(8, 8, 8, 3, 2, True, nn.ReLU), Block(8, 24, 16, 3, 2, False, nn.ReLU), Block(16, 32, 16, 3, 1, False, nn.ReLU),
                Block(16, 48, 24, 5, 2, True, nn.Hardswish), Block(24, 64, 24, 5, 1, True, nn.Hardswish),
            )
            self.last = conv_bn(24, 96, 1, act=nn.Hardswish)
            self.pool = nn.AdaptiveAvgPool2D(1)
            self.fc = nn.Linear(96, 2)

        def forward(self, x):
            h = self.pool(self.last(self.blocks(self.stem(x))))
            return nn.functional.softmax(self.fc(paddle.flatten(h, 1)), axis=-1)

    net = TextDirection()
    # BatchNorm statistics of a random batch (momentum 0: the last batch's),
    # else the logits of random weights are ~1e-3 apart (see calibrate_bn)
    net.train()
    with paddle.no_grad():
        net(paddle.randn([8, 3, 48, 160]))
    net.eval()
    spec = [paddle.static.InputSpec([-1, 3, -1, -1], "float32", "x")]
    prefix = path[: -len(".onnx")]
    paddle.onnx.export(net, prefix, input_spec=spec, opset_version=11)
    if not os.path.exists(path):
        raise RuntimeError("paddle.onnx.export wrote no " + path)
    paddle_dims_to_minus1(path)
    import paddle2onnx

    # text lines: H != W at every size, batch 1 and above
    shapes = [[1, 3, 48, 192], [3, 3, 48, 160], [2, 3, 32, 100]]
    sizes = [random_feeds({"x": (s, np.float32, "normal")}, k) for k, s in enumerate(shapes)]
    return dict(sizes=sizes, source=f"PaddlePaddle {paddle.__version__} text-direction classifier (MobileNetV3-small style)",
                exporter="paddle.onnx.export (paddle2onnx)", version=f"paddle2onnx {paddle2onnx.__version__}",
                notes="input declared [-1, 3, -1, -1] (paddle2onnx 2.x's DynamicDimension dims rewritten to the -1 of "
                      "older paddle2onnx), H != W at every size; SE blocks with Hardsigmoid, Hardswish, depthwise convs")


# ---------------------------------------------------------------- driver


def child(name, outdir):
    """Export one model and run its oracle; prints one JSON line."""
    from corpus_common import write_entry

    stack, fn = REGISTRY[name]
    seed_all(0)
    path = os.path.join(outdir, name + ".onnx")
    t0 = time.time()
    info = fn(path)
    t_export = time.time() - t0
    size = os.path.getsize(path)
    e = write_entry(outdir, name, path, info["sizes"], source=info["source"], exporter=info["exporter"],
                    exporter_version=info.get("version", ""), notes=info.get("notes", ""),
                    extra={"stack": stack, "export_s": round(t_export, 1), **({"atol": info["atol"]} if "atol" in info else {})})
    print(json.dumps({"ok": True, "opset": e["opset"], "bytes": size, "nodes": e["nodes"],
                      "dynamic_inputs": e["dynamic_inputs"]}))


def venv_python(stack, venv_main):
    if stack == "main":
        return sys.executable, None
    v = f"{venv_main}-{stack}"
    py = os.path.join(v, "bin", "python")
    failed = os.path.join(v, "INSTALL_FAILED")
    if os.path.exists(failed):
        return None, f"{stack} stack did not install: " + " ".join(open(failed).read().split())[:300]
    if not os.path.exists(py):
        return None, f"{stack} stack not installed ({v}; run setup.sh {stack})"
    return py, None


def net_isolation():
    if shutil.which("unshare"):
        try:
            if subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10).returncode == 0:
                return ["unshare", "-n"]
        except (OSError, subprocess.TimeoutExpired):
            pass
    return []


def offline_env(scratch):
    env = dict(os.environ)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "HF_HOME": os.path.join(scratch, "hf"),
            "YOLO_OFFLINE": "1",
            "YOLO_CONFIG_DIR": os.path.join(scratch, "ultralytics"),
            "TORCH_HOME": os.path.join(scratch, "torch"),
            "CUDA_VISIBLE_DEVICES": "",
            "TF_CPP_MIN_LOG_LEVEL": "2",
            "TF_ENABLE_ONEDNN_OPTS": "0",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "PIP_NO_INDEX": "1",  # an exporter that tries to pip-install a missing extra fails at once
            "MPLBACKEND": "Agg",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", default=os.environ.get("ONNXC_CORPUS", "target/corpus"))
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--timeout", type=float, default=1200, help="per model, seconds")
    ap.add_argument("--allow-network", action="store_true", help="do not run exporters in a network namespace")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.one:
        try:
            child(args.one, args.out)
            return 0
        except BaseException as ex:  # noqa: BLE001 - report everything to the parent
            traceback.print_exc()
            msg = f"{type(ex).__name__}: {str(ex).strip().splitlines()[0] if str(ex).strip() else ''}"
            print(json.dumps({"ok": False, "error": msg[:500]}))
            return 1

    if args.list:
        for n, (s, _) in REGISTRY.items():
            print(f"{n:26} {s}")
        return 0
    os.makedirs(args.out, exist_ok=True)
    out = os.path.abspath(args.out)
    venv_main = os.environ.get("ONNXC_CORPUS_VENV", sys.prefix)
    names = [n for n in REGISTRY if not args.only or n in args.only.split(",")]
    unknown = set(args.only.split(",")) - set(REGISTRY) if args.only else set()
    if unknown:
        print(f"generate.py: unknown models {sorted(unknown)}", file=sys.stderr)
        return 2
    man_path = os.path.join(out, "manifest.json")
    manifest = {"models": []}
    if os.path.exists(man_path) and args.only:
        manifest = json.load(open(man_path))
    keep = [m for m in manifest["models"] if m["name"] not in names]
    wrap = [] if args.allow_network else net_isolation()
    if not args.allow_network and not wrap:
        print("generate.py: note: no network namespace (unshare -n); relying on the offline switches", file=sys.stderr)
    scratch = tempfile.mkdtemp(prefix="onnxc-corpus-")
    env = offline_env(scratch)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    results = []
    t_all = time.time()
    for name in names:
        stack, _ = REGISTRY[name]
        for suffix in (".onnx", ".json"):
            p = os.path.join(out, name + suffix)
            if os.path.exists(p):
                os.remove(p)
        for fn in os.listdir(out):
            if fn.startswith(name + ".size") and fn.endswith(".npz"):
                os.remove(os.path.join(out, fn))
        py, why = venv_python(stack, venv_main)
        t0 = time.time()
        rec = {"name": name, "stack": stack}
        if py is None:
            rec.update(status="failed", error=why)
        else:
            cmd = wrap + [py, os.path.abspath(__file__), "--one", name, "-o", out]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env, cwd=scratch)
                last = None
                for ln in reversed(p.stdout.splitlines()):
                    if ln.startswith("{"):
                        try:
                            last = json.loads(ln)
                            break
                        except ValueError:
                            pass
                if p.returncode == 0 and last and last.get("ok"):
                    rec.update(status="ok", **{k: v for k, v in last.items() if k != "ok"})
                else:
                    err = (last or {}).get("error") or f"exit code {p.returncode}: " + " ".join(p.stderr.strip().splitlines()[-1:])
                    rec.update(status="failed", error=err[:500])
                    with open(os.path.join(out, name + ".export.log"), "w") as f:
                        f.write(p.stdout + "\n--- stderr ---\n" + p.stderr)
            except subprocess.TimeoutExpired:
                rec.update(status="failed", error=f"export timeout after {args.timeout} s")
        rec["seconds"] = round(time.time() - t0, 1)
        if rec["status"] == "ok" and os.path.exists(os.path.join(out, name + ".json")):
            e = json.load(open(os.path.join(out, name + ".json")))
            rec.update(source=e["source"], exporter=e["exporter"])
            if e.get("degenerate"):
                rec["degenerate"] = True
                print(f"generate.py: warning: {name}'s outputs are all near 0: the oracle check would be vacuous", file=sys.stderr)
            if rec.get("bytes", 0) > 100 << 20:
                print(f"generate.py: warning: {name} is {rec['bytes'] >> 20} MB", file=sys.stderr)
        line = f"{name:26} {stack:6} {rec['status']:6} {rec['seconds']:6.1f} s  "
        line += f"opset {rec.get('opset')} {rec.get('bytes', 0) / 1e6:.1f} MB, dynamic {rec.get('dynamic_inputs')}" if rec["status"] == "ok" else rec.get("error", "")
        print(line, flush=True)
        results.append(rec)
    shutil.rmtree(scratch, ignore_errors=True)
    manifest = {
        "generated": time.strftime("%Y-%m-%d %H:%M"),
        "seconds": round(time.time() - t_all, 1),
        "models": sorted(keep + results, key=lambda m: m["name"]),
    }
    with open(man_path, "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    ok = sum(1 for m in manifest["models"] if m["status"] == "ok")
    print(f"{ok} of {len(manifest['models'])} models exported into {out} in {manifest['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
