"""Helpers of the tests: random feeds and comparison with onnxruntime."""

from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


ORT_DTYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(int8)": np.int8,
    "tensor(uint8)": np.uint8,
    "tensor(bool)": np.bool_,
}


def random_feed(inputs, sizes=None, seed=0, int_high=10):
    """Random inputs for NodeArgs; a dynamic dim takes sizes[name] or 1."""
    rng = np.random.default_rng(seed)
    feed = {}
    for i in inputs:
        shape = [d if isinstance(d, int) else (sizes or {}).get(d, 1) for d in i.shape]
        dtype = ORT_DTYPES[i.type]
        if np.issubdtype(dtype, np.floating):
            feed[i.name] = rng.standard_normal(shape).astype(dtype)
        else:
            feed[i.name] = rng.integers(0, int_high, shape).astype(dtype)
    return feed


def ort_session(model):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, opts, providers=["CPUExecutionProvider"])


def assert_close(got, want, what, rtol=1e-4, atol=1e-3):
    """Outputs agree: same count, dtypes and shapes; values within rtol of
    the largest reference magnitude (atol when the reference is all zeros,
    as constant-weight models can compute)."""
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"{what} output {k}: {g.dtype} vs {w.dtype}"
        assert g.shape == w.shape, f"{what} output {k}: {g.shape} vs {w.shape}"
        if not np.issubdtype(w.dtype, np.floating):
            np.testing.assert_array_equal(g, w, err_msg=f"{what} output {k}")
            continue
        assert np.isfinite(g).all(), f"{what} output {k} is not finite"
        diff = float(np.abs(g.astype(np.float64) - w).max()) if w.size else 0.0
        scale = float(np.abs(w).max()) if w.size else 0.0
        limit = rtol * scale if scale > 0 else atol
        assert diff <= limit, f"{what} output {k}: max |diff| {diff:.3g} > {limit:.3g}"
