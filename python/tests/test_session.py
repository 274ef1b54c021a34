"""The InferenceSession API: signature, outputs by name, the library cache,
inputs without copies."""

import platform
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from helpers import assert_close, ort_session, random_feed
from onnx import TensorProto, helper

import onnxc


def dynamic_model(path):
    """y = relu(a + b) over [batch, 4] with a named batch dim, z = sum(a)."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", 4])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [])
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["y"], name="relu"),
        helper.make_node("ReduceSum", ["a"], ["z"], name="sum", keepdims=0),
    ]
    g = helper.make_graph(nodes, "dyn", [a, b], [y, z])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def test_signature_like_onnxruntime(zoo, cache_dir):
    path = zoo("bert-tiny", light=False)
    sess = onnxc.InferenceSession(path, cache_dir=cache_dir)
    ref = ort_session(path)
    for ours, theirs in [(sess.get_inputs(), ref.get_inputs()), (sess.get_outputs(), ref.get_outputs())]:
        assert [(a.name, a.type) for a in ours] == [(b.name, b.type) for b in theirs]
        for a, b in zip(ours, theirs):
            # Dynamic dims carry the model's names, as in onnxruntime.
            assert len(a.shape) == len(b.shape)
            for x, y in zip(a.shape, b.shape):
                assert x == y or (isinstance(y, str) and x in (y, None)), (a, b)
    assert sess.get_inputs()[0].shape[0] == "batch"
    assert "NodeArg(name=" in repr(sess.get_inputs()[0])
    assert sess.get_providers() == ["CPUExecutionProvider"]


def test_dynamic_dims_run_at_any_size(tmp_path, cache_dir):
    path = dynamic_model(tmp_path / "dyn.onnx")
    sess = onnxc.InferenceSession(path, cache_dir=cache_dir)
    assert [i.shape for i in sess.get_inputs()] == [["batch", 4], ["batch", 4]]
    assert [o.shape for o in sess.get_outputs()] == [["batch", 4], []]
    ref = ort_session(path)
    for n in [1, 3, 17, 0]:
        feed = random_feed(sess.get_inputs(), {"batch": n}, seed=n)
        assert_close(sess.run(None, feed), ref.run(None, feed), f"batch {n}")


def test_anonymous_dims_take_any_size(tmp_path, cache_dir):
    """paddle2onnx declares "any size" as dim_param '?': each such dim is
    free, as in onnxruntime."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["?", 3, "?", "?"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["?", 3, "?", "?"])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "anon", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "anon.onnx"
    onnx.save(m, path)
    sess = onnxc.InferenceSession(path, cache_dir=cache_dir)
    feed = {"x": np.random.default_rng(0).standard_normal((1, 3, 48, 192)).astype(np.float32)}
    assert_close(sess.run(None, feed), ort_session(path).run(None, feed), "1x3x48x192")


def test_input_shapes_fix_dims(tmp_path, cache_dir):
    path = dynamic_model(tmp_path / "dyn.onnx")
    fixed = onnxc.InferenceSession(path, input_shapes={"a": [2, 4], "b": [2, None]}, cache_dir=cache_dir)
    assert fixed.get_inputs()[0].shape == [2, 4]
    with pytest.raises(ValueError, match="input 'a'"):
        fixed.run(None, random_feed(fixed.get_inputs(), {"batch": 3}) | {"a": np.zeros((3, 4), np.float32)})
    again = onnxc.InferenceSession(path, input_shapes=["a=2x4", "b=2x?"], cache_dir=cache_dir)
    assert again.cache_hit and again.library_path == fixed.library_path


def test_output_names_choose_and_order(tmp_path, cache_dir):
    sess = onnxc.InferenceSession(dynamic_model(tmp_path / "dyn.onnx"), cache_dir=cache_dir)
    feed = random_feed(sess.get_inputs(), {"batch": 2})
    y, z = sess.run(None, feed)
    (z2, y2) = sess.run(["z", "y"], feed)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(z, z2)
    assert sess.run("z", feed)[0] == z
    assert len(sess.run([], feed)) == 2


def test_model_from_bytes_proto_and_path_share_the_cache(zoo, tmp_path):
    path = zoo("cnn", light=False)
    cache = tmp_path / "cache"
    first = onnxc.InferenceSession(str(path), cache_dir=cache)
    assert not first.cache_hit
    assert first.library_path.startswith(str(cache))
    mtime = __import__("os").stat(first.library_path).st_mtime_ns
    for model in [path, path.read_bytes()]:
        s = onnxc.InferenceSession(model, cache_dir=cache)
        assert s.cache_hit, "a second session on the same model does not recompile"
        assert s.library_path == first.library_path
    # A ModelProto is keyed by its serialization (which onnx may reorder).
    proto = onnx.load(path)
    onnxc.InferenceSession(proto, cache_dir=cache)
    assert onnxc.InferenceSession(proto, cache_dir=cache).cache_hit
    assert __import__("os").stat(first.library_path).st_mtime_ns == mtime
    feed = random_feed(first.get_inputs())
    assert_close(s.run(None, feed), first.run(None, feed), "cached")


def vector_registers(lib):
    """The widest x86 vector registers the library's code names."""
    objdump = shutil.which("llvm-objdump") or "/usr/lib/llvm-19/bin/llvm-objdump"
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", lib], capture_output=True, text=True,
                          check=True).stdout
    return next((r for r in ("zmm", "ymm", "xmm") if f"%{r}" in text), None)


def test_built_for_this_machine_unless_told(zoo, tmp_path):
    """The default library is built for the CPU that runs it (the host's
    instruction sets are part of the cache key); target_cpu picks another,
    cached apart, which computes the same."""
    path = zoo("cnn", light=False)
    native = onnxc.InferenceSession(path, cache_dir=tmp_path)
    again = onnxc.InferenceSession(path, cache_dir=tmp_path, target_cpu="native")
    assert again.cache_hit and again.library_path == native.library_path
    portable = onnxc.InferenceSession(path, cache_dir=tmp_path, target_cpu="x86-64-v2")
    assert not portable.cache_hit and portable.library_path != native.library_path
    feed = random_feed(native.get_inputs())
    assert_close(native.run(None, feed), portable.run(None, feed), "native against portable")
    flags = set(open("/proc/cpuinfo").read().split())
    if platform.machine() == "x86_64" and "avx2" in flags:
        want = "zmm" if "avx512f" in flags else "ymm"
        assert vector_registers(native.library_path) == want
        assert vector_registers(portable.library_path) == "xmm"
    with pytest.raises(ValueError, match="target-cpu"):
        onnxc.InferenceSession(path, cache_dir=tmp_path, target_cpu="no such cpu")


def test_cache_dir_from_the_environment(zoo, tmp_path, monkeypatch):
    monkeypatch.setenv("ONNXC_CACHE_DIR", str(tmp_path / "env-cache"))
    s = onnxc.InferenceSession(zoo("mlp", light=False))
    assert s.library_path.startswith(str(tmp_path / "env-cache"))


def test_a_damaged_cache_entry_is_rebuilt(zoo, tmp_path):
    path = zoo("mlp", light=False)
    lib = onnxc.InferenceSession(path, cache_dir=tmp_path).library_path
    with open(lib, "wb") as f:
        f.write(b"not a library")
    s = onnxc.InferenceSession(path, cache_dir=tmp_path)
    assert not s.cache_hit
    s.run(None, random_feed(s.get_inputs()))


def test_contiguous_inputs_are_not_copied(zoo, cache_dir):
    path = zoo("cnn", light=False)
    sess = onnxc.InferenceSession(path, cache_dir=cache_dir)
    ref = ort_session(path)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    before = sess._native.copied_inputs
    out = sess.run(None, {"x": x})
    assert sess._native.copied_inputs == before, "a C-contiguous float32 array is passed as is"
    # A transposed view and a list are made contiguous first, same result.
    t = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not t.flags.c_contiguous
    assert_close(sess.run(None, {"x": t}), out, "strided input")
    assert sess._native.copied_inputs == before + 1
    assert_close(sess.run(None, {"x": x.tolist()}), ref.run(None, {"x": x}), "list input")


def test_outputs_are_fresh_writable_arrays(zoo, cache_dir):
    sess = onnxc.InferenceSession(zoo("mlp", light=False), cache_dir=cache_dir)
    feed = random_feed(sess.get_inputs())
    (a,) = sess.run(None, feed)
    (b,) = sess.run(None, feed)
    assert a.flags.writeable and a.flags.c_contiguous and a.flags.owndata
    a[...] = 0
    assert np.abs(b).max() > 0


def small_model(path, nodes, ins, outs, inits=()):
    g = helper.make_graph(nodes, "g", ins, outs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


F, B, D, H = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.DOUBLE, TensorProto.FLOAT16
EDGES = {
    "no_inputs": (
        [helper.make_node("Identity", ["c"], ["y"])],
        [],
        [("y", F, [2])],
        [helper.make_tensor("c", F, [2], [1.0, 2.0])],
        {},
    ),
    "input_is_output": (
        [helper.make_node("Relu", ["x"], ["y"])],
        [("x", F, ["n"])],
        [("x", F, ["n"]), ("y", F, ["n"])],
        [],
        {"x": np.array([-1, 2, -3], np.float32)},
    ),
    "bool": ([helper.make_node("Not", ["x"], ["y"])], [("x", B, [3])], [("y", B, [3])], [], {"x": np.array([True, False, True])}),
    "double_to_half": (
        [helper.make_node("Cast", ["x"], ["y"], to=H)],
        [("x", D, [2, 2])],
        [("y", H, [2, 2])],
        [],
        {"x": np.array([[1.5, -2], [1e-3, 7]])},
    ),
    "scalar": ([helper.make_node("Add", ["x", "x"], ["y"])], [("x", F, [])], [("y", F, [])], [], {"x": np.float32(1.5)}),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_signature_edge_cases(name, tmp_path, cache_dir):
    nodes, ins, outs, inits, feed = EDGES[name]
    vis = lambda specs: [helper.make_tensor_value_info(n, t, s) for n, t, s in specs]  # noqa: E731
    path = small_model(tmp_path / f"{name}.onnx", nodes, vis(ins), vis(outs), inits)
    sess = onnxc.InferenceSession(path, cache_dir=cache_dir)
    ref = ort_session(path)
    feed = {k: np.asarray(v) for k, v in feed.items()}
    assert_close(sess.run(None, feed), ref.run(None, feed), name, rtol=0, atol=0)


def test_external_data_rewritten_in_place_is_recompiled(tmp_path):
    """The cache key names the external data file (path, size, inode and
    change time), not its bytes: hashing an 8 GB model cost 5 s per
    session. A write to the file, even of the same size, makes a new key."""
    from onnx import TensorProto, helper, numpy_helper

    w = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "ext",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "m.onnx"
    onnx.save(model, path, save_as_external_data=True, location="m.onnx.data", size_threshold=0)
    cache = tmp_path / "cache"
    x = np.ones((1, 64), np.float32)
    first = onnxc.InferenceSession(path, cache_dir=cache)
    assert onnxc.InferenceSession(path, cache_dir=cache).cache_hit
    data = tmp_path / "m.onnx.data"
    raw = bytearray(data.read_bytes())
    raw[:4] = np.float32(1000.0).tobytes()  # w[0, 0]
    data.write_bytes(bytes(raw))
    second = onnxc.InferenceSession(path, cache_dir=cache)
    assert not second.cache_hit
    assert second.run(None, {"x": x})[0][0, 0] == first.run(None, {"x": x})[0][0, 0] + 1000.0


@pytest.mark.parametrize("x_shape,shape", [((1, 3), (0, 3)), ((2, 1), (2, 0)), ((1,), (4, 0)), ((0, 1), (1, 5)), ((1, 3), (4, 3))])
def test_expand_broadcasts_one_against_zero(x_shape, shape):
    """NumPy rules, with dims that are 1 only at run time: 1 against 0
    gives 0, whichever side has it; 1 against 4 gives 4."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b"][: len(x_shape)])
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [len(shape)])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Expand", ["x", "s"], ["y"])], "expand", [x, s], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feed = {"x": np.ones(x_shape, np.float32), "s": np.array(shape, np.int64)}
    (got,) = onnxc.InferenceSession(model.SerializeToString()).run(None, feed)
    assert got.shape == np.broadcast_shapes(x_shape, shape)
