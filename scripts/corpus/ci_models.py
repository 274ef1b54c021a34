#!/usr/bin/env python3
"""The CI subset of the real-model corpus: small hand-built models that
reproduce the dynamic-dim patterns real exporters write.

    python3 scripts/corpus/ci_models.py [-o DIR]    # default target/corpus-ci

Needs only onnx, onnxruntime and numpy (the test dependencies). Writes the
same NAME.onnx / NAME.json / NAME.size{k}.npz layout as generate.py, so
scripts/corpus/run.py runs either directory. Weights come from a fixed seed:
the output is the same on every run.

Models (each is named after the exporter habit it copies):
  ci_conv_pool_batch   torchvision stem: dynamic batch, 3x3 pad-1 Conv,
                       MaxPool, auto_pad SAME_UPPER Conv (tf2onnx), ceil-mode
                       AveragePool, GlobalAveragePool, Flatten, Gemm
  ci_conv_hw           the same with dynamic batch, height and width
                       (torch.onnx dynamic_axes on H/W)
  ci_conv_rows         im2col GEMMs whose panel vectors span several output
                       rows: grouped (16 channels per group), strided,
                       dilated, 3-D and 1-D convs on narrow maps; bilinear
                       Resizes (half_pixel, align_corners,
                       pytorch_half_pixel)
  ci_flatten_chain     torch `x.view(x.size(0), -1)`: Shape -> Gather ->
                       Unsqueeze -> Concat -> Reshape, dynamic batch
  ci_attention         one self-attention block, dynamic batch x sequence,
                       heads split/merged by Reshapes built from Shape
  ci_lstm_state        tf2onnx/PyTorch LSTM: dynamic sequence and batch,
                       zero initial state by Shape -> Gather -> Concat ->
                       Expand
  ci_gru_bidir         a bidirectional GRU over per-entry lengths, a GRU
                       with linear_before_reset and an initial state, a
                       reverse RNN whose weights are computed at run time
  ci_if_shapes         VAD-style If on a sample-rate input whose branches
                       yield different shapes
  ci_if_ranks          the same with branches of different ranks
  ci_if_weights        spox-style: all weights are Constant nodes inside If
                       branches (a wide or a narrow head by the batch size)
  ci_squeeze_batch     torch opset-9/11 `x.squeeze()`: Squeeze without axes
                       of [B, 1, 1] after a 1-D conv over dynamic time; the
                       output is [B], or a scalar at batch 1
  ci_squeeze_declared  the same as torch writes it whole: every output
                       declared (the squeezed one [B]), so the model and its
                       fold pass onnx.checker's full check
  ci_mobile_block      MobileNet-style: depthwise convs with fused
                       activations, padded / ceil / SAME_LOWER pools,
                       dynamic batch, height and width
  ci_winograd          3x3 stride-1 convs (VGG/ResNet bodies) with channels
                       and pads of every kind, dynamic batch, height and width:
                       sizes on both sides of the Winograd threshold
  ci_int8              int8 matmuls as onnxruntime's quantize_dynamic and
                       QOperator quantization write them: DynamicQuantizeLinear
                       -> MatMulInteger on s8 (symmetric) and u8 (per-column
                       zero point) weights -> Cast -> Mul -> Add; u8 activations
                       into QLinearMatMul with per-column scales and zero
                       points; s8 activations into MatMulInteger; odd K and N,
                       dynamic batch x sequence
  ci_int8_conv         QOperator-quantized CNN layers: QLinearConv with
                       per-channel s8 weights and a bias, grouped with u8
                       weights and a zero point (column sums), depthwise with
                       stride 2 and dilation, s8 activations, ConvInteger
                       with a 1x1 kernel;
                       dynamic batch, height and width
  ci_qdq               QDQ quantization (onnxruntime's default format):
                       DequantizeLinear -> Conv / MatMul -> QuantizeLinear
                       groups with per-channel weights and an i32 bias, which
                       compile to QLinearConv / QLinearMatMul, next to a
                       depthwise group that stays float; dynamic batch, H, W
  ci_paddle_dims       paddle2onnx-style inputs declared with -1 dims and an
                       output declared with a 0 dim
  ci_fpn               an OCR detector's feature pyramid (DBNet-style):
                       five stride-2 convs, then each coarser map upsampled
                       2x and added to the finer one, dynamic H and W; at
                       1x1 and 2x2 the adds broadcast (the folded model's
                       dims must stay true there)
  ci_ml_linear         ai.onnx.ml preprocessing and linear models as skl2onnx
                       writes them (Scaler, Normalizer, Binarizer, Imputer,
                       ArrayFeatureExtractor, LabelEncoder, LinearClassifier/
                       Regressor under every post transform), dynamic batch
                       (ml_models.py)
  ci_ml_trees          TreeEnsembleRegressor/Classifier: every node mode,
                       missing values, aggregates, post transforms, the binary
                       conventions of skl2onnx's forests and boosting
  ci_ml_tree_ensemble  ai.onnx.ml opset 5 TreeEnsemble with set membership
  ci_ml_folded         the ML models on constant features (constprop folds
                       them) scaling a dynamic input
  ci_ms_*              onnxruntime's com.microsoft ops as its transformer
                       optimizer and quantizer write them (contrib_models.py)
  *_qdyn, *_qdq, *_qop CNNs, the attention block and the LSTM through
                       onnxruntime.quantization: dynamic, static QDQ, static
                       QOperator (quantized_models.py)
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_common import random_feeds, write_entry  # noqa: E402
from ml_models import MODELS as ML_MODELS  # noqa: E402
import quantized_models  # noqa: E402
from contrib_models import ATOL as CONTRIB_ATOL, MODELS as CONTRIB_MODELS, REFERENCE as CONTRIB_REFERENCE  # noqa: E402
from contrib_models import UNCHECKED as CONTRIB_UNCHECKED  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.n = 0

    def w(self, name, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        a = (self.rng.standard_normal(shape) * s).astype(np.float32)
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def const(self, name, value, dtype=np.int64):
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type, inputs, n_out=1, **attrs):
        self.n += 1
        outs = [f"{op_type.lower()}_{self.n}" + (f"_{i}" if n_out > 1 else "") for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=f"{op_type}_{self.n}", **attrs))
        return outs if n_out > 1 else outs[0]

    def rename_last(self, name):
        node = self.nodes[-1]
        node.output[0] = name
        return name

    def model(self, name, inputs, outputs, opset, value_info=(), producer="onnxc-corpus-ci"):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits, value_info=list(value_info))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name=producer)
        m.ir_version = min(m.ir_version, 8)
        return m


def vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def conv_pool(b, x):
    # 3x3 pad-1 conv -> relu -> maxpool 2/2 -> SAME_UPPER 3x3 stride 2 conv
    # -> relu -> ceil-mode avgpool 3/2 pad 1 -> GAP -> flatten -> gemm
    h = b.op("Conv", [x, b.w("c1.w", [8, 3, 3, 3]), b.w("c1.b", [8], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    h = b.op("Relu", [h])
    h = b.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = b.op("Conv", [h, b.w("c2.w", [16, 8, 3, 3]), b.w("c2.b", [16], 0.1)], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    h = b.op("Relu", [h])
    h = b.op("AveragePool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0)
    h = b.op("Conv", [h, b.w("c3.w", [16, 1, 3, 3]), b.w("c3.b", [16], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16)
    h = b.op("GlobalAveragePool", [h])
    h = b.op("Flatten", [h], axis=1)
    b.op("Gemm", [h, b.w("fc.w", [10, 16]), b.w("fc.b", [10], 0.1)], transB=1)
    return b.rename_last("logits")


def ci_conv_pool_batch():
    b = Builder(1)
    conv_pool(b, "input")
    m = b.model("ci_conv_pool_batch", [vi("input", F, ["batch", 3, 32, 32])], [vi("logits", F, ["batch", 10])], 13)
    sizes = [{"input": ([1, 3, 32, 32], np.float32, "normal")}, {"input": ([3, 3, 32, 32], np.float32, "normal")}]
    return m, sizes, "dynamic batch; padded 3x3 conv, MaxPool, auto_pad SAME_UPPER, ceil-mode AveragePool, depthwise conv"


def ci_conv_hw():
    b = Builder(2)
    conv_pool(b, "input")
    m = b.model("ci_conv_hw", [vi("input", F, ["batch", 3, "height", "width"])], [vi("logits", F, ["batch", 10])], 17)
    sizes = [{"input": ([1, 3, 32, 32], np.float32, "normal")}, {"input": ([2, 3, 45, 27], np.float32, "normal")}]
    return m, sizes, "dynamic batch, height, width (odd sizes at size 1)"


def ci_flatten_chain():
    b = Builder(3)
    h = b.op("Conv", ["x", b.w("c.w", [4, 2, 3, 3]), b.w("c.b", [4], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    h = b.op("Relu", [h])
    shp = b.op("Shape", [h])
    n = b.op("Gather", [shp, b.const("zero", 0)], axis=0)
    n1 = b.op("Unsqueeze", [n, b.const("ax0", [0])])
    tgt = b.op("Concat", [n1, b.const("minus1", [-1])], axis=0)
    flat = b.op("Reshape", [h, tgt])
    y = b.op("MatMul", [flat, b.w("fc.w", [4 * 6 * 6, 5], 0.05)])
    b.op("Add", [y, b.w("fc.b", [5], 0.1)])
    b.rename_last("y")
    m = b.model("ci_flatten_chain", [vi("x", F, ["N", 2, 6, 6])], [vi("y", F, ["N", 5])], 13)
    sizes = [{"x": ([1, 2, 6, 6], np.float32, "normal")}, {"x": ([5, 2, 6, 6], np.float32, "normal")}]
    return m, sizes, "torch view(x.size(0), -1): Shape->Gather->Unsqueeze->Concat->Reshape"


def ci_attention():
    b = Builder(4)
    D, H = 16, 2
    x = "hidden"
    shp = b.op("Shape", [x])
    bs = b.op("Gather", [shp, b.const("i0", [0])], axis=0)
    sq = b.op("Gather", [shp, b.const("i1", [1])], axis=0)
    heads_shape = b.op("Concat", [bs, sq, b.const("hd", [H, D // H])], axis=0)

    def proj(tag, perm):
        p = b.op("Add", [b.op("MatMul", [x, b.w(f"{tag}.w", [D, D])]), b.w(f"{tag}.b", [D], 0.1)])
        return b.op("Transpose", [b.op("Reshape", [p, heads_shape])], perm=perm)

    q = proj("q", [0, 2, 1, 3])
    k = proj("k", [0, 2, 3, 1])
    v = proj("v", [0, 2, 1, 3])
    s = b.op("Mul", [b.op("MatMul", [q, k]), b.const("scale", np.float32(1 / np.sqrt(D // H)), np.float32)])
    s = b.op("Add", [s, "mask"])  # additive mask [B, 1, 1, S] as transformers writes it
    a = b.op("Softmax", [s], axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [a, v])], perm=[0, 2, 1, 3])
    merged = b.op("Reshape", [ctx, b.op("Concat", [bs, sq, b.const("dd", [D])], axis=0)])
    o = b.op("Add", [b.op("MatMul", [merged, b.w("o.w", [D, D])]), b.w("o.b", [D], 0.1)])
    r = b.op("Add", [o, x])
    b.op("LayerNormalization", [r, b.w("ln.g", [D], 1.0), b.w("ln.b", [D], 0.1)], axis=-1, epsilon=1e-5)
    b.rename_last("out")
    m = b.model(
        "ci_attention",
        [vi("hidden", F, ["batch", "seq", D]), vi("mask", F, ["batch", 1, 1, "seq"])],
        [vi("out", F, ["batch", "seq", D])],
        17,
    )
    sizes = [
        {"hidden": ([1, 7, D], np.float32, "normal"), "mask": ([1, 1, 1, 7], np.float32, ("const", 0.0))},
        {"hidden": ([3, 19, D], np.float32, "normal"), "mask": ([3, 1, 1, 19], np.float32, ("const", 0.0))},
    ]
    return m, sizes, "self-attention: dynamic batch x seq, head Reshapes from Shape, Softmax, LayerNormalization"


def ci_lstm_state():
    b = Builder(5)
    I, Hd = 8, 12
    x = "x"  # [seq, batch, I]
    shp = b.op("Shape", [x])
    bs = b.op("Gather", [shp, b.const("i1", [1])], axis=0)
    st_shape = b.op("Concat", [b.const("one", [1]), bs, b.const("hid", [Hd])], axis=0)
    zero = b.const("zero_f", np.float32(0), np.float32)
    h0 = b.op("Expand", [zero, st_shape])
    c0 = b.op("Expand", [zero, st_shape])
    y, yh, yc = b.op(
        "LSTM",
        [x, b.w("W", [1, 4 * Hd, I]), b.w("R", [1, 4 * Hd, Hd]), b.w("B", [1, 8 * Hd], 0.1), "", h0, c0],
        n_out=3,
        hidden_size=Hd,
    )
    ys = b.op("Squeeze", [y, b.const("ax1", [1])])  # [seq, batch, Hd]
    b.op("MatMul", [ys, b.w("head.w", [Hd, 3])])
    b.rename_last("scores")
    last = b.op("Squeeze", [yh, b.const("ax0", [0])])
    b.op("Identity", [last])
    b.rename_last("last_h")
    m = b.model("ci_lstm_state", [vi("x", F, ["seq", "batch", I])], [vi("scores", F, ["seq", "batch", 3]), vi("last_h", F, ["batch", Hd])], 14)
    sizes = [{"x": ([5, 1, I], np.float32, "normal")}, {"x": ([17, 3, I], np.float32, "normal")}]
    return m, sizes, "LSTM, dynamic seq/batch, zero state via Shape->Gather->Concat->Expand"


def ci_gru_bidir():
    b = Builder(7)
    I, H1, H2, H3 = 6, 10, 7, 5
    x = "x"  # [seq, batch, I]
    # A bidirectional GRU (reset before the product) over per-entry lengths.
    y1, _ = b.op(
        "GRU",
        [x, b.w("W1", [2, 3 * H1, I]), b.w("R1", [2, 3 * H1, H1]), b.w("B1", [2, 6 * H1], 0.1), "lens"],
        n_out=2,
        hidden_size=H1,
        direction="bidirectional",
    )
    seq_major = b.op("Transpose", [y1], perm=[0, 2, 1, 3])  # [seq, batch, 2, H1]
    flat = b.op("Reshape", [seq_major, b.const("shape2h", [0, 0, 2 * H1], np.int64)])
    # linear_before_reset with an initial state from the input's batch.
    batch = b.op("Gather", [b.op("Shape", [x]), b.const("i1", [1], np.int64)], axis=0)
    state_shape = b.op("Concat", [b.const("one", [1], np.int64), batch, b.const("h2", [H2], np.int64)], axis=0)
    h0 = b.op("Expand", [b.w("h0", [1, 1, H2]), state_shape])
    y2, yh2 = b.op(
        "GRU",
        [flat, b.w("W2", [1, 3 * H2, 2 * H1]), b.w("R2", [1, 3 * H2, H2]), b.w("B2", [1, 6 * H2], 0.1), "", h0],
        n_out=2,
        hidden_size=H2,
        linear_before_reset=1,
    )
    # A reverse Tanh RNN whose weights are computed at run time (a gain input).
    w3 = b.op("Mul", [b.w("W3", [1, H3, H2]), "gain"])
    r3 = b.op("Mul", [b.w("R3", [1, H3, H3]), "gain"])
    y3 = b.op("Squeeze", [y2, b.const("ax1", [1], np.int64)])
    _, yh3 = b.op("RNN", [y3, w3, r3, b.w("B3", [1, 2 * H3], 0.1)], n_out=2, hidden_size=H3, direction="reverse")
    b.op("Identity", [yh2])
    b.rename_last("gru_h")
    b.op("Identity", [yh3])
    b.rename_last("rnn_h")
    b.op("Identity", [y1])
    b.rename_last("gru_y")
    inputs = [vi("x", F, ["seq", "batch", I]), vi("lens", onnx.TensorProto.INT32, ["batch"]), vi("gain", F, [1])]
    outputs = [vi("gru_h", F, [1, "batch", H2]), vi("rnn_h", F, [1, "batch", H3]), vi("gru_y", F, ["seq", 2, "batch", H1])]
    m = b.model("ci_gru_bidir", inputs, outputs, 14)
    gain = ([1], np.float32, ("const", 0.7))
    sizes = [
        {"x": ([1, 1, I], np.float32, "normal"), "lens": ([1], np.int32, ("const", 1)), "gain": gain},
        {"x": ([9, 3, I], np.float32, "normal"), "lens": ([3], np.int32, ("int", 1, 10)), "gain": gain},
        {"x": ([40, 2, I], np.float32, "normal"), "lens": ([2], np.int32, ("const", 40)), "gain": gain},
    ]
    return m, sizes, "bidirectional GRU over lengths, GRU with linear_before_reset, reverse RNN with run-time weights"


def ci_if_shapes():
    b = Builder(6)
    # then (16 kHz): 4 features per frame; else (8 kHz): frames pooled in pairs -> 8 per row
    tb = Builder(60)
    tb.op("Relu", [tb.op("MatMul", ["x", tb.w("t.w", [4, 4])])])
    tb.rename_last("then_out")
    then_g = helper.make_graph(tb.nodes, "then", [], [vi("then_out", F, None)], tb.inits)
    eb = Builder(61)
    e = eb.op("Concat", ["x", eb.op("Abs", ["x"])], axis=1)
    # frames regrouped by a shape computed at run time, as VAD exports do
    n = eb.op("Gather", [eb.op("Shape", ["x"]), eb.const("e0", [0])], axis=0)
    e = eb.op("Reshape", [e, eb.op("Concat", [n, eb.const("em1", [-1])], axis=0)])
    eb.op("Tanh", [e])
    eb.rename_last("else_out")
    else_g = helper.make_graph(eb.nodes, "else", [], [vi("else_out", F, None)], eb.inits)
    cond = b.op("Equal", ["sr", b.const("k16", [16000])])
    cond = b.op("Squeeze", [cond, b.const("ax0", [0])])
    # The If result is an intermediate value without value_info (as in the
    # exported VAD models): only the consumers' outputs are declared.
    feats = b.op("If", [cond], then_branch=then_g, else_branch=else_g)
    b.op("Sigmoid", [feats])
    b.rename_last("probs")
    b.op("ReduceSum", [feats, b.const("ax1", [1])], keepdims=1)
    b.rename_last("total")
    m = b.model(
        "ci_if_shapes",
        [vi("x", F, ["N", 4]), vi("sr", I64, [1])],
        [vi("probs", F, None), vi("total", F, ["N", 1])],
        13,
    )
    sizes = [
        {"x": ([3, 4], np.float32, "normal"), "sr": ([1], np.int64, ("const", 16000))},
        {"x": ([5, 4], np.float32, "normal"), "sr": ([1], np.int64, ("const", 8000))},
    ]
    return m, sizes, "If on sample rate; branches yield [N,4] and [N,8]"


def ci_if_ranks():
    b = Builder(8)
    # then (16 kHz): [N, 4]; else (8 kHz): frames split in halves, [N, 2, 2].
    # onnxruntime allows branch results of different ranks; exported VAD
    # models have them. Consumers reduce to a rank-independent result.
    tb = Builder(80)
    tb.op("Relu", [tb.op("MatMul", ["x", tb.w("t.w", [4, 4])])])
    tb.rename_last("then_out")
    then_g = helper.make_graph(tb.nodes, "then", [], [vi("then_out", F, None)], tb.inits)
    eb = Builder(81)
    eb.op("Reshape", [eb.op("Tanh", ["x"]), eb.const("s", [-1, 2, 2])])
    eb.rename_last("else_out")
    else_g = helper.make_graph(eb.nodes, "else", [], [vi("else_out", F, None)], eb.inits)
    cond = b.op("Squeeze", [b.op("Equal", ["sr", b.const("k16", [16000])]), b.const("ax0", [0])])
    feats = b.op("If", [cond], then_branch=then_g, else_branch=else_g)
    b.op("ReduceMax", [feats], keepdims=0)
    b.rename_last("peak")
    b.op("Shape", [feats])
    b.rename_last("feat_shape")
    m = b.model("ci_if_ranks", [vi("x", F, ["N", 4]), vi("sr", I64, [1])], [vi("peak", F, []), vi("feat_shape", I64, [None])], 13)
    sizes = [
        {"x": ([3, 4], np.float32, "normal"), "sr": ([1], np.int64, ("const", 16000))},
        {"x": ([6, 4], np.float32, "normal"), "sr": ([1], np.int64, ("const", 8000))},
    ]
    return m, sizes, "If on sample rate; branches yield [N,4] and [N,2,2] (different ranks)"


def ci_paddle_dims():
    b = Builder(7)
    h = b.op("Conv", ["image", b.w("c.w", [4, 3, 1, 1]), b.w("c.b", [4], 0.1)], kernel_shape=[1, 1])
    h = b.op("Relu", [h])
    h = b.op("ReduceMean", [h], axes=[2, 3], keepdims=0)  # [N, 4]
    b.op("Add", [h, "bias"])
    b.rename_last("out")
    m = b.model(
        "ci_paddle_dims",
        [vi("image", F, [-1, 3, -1, -1]), vi("bias", F, [-1, 4])],
        [vi("out", F, [0, 4])],
        11,
        producer="PaddlePaddle",
    )
    sizes = [
        {"image": ([1, 3, 8, 8], np.float32, "normal"), "bias": ([1, 4], np.float32, "normal")},
        {"image": ([2, 3, 13, 7], np.float32, "normal"), "bias": ([2, 4], np.float32, "normal")},
    ]
    # onnxruntime takes a declared 0 on an input literally (it refuses any
    # other size), so the 0 sits on the output, where exporters also write it.
    return m, sizes, "graph input dims declared -1, output dim declared 0 (paddle2onnx / old converters)"


def ci_mobile_block():
    b = Builder(9)
    # MobileNet/EfficientNet habits: 1x1 conv + HardSwish, depthwise 3x3
    # + Clip(0, 6), strided depthwise + HardSigmoid, dilated depthwise with
    # a channel multiplier + LeakyRelu, SE-style Sigmoid gate, pools with
    # pads, ceil mode and SAME_LOWER; Gemm + Relu head.
    h = b.op("Conv", ["x", b.w("pw.w", [12, 3, 1, 1]), b.w("pw.b", [12], 0.1)], kernel_shape=[1, 1])
    h = b.op("HardSwish", [h])
    h = b.op("Conv", [h, b.w("dw1.w", [12, 1, 3, 3]), b.w("dw1.b", [12], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=12)
    h = b.op("Clip", [h, b.const("lo", np.float32(0.0), np.float32), b.const("hi", np.float32(6.0), np.float32)])
    h = b.op("Conv", [h, b.w("dw2.w", [12, 1, 3, 3])], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 2], group=12)
    h = b.op("HardSigmoid", [h], alpha=0.25, beta=0.4)
    h = b.op("Conv", [h, b.w("dw3.w", [24, 1, 3, 3]), b.w("dw3.b", [24], 0.1)], kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2], group=12)
    h = b.op("LeakyRelu", [h], alpha=0.1)
    gate = b.op("Sigmoid", [b.op("Conv", [b.op("GlobalAveragePool", [h]), b.w("se.w", [24, 24, 1, 1])], kernel_shape=[1, 1])])
    h = b.op("Mul", [h, gate])
    h = b.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    h = b.op("AveragePool", [h], kernel_shape=[2, 3], auto_pad="SAME_LOWER", count_include_pad=1)
    h = b.op("ReduceMean", [h], axes=[2, 3], keepdims=0)
    h = b.op("Gemm", [h, b.w("fc.w", [24, 7]), b.w("fc.b", [7], 0.1)])
    b.op("Relu", [h])
    b.rename_last("y")
    m = b.model("ci_mobile_block", [vi("x", F, ["N", 3, "H", "W"])], [vi("y", F, ["N", 7])], 14)
    sizes = [{"x": ([1, 3, 33, 21], np.float32, "normal")}, {"x": ([2, 3, 16, 47], np.float32, "normal")}]
    return m, sizes, "depthwise convs (stride, dilation, multiplier) with fused activations, padded/ceil/SAME pools, dynamic N/H/W"


def ci_winograd():
    b = Builder(10)
    # Winograd (>= 8 input channels and a product deeper than the direct
    # conv on planes takes: 40 channels) and the direct conv (few outputs
    # of a shallow product) side by side, products in both orientations
    # (130 output channels: tiles as rows), biases or none, symmetric,
    # asymmetric and large pads, fused Relu / Clip / Sigmoid, residual Adds
    # fused into Winograd and into a 1x1 conv's GEMM.
    h = b.op("Conv", ["x", b.w("c1.w", [40, 3, 3, 3]), b.w("c1.b", [40], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    skip = b.op("Relu", [h])
    # Residual blocks: the Add (and the Relu after it) go into the conv.
    h = b.op("Conv", [skip, b.w("r1.w", [40, 40, 3, 3]), b.w("r1.b", [40], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    h = b.op("Relu", [b.op("Add", [skip, h])])
    p = b.op("Conv", [h, b.w("r2.w", [40, 40, 1, 1])], kernel_shape=[1, 1])
    h = b.op("Add", [p, h])
    h = b.op("Conv", [h, b.w("c2.w", [24, 40, 3, 3]), b.w("c2.b", [24], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    h = b.op("Relu", [h])
    h = b.op("Conv", [h, b.w("c3.w", [20, 24, 3, 3])], kernel_shape=[3, 3], pads=[0, 2, 1, 0])
    h = b.op("Clip", [h, b.const("lo", np.float32(0.0), np.float32), b.const("hi", np.float32(6.0), np.float32)])
    h = b.op("Conv", [h, b.w("c4.w", [130, 20, 3, 3]), b.w("c4.b", [130], 0.1)], kernel_shape=[3, 3], pads=[2, 2, 2, 2])
    h = b.op("Sigmoid", [h])
    b.op("Conv", [h, b.w("c5.w", [9, 130, 3, 3]), b.w("c5.b", [9], 0.1)], kernel_shape=[3, 3], auto_pad="SAME_UPPER")
    b.rename_last("y")
    m = b.model("ci_winograd", [vi("x", F, ["N", 3, "H", "W"])], [vi("y", F, ["N", 9, "OH", "OW"])], 13)
    sizes = [
        {"x": ([1, 3, 19, 23], np.float32, "normal")},
        {"x": ([2, 3, 5, 6], np.float32, "normal")},
        {"x": ([2, 3, 64, 48], np.float32, "normal")},
    ]
    return m, sizes, "3x3 stride-1 convs: Winograd at sizes 0 and 2 (>= 16 tiles; size 2 in several blocks of tile rows), the im2col GEMM at size 1, the direct conv on planes for c3"


def ci_conv_rows():
    b = Builder(82)
    # im2col GEMMs whose panel vectors wrap output rows (RegNet's grouped
    # 3x3 convs on 7x7 and 14x14 maps): 16 channels per group (too deep
    # for the direct conv on planes), stride 1 and 2, dilation 2, and
    # widths from 3 (more rows per vector than are read piece by piece:
    # gathers) to 14; a 3-D conv whose rows also wrap to the next plane,
    # and a 1-D one (one row).
    h = b.op("Conv", ["x", b.w("g1.w", [32, 16, 3, 3]), b.w("g1.b", [32], 0.1)], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2)
    h = b.op("Relu", [h])
    h = b.op("Conv", [h, b.w("g2.w", [32, 16, 3, 3])], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2], group=2)
    b.op("Conv", [h, b.w("d.w", [40, 32, 3, 3]), b.w("d.b", [40], 0.1)], kernel_shape=[3, 3], pads=[2, 2, 2, 2], dilations=[2, 2])
    b.rename_last("y")
    b.op("Conv", ["v", b.w("v.w", [12, 8, 3, 3, 3]), b.w("v.b", [12], 0.1)], kernel_shape=[3, 3, 3], pads=[1, 0, 1, 1, 0, 1])
    b.rename_last("vy")
    b.op("Conv", ["s", b.w("s.w", [24, 16, 5])], kernel_shape=[5], pads=[2, 2], strides=[2])
    b.rename_last("sy")
    # Bilinear resizes of the image in the coordinate modes torch writes
    # (Resize's row kernel: batch and channels kept). Modes that read the
    # output length take integer factors: onnxruntime uses the rounded
    # length where the ONNX reference (and onnxc) uses in · scale.
    resizes = [("half_pixel", [1, 1, 2, 1.5]), ("align_corners", [1, 1, 2, 3]), ("pytorch_half_pixel", [1, 1, 3, 2])]
    for k, (coord, scale) in enumerate(resizes):
        scales = b.const(f"rs{k}", scale, np.float32)
        b.op("Resize", ["x", "", scales], mode="linear", coordinate_transformation_mode=coord)
        b.rename_last(f"r{k}")
    inputs = [vi("x", F, ["N", 32, "H", "W"]), vi("v", F, ["N", 8, "VD", "VH", "VW"]), vi("s", F, ["N", 16, "T"])]
    outputs = [vi("y", F, ["N", 40, "OH", "OW"]), vi("vy", F, ["N", 12, "OVD", "OVH", "OVW"]), vi("sy", F, ["N", 24, "OT"])]
    outputs += [vi(f"r{k}", F, ["N", 32, f"RH{k}", f"RW{k}"]) for k in range(len(resizes))]
    m = b.model("ci_conv_rows", inputs, outputs, 13)
    sizes = [
        {"x": ([1, 32, 7, 7], np.float32, "normal"), "v": ([1, 8, 4, 5, 3], np.float32, "normal"), "s": ([1, 16, 37], np.float32, "normal")},
        {"x": ([2, 32, 14, 5], np.float32, "normal"), "v": ([2, 8, 3, 4, 6], np.float32, "normal"), "s": ([2, 16, 9], np.float32, "normal")},
        {"x": ([1, 32, 3, 11], np.float32, "normal"), "v": ([1, 8, 2, 7, 2], np.float32, "normal"), "s": ([1, 16, 70], np.float32, "normal")},
    ]
    return m, sizes, "im2col GEMMs whose panel vectors span several output rows: grouped, strided, dilated, 3-D and 1-D convs; bilinear resizes"


def ci_int8():
    b = Builder(12)
    rng = b.rng

    def qweight(name, k, n, signed):
        if signed:
            return b.const(name, rng.integers(-127, 128, size=(k, n)), np.int8)
        return b.const(name, rng.integers(0, 256, size=(k, n)), np.uint8)

    def dequant_matmul(x, w, k, n, signed, zp=None):
        q, s, z = b.op("DynamicQuantizeLinear", [x], n_out=3)
        ins = [q, w, z] + ([zp] if zp else [])
        acc = b.op("Cast", [b.op("MatMulInteger", ins)], to=F)
        scale = b.op("Mul", [s, b.const(w + ".scale", np.float32(0.5 / np.sqrt(k) / 64), np.float32)])
        return b.op("Add", [b.op("Mul", [acc, scale]), b.w(w + ".bias", [n], 0.1)])

    # 40 -> 70 on symmetric s8 weights, then 70 -> 37 on u8 weights with a
    # per-column zero point (row sums of A needed).
    h = dequant_matmul("x", qweight("w1", 40, 70, True), 40, 70, True)
    h = b.op("Relu", [h])
    zp = b.const("w2.zp", rng.integers(100, 156, size=(37,)), np.uint8)
    h = dequant_matmul(h, qweight("w2", 70, 37, False), 70, 37, False, zp)
    b.rename_last("y")
    # u8 activations times s8 weights with per-column scales and zero
    # points, requantized.
    xq = b.op("QuantizeLinear", ["x", b.const("xs", np.float32(0.05), np.float32), b.const("xz", np.uint8(125), np.uint8)])
    yq = b.op("QLinearMatMul", [xq, "xs", "xz", qweight("w3", 40, 53, True),
                                b.const("w3.s", rng.random(53) * 0.01 + 0.002, np.float32),
                                b.const("w3.z", rng.integers(-9, 10, size=(53,)), np.int8),
                                b.const("ys", np.float32(0.1), np.float32), b.const("yz", np.uint8(128), np.uint8)])
    b.op("DequantizeLinear", [yq, "ys", "yz"])
    b.rename_last("z")
    # s8 activations (+128 in the kernel) times u8 weights.
    sq = b.op("QuantizeLinear", ["x", "xs", b.const("sz", np.int8(-3), np.int8)])
    b.op("Cast", [b.op("MatMulInteger", [sq, qweight("w4", 40, 21, False), "sz", b.const("w4.z", np.uint8(131), np.uint8)])], to=F)
    b.rename_last("w")
    m = b.model("ci_int8", [vi("x", F, ["batch", "seq", 40])], [vi("y", F, ["batch", "seq", 37]), vi("z", F, ["batch", "seq", 53]), vi("w", F, ["batch", "seq", 21])], 13)
    sizes = [
        {"x": ([1, 7, 40], np.float32, "normal")},
        {"x": ([3, 19, 40], np.float32, "normal")},
    ]
    return m, sizes, "int8 GEMM: u8 x s8, u8 x u8 with per-column zero points, u8 x s8 requantized, s8 x u8"


def ci_int8_conv():
    b = Builder(13)
    rng = b.rng
    c = lambda name, v, t: b.const(name, v, t)  # noqa: E731
    x = b.op("QuantizeLinear", ["x", c("xs", np.float32(0.04), np.float32), c("xz", np.uint8(121), np.uint8)])

    def qconv(x, xs, xz, name, w, ws, wz, ys, yz, bias=None, **attrs):
        ins = [x, xs, xz, c(name + ".w", w, w.dtype), c(name + ".ws", ws, np.float32), c(name + ".wz", wz, w.dtype),
               c(name + ".ys", np.float32(ys), np.float32), c(name + ".yz", np.uint8(yz), np.uint8)]
        if bias is not None:
            ins.append(c(name + ".b", bias, np.int32))
        return b.op("QLinearConv", ins, **attrs)

    # 3x3 pad 1, per-channel symmetric s8 weights, bias.
    h = qconv(x, "xs", "xz", "c1", rng.integers(-127, 128, size=(20, 6, 3, 3)).astype(np.int8),
              (rng.random(20) * 0.01 + 0.002).astype(np.float32), np.zeros(20, np.int8), 0.05, 110,
              bias=rng.integers(-2000, 2000, size=20), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    # Grouped, u8 weights with a zero point, stride 2, asymmetric pads.
    h = qconv(h, "c1.ys", "c1.yz", "c2", rng.integers(0, 256, size=(12, 10, 3, 3)).astype(np.uint8),
              np.array([0.003], np.float32), np.array([131], np.uint8), 0.08, 128,
              group=2, strides=[2, 2], pads=[0, 1, 2, 1])
    # Depthwise, dilation 2, uneven pads.
    h = qconv(h, "c2.ys", "c2.yz", "c3", rng.integers(-127, 128, size=(12, 1, 3, 3)).astype(np.int8),
              (rng.random(12) * 0.01 + 0.005).astype(np.float32), np.zeros(12, np.int8), 0.06, 100,
              group=12, dilations=[2, 2], pads=[2, 1, 2, 3])
    b.op("DequantizeLinear", [h, "c3.ys", "c3.yz"])
    b.rename_last("y")
    # s8 activations (+128 in the packing) and s8 output, 3x3 stride 2.
    sx = b.op("QuantizeLinear", ["x", "xs", c("sz", np.int8(-5), np.int8)])
    sw = rng.integers(-127, 128, size=(9, 6, 3, 3)).astype(np.int8)
    sq = b.op("QLinearConv", [sx, "xs", "sz", c("s.w", sw, np.int8), c("s.ws", np.float32(0.004), np.float32),
                              c("s.wz", np.int8(0), np.int8), c("s.ys", np.float32(0.07), np.float32), c("s.yz", np.int8(3), np.int8)],
              strides=[2, 2], pads=[1, 1, 1, 1])
    b.op("DequantizeLinear", [sq, "s.ys", "s.yz"])
    b.rename_last("s")
    # ConvInteger 1x1 on the quantized input (u8 x u8 with zero points).
    ci = b.op("ConvInteger", [x, c("ci.w", rng.integers(0, 256, size=(7, 6, 1, 1)), np.uint8), "xz", c("ci.wz", np.uint8(126), np.uint8)])
    b.op("Cast", [ci], to=F)
    b.rename_last("z")
    m = b.model("ci_int8_conv", [vi("x", F, ["N", 6, "H", "W"])], [vi("y", F, ["N", 12, "OH", "OW"]), vi("s", F, ["N", 9, "SH", "SW"]), vi("z", F, ["N", 7, "H", "W"])], 13)
    sizes = [
        {"x": ([1, 6, 17, 23], np.float32, "normal")},
        {"x": ([2, 6, 9, 8], np.float32, "normal")},
    ]
    return m, sizes, "int8 convs: per-channel s8 with bias, grouped u8 with a zero point, depthwise dilated, s8 activations, 1x1 ConvInteger"


def ci_qdq():
    b = Builder(14)
    rng = b.rng
    c = lambda name, v, t: b.const(name, v, t)  # noqa: E731

    def q(x, s, z):
        return b.op("QuantizeLinear", [x, s, z])

    def dq(x, s, z, **kw):
        return b.op("DequantizeLinear", [x, s, z], **kw)

    def qdq_conv(x, xs, xz, x_scale, name, cout, cin, k, group=1, **attrs):
        w = rng.integers(-127, 128, size=(cout, cin // group, k, k))
        ws = (rng.random(cout) * 0.01 + 0.002).astype(np.float32)
        wd = dq(c(name + ".w", w, np.int8), c(name + ".ws", ws, np.float32), c(name + ".wz", np.zeros(cout), np.int8), axis=0)
        # The bias as onnxruntime's quantizer writes it: i32, scale xs·ws.
        bs = (np.float32(x_scale) * ws).astype(np.float32)
        bd = dq(c(name + ".b", rng.integers(-500, 500, size=cout), np.int32), c(name + ".bs", bs, np.float32),
                c(name + ".bz", np.zeros(cout), np.int32), axis=0)
        y = b.op("Conv", [dq(x, xs, xz), wd, bd], kernel_shape=[k, k], group=group, **attrs)
        return q(y, c(name + ".ys", np.float32(0.05), np.float32), c(name + ".yz", np.uint8(110), np.uint8))

    xs, xz = c("xs", np.float32(0.04), np.float32), c("xz", np.uint8(120), np.uint8)
    h = qdq_conv(q("x", xs, xz), xs, xz, 0.04, "c1", 16, 4, 3, pads=[1, 1, 1, 1])
    h = b.op("Relu", [dq(h, "c1.ys", "c1.yz")])
    hs, hz = c("hs", np.float32(0.04), np.float32), c("hz", np.uint8(0), np.uint8)
    # Depthwise: stays float (its own kernel on planes).
    h = qdq_conv(q(h, hs, hz), hs, hz, 0.04, "dw", 16, 16, 3, group=16, pads=[1, 1, 1, 1], strides=[2, 2])
    h = qdq_conv(h, "dw.ys", "dw.yz", 0.05, "pw", 24, 16, 1)
    b.op("DequantizeLinear", [h, "pw.ys", "pw.yz"])
    b.rename_last("y")
    # MatMul on the last axis, per-column weights, s8 output.
    ws = (rng.random(10) * 0.01 + 0.002).astype(np.float32)
    wd = dq(c("m.w", rng.integers(-127, 128, size=(5, 10)), np.int8), c("m.ws", ws, np.float32), c("m.wz", np.zeros(10), np.int8), axis=1)
    mm = b.op("MatMul", [dq(q("x", xs, xz), xs, xz), wd])
    mq = q(mm, c("m.ys", np.float32(0.02), np.float32), c("m.yz", np.int8(3), np.int8))
    b.op("DequantizeLinear", [mq, "m.ys", "m.yz"])
    b.rename_last("z")
    m = b.model("ci_qdq", [vi("x", F, ["N", 4, "H", 5])], [vi("y", F, ["N", 24, "OH", "OW"]), vi("z", F, ["N", 4, "H", 10])], 13)
    sizes = [
        {"x": ([1, 4, 9, 5], np.float32, "normal")},
        {"x": ([2, 4, 6, 5], np.float32, "normal")},
    ]
    return m, sizes, "QDQ groups fused into QLinearConv / QLinearMatMul (one quantization step from the float path)"


def ci_if_weights():
    b = Builder(18)
    # spox-style: every weight is a Constant node inside the branches; the
    # If picks a wide or a narrow head by the batch size.
    def branch(seed, name, width):
        bb = Builder(seed)
        w = bb.op("Constant", [], value=numpy_helper.from_array(
            (bb.rng.standard_normal((6, width)) * 0.4).astype(np.float32), f"{name}_w"))
        bias = bb.op("Constant", [], value=numpy_helper.from_array(
            (bb.rng.standard_normal((width,)) * 0.1).astype(np.float32), f"{name}_b"))
        h = bb.op("Relu", [bb.op("Add", [bb.op("MatMul", ["x", w]), bias])])
        w2 = bb.op("Constant", [], value=numpy_helper.from_array(
            (bb.rng.standard_normal((width, 3)) * 0.4).astype(np.float32), f"{name}_w2"))
        bb.op("MatMul", [h, w2])
        bb.rename_last(f"{name}_out")
        return helper.make_graph(bb.nodes, name, [], [vi(f"{name}_out", F, None)])
    n = b.op("Gather", [b.op("Shape", ["x"]), b.const("i0", 0)], axis=0)
    cond = b.op("Greater", [n, b.const("two", 2)])
    y = b.op("If", [cond], then_branch=branch(81, "wide", 16), else_branch=branch(82, "narrow", 4))
    b.op("Softmax", [y], axis=-1)
    b.rename_last("probs")
    m = b.model("ci_if_weights", [vi("x", F, ["N", 6])], [vi("probs", F, ["N", 3])], 17)
    sizes = [{"x": ([n_, 6], np.float32, "normal")} for n_ in (1, 4, 3)]
    return m, sizes, "spox-style: the weights are Constant nodes inside If branches chosen by the batch size"


def ci_squeeze_batch():
    b = Builder(17)
    h = b.op("Relu", [b.op("Conv", ["x", b.w("c.w", [4, 1, 3]), b.w("c.b", [4])], kernel_shape=[3], pads=[1, 1])])
    h = b.op("ReduceMean", [h], axes=[2], keepdims=1)  # [B, 4, 1]
    h = b.op("MatMul", [b.op("Transpose", [h], perm=[0, 2, 1]), b.w("o.w", [4, 1])])  # [B, 1, 1]
    sq = b.op("Squeeze", [h])  # opset 11: every dim of 1 goes, the batch too at B = 1
    b.op("Sigmoid", [sq])
    b.rename_last("score")
    b.op("Shape", [sq])
    b.rename_last("score_shape")
    # As torch's opset-9/11 exporter writes `x.squeeze()`: declared [B] (the
    # traced rank; onnxruntime returns rank 0 at B = 1 all the same), and
    # through an Identity into an output of no shape.
    b.op("Identity", [sq])
    b.rename_last("score_id")
    outputs = [vi("score", F, None), vi("score_shape", I64, [None]), vi(sq, F, ["B"]), vi("score_id", F, None)]
    m = b.model("ci_squeeze_batch", [vi("x", F, ["B", 1, "T"])], outputs, 11)
    sizes = [{"x": ([1, 1, 16], np.float32, "normal")}, {"x": ([3, 1, 20], np.float32, "normal")},
             {"x": ([2, 1, 1], np.float32, "normal")}]
    return m, sizes, "Squeeze without axes: output rank 0 at batch 1, 1 above, also where declared [B]"


def ci_squeeze_declared():
    b = Builder(11)
    h = b.op("Relu", [b.op("Conv", ["x", b.w("c.w", [4, 1, 3]), b.w("c.b", [4])], kernel_shape=[3], pads=[1, 1])])
    h = b.op("GlobalAveragePool", [h])  # [B, 4, 1]
    h = b.op("Conv", [h, b.w("o.w", [1, 4, 1]), b.w("o.b", [1])], kernel_shape=[1])  # [B, 1, 1]
    b.op("Squeeze", [h])  # [B], a scalar at B = 1
    b.rename_last("mos")
    m = b.model("ci_squeeze_declared", [vi("x", F, ["B", 1, "T"])], [vi("mos", F, ["B"])], 11)
    sizes = [{"x": ([1, 1, 12], np.float32, "normal")}, {"x": ([3, 1, 9], np.float32, "normal")}]
    return m, sizes, "Squeeze without axes declared [B] as torch writes it: checker-clean before and after fold"


# Models whose outputs pass through quantization that onnxc computes in
# integers where onnxruntime's unoptimized oracle computes in floats: a
# float rounding may move a value one quantization step (0.05 here).
ATOL = {"ci_qdq": 0.06, **CONTRIB_ATOL}

# onnx.checker refuses what these exporters write (-1 dims, an output
# without a shape); onnxruntime runs them.
UNCHECKED = {"ci_paddle_dims", "ci_if_shapes", "ci_if_ranks", "ci_squeeze_batch", *CONTRIB_UNCHECKED}

def ci_fpn():
    b = Builder(16)
    feats, h, c = [], "x", 3
    for i in range(5):
        h = b.op("Conv", [h, b.w(f"d{i}.w", [8, c, 3, 3])], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        h = b.op("Relu", [h])
        feats.append(h)
        c = 8
    scales = b.const("scales", [1, 1, 2, 2], np.float32)
    top = feats[-1]
    for i in range(3, -1, -1):
        up = b.op("Resize", [top, "", scales], mode="nearest")
        s = b.op("Add", [feats[i], up])
        top = b.op("Relu", [b.op("Conv", [s, b.w(f"u{i}.w", [8, 8, 3, 3])], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])
    b.op("Resize", [top, "", scales], mode="nearest")
    b.rename_last("y")
    m = b.model("ci_fpn", [vi("x", F, [1, 3, "H", "W"])], [vi("y", F, [1, 8, "H2", "W2"])], 13)
    sizes = [{"x": ([1, 3, 1, 1], np.float32, "normal")}, {"x": ([1, 3, 2, 2], np.float32, "normal")},
             {"x": ([1, 3, 64, 32], np.float32, "normal")}]
    return m, sizes, "feature pyramid: upsample and add, dynamic H/W; broadcasting adds at 1x1 and 2x2"


MODELS = [ci_conv_pool_batch, ci_conv_hw, ci_conv_rows, ci_mobile_block, ci_winograd, ci_int8, ci_int8_conv, ci_qdq, ci_flatten_chain, ci_attention, ci_lstm_state, ci_gru_bidir, ci_if_shapes, ci_if_ranks, ci_if_weights, ci_squeeze_batch, ci_squeeze_declared, ci_paddle_dims, ci_fpn] + ML_MODELS + CONTRIB_MODELS


def reference_oracle(path):
    """onnxruntime on an equivalent model (the entry's `reference`), for
    ops it does not run on CPU; shape_fuzz.py takes it as the oracle too
    and fold_compare.py leaves such models out."""
    import onnxruntime as ort

    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return lambda feeds: sess.run(None, feeds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", default=os.environ.get("ONNXC_CORPUS_CI", "target/corpus-ci"))
    ap.add_argument("--only", help="comma-separated model names")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    failed = 0
    for fn in MODELS:
        name = fn.__name__
        if only and name not in only:
            continue
        try:
            model, size_specs, notes = fn()
            if name not in UNCHECKED:
                onnx.checker.check_model(model)
            path = os.path.join(args.out, name + ".onnx")
            onnx.save(model, path)
            feeds = [random_feeds(spec, seed=100 + k) for k, spec in enumerate(size_specs)]
            extra = {"atol": ATOL[name]} if name in ATOL else {}
            oracle = None
            if name in CONTRIB_REFERENCE:
                # In a subdirectory: a corpus directory's *.onnx are its models.
                extra["reference"] = os.path.join("reference", name + ".onnx")
                ref_path = os.path.join(args.out, extra["reference"])
                os.makedirs(os.path.dirname(ref_path), exist_ok=True)
                onnx.save(CONTRIB_REFERENCE[name](), ref_path)
                oracle = reference_oracle(ref_path)
            e = write_entry(args.out, name, path, feeds, source="ci (onnx.helper)", exporter="ci_models.py",
                            exporter_version=onnx.__version__, notes=notes, extra=extra or None, oracle=oracle)
            print(f"{name:22} opset {e['opset']:>2}  {len(e['sizes'])} sizes  {notes}")
        except Exception as ex:  # keep going: one bad model must not stop the rest
            failed += 1
            print(f"{name:22} FAILED: {type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}", file=sys.stderr)
    failed += quantized_models.derive(args.out, only)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
