"""Shared fixtures: the onnxc CLI (for `onnxc zoo gen`), zoo models and a
session cache per test run."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO


@pytest.fixture(scope="session")
def onnxc_cli():
    """The onnxc binary: $ONNXC_BIN, else the workspace's debug or release
    build (scripts/test.sh builds it before pytest runs)."""
    given = os.environ.get("ONNXC_BIN")
    candidates = [Path(given)] if given else [REPO / "target/debug/onnxc", REPO / "target/release/onnxc"]
    for c in candidates:
        if c.is_file():
            return c
    found = shutil.which("onnxc")
    if found and not given:
        return Path(found)
    pytest.fail(f"no onnxc binary (looked at {', '.join(map(str, candidates))}): cargo build -p onnxc")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """One library cache for the whole run: each model compiles once."""
    return tmp_path_factory.mktemp("session-cache")


@pytest.fixture(scope="session")
def zoo(onnxc_cli, tmp_path_factory):
    """zoo(name, light=True) -> path of `onnxc zoo gen name [--light]`."""
    out = tmp_path_factory.mktemp("zoo")

    def gen(name, light=True):
        path = out / f"{name}{'_light' if light else ''}.onnx"
        if not path.exists():
            cmd = [str(onnxc_cli), "zoo", "gen", name, "-o", str(path)] + (["--light"] if light else [])
            subprocess.run(cmd, check=True, capture_output=True)
        return path

    return gen
