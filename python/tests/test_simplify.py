"""simplify against onnx-simplifier on the zoo (same outputs, no more
nodes), fold and compile against the CLI (same pipeline, same bytes)."""

import os
import subprocess
import sys
import warnings

import numpy as np
import onnx
import pytest
from helpers import assert_close, ort_session, random_feed

import onnxc

onnxsim = pytest.importorskip("onnxsim", reason="onnx-simplifier: pip install -r scripts/requirements-test.txt")

ZOO = [
    "mlp", "cnn", "resnet50v1", "resnet152v1", "arcface100", "vgg19", "densenet121",
    "mobilenetv2", "squeezenet", "bert-base", "gpt2-small", "bert-tiny", "gpt2-tiny",
]

def outputs(model_bytes, feed):
    return ort_session(model_bytes).run(None, feed)


def compute_nodes(model):
    """Nodes other than the compact form of a constant: ConstantOfShape or
    Expand of initializers, what onnxc writes for a folded constant that
    repeats one value or a few (the zoo's light models have such weights;
    onnx-simplifier writes them out whole, and the file grows)."""
    inits = {t.name for t in model.graph.initializer}
    return sum(
        1 for n in model.graph.node
        if not (n.op_type in ("ConstantOfShape", "Expand") and all(i in inits for i in n.input)))


def constant_bytes(model):
    g = model.graph
    return sum(t.ByteSize() for t in g.initializer) + sum(
        a.t.ByteSize() for n in g.node for a in n.attribute if a.type == onnx.AttributeProto.TENSOR)


@pytest.mark.parametrize("name", ZOO)
def test_simplify_vs_onnx_simplifier(name, zoo):
    model = onnx.load(zoo(name, light=True))
    ours, checked = onnxc.simplify(model, 1)
    assert checked, "onnxruntime is installed: the result is checked"
    theirs, their_check = onnxsim.simplify(model)
    assert their_check
    feed = random_feed(ort_session(model.SerializeToString()).get_inputs(), int_high=1000)
    want = outputs(theirs.SerializeToString(), feed)
    assert_close(outputs(ours.SerializeToString(), feed), want, f"{name} simplified")
    assert_close(outputs(model.SerializeToString(), feed), want, f"{name} original")
    n_ours, n_theirs = compute_nodes(ours), len(theirs.graph.node)
    assert n_ours <= n_theirs, f"{name}: {n_ours} nodes, onnx-simplifier {n_theirs}"
    # The folded model's constants grow by the fold's budget at most:
    # 256 KiB or 1/64 of the model's (constprop::hybrid::growth_budget;
    # the rule allows 1 KiB more per folded node, the zoo stays within).
    before = constant_bytes(model)
    assert constant_bytes(ours) <= before + max(before // 64, 256 << 10), name


def test_simplify_takes_a_model_a_path_or_bytes(zoo):
    path = zoo("cnn", light=False)
    by_proto, ok = onnxc.simplify(onnx.load(path))
    assert ok
    by_path, _ = onnxc.simplify(path)
    by_str, _ = onnxc.simplify(str(path))
    by_bytes, _ = onnxc.simplify(path.read_bytes())
    assert isinstance(by_proto, onnx.ModelProto)
    assert by_proto == by_path == by_str == by_bytes


def test_simplify_with_input_shapes_folds_more(zoo):
    path = zoo("bert-tiny", light=False)
    dynamic, _ = onnxc.simplify(path)
    names = [i.name for i in onnx.load(path).graph.input]
    fixed, ok = onnxc.simplify(path, input_shapes={n: [1, 7] for n in names})
    assert ok
    assert len(fixed.graph.node) < len(dynamic.graph.node)
    dims = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in fixed.graph.input]
    assert dims == [[1, 7]] * len(names)
    as_strings, _ = onnxc.simplify(path, input_shapes=[f"{n}=1x7" for n in names])
    assert as_strings == fixed


def test_simplify_without_onnxruntime_warns_and_returns_false(zoo, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    assert onnxc.simplify(zoo("mlp", light=False))[1], "check_n=0: onnx.checker only, no onnxruntime needed"
    with pytest.warns(UserWarning, match="onnxruntime is not installed"):
        model, ok = onnxc.simplify(zoo("mlp", light=False), check_n=1)
    assert ok is False
    assert len(model.graph.node) > 0


def test_fold_is_the_cli_fold(zoo, onnxc_cli, tmp_path):
    src = zoo("squeezenet", light=True)
    ours = tmp_path / "ours.onnx"
    onnxc.fold(src, ours)
    cli = tmp_path / "cli.onnx"
    subprocess.run([str(onnxc_cli), "fold", str(src), "-o", str(cli)], check=True)
    assert ours.read_bytes() == cli.read_bytes()
    simplified, _ = onnxc.simplify(src)
    assert len(onnx.load(ours).graph.node) == len(simplified.graph.node)
    onnxc.fold(str(src), str(tmp_path / "fixed.onnx"), input_shapes={"data": [1, 3, 224, 224]})


@pytest.mark.parametrize("emit,flag", [("llvm", "llvm"), ("memref", "memref"), ("onnx", "onnx"), ("onnx-ir", "onnx-ir")])
def test_compile_writes_what_the_cli_writes(emit, flag, zoo, onnxc_cli, tmp_path):
    src = zoo("cnn", light=False)
    (tmp_path / "ours").mkdir()
    (tmp_path / "cli").mkdir()
    ours, cli = tmp_path / "ours" / f"m.{emit}", tmp_path / "cli" / f"m.{emit}"
    onnxc.compile(src, ours, emit=emit)
    subprocess.run([str(onnxc_cli), "compile", str(src), "--emit", flag, "-o", str(cli)], check=True)
    # LLVM IR names its weights sidecar by absolute path.
    assert ours.read_bytes().replace(b"/ours/", b"/cli/") == cli.read_bytes()


def test_compile_lib_and_obj(zoo, tmp_path):
    import ctypes

    src = zoo("mlp", light=False)
    lib = tmp_path / "libmlp.so"
    onnxc.compile(src, lib)  # emit='lib' is the default
    assert "int mlp_run(const onnxc_tensor *inputs" in (tmp_path / "mlp.h").read_text()
    dll = ctypes.CDLL(str(lib))
    assert dll.mlp_num_inputs() == 1 and dll.mlp_num_outputs() == 1
    obj = tmp_path / "mlp.o"
    onnxc.compile(str(src), str(obj), emit="obj", input_shapes={"x": [1, 64]})
    assert obj.read_bytes()[:4] == b"\x7fELF"


def test_compile_rejects_an_unknown_emit(zoo, tmp_path):
    with pytest.raises(ValueError, match="emit"):
        onnxc.compile(zoo("mlp"), tmp_path / "x", emit="exe")


def test_simplify_keeps_contrib_ops_and_strings():
    """onnxruntime's contrib ops and string tensors pass through (what
    onnx-simplifier users bring: models already optimized by onnxruntime,
    skl2onnx text pipelines); the arithmetic beside them folds."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Mul", ["c1", "c2"], ["bias"]),
        helper.make_node("BiasGelu", ["x", "bias"], ["h"], domain="com.microsoft"),
        helper.make_node("Relu", ["h"], ["y"]),
        helper.make_node("Concat", ["words", "more"], ["all"], axis=0),
        helper.make_node("LabelEncoder", ["all"], ["ids"], domain="ai.onnx.ml",
                         keys_strings=["a", "b"], values_int64s=[1, 2], default_int64=0),
    ]
    inits = [numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), n) for n in ("c1", "c2")]
    inits.append(helper.make_tensor("more", TensorProto.STRING, [1], [b"b"]))
    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("words", TensorProto.STRING, ["W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, ["V"])],
        inits)
    model = helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1),
        helper.make_opsetid("ai.onnx.ml", 2)], ir_version=8)
    ours, checked = onnxc.simplify(model)
    assert checked
    assert [n.op_type for n in ours.graph.node] == ["BiasGelu", "Relu", "Concat", "LabelEncoder"]
    feed = {"x": rng.standard_normal((3, 4)).astype(np.float32),
            "words": np.array(["a", "z", "b"], dtype=object)}
    for a, b in zip(outputs(model.SerializeToString(), feed), outputs(ours.SerializeToString(), feed)):
        np.testing.assert_array_equal(a, b)


def external_data_model(dir_):
    """A model keeping its weights in external data, one of them stored
    twice (tied weights written as two initializers)."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 64)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w.copy(), "w_tied"),
             numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b")]
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y"]),
         helper.make_node("MatMul", ["x", "w_tied"], ["z"])],
        "ext", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N", 64])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = dir_ / "ext.onnx"
    onnx.save(model, path, save_as_external_data=True, location="ext.onnx.data", size_threshold=128)
    return path


def test_simplify_of_external_data_goes_path_to_path(tmp_path):
    """A model with external data (any size: issue 33's 8 GB figures are
    scripts/bench_big_model.py's) is simplified file to file: the result
    keeps its weights in OUTPUT.data, unloaded, tied copies stored once."""
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    src = external_data_model(src_dir)
    assert onnxc._onnxc.model_info(str(src))["external_data"]
    out = tmp_path / "sim.onnx"
    model, ok = onnxc.simplify(src, 2, output_path=out)
    assert ok, "checked against the original in onnxruntime"
    assert (tmp_path / "sim.onnx.data").exists()
    external = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert len(external) == 1 and not external[0].raw_data, "w and w_tied: one tensor, not loaded"
    assert os.path.getsize(tmp_path / "sim.onnx.data") < os.path.getsize(src_dir / "ext.onnx.data"), "tied once"
    feed = {"x": np.random.default_rng(2).standard_normal((3, 64)).astype(np.float32)}
    want = ort_session(str(src)).run(None, feed)
    got = ort_session(str(out)).run(None, feed)
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    # An output dropped from it: the stripped copy next to the source
    # (its external data is relative to it) is gone afterwards.
    fewer, ok = onnxc.simplify(src, 1, output_path=tmp_path / "fewer.onnx", unused_output=["z"])
    assert ok and [o.name for o in fewer.graph.output] == ["y"]
    assert sorted(os.listdir(src_dir)) == ["ext.onnx", "ext.onnx.data"]
    # Without output_path the result is whole in memory, as onnx.load gives.
    loaded, ok = onnxc.simplify(src)
    assert ok and not any(t.external_data for t in loaded.graph.initializer)
    assert not onnxc._onnxc.model_info(loaded.SerializeToString())["external_data"]
