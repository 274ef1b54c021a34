#!/usr/bin/env bash
# Install the exporter stacks that scripts/corpus/generate.py needs.
#
#   bash scripts/corpus/setup.sh            # all three venvs
#   bash scripts/corpus/setup.sh main tf    # only some of them
#
# Venvs (Python 3.11; packages from PyPI through pip's ordinary index only;
# nothing else is downloaded, no model hub is ever contacted):
#   $ONNXC_CORPUS_VENV          main: torch, torchvision, timm, transformers,
#                               ultralytics, scikit-learn, skl2onnx, onnx,
#                               onnxscript, onnxruntime   (requirements.txt)
#   $ONNXC_CORPUS_VENV-tf       tensorflow-cpu + tf2onnx  (requirements-tf.txt)
#   $ONNXC_CORPUS_VENV-paddle   paddlepaddle + paddle2onnx (requirements-paddle.txt)
# default ONNXC_CORPUS_VENV=$HOME/.cache/onnxc/corpus-venv.
#
# Why three: paddle2onnx 2.1.0 pins onnx<=1.17 while torch's exporters
# want onnx 1.23 + onnxscript; TensorFlow and torch are kept out of one
# process. generate.py (run with the main venv's python) finds the other
# two next to it and runs their exporters in subprocesses.
#
# Idempotent: a venv whose requirements file is unchanged since its last
# successful install (hash stamp in the venv) is left alone. A stack that
# fails to install is recorded in VENV/INSTALL_FAILED (generate.py reports
# it) and does not stop the others; the exit status is non-zero only when
# the main stack fails.
#
# This is a developer/benchmark tool: torch from PyPI pulls the CUDA wheels
# (several GB). CI never runs it (CI uses scripts/corpus/ci_models.py).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv_main="${ONNXC_CORPUS_VENV:-$HOME/.cache/onnxc/corpus-venv}"
python="${ONNXC_CORPUS_PYTHON:-python3}"

# PyPI only: drop any extra index a caller's environment may add.
unset PIP_EXTRA_INDEX_URL PIP_INDEX_URL
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

stacks=("$@")
[ ${#stacks[@]} -eq 0 ] && stacks=(main tf paddle)

pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [ "$pyver" != "3.11" ]; then
  echo "setup.sh: warning: pins were chosen for Python 3.11, $python is $pyver" >&2
fi

install_stack() { # name venv requirements-file
  local name="$1" venv="$2" req="$3"
  local stamp="$venv/.onnxc-corpus-stamp"
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1) py$pyver"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "== $name: up to date ($venv)"
    return 0
  fi
  echo "== $name: installing into $venv"
  local t0=$SECONDS
  if [ ! -x "$venv/bin/python" ]; then
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv" || { echo "venv creation failed" > "$venv/INSTALL_FAILED" 2>/dev/null; return 1; }
  fi
  rm -f "$stamp" "$venv/INSTALL_FAILED"
  local log="$venv/install.log"
  if "$venv/bin/python" -m pip install --upgrade pip > "$log" 2>&1 &&
     "$venv/bin/python" -m pip install -r "$req" >> "$log" 2>&1; then
    echo "$want" > "$stamp"
    echo "== $name: done in $((SECONDS - t0)) s"
    return 0
  fi
  # Keep the reason: the last error lines of pip's log.
  { echo "pip install -r $(basename "$req") failed:"; grep -E "^(ERROR|error):" "$log" | tail -5; } > "$venv/INSTALL_FAILED"
  echo "== $name: FAILED after $((SECONDS - t0)) s (see $log)" >&2
  cat "$venv/INSTALL_FAILED" >&2
  return 1
}

status=0
for s in "${stacks[@]}"; do
  case "$s" in
    main) install_stack main "$venv_main" "$here/requirements.txt" || status=1 ;;
    tf) install_stack tf "$venv_main-tf" "$here/requirements-tf.txt" || true ;;
    paddle) install_stack paddle "$venv_main-paddle" "$here/requirements-paddle.txt" || true ;;
    *) echo "setup.sh: unknown stack '$s' (main, tf, paddle)" >&2; exit 2 ;;
  esac
done
echo "generate with: $venv_main/bin/python $here/generate.py"
exit $status
