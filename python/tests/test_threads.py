"""Sessions from several Python threads: one session shared by two threads,
the GIL released while the model runs, concurrent compiles of one model."""

import shutil
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from helpers import assert_close, random_feed

import onnxc


def test_two_threads_share_one_session(zoo, cache_dir):
    sess = onnxc.InferenceSession(zoo("cnn", light=False), cache_dir=cache_dir)
    feeds = [random_feed(sess.get_inputs(), seed=k) for k in range(8)]
    want = [sess.run(None, f) for f in feeds]

    def work(k):
        # Each thread runs every feed several times, in its own order.
        got = []
        for rep in range(5):
            for j in range(len(feeds)):
                i = (j * (k + 1) + rep) % len(feeds)
                got.append((i, sess.run(None, feeds[i])))
        return got

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(work, range(2)))
    for got in results:
        for i, out in got:
            assert_close(out, want[i], f"feed {i}", rtol=0, atol=0)


def test_the_gil_is_released_while_the_model_runs(zoo, cache_dir):
    sess = onnxc.InferenceSession(zoo("resnet50v1"), cache_dir=cache_dir)
    feed = random_feed(sess.get_inputs())
    sess.run(None, feed)
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        before = count[0]
        sess.run(None, feed)  # ~0.1-1 s of native code
        during = count[0] - before
    finally:
        stop.set()
        t.join()
    # With the GIL held for the whole call the spinner could not run.
    assert during > 1000, during


def test_concurrent_sessions_compile_a_model_once(zoo, tmp_path):
    path = zoo("squeezenet")
    barrier = threading.Barrier(3)

    def open_session(_):
        barrier.wait()
        return onnxc.InferenceSession(path, cache_dir=tmp_path)

    with ThreadPoolExecutor(3) as pool:
        sessions = list(pool.map(open_session, range(3)))
    assert sorted(s.cache_hit for s in sessions) == [False, True, True]
    assert len({s.library_path for s in sessions}) == 1
    x = random_feed(sessions[0].get_inputs())
    outs = [s.run(None, x)[0] for s in sessions]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


def test_a_failed_check_in_one_thread_leaves_the_other_alone(tmp_path, cache_dir):
    """Runtime checks are caught per thread: one thread's Gather index out
    of range is its ValueError while another runs good inputs."""
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["rows"], axis=0, name="lookup")],
        "g",
        [
            helper.make_tensor_value_info("table", TensorProto.FLOAT, ["n", 8]),
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["k"]),
        ],
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, ["k", 8])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "lookup.onnx")
    sess = onnxc.InferenceSession(tmp_path / "lookup.onnx", cache_dir=cache_dir)
    table = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    barrier = threading.Barrier(2)

    def work(bad):
        barrier.wait()
        failures = 0
        for rep in range(200):
            ids = np.array([rep % 64, 64 + rep] if bad else [rep % 64, 63 - rep % 64])
            try:
                (rows,) = sess.run(None, {"table": table, "ids": ids})
                np.testing.assert_array_equal(rows, table[ids])
            except ValueError as e:
                assert "onnx.Gather at node 'lookup': an index is out of range" in str(e), e
                failures += 1
        return failures

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(work, [True, False])) == [200, 0]


def needed_libraries(lib):
    readelf = shutil.which("llvm-readelf") or "/usr/lib/llvm-19/bin/llvm-readelf"
    out = subprocess.run([readelf, "--needed-libs", lib], capture_output=True, text=True, check=True).stdout
    return out


def test_threads_choose_the_parallel_runtime(zoo, tmp_path):
    """threads=1 builds serial code without libgomp (onnxruntime's
    intra_op_num_threads=1); the default uses all cores through libgomp.
    Each is cached apart, and both compute the same."""
    path = zoo("cnn", light=False)
    serial = onnxc.InferenceSession(path, threads=1, cache_dir=tmp_path)
    default = onnxc.InferenceSession(path, cache_dir=tmp_path)
    assert serial.library_path != default.library_path
    assert "libgomp" not in needed_libraries(serial.library_path)
    assert "libgomp" in needed_libraries(default.library_path)
    assert onnxc.InferenceSession(path, threads=1, cache_dir=tmp_path).cache_hit
    feed = random_feed(serial.get_inputs())
    assert_close(serial.run(None, feed), default.run(None, feed), "threads=1 against default")


def test_onnxruntime_session_options_give_the_threads(zoo, tmp_path):
    """Code written for onnxruntime passes SessionOptions second: its
    intra_op_num_threads chooses the threads (1: serial code)."""
    ort = pytest.importorskip("onnxruntime")
    path = zoo("mlp", light=False)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    serial = onnxc.InferenceSession(path, so, providers=["CPUExecutionProvider"], cache_dir=tmp_path)
    assert "libgomp" not in needed_libraries(serial.library_path)
    default = onnxc.InferenceSession(path, ort.SessionOptions(), cache_dir=tmp_path)
    assert "libgomp" in needed_libraries(default.library_path)
