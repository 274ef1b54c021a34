"""onnxc as an onnxruntime and onnx-simplifier drop-in: every call of
issue 32's table, the shim (`onnxc.ort`, `install_as_onnxruntime`), the
exception names, OrtValue and IOBinding, profiling, and `simplify` /
`compile` / `fold` with onnx-simplifier's and the CLI's arguments."""

import json
import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers import REPO, assert_close, ort_session
from onnx import TensorProto, helper

import onnxc
import onnxc.ort as shim


def gather_model(path):
    """y = Gather(relu(a)[batch, 4], i, axis=1), named batch dim, metadata."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", 4])
    i = helper.make_tensor_value_info("i", TensorProto.INT64, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])
    nodes = [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Gather", ["r", "i"], ["y"], axis=1)]
    m = helper.make_model(helper.make_graph(nodes, "gathering", [a, i], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version, m.producer_name, m.doc_string, m.model_version = 8, "tests", "a gather", 3
    m.metadata_props.add(key="author", value="onnxc")
    onnx.save(m, path)
    return path


@pytest.fixture(scope="module")
def gather(tmp_path_factory):
    return gather_model(tmp_path_factory.mktemp("compat") / "gather.onnx")


def feed(batch=2):
    return {"a": np.arange(batch * 4, dtype=np.float32).reshape(batch, 4) - 3, "i": np.array([3, 0])}


def test_session_options_positional_and_keyword(gather, cache_dir):
    want = ort_session(gather).run(None, feed())
    for so in [onnxc.SessionOptions(), ort.SessionOptions()]:
        for s in [onnxc.InferenceSession(gather, so, cache_dir=cache_dir),
                  onnxc.InferenceSession(gather, sess_options=so, cache_dir=cache_dir)]:
            assert_close(s.run(None, feed()), want, "gather")
            assert s.get_session_options() is so
    s = onnxc.InferenceSession(gather, None, ["CPUExecutionProvider"], cache_dir=cache_dir)
    assert_close(s.run(None, feed()), want, "gather")
    with pytest.raises(TypeError, match="threads=N"):
        onnxc.InferenceSession(gather, 2, cache_dir=cache_dir)  # onnxc's old positional threads
    assert isinstance(s.get_session_options(), onnxc.SessionOptions)


def test_providers_fall_back_to_the_cpu(gather, cache_dir):
    with pytest.warns(UserWarning, match="'CUDAExecutionProvider' is not in available provider names"):
        s = onnxc.InferenceSession(gather, providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
                                   cache_dir=cache_dir)
    assert s.get_providers() == ["CPUExecutionProvider"]
    s = onnxc.InferenceSession(gather, providers=[("CPUExecutionProvider", {"arena_extend_strategy": "kSameAsRequested"})],
                               cache_dir=cache_dir)
    assert s.get_provider_options() == {"CPUExecutionProvider": {"arena_extend_strategy": "kSameAsRequested"}}
    with pytest.raises(ValueError, match="same length"):
        onnxc.InferenceSession(gather, providers=["CPUExecutionProvider"], provider_options=[{}, {}],
                               cache_dir=cache_dir)
    s.set_providers(["CPUExecutionProvider"])
    s.disable_fallback()
    s.enable_fallback()


def test_model_metadata_like_onnxruntime(gather, cache_dir):
    ours = onnxc.InferenceSession(gather, cache_dir=cache_dir).get_modelmeta()
    theirs = ort_session(gather).get_modelmeta()
    for field in ["producer_name", "graph_name", "domain", "description", "graph_description", "version",
                  "custom_metadata_map"]:
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours.custom_metadata_map == {"author": "onnxc"}


def test_intra_op_num_threads_picks_the_code(gather, cache_dir):
    so = onnxc.SessionOptions()
    so.intra_op_num_threads = 1
    serial = onnxc.InferenceSession(gather, so, cache_dir=cache_dir)
    default = onnxc.InferenceSession(gather, cache_dir=cache_dir)
    assert serial.library_path != default.library_path, "threads are part of the key and the code"
    assert_close(serial.run(None, feed()), default.run(None, feed()), "serial vs default")
    with pytest.raises(ValueError, match="intra_op_num_threads"):
        bad = onnxc.SessionOptions()
        bad.intra_op_num_threads = -2
        onnxc.InferenceSession(gather, bad, cache_dir=cache_dir)


def test_options_that_do_not_apply_warn_once(gather, cache_dir):
    so = onnxc.SessionOptions()
    so.execution_mode = onnxc.ExecutionMode.ORT_PARALLEL
    so.graph_optimization_level = onnxc.GraphOptimizationLevel.ORT_ENABLE_BASIC  # what we do anyway
    so.log_severity_level = 3  # logging: accepted quietly
    with pytest.warns(onnxc.NotApplicableWarning, match="execution_mode") as w:
        onnxc.InferenceSession(gather, so, cache_dir=cache_dir)
    assert len(w) == 1, [str(x.message) for x in w]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        onnxc.InferenceSession(gather, so, cache_dir=cache_dir)  # once per process
    with pytest.raises(AttributeError):
        so.no_such_option = 1
    with pytest.raises(onnxc.Fail, match="add_initializer"):
        so.add_initializer("w", onnxc.OrtValue.ortvalue_from_numpy(np.zeros(2, np.float32)))
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    with pytest.raises(RuntimeError, match="does not have configuration"):
        so.get_session_config_entry("nope")


def test_free_dimension_overrides_fix_dims(gather, cache_dir):
    so = onnxc.SessionOptions()
    so.add_free_dimension_override_by_name("batch", 3)
    s = onnxc.InferenceSession(gather, so, cache_dir=cache_dir)
    assert s.get_inputs()[0].shape == [3, 4]
    assert_close(s.run(None, feed(3)), ort_session(gather).run(None, feed(3)), "batch 3")


def test_errors_carry_onnxruntimes_names(gather, cache_dir, tmp_path):
    s = onnxc.InferenceSession(gather, cache_dir=cache_dir)
    state = shim.capi.onnxruntime_pybind11_state
    bad_dtype = dict(feed(), a=feed()["a"].astype(np.float64))
    for call in [lambda: s.run(None, bad_dtype),
                 lambda: s.run(None, dict(feed(), a=np.zeros(4, np.float32))),
                 lambda: s.run(None, dict(feed(), i=np.array([0, 9]))),
                 lambda: s.run(["nope"], feed())]:
        with pytest.raises(state.InvalidArgument) as e:
            call()
        assert isinstance(e.value, ValueError)
    with pytest.raises(state.NoSuchFile):
        onnxc.InferenceSession(tmp_path / "missing.onnx", cache_dir=cache_dir)
    with pytest.raises(state.InvalidProtobuf) as e:
        onnxc.InferenceSession(b"\x08\x07garbage", cache_dir=cache_dir)
    assert isinstance(e.value, (onnxc.CompileError, state.Fail, RuntimeError))
    with pytest.raises(state.Fail, match="terminate"):
        ro = onnxc.RunOptions()
        ro.terminate = True
        s.run(None, feed(), ro)
    assert issubclass(state.InvalidGraph, state.Fail) and issubclass(state.NotImplemented, state.Fail)


def test_ortvalue_and_iobinding(gather, cache_dir):
    s = onnxc.InferenceSession(gather, cache_dir=cache_dir)
    want = s.run(None, feed())[0]
    v = onnxc.OrtValue.ortvalue_from_numpy(feed()["a"])
    assert (v.shape(), v.data_type(), v.element_type(), v.device_name()) == ([2, 4], "tensor(float)", 1, "cpu")
    (out,) = s.run_with_ort_values(None, {"a": v, "i": onnxc.OrtValue.ortvalue_from_numpy(feed()["i"])})
    np.testing.assert_array_equal(out.numpy(), want)
    io = s.io_binding()
    io.bind_cpu_input("a", feed()["a"])
    i = feed()["i"]
    io.bind_input("i", "cpu", 0, np.int64, list(i.shape), i.ctypes.data)
    io.bind_output("y")
    s.run_with_iobinding(io)
    np.testing.assert_array_equal(io.copy_outputs_to_cpu()[0], want)
    # A preallocated output receives the result in place.
    dst = onnxc.OrtValue.ortvalue_from_shape_and_type([2, 2], np.float32)
    io.clear_binding_outputs()
    io.bind_ortvalue_output("y", dst)
    s.run_with_iobinding(io)
    assert io.get_outputs()[0] is dst
    np.testing.assert_array_equal(dst.numpy(), want)
    wrong = onnxc.OrtValue.ortvalue_from_shape_and_type([3, 2], np.float32)
    io.bind_ortvalue_output("y", wrong)
    with pytest.raises(onnxc.InvalidArgument, match="bound to"):
        s.run_with_iobinding(io)


def test_profiling_and_optimized_model(gather, cache_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    so = onnxc.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = "trace"
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    s = onnxc.InferenceSession(gather, so, cache_dir=cache_dir)
    for _ in range(3):
        s.run(None, feed())
    name = s.end_profiling()
    assert name.startswith("trace_") and name.endswith(".json")
    events = json.loads((tmp_path / name).read_text())
    assert [e["name"] for e in events] == ["session_initialization"] + ["model_run"] * 3
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    assert s.end_profiling() == ""
    assert s.get_profiling_start_time_ns() > 0
    assert_close(ort_session(tmp_path / "opt.onnx").run(None, feed()), s.run(None, feed()), "optimized model")


def test_the_shim_runs_code_written_for_onnxruntime(gather, cache_dir, tmp_path):
    """A script that imports onnxruntime, run with onnxc installed in its
    place: same answer as the real onnxruntime, and onnxc did the work."""
    script = f"""
import onnxc, numpy as np
onnxc.install_as_onnxruntime()
import onnxruntime as ort
from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument
so = ort.SessionOptions()
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
so.intra_op_num_threads = 1
sess = ort.InferenceSession({str(gather)!r}, sess_options=so, providers=ort.get_available_providers(),
                            cache_dir={str(cache_dir)!r})
x = {{"a": np.arange(8, dtype=np.float32).reshape(2, 4) - 3, "i": np.array([3, 0])}}
print(ort.get_device(), ort.__version__, type(sess).__module__)
print(sess.run([o.name for o in sess.get_outputs()], x)[0].tolist())
try:
    sess.run(None, {{"a": x["a"].astype(np.float64), "i": x["i"]}})
except InvalidArgument as e:
    print("InvalidArgument")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    device, version, module = out.splitlines()[0].split()
    assert (device, version, module) == ("CPU", shim.__version__, "onnxc.session")
    assert out.splitlines()[1] == str(ort_session(gather).run(None, feed())[0].tolist())
    assert out.splitlines()[2] == "InvalidArgument"
    assert shim.get_available_providers() == ["CPUExecutionProvider"]
    assert shim.InferenceSession is onnxc.InferenceSession


def test_simplify_with_onnx_simplifiers_arguments(zoo):
    path = zoo("bert-tiny", light=False)
    names = [i.name for i in onnx.load(path).graph.input]
    fixed, ok = onnxc.simplify(onnx.load(path), 3, overwrite_input_shapes={n: [1, 7] for n in names},
                               test_input_shapes={n: [1, 7] for n in names}, skip_fuse_bn=False)
    assert ok
    assert [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in fixed.graph.input] == [[1, 7]] * len(names)
    dynamic, ok = onnxc.simplify(str(path), 2, test_input_shapes={n: [2, 5] for n in names})
    assert ok
    with pytest.raises(TypeError, match="check_n must be an int"):
        onnxc.simplify(path, {names[0]: [1, 7]})
    with pytest.warns(onnxc.NotApplicableWarning, match="skip_constant_folding"):
        onnxc.simplify(path, skip_constant_folding=True)


def test_simplify_names_the_model_when_its_check_cannot_run(tmp_path):
    """A Reshape to a fixed 8 elements: at the default check size (dims of
    1) the original model itself cannot run."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    shape = helper.make_tensor("s", TensorProto.INT64, [2], [2, 4])
    g = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "r", [x], [y], [shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "reshape8.onnx")
    with pytest.raises(onnxc.CheckError, match=r"reshape8.onnx.*input sizes \{'x': \[1, 4\]\}.*test_input_shapes"):
        onnxc.simplify(tmp_path / "reshape8.onnx", 1)
    _, ok = onnxc.simplify(tmp_path / "reshape8.onnx", 1, test_input_shapes={"x": [2, 4]})
    assert ok


def test_unused_outputs_are_removed(gather):
    g = onnx.load(gather)
    g.graph.output.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, ["batch", 4]))
    simplified, ok = onnxc.simplify(g, unused_output=["r"])
    assert ok and [o.name for o in simplified.graph.output] == ["y"]
    with pytest.raises(ValueError, match="not outputs"):
        onnxc.simplify(g, unused_output=["zz"])


def test_compile_and_fold_take_protos_and_bytes(gather, tmp_path, onnxc_cli):
    proto = onnx.load(gather)
    onnxc.compile(proto, tmp_path / "from_proto.ll", emit="llvm")
    onnxc.compile(proto.SerializeToString(), tmp_path / "from_bytes.ll", emit="llvm")
    onnxc.compile(gather, tmp_path / "from_path.ll", emit="llvm")
    texts = {p: (tmp_path / p).read_text() for p in ["from_proto.ll", "from_bytes.ll", "from_path.ll"]}
    assert len(set(t.count("\n") for t in texts.values())) == 1
    with pytest.raises(FileNotFoundError, match="no such directory"):
        onnxc.compile(gather, tmp_path / "missing" / "libm.so")
    with pytest.raises(FileNotFoundError):
        onnxc.fold(gather, tmp_path / "missing" / "f.onnx")
    onnxc.fold(proto, tmp_path / "folded_proto.onnx")
    onnxc.fold(gather, tmp_path / "folded_path.onnx")
    assert (tmp_path / "folded_proto.onnx").read_bytes() == (tmp_path / "folded_path.onnx").read_bytes()
    assert not list(tmp_path.glob("*onnxc-src*")), "the temporary source is removed"


def test_fold_writes_large_tensors_as_external_data(zoo, tmp_path, onnxc_cli):
    src = zoo("cnn", light=False)
    onnxc.fold(src, tmp_path / "ext.onnx", external_data_threshold=1024)
    cli = tmp_path / "cli"
    cli.mkdir()
    subprocess.run([str(onnxc_cli), "fold", str(src), "-o", str(cli / "ext.onnx"), "--external-data-threshold",
                    "1024"], check=True)
    assert (tmp_path / "ext.onnx.data").stat().st_size > 0
    assert (tmp_path / "ext.onnx.data").read_bytes() == (cli / "ext.onnx.data").read_bytes()
    feed = {i.name: np.random.default_rng(0).standard_normal(
        [d if isinstance(d, int) else 1 for d in i.shape]).astype(np.float32) for i in ort_session(src).get_inputs()}
    assert_close(ort_session(tmp_path / "ext.onnx").run(None, feed), ort_session(src).run(None, feed), "external")


def test_simplify_command_line(gather, tmp_path):
    out = tmp_path / "cli_simplified.onnx"
    run = subprocess.run([sys.executable, "-m", "onnxc.simplify", str(gather), str(out), "2",
                          "--overwrite-input-shape", "a:3,4", "--test-input-shape", "a:3,4"],
                         capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert "the outputs agree" in run.stdout
    assert "RuntimeWarning" not in run.stderr
    dims = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in onnx.load(out).graph.input]
    assert dims[0] == [3, 4]
    quick = subprocess.run([sys.executable, "-m", "onnxc.simplify", str(gather), str(tmp_path / "q.onnx")],
                           capture_output=True, text=True)
    assert quick.returncode == 0 and (tmp_path / "q.onnx").stat().st_size > 0, quick.stderr


def scale_model(path, k):
    """y = x * k: libraries of one size."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    c = helper.make_tensor("c", TensorProto.FLOAT, [1], [float(k)])
    g = helper.make_graph([helper.make_node("Mul", ["x", "c"], ["y"])], "scale", [x], [y], [c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def test_the_cache_is_bounded_least_recently_used_first(tmp_path, monkeypatch, onnxc_cli):
    cache = tmp_path / "cache"
    paths = [scale_model(tmp_path / f"scale{k}.onnx", k) for k in range(3)]
    first = onnxc.InferenceSession(paths[0], cache_dir=cache)
    one = onnxc.cache_info(cache)["bytes"]
    # Room for about two libraries: the third evicts the least recently used.
    monkeypatch.setenv("ONNXC_CACHE_MAX_BYTES", str(int(one * 2.5)))
    second = onnxc.InferenceSession(paths[1], cache_dir=cache)
    assert onnxc.InferenceSession(paths[0], cache_dir=cache).cache_hit  # paths[0] used again
    third = onnxc.InferenceSession(paths[2], cache_dir=cache)
    info = onnxc.cache_info(cache)
    assert info["max_bytes"] == int(one * 2.5)
    assert info["bytes"] <= info["max_bytes"] or info["entries"] == 1, info
    assert onnxc.InferenceSession(paths[0], cache_dir=cache).cache_hit, "used recently: kept"
    assert not onnxc.InferenceSession(paths[1], cache_dir=cache).cache_hit, "least recently used: evicted"
    # Sessions whose library was removed keep running.
    for s in (first, second, third):
        s.run(None, {i.name: np.zeros([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
                     for i in s.get_inputs()})
    removed, freed = onnxc.cache_prune(0, cache)
    assert removed >= 1 and freed > 0 and onnxc.cache_info(cache)["entries"] == 0
    out = subprocess.run([sys.executable, "-m", "onnxc", "cache", "info", "--dir", str(cache)],
                         capture_output=True, text=True, check=True).stdout
    assert "entries: 0" in out
    cli = subprocess.run([str(onnxc_cli), "cache", "info", "--dir", str(cache)], capture_output=True, text=True,
                         check=True).stdout
    assert "entries: 0" in cli
