"""`pip install ./python` into a fresh virtual environment, then the first
thing a user runs.

scripts/test.sh makes this fast and offline: pip takes maturin and numpy
from a wheelhouse filled during setup (PIP_NO_INDEX, PIP_FIND_LINKS), cargo
stays offline, and the release build reuses the target directory the test
build filled (CARGO_TARGET_DIR). Run by hand without those, it is exactly
the user's path from scratch."""

import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
from helpers import REPO, ort_session


def test_pip_install_into_a_fresh_venv(zoo, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    wheelhouse = os.environ.get("ONNXC_WHEELHOUSE")
    if wheelhouse:
        env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=wheelhouse, CARGO_NET_OFFLINE="true")
    start = time.monotonic()
    r = subprocess.run(
        ["pip", "install", "./python"], cwd=REPO, env=env, capture_output=True, text=True
    )
    took = time.monotonic() - start
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    print(f"\npip install ./python: {took:.1f} s")
    (tmp_path / "timing.json").write_text(json.dumps({"pip_install_s": took}))

    shutil.copy(zoo("mlp", light=False), tmp_path / "m.onnx")
    env["ONNXC_CACHE_DIR"] = str(tmp_path / "cache")
    code = 'import onnxc; s = onnxc.InferenceSession("m.onnx"); print(s.run(None, {"x": [[0.5] * 64]}))'
    r = subprocess.run(["python", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    assert r.stdout.startswith("[array([[") and "dtype=float32" in r.stdout, r.stdout
    # The printed values are onnxruntime's.
    want = ort_session(tmp_path / "m.onnx").run(None, {"x": np.full((1, 64), 0.5, np.float32)})[0]
    got = np.array(
        [float(v) for v in r.stdout.split("[[", 1)[1].split("]]", 1)[0].replace(",", " ").split()],
        np.float32,
    )
    np.testing.assert_allclose(got, want.ravel(), rtol=1e-5, atol=1e-6)
    # The venv's onnxc is the installed wheel, not the source tree.
    where = subprocess.run(
        ["python", "-c", "import onnxc; print(onnxc.__file__)"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert str(venv) in where.stdout, where.stdout + where.stderr
    # The shim's subpackages and the simplify command are in the wheel.
    shim = "from onnxc.ort.capi.onnxruntime_pybind11_state import InvalidArgument; print(InvalidArgument.__name__)"
    r = subprocess.run(["python", "-c", shim], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.stdout.strip() == "InvalidArgument", r.stderr[-2000:]
    r = subprocess.run(["python", "-m", "onnxc.simplify", "--help"], cwd=tmp_path, env=env, capture_output=True,
                       text=True)
    assert r.returncode == 0 and "--overwrite-input-shape" in r.stdout, r.stderr[-2000:]
