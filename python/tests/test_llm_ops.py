"""onnxruntime's operators of int4/int8 language models (issue 33), against
onnxruntime at awkward sizes: K not a multiple of the block, odd N, rows
0, 1 and several, batch dims, every zero-point form."""

import numpy as np
import onnx
import pytest
from helpers import ort_session
from onnx import TensorProto, helper, numpy_helper

import onnxc


def pack_codes(q, bits):
    """uint8 codes [..., n] (n a multiple of 8 / bits) packed low bits first."""
    per = 8 // bits
    q = q.reshape(*q.shape[:-1], q.shape[-1] // per, per)
    out = np.zeros(q.shape[:-1], np.uint8)
    for i in range(per):
        out |= (q[..., i] << (i * bits)).astype(np.uint8)
    return out


def quantize(w, bits, block, zp_form):
    """w [N, K] as MatMulNBits' (B [N, blocks, blob], scales [N * blocks],
    zero points or None), asymmetric unless zp_form is 'none'."""
    n, k = w.shape
    blocks = -(-k // block)
    padded = np.zeros((n, blocks * block), np.float32)
    padded[:, :k] = w
    padded = padded.reshape(n, blocks, block)
    top = (1 << bits) - 1
    if zp_form == "none":
        zp = np.full((n, blocks), 1 << (bits - 1), np.float32)
        scale = np.abs(padded).max(-1) / (1 << (bits - 1))
    else:
        lo, hi = padded.min(-1), padded.max(-1)
        scale = (hi - lo) / top
        zp = np.clip(np.round(-lo / np.maximum(scale, 1e-6)), 0, top)
    scale = np.maximum(scale, 1e-6).astype(np.float32)
    q = np.clip(np.round(padded / scale[..., None] + zp[..., None]), 0, top).astype(np.uint8)
    codes = pack_codes(q, bits)
    if zp_form == "packed":
        per_row = -(-blocks * bits // 8) * (8 // bits)
        z = np.zeros((n, per_row), np.uint8)
        z[:, :blocks] = zp.astype(np.uint8)
        zero_points = pack_codes(z, bits).reshape(-1)
    elif zp_form == "float":
        zero_points = zp.astype(np.float32).reshape(-1)
    else:
        zero_points = None
    return codes, scale.reshape(-1), zero_points


def matmul_nbits_model(k, n, bits, block, zp_form, bias, lead, seed=0):
    rng = np.random.default_rng(seed)
    codes, scales, zero_points = quantize(rng.standard_normal((n, k)).astype(np.float32), bits, block, zp_form)
    inits = [numpy_helper.from_array(codes, "B"), numpy_helper.from_array(scales, "scales")]
    inputs = ["A", "B", "scales"]
    if zero_points is not None:
        inits.append(numpy_helper.from_array(zero_points, "zero_points"))
    inputs.append("zero_points" if zero_points is not None else "")
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias"))
        inputs += ["", "bias"]
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n, bits=bits,
                            block_size=block)
    graph = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("A", TensorProto.FLOAT, lead + [k])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, lead + [n])], inits)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 21),
                                                                  helper.make_opsetid("com.microsoft", 1)])


# (K, N, bits, block_size, zero points, bias, leading dims of A). onnxruntime
# computes 8 bits only with packed or absent zero points.
CASES = [
    (64, 8, 4, 32, "none", False, ["M"]),
    (100, 7, 4, 32, "packed", True, ["M"]),
    (80, 6, 4, 16, "float", False, ["b", "M"]),
    (96, 5, 8, 16, "packed", False, ["b", "M"]),
    (300, 9, 8, 256, "none", False, ["M"]),
    (33, 3, 2, 16, "packed", True, ["M"]),
    (256, 17, 4, 128, "float", True, [1, "M"]),
    (1000, 40, 4, 64, "packed", True, ["M"]),
]


@pytest.mark.parametrize("k,n,bits,block,zp_form,bias,lead", CASES)
def test_matmul_nbits_matches_onnxruntime(k, n, bits, block, zp_form, bias, lead):
    model = matmul_nbits_model(k, n, bits, block, zp_form, bias, lead).SerializeToString()
    want, got = ort_session(model), onnxc.InferenceSession(model)
    rng = np.random.default_rng(1)
    for rows in (1, 5, 0, 37, 100):
        shape = [2 if d == "b" else rows if d == "M" else d for d in lead] + [k]
        a = rng.standard_normal(shape).astype(np.float32)
        (w,), (g,) = want.run(None, {"A": a}), got.run(None, {"A": a})
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * np.sqrt(k))


def test_matmul_nbits_refuses_weights_that_do_not_match_its_attributes():
    model = matmul_nbits_model(64, 8, 4, 32, "none", False, ["M"])
    node = model.graph.node[0]
    for a in node.attribute:
        if a.name == "N":
            a.i = 9  # B holds 8 rows
    with pytest.raises(Exception, match="B does not match K, N and block_size"):
        onnxc.InferenceSession(model.SerializeToString()).run(None, {"A": np.zeros((1, 64), np.float32)})


def test_fold_keeps_matmul_nbits_for_onnxruntime(tmp_path):
    model = matmul_nbits_model(100, 7, 4, 32, "packed", True, ["M"])
    src, dst = tmp_path / "q.onnx", tmp_path / "q.folded.onnx"
    onnx.save(model, src)
    onnxc.fold(src, dst)
    folded = onnx.load(dst)
    assert [(n.domain, n.op_type) for n in folded.graph.node] == [("com.microsoft", "MatMulNBits")]
    a = np.random.default_rng(2).standard_normal((3, 100)).astype(np.float32)
    np.testing.assert_array_equal(ort_session(str(dst)).run(None, {"A": a})[0],
                                  ort_session(str(src)).run(None, {"A": a})[0])


def contrib_model(node, inputs, inits, opset=21):
    graph = helper.make_graph([node], "llm", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", opset),
                                                                   helper.make_opsetid("com.microsoft", 1)])


def same_as_onnxruntime(model, feeds, atol=1e-5):
    bytes_ = model.SerializeToString()
    want, got = ort_session(bytes_), onnxc.InferenceSession(bytes_)
    for feed in feeds:
        (w,), (g,) = want.run(None, feed), got.run(None, feed)
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol)


def test_simplified_layer_normalization_in_the_default_domain():
    """As onnxruntime's model builder writes it: domain "", RMS norm."""
    rng = np.random.default_rng(3)
    scale = numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "scale")
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], epsilon=1e-6, axis=-1)
    model = contrib_model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", 40])], [scale])
    same_as_onnxruntime(model, [{"x": rng.standard_normal((b, s, 40)).astype(np.float32)}
                                for b, s in ((1, 1), (2, 7), (1, 0))])


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("offset", [False, True])
def test_rotary_embedding_of_onnxruntime(interleaved, offset):
    heads, head, cache = 3, 8, 32
    rng = np.random.default_rng(4)
    inits = [numpy_helper.from_array(rng.standard_normal((cache, head // 2)).astype(np.float32), n)
             for n in ("cos", "sin")]
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain="com.microsoft",
                            interleaved=interleaved, num_heads=heads)
    pos_dims = [1] if offset else ["B", "S"]
    model = contrib_model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", heads * head]),
                                 helper.make_tensor_value_info("pos", TensorProto.INT64, pos_dims)], inits)
    feeds = []
    for b, s in ((1, 1), (2, 5)):
        pos = np.array([7]) if offset else rng.integers(0, cache, (b, s))
        feeds.append({"x": rng.standard_normal((b, s, heads * head)).astype(np.float32), "pos": pos})
    same_as_onnxruntime(model, feeds)


@pytest.mark.parametrize("bits,zero_points", [(4, False), (4, True), (8, False), (8, True)])
def test_gather_block_quantized_rows(bits, zero_points):
    """An int4/int8 embedding table: only the gathered rows dequantized."""
    rows, width, block = 50, 64, 16
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 1 << bits, (rows, width)).astype(np.uint8)
    data = pack_codes(codes, bits) if bits == 4 else codes
    inits = [numpy_helper.from_array(data, "data"),
             numpy_helper.from_array(rng.random((rows, width // block)).astype(np.float32), "scales")]
    inputs = ["data", "ids", "scales"]
    if zero_points:
        zp = rng.integers(0, 1 << bits, (rows, width // block)).astype(np.uint8)
        inits.append(numpy_helper.from_array(pack_codes(zp, bits) if bits == 4 else zp, "zp"))
        inputs.append("zp")
    node = helper.make_node("GatherBlockQuantized", inputs, ["y"], domain="com.microsoft", bits=bits,
                            block_size=block)
    model = contrib_model(node, [helper.make_tensor_value_info("ids", TensorProto.INT64, ["B", "S"])], inits)
    same_as_onnxruntime(model, [{"ids": rng.integers(0, rows, (b, s))} for b, s in ((1, 1), (2, 9), (1, 0))])


@pytest.mark.parametrize("config", ["tiny", "tiny-phi"])
def test_tiny_int4_decoder_decodes_like_onnxruntime(tmp_path, config):
    """scripts/llm_model.py's int4 decoders in the model builder's form
    (Llama-style with grouped KV heads; Phi-style with packed QKV, partial
    rotary, parallel MLP), tiny configs: a prompt then greedy steps give
    onnxruntime's tokens."""
    import sys

    from helpers import REPO

    sys.path.insert(0, str(REPO / "scripts"))
    import llm_model

    cfg = llm_model.CONFIGS[config]
    path = tmp_path / "tiny.onnx"
    onnx.save(llm_model.build(cfg), path, save_as_external_data=True, location="tiny.onnx.data")
    prompt = [5, 77, 301, 2, 9]
    want = llm_model.decode(ort_session(str(path)), cfg, prompt, 8)[0]
    got = llm_model.decode(onnxc.InferenceSession(str(path)), cfg, prompt, 8)[0]
    assert got == want
