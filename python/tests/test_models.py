"""InferenceSession against onnxruntime: the zoo (`onnxc zoo gen NAME
--light`, and the small generators with their full weights), the onnx
package's 9 light models, and the CI subset of the dynamic-shapes corpus at
two input sizes."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from helpers import REPO, assert_close, ort_session, random_feed

import onnxc

ZOO = [
    "mlp", "cnn", "resnet50v1", "resnet152v1", "arcface100", "vgg19", "densenet121",
    "mobilenetv2", "squeezenet", "bert-base", "gpt2-small", "bert-tiny", "gpt2-tiny",
]
FULL_WEIGHTS = ["mlp", "cnn", "bert-tiny", "gpt2-tiny"]
TRANSFORMERS = ["bert-tiny", "gpt2-tiny"]

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
LIGHT = sorted(f[: -len(".onnx")] for f in os.listdir(LIGHT_DIR) if f.endswith(".onnx"))


def test_zoo_list_matches_the_cli(onnxc_cli):
    out = subprocess.run([str(onnxc_cli), "zoo", "list"], check=True, capture_output=True, text=True)
    assert sorted(line.split()[0] for line in out.stdout.splitlines() if line.strip()) == sorted(ZOO)


def check_against_ort(model, cache_dir, sizes=None, seed=0, drop=False):
    """The session's outputs are onnxruntime's on random inputs; `drop`
    removes the compiled library afterwards (the light models' weights
    are computed at compile time: up to 0.6 GB a library)."""
    sess = onnxc.InferenceSession(model, cache_dir=cache_dir)
    ref = ort_session(model)
    assert [i.name for i in sess.get_inputs()] == [i.name for i in ref.get_inputs()]
    assert [o.name for o in sess.get_outputs()] == [o.name for o in ref.get_outputs()]
    assert [i.type for i in sess.get_inputs()] == [i.type for i in ref.get_inputs()]
    # The vocabulary of the tiny transformers is 1000.
    feed = random_feed(sess.get_inputs(), sizes, seed, int_high=1000)
    assert_close(sess.run(None, feed), ref.run(None, feed), str(model))
    if drop:
        shutil.rmtree(os.path.dirname(sess.library_path))
    return sess


@pytest.mark.parametrize("name", ZOO)
def test_zoo_light(name, zoo, cache_dir):
    check_against_ort(zoo(name, light=True), cache_dir, drop=True)


@pytest.mark.parametrize("name", FULL_WEIGHTS)
def test_zoo_full_weights(name, zoo, cache_dir):
    check_against_ort(zoo(name, light=False), cache_dir)


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transformers_at_other_batch_and_sequence(name, zoo, cache_dir):
    sess = onnxc.InferenceSession(zoo(name, light=False), cache_dir=cache_dir)
    dims = {d for i in sess.get_inputs() for d in i.shape if isinstance(d, str)}
    assert dims, "the transformers' batch and sequence dims are dynamic and named"
    for batch, seq in [(1, 3), (2, 13)]:
        sizes = {d: (batch if "batch" in d else seq) for d in dims}
        check_against_ort(zoo(name, light=False), cache_dir, sizes, seed=batch)


def test_light_models_are_nine():
    assert len(LIGHT) == 9, LIGHT


@pytest.mark.parametrize("name", LIGHT)
def test_onnx_light_model(name, cache_dir):
    path = os.path.join(LIGHT_DIR, name + ".onnx")
    check_against_ort(path, cache_dir, drop=True)


# The CI subset of the dynamic-shapes corpus (scripts/corpus/ci_models.py):
# every model compiles once with its dynamic dims and matches onnxruntime
# at each size (ranks decided at run time included: ci_if_ranks,
# ci_squeeze_batch).
CORPUS_CI = [
    "ci_attention",
    "ci_conv_pool_batch",
    "ci_flatten_chain",
    "ci_if_shapes",
    "ci_lstm_state",
    "ci_gru_bidir",
    "ci_paddle_dims",
    "ci_conv_hw",
    "ci_conv_rows",
    "ci_mobile_block",
    "ci_ml_linear",
    "ci_ml_trees",
    "ci_ml_tree_ensemble",
    "ci_ml_folded",
    "ci_winograd",
    "ci_int8",
    "ci_int8_conv",
    "ci_qdq",
    "ci_fpn",
    "ci_if_ranks",
    "ci_if_weights",
    "ci_squeeze_batch",
    "ci_squeeze_declared",
    # onnxruntime's com.microsoft ops (contrib_models.py)
    "ci_ms_gelu",
    "ci_ms_layernorm",
    "ci_ms_fused",
    "ci_ms_attention",
    "ci_ms_attention_past",
    "ci_ms_embed",
    "ci_ms_quant_matmul",
    "ci_ms_qlinear",
    "ci_ms_qattention",
    "ci_ms_gpu_forms",
    "ci_ms_attention_shared",
    "ci_ml_zipmap",
] + [
    # through onnxruntime.quantization (quantized_models.py)
    f"{src}_{fmt}"
    for src in ["ci_conv_pool_batch", "ci_mobile_block", "ci_attention", "ci_lstm_state", "ci_winograd", "ci_fpn"]
    for fmt in ["qdyn", "qdq", "qop"]
]


@pytest.fixture(scope="session")
def corpus_ci(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus-ci")
    subprocess.run(
        [sys.executable, str(REPO / "scripts/corpus/ci_models.py"), "-o", str(out)],
        check=True,
        capture_output=True,
    )
    return out


def test_corpus_ci_list_is_complete(corpus_ci):
    assert sorted(p.stem for p in corpus_ci.glob("*.onnx")) == sorted(CORPUS_CI)


@pytest.mark.parametrize("name", sorted(CORPUS_CI))
def test_corpus_ci_at_two_sizes(name, corpus_ci, cache_dir):
    meta = json.loads((corpus_ci / f"{name}.json").read_text())
    sess = onnxc.InferenceSession(corpus_ci / f"{name}.onnx", cache_dir=cache_dir)
    # Declared dim names come back in the shapes.
    for got, declared in zip(sess.get_inputs(), meta["inputs"]):
        assert got.name == declared["name"]
        for g, d in zip(got.shape, declared["dims"]):
            if isinstance(d, str):
                assert g in (d, None) or isinstance(g, int), (got.name, got.shape, declared["dims"])
            elif isinstance(d, int) and d > 0:
                assert g == d
    names = [o.name for o in sess.get_outputs()]
    assert len(meta["sizes"]) >= 2
    for size in meta["sizes"]:
        data = np.load(corpus_ci / size["npz"])
        feed = {i.name: data[f"in{k}"] for k, i in enumerate(sess.get_inputs())}
        got = sess.run(None, feed)
        for k, (g, name_k) in enumerate(zip(got, names)):
            w = data[f"out{k}"]
            if isinstance(g, list):  # ZipMap: the saved tensor form, label order
                g = np.array([[d[key] for key in d] for d in g], dtype=np.float32)
            assert g.shape == w.shape, (name, size["npz"], name_k)
            # Quantized outputs carry their own atol (ci_models.py: ATOL).
            atol = meta.get("atol", 1e-4)
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=atol, err_msg=f"{name} {size['npz']} {name_k}")


def test_zipmap_outputs_are_lists_of_dicts_as_onnxruntime(corpus_ci, cache_dir):
    """skl2onnx's ZipMap: onnxc returns what onnxruntime returns, a list of
    {label: probability} dicts (int and string labels), and describes the
    output as a sequence of maps."""
    path = corpus_ci / "ci_ml_zipmap.onnx"
    sess = onnxc.InferenceSession(path, cache_dir=cache_dir)
    ref = ort_session(path)
    assert [(o.name, o.type) for o in sess.get_outputs()] == [(o.name, o.type) for o in ref.get_outputs()]
    x = np.random.default_rng(5).standard_normal((4, 5)).astype(np.float32)
    got, want = sess.run(None, {"x": x}), ref.run(None, {"x": x})
    np.testing.assert_array_equal(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        assert isinstance(g, list) and len(g) == len(w)
        for gd, wd in zip(g, w):
            assert list(gd) == list(wd)
            np.testing.assert_allclose([gd[k] for k in gd], [wd[k] for k in wd], rtol=1e-5, atol=1e-6)
