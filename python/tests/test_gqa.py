"""onnxruntime's GroupQueryAttention (issue 33) against onnxruntime: first
prompts, decode steps, later prompts, ragged batches, a past buffer longer
than the sequence (shared-buffer mode, through IOBinding), local windows,
softcap, head sinks, attention_bias, rotary forms, packed QKV and
bidirectional attention."""

import numpy as np
import pytest
from helpers import ort_session
from onnx import TensorProto, helper, numpy_helper

import onnxc

INPUTS = ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length", "cos_cache",
          "sin_cache", "position_ids", "attention_bias", "head_sink"]


def gqa_model(heads, kv_heads, head, packed=False, past=True, rotary_half=0, position_ids=False, bias=False,
              sink=False, **attrs):
    rng = np.random.default_rng(11)
    present = {"query", "seqlens_k", "total_sequence_length"}
    present |= set() if packed else {"key", "value"}
    present |= {"past_key", "past_value"} if past else set()
    present |= {"position_ids"} if position_ids else set()
    present |= {"attention_bias"} if bias else set()
    present |= {"head_sink"} if sink else set()
    inits = []
    if rotary_half:
        present |= {"cos_cache", "sin_cache"}
        attrs["do_rotary"] = 1
        for n in ("cos_cache", "sin_cache"):
            inits.append(numpy_helper.from_array(rng.standard_normal((64, rotary_half)).astype(np.float32), n))
    names = [n if n in present else "" for n in INPUTS]
    while names[-1] == "":
        names.pop()
    node = helper.make_node("GroupQueryAttention", names, ["y", "present_key", "present_value"],
                            domain="com.microsoft", num_heads=heads, kv_num_heads=kv_heads, **attrs)
    f = TensorProto.FLOAT
    width = (heads + 2 * kv_heads) * head if packed else heads * head
    types = {"query": (f, ["B", "S", width]), "key": (f, ["B", "S", kv_heads * head]),
             "value": (f, ["B", "S", kv_heads * head]), "past_key": (f, ["B", kv_heads, "P", head]),
             "past_value": (f, ["B", kv_heads, "P", head]), "seqlens_k": (TensorProto.INT32, ["B"]),
             "total_sequence_length": (TensorProto.INT32, []), "position_ids": (TensorProto.INT64, ["B", "S"]),
             "attention_bias": (f, ["b", "h", "S", "T"]), "head_sink": (f, [heads])}
    inputs = [helper.make_tensor_value_info(n, *types[n]) for n in INPUTS if n in present and n in types]
    outputs = [helper.make_tensor_value_info(n, f, None) for n in ("y", "present_key", "present_value")]
    graph = helper.make_graph([node], "gqa", inputs, outputs, inits)
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 21),
                                                                  helper.make_opsetid("com.microsoft", 1)])


def gqa_feeds(model, batch, seq, past, seqlens, total, seed=0):
    """Random feeds for the model's inputs; past None means no past inputs."""
    rng = np.random.default_rng(seed)
    node = model.graph.node[0]
    heads = next(a.i for a in node.attribute if a.name == "num_heads")
    dims = {"B": batch, "S": seq, "P": past or 0, "T": total}
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value if d.dim_param == "" else dims.get(d.dim_param) for d in vi.type.tensor_type.shape.dim]
        if vi.name == "attention_bias":
            shape = [batch, heads, seq, total]
        if vi.name == "seqlens_k":
            feeds[vi.name] = np.array(seqlens, np.int32)
        elif vi.name == "total_sequence_length":
            feeds[vi.name] = np.array(total, np.int32)
        elif vi.name == "position_ids":
            feeds[vi.name] = rng.integers(0, 60 - seq, (batch, 1)) + np.arange(seq)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def check_present(got, want, feeds, which):
    """Rows up to each batch row's new keys are onnxruntime's; rows past
    them keep the past's (onnxruntime's separate buffers zero them)."""
    past = feeds.get("past_" + which)
    past_rows = 0 if past is None else past.shape[2]
    assert got.shape == want.shape
    for b, n in enumerate(feeds["seqlens_k"]):
        filled = int(n) + 1
        np.testing.assert_allclose(got[b, :, :filled], want[b, :, :filled], rtol=1e-5, atol=1e-6)
        tail = got[b, :, filled:]
        kept = min(past_rows, got.shape[2]) - filled
        if kept > 0:
            np.testing.assert_array_equal(tail[:, :kept], past[b, :, filled:filled + kept])
        assert not tail[:, max(kept, 0):].any()


# (model arguments, [(batch, seq, past rows or None, seqlens_k, total)]).
CASES = {
    "first_prompt": (dict(heads=4, kv_heads=2, head=8, past=False), [(2, 5, None, [4, 4], 5), (1, 1, None, [0], 1)]),
    "prompt_after_empty_past": (dict(heads=4, kv_heads=2, head=8), [(2, 5, 0, [4, 4], 5)]),
    "decode": (dict(heads=6, kv_heads=2, head=8), [(2, 1, 6, [6, 6], 7), (3, 1, 9, [9, 9, 9], 10)]),
    "decode_ragged": (dict(heads=4, kv_heads=2, head=8), [(2, 1, 6, [6, 3], 7)]),
    "later_prompt": (dict(heads=4, kv_heads=2, head=8), [(1, 3, 6, [8], 9)]),
    "long_past_buffer": (dict(heads=4, kv_heads=2, head=8), [(2, 1, 10, [6, 3], 7), (1, 4, 12, [6], 7)]),
    "local_window": (dict(heads=4, kv_heads=1, head=8, local_window_size=3),
                     [(1, 1, 9, [9], 10), (1, 7, None, [6], 7)]),
    "softcap_and_scale": (dict(heads=2, kv_heads=2, head=8, softcap=1.5, scale=0.9), [(1, 3, 4, [6], 7)]),
    "smooth_softmax": (dict(heads=2, kv_heads=2, head=8, smooth_softmax=1), [(1, 3, 4, [6], 7)]),
    "head_sink_in_window": (dict(heads=4, kv_heads=2, head=8, sink=True, local_window_size=4),
                            [(1, 2, 9, [10], 11), (2, 3, None, [2, 2], 3)]),
    "attention_bias": (dict(heads=4, kv_heads=2, head=8, bias=True, softcap=2.0),
                       [(2, 3, None, [2, 2], 3), (1, 2, 5, [6], 7)]),
    "rotary": (dict(heads=4, kv_heads=2, head=16, rotary_half=8), [(2, 1, 6, [6, 4], 7), (2, 4, None, [3, 3], 4)]),
    "rotary_interleaved": (dict(heads=4, kv_heads=2, head=16, rotary_half=8, rotary_interleaved=1),
                           [(2, 1, 6, [6, 4], 7)]),
    "rotary_partial": (dict(heads=2, kv_heads=1, head=32, rotary_half=8), [(1, 2, 5, [6], 7)]),
    "rotary_position_ids": (dict(heads=4, kv_heads=2, head=16, rotary_half=8, position_ids=True),
                            [(2, 1, 6, [6, 4], 7), (2, 4, None, [3, 3], 4)]),
    "packed_qkv": (dict(heads=4, kv_heads=2, head=16, packed=True, rotary_half=8), [(2, 1, 5, [5, 5], 6)]),
    "bidirectional": (dict(heads=4, kv_heads=2, head=8, causal=0), [(1, 2, 3, [4], 5), (2, 1, 6, [6, 3], 7)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_group_query_attention_matches_onnxruntime(case):
    args, runs = CASES[case]
    model = gqa_model(**args)
    data = model.SerializeToString()
    want, got = ort_session(data), onnxc.InferenceSession(data)
    for i, (batch, seq, past, seqlens, total) in enumerate(runs):
        feeds = gqa_feeds(model, batch, seq, past, seqlens, total, seed=i)
        w, g = want.run(None, feeds), got.run(None, feeds)
        np.testing.assert_allclose(g[0], w[0], rtol=1e-5, atol=1e-5)
        check_present(g[1], w[1], feeds, "key")
        check_present(g[2], w[2], feeds, "value")


def test_shared_buffer_is_onnxruntime_with_bound_buffers():
    """With past and present bound to one buffer, onnxruntime updates it in
    place: every row of the present then equals onnxc's."""
    import onnxruntime as ort

    model = gqa_model(heads=4, kv_heads=2, head=16, rotary_half=8)
    data = model.SerializeToString()
    want, got = ort_session(data), onnxc.InferenceSession(data)
    feeds = gqa_feeds(model, 2, 1, 12, [7, 4], 8, seed=3)
    ours = got.run(None, feeds)
    binding = want.io_binding()
    buffers = {}
    for name, value in feeds.items():
        if name.startswith("past_"):
            buffers[name] = ort.OrtValue.ortvalue_from_numpy(value.copy())
            binding.bind_ortvalue_input(name, buffers[name])
        else:
            binding.bind_cpu_input(name, value)
    binding.bind_output("y")
    binding.bind_ortvalue_output("present_key", buffers["past_key"])
    binding.bind_ortvalue_output("present_value", buffers["past_value"])
    want.run_with_iobinding(binding)
    np.testing.assert_allclose(ours[0], binding.copy_outputs_to_cpu()[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[1], buffers["past_key"].numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours[2], buffers["past_value"].numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("batch,seq", [(0, 1), (1, 0)])
def test_empty_batch_or_sequence(batch, seq):
    """onnxruntime crashes on an empty batch; onnxc gives empty results
    shaped as the cache rules say."""
    model = gqa_model(heads=4, kv_heads=2, head=16, rotary_half=8)
    sess = onnxc.InferenceSession(model.SerializeToString())
    feeds = gqa_feeds(model, batch, seq, 5, [4 + seq] * batch, 5 + seq)
    y, pk, pv = sess.run(None, feeds)
    assert y.shape == (batch, seq, 64)
    assert pk.shape == pv.shape == (batch, 2, 5 + seq, 16)
    if batch:
        np.testing.assert_array_equal(pk, feeds["past_key"])


@pytest.mark.parametrize("attrs,needle", [
    (dict(kv_cache_bit_width=4), "kv_cache_bit_width"),
    (dict(sliding_window_cache=1), "sliding_window_cache"),
    (dict(qk_output=1), "qk_output"),
    (dict(k_quant_type="PER_TENSOR"), "k_quant_type"),
    (dict(kv_heads=3), "kv_num_heads"),
])
def test_unsupported_forms_are_refused_by_name(attrs, needle):
    args = dict(heads=4, kv_heads=2, head=8)
    args.update(attrs)
    with pytest.raises(onnxc.CompileError, match=needle):
        onnxc.InferenceSession(gqa_model(**args).SerializeToString())


def test_positions_past_the_rotary_cache_are_an_error():
    """A position past cos_cache's rows is an error, as in onnxruntime; no
    read goes past the cache."""
    model = gqa_model(heads=4, kv_heads=2, head=16, rotary_half=8)
    sess = onnxc.InferenceSession(model.SerializeToString())
    feeds = gqa_feeds(model, 1, 1, 70, [70], 71)
    with pytest.raises(onnxc.InvalidArgument, match="position is not a row of cos_cache"):
        sess.run(None, feeds)
    ok = gqa_feeds(model, 1, 1, 60, [60], 61)
    assert sess.run(None, ok)[0].shape == (1, 1, 64)
