"""The CI corpus models through onnxruntime's quantizer, as users
quantize them: `quantize_dynamic` (int8 weights; DynamicQuantizeLinear,
MatMulInteger, ConvInteger, com.microsoft DynamicQuantizeLSTM) and
`quantize_static` calibrated on the models' own sizes, in the QDQ format
and the QOperator one (QLinearConv, QLinearMatMul and com.microsoft
QGemm, QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
QLinearSoftmax, QLinearAveragePool, QLinearGlobalAveragePool).

ci_models.py calls `derive` after writing the float models; each derived
model NAME_FORMAT gets the same sizes and onnxruntime's outputs.
"""

import contextlib
import io
import os
import sys
import tempfile

import numpy as np

from corpus_common import write_entry

SOURCES = ["ci_conv_pool_batch", "ci_mobile_block", "ci_attention", "ci_lstm_state", "ci_winograd", "ci_fpn"]
FORMATS = ["qdyn", "qdq", "qop"]

# Quantized activations: a float computed an ulp apart from onnxruntime's
# may round to the next step, which later layers carry on (measured: at
# most 0.0092, one step of ci_winograd's output scale).
ATOL = {"qdyn": 0.02, "qdq": 0.02, "qop": 0.02}


def names():
    return [f"{s}_{f}" for s in SOURCES for f in FORMATS]


def _feeds(outdir, name):
    import json

    meta = json.load(open(os.path.join(outdir, f"{name}.json")))
    feeds = []
    for s in meta["sizes"]:
        d = np.load(os.path.join(outdir, s["npz"]))
        feeds.append({i["name"]: d[f"in{k}"] for k, i in enumerate(meta["inputs"])})
    return feeds


def _quantize(src, dst, fmt, feeds):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(feeds)

        def get_next(self):
            return next(self.it, None)

    if fmt == "qdyn":
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
        return
    # The calibrator prints the value_info it adds; keep the report clean.
    with contextlib.redirect_stdout(io.StringIO()):
        q = QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.getcwd()
            os.chdir(tmp)  # the calibrator writes its augmented model here
            try:
                quantize_static(src, dst, Reader(), quant_format=q)
            finally:
                os.chdir(cwd)


def derive(outdir, only=None):
    """Writes the quantized variants into OUTDIR; returns how many failed."""
    import onnxruntime

    failed = 0
    for src in SOURCES:
        for fmt in FORMATS:
            name = f"{src}_{fmt}"
            if only and name not in only:
                continue
            try:
                feeds = _feeds(outdir, src)
                path = os.path.abspath(os.path.join(outdir, name + ".onnx"))
                _quantize(os.path.abspath(os.path.join(outdir, src + ".onnx")), path, fmt, feeds)
                e = write_entry(outdir, name, path, feeds, source="ci (onnxruntime.quantization)",
                                exporter="onnxruntime.quantization", exporter_version=onnxruntime.__version__,
                                notes=f"{src} quantized ({fmt})", extra={"atol": ATOL[fmt]})
                print(f"{name:22} opset {e['opset']:>2}  {len(e['sizes'])} sizes  {src} quantized ({fmt})")
            except Exception as ex:  # one bad model must not stop the rest
                failed += 1
                msg = str(ex).splitlines()[0] if str(ex) else ""
                print(f"{name:22} FAILED: {type(ex).__name__}: {msg}", file=sys.stderr)
    return failed
