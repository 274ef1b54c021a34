"""com.microsoft models for the CI corpus (ci_models.py): the operators
onnxruntime's transformer optimizer and quantizer write, built with
onnx.helper the way those tools lay them out, several per model (one
output each), with dynamic batch and sequence dims. onnxruntime runs each
op itself (its CPU kernels), so every output is checked against it.
The fusions onnxruntime runs only on GPU (BiasAdd, BiasSplitGelu,
NhwcConv, packed MultiHeadAttention inputs) are checked against
onnxruntime running the ops they stand for (REFERENCE).

Not covered: a shared past buffer.
"""

import numpy as np
from corpus_common import GraphBuilder
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I32 = TensorProto.INT32
U8 = TensorProto.UINT8
MS = "com.microsoft"


class Graph(GraphBuilder):
    def ms(self, op_type, inputs, n_out=1, **attrs):
        return self.op(op_type, inputs, n_out, domain=MS, **attrs)

    def w(self, name, shape, scale=0.3, dtype=np.float32):
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            a = self.rng.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dtype)
        else:
            a = (self.rng.standard_normal(shape) * scale).astype(dtype)
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def out(self, name, value, elem=F, dims=None):
        super().out(name, value, elem, dims)

    def model(self, name, inputs, opset=17):
        g = helper.make_graph(self.nodes, name, inputs, self.outputs, self.inits)
        m = helper.make_model(
            g,
            opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)],
            producer_name="onnxc-corpus-ci",
        )
        m.ir_version = 8
        return m


def vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def seq_sizes(extra=None, width=16):
    """Batch 1 and above, sequence 1 and above."""
    sizes = []
    for b, s in [(1, 5), (3, 1), (2, 7)]:
        spec = {"x": ([b, s, width], np.float32, "normal")}
        for name, (dims, dtype, kind) in (extra or {}).items():
            spec[name] = ([b, s] + dims, dtype, kind)
        sizes.append(spec)
    return sizes


def ci_ms_gelu():
    g = Graph(41)
    b = g.w("bias", [16])
    g.out("gelu", g.ms("Gelu", ["x"]))
    g.out("fast_gelu_bias", g.ms("FastGelu", ["x", b]))
    g.out("fast_gelu", g.ms("FastGelu", ["x"]))
    g.out("bias_gelu", g.ms("BiasGelu", ["x", b]))
    g.out("quick_gelu", g.ms("QuickGelu", ["x"], alpha=1.702))
    g.out("quick_gelu_1", g.ms("QuickGelu", ["x"], alpha=1.0))
    m = g.model("ci_ms_gelu", [vi("x", F, ["batch", "seq", 16])])
    return m, seq_sizes(), "Gelu, FastGelu, BiasGelu, QuickGelu (com.microsoft)"


def ci_ms_layernorm():
    g = Graph(42)
    gamma, beta, bias = g.w("gamma", [16]), g.w("beta", [16]), g.w("bias", [16])
    y, _, _, s = g.ms("SkipLayerNormalization", ["x", "skip", gamma, beta, bias], n_out=4, epsilon=1e-5)
    g.out("skip_ln", y)
    g.out("skip_sum", s)
    g.out("skip_ln_plain", g.ms("SkipLayerNormalization", ["x", "skip", gamma]))
    g.out("skip_rms", g.ms("SkipSimplifiedLayerNormalization", ["x", "skip", gamma], epsilon=1e-6))
    # The transformer optimizer writes a default-domain LayerNormalization
    # and keeps the model's opset 14: onnxruntime's own kernel predates
    # opset 17.
    g.out("ln_opset14", g.op("LayerNormalization", ["x", gamma, beta], epsilon=1e-5))
    m = g.model("ci_ms_layernorm", [vi("x", F, ["batch", "seq", 16]), vi("skip", F, ["batch", "seq", 16])], opset=14)
    return m, seq_sizes({"skip": ([16], np.float32, "normal")}), ("SkipLayerNormalization (+ sum output), SkipSimplifiedLayerNormalization, "
                                                                  "LayerNormalization at opset 14 (onnxruntime's pre-standard kernel)")


def ci_ms_fused():
    g = Graph(43)
    w = g.w("w", [6, 16])
    g.out("fused_matmul_t", g.ms("FusedMatMul", ["x", w], alpha=0.25, transB=1))
    w2 = g.w("w2", [16, 5])
    g.out("fused_matmul", g.ms("FusedMatMul", ["x", w2]))
    cw, cb = g.w("cw", [4, 3, 3, 3]), g.w("cb", [4])
    c1 = g.ms("FusedConv", ["img", cw, cb], activation="Relu", pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    g.out("fused_conv_relu", c1)
    cw2 = g.w("cw2", [4, 4, 3, 3])
    c2 = g.ms("FusedConv", [c1, cw2, "", c1], activation="LeakyRelu", activation_params=[0.2], pads=[1, 1, 1, 1])
    g.out("fused_conv_leaky_sum", c2)
    g.out("fused_conv_clip", g.ms("FusedConv", [c2, cw2], activation="Clip", activation_params=[0.0, 0.5], strides=[2, 2], pads=[1, 1, 1, 1]))
    m = g.model("ci_ms_fused", [vi("x", F, ["batch", "seq", 16]), vi("img", F, ["batch", 3, "h", "w"])])
    sizes = seq_sizes()
    for k, (b, h, w_) in enumerate([(1, 5, 6), (3, 1, 1), (2, 8, 7)]):
        sizes[k]["img"] = ([b, 3, h, w_], np.float32, "normal")
    return m, sizes, "FusedMatMul (alpha, transB), FusedConv (Relu, LeakyRelu + Z, Clip)"


def ci_ms_attention():
    g = Graph(44)
    w, b = g.w("qkv_w", [16, 48]), g.w("qkv_b", [48])
    g.out("attention_mask2d", g.ms("Attention", ["x", w, b, "mask"], num_heads=2))
    g.out("attention_causal", g.ms("Attention", ["x", w, b], num_heads=4, unidirectional=1))
    g.out("attention_scaled", g.ms("Attention", ["x", w, b, "lengths"], num_heads=2, scale=0.3))
    k = g.op("MatMul", ["x", g.w("k_w", [16, 16])])
    v = g.op("MatMul", ["x", g.w("v_w", [16, 8])])
    g.out("mha", g.ms("MultiHeadAttention", ["x", k, v, g.w("mha_b", [40]), "mask"], num_heads=4))
    g.out("mha_causal", g.ms("MultiHeadAttention", ["x", k, v], num_heads=2, unidirectional=1))
    m = g.model(
        "ci_ms_attention",
        [vi("x", F, ["batch", "seq", 16]), vi("mask", I32, ["batch", "seq"]), vi("lengths", I32, ["batch"])],
    )
    sizes = seq_sizes({"mask": ([], np.int32, ("int", 0, 2))})
    for spec in sizes:
        b, s = spec["x"][0][:2]
        spec["mask"] = ([b, s], np.int32, ("int", 0, 2))
        spec["lengths"] = ([b], np.int32, ("int", 1, s + 1))
    return m, sizes, "Attention (2-D mask, causal, key lengths, scale), MultiHeadAttention (bias, padding mask, causal)"


def ci_ms_embed():
    g = Graph(45)
    words, pos, segs = g.w("words", [30, 16]), g.w("pos", [12, 16]), g.w("segs", [2, 16])
    gamma, beta = g.w("gamma", [16]), g.w("beta", [16])
    y, mask_index, s = g.ms("EmbedLayerNormalization", ["ids", "seg", words, pos, segs, gamma, beta, "mask"], n_out=3, epsilon=1e-5)
    g.out("embed", y)
    g.out("mask_index", mask_index, I32, ["batch"])
    g.out("embed_sum", s)
    g.out("embed_plain", g.ms("EmbedLayerNormalization", ["ids", "", words, pos, "", gamma, beta], n_out=2)[0])
    m = g.model(
        "ci_ms_embed",
        [vi("ids", I32, ["batch", "seq"]), vi("seg", I32, ["batch", "seq"]), vi("mask", I32, ["batch", "seq"])],
    )
    sizes = []
    for b, s in [(1, 5), (3, 1), (2, 12)]:
        sizes.append({
            "ids": ([b, s], np.int32, ("int", 0, 30)),
            "seg": ([b, s], np.int32, ("int", 0, 2)),
            "mask": ([b, s], np.int32, ("int", 0, 2)),
        })
    return m, sizes, "EmbedLayerNormalization (segments, mask index, embedding sum)"


def ci_ms_quant_matmul():
    g = Graph(46)
    wq = g.w("wq", [16, 8], dtype=np.int8)
    ws, wz = g.const("ws", 0.02), g.const("wz", 3, np.int8)
    bias = g.w("bias", [8])
    g.out("dq_matmul", g.ms("DynamicQuantizeMatMul", ["x", wq, ws, wz, bias]))
    wcol = g.const("ws_col", np.linspace(0.01, 0.03, 8))
    g.out("dq_matmul_cols", g.ms("DynamicQuantizeMatMul", ["x", wq, wcol]))
    xs, xz = g.const("xs", 0.03), g.const("xz", 128, np.uint8)
    xq = g.op("QuantizeLinear", ["x", xs, xz])
    g.out("mm_int_float", g.ms("MatMulIntegerToFloat", [xq, wq, xs, ws, xz, wz, bias]))
    x2 = g.op("Reshape", [xq, g.const("flat", [-1, 16], np.int64)])
    wg = g.w("wg", [8, 16], dtype=np.int8)
    ys, yz = g.const("ys", 0.2), g.const("yz", 100, np.uint8)
    cq = g.w("cq", [8], dtype=np.int32)
    q = g.ms("QGemm", [x2, xs, xz, wg, ws, wz, cq, ys, yz], transB=1, alpha=0.5)
    g.out("qgemm", g.op("DequantizeLinear", [q, ys, yz]))
    g.out("qgemm_float", g.ms("QGemm", [x2, xs, xz, wg, ws, wz], transB=1))
    # All zeros: onnxruntime's scale is 1, not the spec's 0 / 255.
    zq, zs, zz = g.op("DynamicQuantizeLinear", [g.op("Mul", ["x", g.const("zero", 0.0)])], n_out=3)
    g.out("dql_zeros", zq, U8)
    g.out("dql_zeros_scale", zs)
    g.out("dql_zeros_zp", zz, U8)
    m = g.model("ci_ms_quant_matmul", [vi("x", F, ["batch", "seq", 16])])
    return m, seq_sizes(), "DynamicQuantizeMatMul, MatMulIntegerToFloat, QGemm (int32 bias, requantized and float), DynamicQuantizeLinear of zeros"


def ci_ms_qlinear():
    g = Graph(47)
    s, z = g.const("s", 0.05), g.const("z", 120, np.uint8)
    s2, z2 = g.const("s2", 0.04), g.const("z2", 10, np.uint8)
    so, zo = g.const("so", 0.08), g.const("zo", 128, np.uint8)
    xq = g.op("QuantizeLinear", ["img", s, z])
    yq = g.op("QuantizeLinear", [g.op("Relu", ["img"]), s2, z2])

    def deq(name, q, scale=so, zero=zo):
        g.out(name, g.op("DequantizeLinear", [q, scale, zero]))

    deq("qadd", g.ms("QLinearAdd", [xq, s, z, yq, s2, z2, so, zo]))
    deq("qmul", g.ms("QLinearMul", [xq, s, z, yq, s2, z2, so, zo]))
    deq("qsigmoid", g.ms("QLinearSigmoid", [xq, s, z, so, zo]))
    deq("qleaky", g.ms("QLinearLeakyRelu", [xq, s, z, so, zo], alpha=0.1))
    deq("qconcat", g.ms("QLinearConcat", [so, zo, xq, s, z, yq, s2, z2], axis=1))
    deq("qgap", g.ms("QLinearGlobalAveragePool", [xq, s, z, so, zo]))
    deq("qavg", g.ms("QLinearAveragePool", [xq, s, z, so, zo], kernel_shape=[2, 2], strides=[2, 2]))
    sm = g.const("sm", 1.0 / 256)
    sm_z = g.const("sm_z", 0, np.uint8)
    # Over the (static) channels: over one element, onnxruntime's uint8
    # softmax wraps 256 to 0 where the spec saturates to 255.
    deq("qsoftmax", g.ms("QLinearSoftmax", [xq, s, z, sm, sm_z], axis=1, opset=13), sm, sm_z)
    m = g.model("ci_ms_qlinear", [vi("img", F, ["batch", 3, "h", "w"])])
    sizes = [{"img": ([b, 3, h, w], np.float32, "normal")} for b, h, w in [(1, 4, 6), (3, 2, 2), (2, 6, 8)]]
    return m, sizes, "QLinearAdd/Mul/Sigmoid/LeakyRelu/Concat/GlobalAveragePool/AveragePool/Softmax"


def ci_ms_qattention():
    g = Graph(48)
    xs, xz = g.const("xs", 0.03), g.const("xz", 128, np.uint8)
    xq = g.op("QuantizeLinear", ["x", xs, xz])
    w = g.w("w", [16, 48], dtype=np.int8)
    ws, bias = g.const("ws", 0.01), g.w("bias", [48])
    g.out("qattention", g.ms("QAttention", [xq, w, bias, xs, ws, "mask", xz], num_heads=2))
    g.out("qattention_plain", g.ms("QAttention", [xq, w, bias, xs, ws], num_heads=4, unidirectional=1))
    m = g.model("ci_ms_qattention", [vi("x", F, ["batch", "seq", 16]), vi("mask", I32, ["batch", "seq"])])
    sizes = seq_sizes({"mask": ([], np.int32, ("int", 0, 2))})
    for spec in sizes:
        b, s_ = spec["x"][0][:2]
        spec["mask"] = ([b, s_], np.int32, ("int", 1, 2))
    return m, sizes, "QAttention (uint8 input, int8 weight, 2-D mask, causal)"


def ci_ms_attention_past():
    """GPT-2-style decoding as the transformer optimizer writes it: causal
    Attention over a past state [2, B, H, P, head] with a 2-D mask over
    past and new keys, giving the present state; MultiHeadAttention with
    past_key / past_value giving present_key / present_value, and as cross
    attention over per-head keys and values; both with 1-D key lengths
    over the past and new keys, Attention with [2B] key ends and starts."""
    g = Graph(49)
    w, b = g.w("qkv_w", [16, 48]), g.w("qkv_b", [48])
    y, present = g.ms("Attention", ["x", w, b, "mask", "past"], n_out=2, num_heads=2, unidirectional=1)
    g.out("y", y)
    g.out("present", present)
    k = g.op("MatMul", ["x", g.w("k_w", [16, 16])])
    v = g.op("MatMul", ["x", g.w("v_w", [16, 16])])
    my, pk, pv = g.ms("MultiHeadAttention", ["x", k, v, "", "mask", "", "past_key", "past_value"], n_out=3, num_heads=4)
    g.out("mha_y", my)
    g.out("mha_present_key", pk)
    g.out("mha_present_value", pv)
    # Cross attention over per-head key and value [B, H, L, head].
    g.out("mha_cross", g.ms("MultiHeadAttention", ["x", "past_key", "past_value"], num_heads=4))
    # 1-D key lengths count the past keys and the new ones.
    ly, _ = g.ms("Attention", ["x", w, b, "lengths", "past"], n_out=2, num_heads=2)
    g.out("lengths_y", ly)
    lmy, _, _ = g.ms("MultiHeadAttention", ["x", k, v, "", "lengths", "", "past_key", "past_value"], n_out=3, num_heads=4)
    g.out("lengths_mha_y", lmy)
    # 1-D [2B]: the keys' ends, then their starts (left and right padding).
    by, _ = g.ms("Attention", ["x", w, b, "bounds", "past"], n_out=2, num_heads=2)
    g.out("bounds_y", by)
    m = g.model(
        "ci_ms_attention_past",
        [
            vi("x", F, ["batch", "seq", 16]),
            vi("mask", I32, ["batch", "total"]),
            vi("lengths", I32, ["batch"]),
            vi("bounds", I32, ["two_batch"]),
            vi("past", F, [2, "batch", 2, "past", 8]),
            vi("past_key", F, ["batch", 4, "past", 4]),
            vi("past_value", F, ["batch", 4, "past", 4]),
        ],
    )
    sizes = []
    for bsz, s_, p_ in [(1, 1, 4), (3, 2, 1), (2, 5, 3)]:
        sizes.append({
            "x": ([bsz, s_, 16], np.float32, "normal"),
            "mask": ([bsz, p_ + s_], np.int32, ("int", 0, 2)),
            "lengths": ([bsz], np.int32, ("int", 1, p_ + s_ + 1)),
            "bounds": ([2 * bsz], np.int32, ("int", 0, p_ + s_ + 1)),
            "past": ([2, bsz, 2, p_, 8], np.float32, "normal"),
            "past_key": ([bsz, 4, p_, 4], np.float32, "normal"),
            "past_value": ([bsz, 4, p_, 4], np.float32, "normal"),
        })
    return m, sizes, "Attention with past/present (causal, 2-D mask; 1-D lengths), MultiHeadAttention with past_key/past_value"


def attention_shared(reference):
    """Attention with past_present_share_buffer (onnxruntime's GPT-2 beam
    search for GPU): the past is a buffer [2, B, H, M, head] holding
    past_sequence_length positions; the present is that buffer with the
    new keys and values written after them. Or (reference) regular past
    state cut from the buffer, the present written back into it, which
    onnxruntime's CPU provider runs."""
    g = Graph(51)
    w, b = g.w("qkv_w", [16, 48]), g.w("qkv_b", [48])
    if reference:
        p = g.op("Reshape", [g.op("Cast", ["past_len"], to=7), g.const("one", [1], "int64")])
        zero, axis = g.const("zero", [0], "int64"), g.const("axis", [3], "int64")
        past = g.op("Slice", ["past", zero, p, axis])
        # The mask reshaped to [batch, past_len + seq]: the same values, and
        # an error where the sizes disagree (the shape fuzzer's random
        # sizes), where the shared-buffer kernel has no result either.
        seq = g.op("Slice", [g.op("Shape", ["x"]), g.const("one_b", [1], "int64"), g.const("two", [2], "int64")])
        batch = g.op("Slice", [g.op("Shape", ["mask"]), zero, g.const("one_c", [1], "int64")])
        mask = g.op("Reshape", ["mask", g.op("Concat", [batch, g.op("Add", [p, seq])], axis=0)])
        y, present = g.ms("Attention", ["x", w, b, mask, past], n_out=2, num_heads=2, unidirectional=1)
        filled = g.op("Reshape", [g.op("Gather", [g.op("Shape", [present]), g.const("three", 3, "int64")]), g.const("one_", [1], "int64")])
        rest = g.op("Slice", ["past", filled, g.const("end", [2**62], "int64"), axis])
        present = g.op("Concat", [present, rest], axis=3)
    else:
        y, present = g.ms("Attention", ["x", w, b, "mask", "past", "", "past_len"], n_out=2, num_heads=2, unidirectional=1,
                          past_present_share_buffer=1)
    g.out("y", y)
    g.out("present", present)
    inputs = [vi("x", F, ["batch", "seq", 16]), vi("mask", I32, ["batch", "total"]), vi("past", F, [2, "batch", 2, "max", 8]),
              vi("past_len", I32, [1])]
    return g.model("ci_ms_attention_shared", inputs)


def ci_ms_attention_shared():
    sizes = []
    for bsz, s_, p_, max_ in [(1, 1, 4, 8), (3, 2, 1, 6), (2, 5, 3, 12)]:
        sizes.append({
            "x": ([bsz, s_, 16], np.float32, "normal"),
            "mask": ([bsz, p_ + s_], np.int32, ("int", 0, 2)),
            "past": ([2, bsz, 2, max_, 8], np.float32, "normal"),
            "past_len": ([1], np.int32, ("int", p_, p_ + 1)),
        })
    return attention_shared(False), sizes, "Attention with past_present_share_buffer (a past buffer and past_sequence_length)"


def gpu_forms(reference):
    """The GPU providers' fusions in a diffusion U-Net, or (reference) the
    ops they stand for, which onnxruntime's CPU provider runs."""
    g = Graph(50)
    h = g.op("MatMul", ["x", g.w("h_w", [16, 16])])
    bias = g.w("h_b", [16])
    if reference:
        g.out("bias_add", g.op("Add", [g.op("Add", [h, bias]), "x"]))
    else:
        g.out("bias_add", g.ms("BiasAdd", [h, bias, "x"]))
    wide, wide_b = g.op("MatMul", ["x", g.w("g_w", [16, 32])]), g.w("g_b", [32])
    if reference:
        left, right = g.op("Split", [g.op("Add", [wide, wide_b])], n_out=2, axis=-1, num_outputs=2)
        g.out("bias_split_gelu", g.op("Mul", [left, g.ms("Gelu", [right])]))
    else:
        g.out("bias_split_gelu", g.ms("BiasSplitGelu", [wide, wide_b]))
    # Packed QKV [B, S, N, 3, H] and packed KV [B, L, N, 2, H].
    qkv = g.op("Reshape", [g.op("MatMul", ["x", g.w("qkv_w", [16, 48])]), g.const("qkv_shape", [0, 0, 2, 3, 8], "int64")])
    q = g.op("MatMul", ["x", g.w("q_w", [16, 16])])
    kv = g.op("Reshape", [g.op("MatMul", ["x", g.w("kv_w", [16, 32])]), g.const("kv_shape", [0, 0, 2, 2, 8], "int64")])
    merge = g.const("merge", [0, 0, -1], "int64")
    if reference:
        parts = [g.op("Reshape", [p, merge]) for p in g.op("Split", [qkv], n_out=3, axis=3, num_outputs=3)]
        g.out("mha_packed_qkv", g.ms("MultiHeadAttention", parts, num_heads=2))
        k, v = (g.op("Reshape", [p, merge]) for p in g.op("Split", [kv], n_out=2, axis=3, num_outputs=2))
        g.out("mha_packed_kv", g.ms("MultiHeadAttention", [q, k, v], num_heads=2))
    else:
        g.out("mha_packed_qkv", g.ms("MultiHeadAttention", [qkv], num_heads=2))
        g.out("mha_packed_kv", g.ms("MultiHeadAttention", [q, kv], num_heads=2))
    # NhwcConv on x as a channels-last image [B, S, 4, 4], weights [M, kH, kW, C].
    img = g.op("Reshape", ["x", g.const("img_shape", [0, 0, 4, 4], "int64")])
    w = g.w("conv_w", [6, 3, 3, 4])
    conv_b = g.w("conv_b", [6])
    if reference:
        nchw = g.op("Transpose", [img], perm=[0, 3, 1, 2])
        w_nchw = g.op("Transpose", [w], perm=[0, 3, 1, 2])
        y = g.op("Conv", [nchw, w_nchw, conv_b], pads=[1, 1, 1, 1], strides=[1, 2])
        g.out("nhwc_conv", g.op("Transpose", [y], perm=[0, 2, 3, 1]))
    else:
        g.out("nhwc_conv", g.ms("NhwcConv", [img, w, conv_b], pads=[1, 1, 1, 1], strides=[1, 2]))
    return g.model("ci_ms_gpu_forms", [vi("x", F, ["batch", "seq", 16])], opset=18)


def ci_ms_gpu_forms():
    """BiasAdd, BiasSplitGelu, MultiHeadAttention with packed QKV and packed
    KV, NhwcConv: the transformer optimizer's fusions for GPU providers."""
    return gpu_forms(False), seq_sizes(), "GPU-provider fusions: BiasAdd, BiasSplitGelu, packed MHA, NhwcConv"


MODELS = [ci_ms_gelu, ci_ms_layernorm, ci_ms_fused, ci_ms_attention, ci_ms_attention_past, ci_ms_embed, ci_ms_quant_matmul,
          ci_ms_qlinear, ci_ms_qattention, ci_ms_gpu_forms, ci_ms_attention_shared]

# Models onnxruntime's CPU provider cannot run: the oracle is onnxruntime
# running this equivalent model instead.
REFERENCE = {"ci_ms_gpu_forms": lambda: gpu_forms(True), "ci_ms_attention_shared": lambda: attention_shared(True)}

# QLinear activations: onnxruntime computes them with its own float order
# (scale ratios, lookup tables), which may move a value by one step (the
# output scale). The integer matmuls match exactly.
ATOL = {"ci_ms_qlinear": 0.081}

# Outputs are declared without shapes, as onnxruntime's tools often leave
# them: onnx.checker refuses that, onnxruntime runs it.
UNCHECKED = {f.__name__ for f in MODELS}
