"""Bad inputs of every kind are Python exceptions naming what is wrong,
never a crash; the session still works after them."""

import os

import numpy as np
import onnx
import pytest
from helpers import assert_close, ort_session, random_feed
from onnx import TensorProto, helper

import onnxc


def model(nodes, inputs, outputs, path, opset=17, domains=()):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    m = helper.make_model(g, opset_imports=ops)
    m.ir_version = 8
    onnx.save(m, path)
    return path


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


@pytest.fixture(scope="module")
def two_inputs(tmp_path_factory, cache_dir):
    """out = a[batch, 3] * b[batch, 3] + i[batch, 3] (int64 cast)."""
    path = tmp_path_factory.mktemp("err") / "two.onnx"
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["m"], name="mul"),
        helper.make_node("Cast", ["i"], ["f"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Add", ["m", "f"], ["out"], name="add"),
    ]
    ins = [vi("a", ["batch", 3]), vi("b", ["batch", 3]), vi("i", ["batch", 3], TensorProto.INT64)]
    model(nodes, ins, [vi("out", ["batch", 3])], path)
    return onnxc.InferenceSession(path, cache_dir=cache_dir)


def good(batch=2):
    return {
        "a": np.ones((batch, 3), np.float32),
        "b": np.full((batch, 3), 2, np.float32),
        "i": np.arange(batch * 3, dtype=np.int64).reshape(batch, 3),
    }


@pytest.mark.parametrize(
    "change,match",
    [
        (lambda f: f.pop("b"), "missing input 'b'"),
        (lambda f: f.update(c=np.ones((2, 3), np.float32)), "'c' is not an input of the model"),
        (lambda f: f.update(a=np.ones((2, 3), np.float64)), "input 'a': expected tensor\\(float\\)"),
        (lambda f: f.update(i=np.ones((2, 3), np.int32)), "input 'i': expected tensor\\(int64\\)"),
        (lambda f: f.update(a=np.ones((2, 3, 1), np.float32)), "input 'a': expected rank 2, got rank 3"),
        (lambda f: f.update(b=np.ones((2, 4), np.float32)), "input 'b': dim 1 must be 3, got 4"),
        (lambda f: f.update(b=np.ones((5, 3), np.float32)), "input 'b': dim 0 \\('batch'\\) is 5, but input 'a' has 'batch' = 2"),
        (lambda f: f.update(a="not a number"), "input 'a': cannot make an array"),
        (lambda f: f.update(a=np.ones((2, 3), ">f4")), "input 'a': expected tensor\\(float\\)"),
        (lambda f: f.update({1: f["a"]}), "1 is not an input of the model"),
    ],
)
def test_bad_input_is_a_value_error_naming_it(two_inputs, change, match):
    feed = good()
    change(feed)
    with pytest.raises(ValueError, match=match):
        two_inputs.run(None, feed)
    out = two_inputs.run(None, good())[0]  # still works
    np.testing.assert_array_equal(out, good()["a"] * 2 + good()["i"])


@pytest.fixture(scope="module")
def checked(tmp_path_factory, cache_dir):
    """a[n,4] + b[m,4] -> Gather(idx[k]) and x[2,p] @ w[q,3]: distinct dim
    names, so only the compiled code's runtime checks see a mismatch (the
    model of cli/tests/runtime_checks)."""
    path = tmp_path_factory.mktemp("checks") / "checks.onnx"
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="add1"),
        helper.make_node("Gather", ["s", "idx"], ["g"], axis=0, name="gather1"),
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm1"),
    ]
    ins = [vi("a", ["n", 4]), vi("b", ["m", 4]), vi("idx", ["k"], TensorProto.INT64), vi("x", [2, "p"]), vi("w", ["q", 3])]
    model(nodes, ins, [vi("g", ["k", 4]), vi("y", [2, 3])], path)
    return path, onnxc.InferenceSession(path, cache_dir=cache_dir)


def checked_feed(**change):
    rng = np.random.default_rng(7)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    feed = {"a": f32(3, 4), "b": f32(1, 4), "idx": np.array([2, -1, 0, 1]), "x": f32(2, 5), "w": f32(5, 3)}
    return feed | {k: v(f32) if callable(v) else v for k, v in change.items()}


@pytest.mark.parametrize(
    "change,match",
    [
        ({"b": lambda f32: f32(2, 4)}, "onnx.Add at node 'add1': input 1 dim 0 is not 1 and differs"),
        ({"w": lambda f32: f32(4, 3)}, "onnx.MatMul at node 'mm1': the inner dims of A and B differ"),
        ({"idx": np.array([0, 3])}, "onnx.Gather at node 'gather1': an index is out of range"),
        ({"idx": np.array([-4])}, "onnx.Gather at node 'gather1': an index is out of range"),
    ],
)
def test_a_failed_runtime_check_is_a_value_error(checked, change, match):
    path, sess = checked
    bad = checked_feed(**change)
    with pytest.raises(Exception):  # onnxruntime rejects them too
        ort_session(path).run(None, bad)
    with pytest.raises(ValueError, match="runtime check of the model: " + match):
        sess.run(None, bad)
    good = checked_feed()
    assert_close(sess.run(None, good), ort_session(path).run(None, good), "after a failed check")


def test_bad_output_name_and_feed_type(two_inputs):
    with pytest.raises(ValueError, match="'nope' is not an output of the model \\(outputs: out\\)"):
        two_inputs.run(["nope"], good())
    with pytest.raises(TypeError, match="input_feed must be a dict"):
        two_inputs.run(None, [good()["a"]])


def test_malformed_models_are_compile_errors(tmp_path, cache_dir):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage that is not protobuf")
    with pytest.raises(onnxc.CompileError, match="malformed ONNX"):
        onnxc.InferenceSession(bad, cache_dir=cache_dir)
    with pytest.raises(onnxc.CompileError):
        onnxc.InferenceSession(b"", cache_dir=cache_dir)
    with pytest.raises(onnxc.CompileError):
        onnxc.simplify(bad.read_bytes())
    with pytest.raises(FileNotFoundError):
        onnxc.InferenceSession(tmp_path / "missing.onnx", cache_dir=cache_dir)
    with pytest.raises(FileNotFoundError):
        onnxc.fold(tmp_path / "missing.onnx", tmp_path / "out.onnx")
    with pytest.raises(TypeError, match="model path"):
        onnxc.InferenceSession(42, cache_dir=cache_dir)


def test_compile_error_names_node_and_op(tmp_path, cache_dir):
    # A Conv whose weight has the wrong rank for its input.
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3], np.ones(36, np.float32))
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_bad")],
        "g",
        [vi("x", [1, 3, 8, 8])],
        [vi("y", None)],
        [w],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "conv.onnx"
    onnx.save(m, path)
    with pytest.raises(onnxc.CompileError) as e:
        onnxc.InferenceSession(path, cache_dir=cache_dir)
    (d,) = e.value.diagnostics
    assert d.severity == "error"
    assert d.node == "conv_bad" and d.op == "onnx.Conv", repr(d)
    assert "conv_bad" in str(e.value) and str(d) == str(e.value)


def test_an_op_without_kernel_is_a_compile_error(tmp_path, cache_dir):
    # Random sampling has no kernel (results would differ from every oracle).
    path = model(
        [helper.make_node("Bernoulli", ["x"], ["y"], name="coin_flip")],
        [vi("x", [1, 1])],
        [vi("y", [1, 1])],
        tmp_path / "bernoulli.onnx",
    )
    with pytest.raises(onnxc.CompileError) as e:
        onnxc.InferenceSession(path, cache_dir=cache_dir)
    assert e.value.diagnostics[0].node == "coin_flip"
    assert e.value.diagnostics[0].op == "onnx.Bernoulli"
    simplified, _ = onnxc.simplify(path)  # folding does not need kernels
    assert [n.op_type for n in simplified.graph.node] == ["Bernoulli"]


@pytest.mark.parametrize(
    "shapes,exc,match",
    [
        ({"nope": [1, 3]}, ValueError, "'nope', which is not an input of the model \\(inputs: a, b, i\\)"),
        ({"a": [1, 3, 1]}, ValueError, "rank 3"),
        ({"a": [-1, 3]}, ValueError, "negative"),
        ({"a": [1.5, 3]}, TypeError, "a dim is an int or None"),
        (["a=1xq"], ValueError, "bad dim 'q'"),
        (["a"], ValueError, "expected NAME=DIMS"),
        (["a=1x3", "a=2x3"], ValueError, "'a' twice"),
        ("a=1x3", TypeError, "input_shapes"),
    ],
)
def test_bad_input_shapes(tmp_path, cache_dir, shapes, exc, match):
    path = tmp_path / "two.onnx"
    model(
        [helper.make_node("Mul", ["a", "b"], ["m"]), helper.make_node("Cast", ["i"], ["f"], to=1), helper.make_node("Add", ["m", "f"], ["out"])],
        [vi("a", ["batch", 3]), vi("b", ["batch", 3]), vi("i", ["batch", 3], TensorProto.INT64)],
        [vi("out", ["batch", 3])],
        path,
    )
    for call in [
        lambda: onnxc.InferenceSession(path, input_shapes=shapes, cache_dir=cache_dir),
        lambda: onnxc.simplify(path, input_shapes=shapes),
        lambda: onnxc.compile(path, tmp_path / "o.ll", emit="llvm", input_shapes=shapes),
    ]:
        with pytest.raises(exc, match=match):
            call()


def test_missing_clang_says_what_to_install(zoo, tmp_path, monkeypatch):
    monkeypatch.setenv("ONNXC_LLVM_BIN", str(tmp_path))  # no clang there
    with pytest.raises(onnxc.ClangNotFoundError, match="apt-get install clang") as e:
        onnxc.InferenceSession(zoo("mlp"), cache_dir=tmp_path / "cache")
    assert "ONNXC_LLVM_BIN" in str(e.value)
    with pytest.raises(onnxc.ClangNotFoundError):
        onnxc.compile(zoo("mlp"), tmp_path / "libm.so", emit="lib")
    onnxc.compile(zoo("mlp"), tmp_path / "m.ll", emit="llvm")  # needs no clang
    assert os.path.getsize(tmp_path / "m.ll") > 0


def test_bad_session_arguments(zoo, cache_dir):
    with pytest.raises(ValueError, match="threads"):
        onnxc.InferenceSession(zoo("mlp"), threads=0, cache_dir=cache_dir)
    with pytest.warns(UserWarning, match="'CUDAExecutionProvider' is not in available provider names"):
        s = onnxc.InferenceSession(zoo("mlp"), providers=["CUDAExecutionProvider"], cache_dir=cache_dir)
    assert s.get_providers() == ["CPUExecutionProvider"], "falls back to the CPU, as onnxruntime"
    with pytest.raises(TypeError, match="unexpected keyword argument 'thread'"):
        onnxc.InferenceSession(zoo("mlp"), thread=1, cache_dir=cache_dir)
    s = onnxc.InferenceSession(zoo("mlp"), threads=2, providers=["CPUExecutionProvider"], cache_dir=cache_dir)
    s.run(None, random_feed(s.get_inputs()))
