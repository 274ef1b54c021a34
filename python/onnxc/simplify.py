"""`python -m onnxc.simplify IN OUT [CHECK_N] [options]`: onnx-simplifier's
command line (`python -m onnxsim`), folding with onnxc. Shapes are
onnx-simplifier's `name:1,3,224,224` (or `1,3,224,224` for a model with
one input)."""

import argparse
import sys


def _shapes(items):
    """onnx-simplifier's shape arguments as {name or None: [dims]}."""
    if not items:
        return None
    shapes = {}
    for item in items:
        name, _, dims = item.rpartition(":")
        shapes[name or None] = [int(d) for d in dims.split(",")] if dims else []
    return shapes


def _named(shapes, model_inputs):
    if shapes is None or None not in shapes:
        return shapes
    if len(model_inputs) != 1 or len(shapes) != 1:
        raise SystemExit("a shape without a name needs a model with one input: write NAME:DIMS")
    return {model_inputs[0]: shapes[None]}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m onnxc.simplify", description=__doc__.split("\n\n")[0])
    p.add_argument("input_model")
    p.add_argument("output_model")
    p.add_argument("check_n", nargs="?", type=int, default=0, help="check the result on N random inputs")
    p.add_argument("--overwrite-input-shape", nargs="+", help="fix input dims: name:1,3,224,224")
    p.add_argument("--test-input-shape", nargs="+", help="input sizes of the check")
    p.add_argument("--input-shape", nargs="+", help="both of the above (deprecated in onnx-simplifier)")
    p.add_argument("--unused-output", nargs="+", help="outputs to remove")
    p.add_argument("--input-fill", choices=["random", "ones", "zeros", "arange"], default="random")
    p.add_argument("--check-rtol", type=float, default=1e-4)
    p.add_argument("--check-atol", type=float, default=1e-5)
    p.add_argument("--external-data-threshold", type=int, default=None,
                   help="bytes: larger tensors go to OUTPUT.data (models over 2 GB); without a check only")
    for flag in ("--skip-fuse-bn", "--skip-optimization", "--skip-constant-folding", "--skip-shape-inference"):
        p.add_argument(flag, action="store_true", help="accepted; onnxc folds as `onnxc fold` does")
    a = p.parse_args(argv)

    from . import _onnxc
    from ._simplify import fold, simplify

    inputs = [name for name, _ in _onnxc.model_info(a.input_model)["inputs"]]
    overwrite = _named(_shapes(a.overwrite_input_shape or a.input_shape), inputs)
    test = _named(_shapes(a.test_input_shape or a.input_shape), inputs)
    if a.check_n == 0 and not a.unused_output:
        # File to file, streamed: any size.
        fold(a.input_model, a.output_model, overwrite, a.external_data_threshold)
        print(f"onnxc: folded {a.input_model} into {a.output_model}")
        return 0
    _, ok = simplify(a.input_model, a.check_n, overwrite_input_shapes=overwrite, test_input_shapes=test,
                     unused_output=a.unused_output, input_fill=a.input_fill, check_rtol=a.check_rtol,
                     check_atol=a.check_atol, skip_fuse_bn=a.skip_fuse_bn, output_path=a.output_model)
    print(f"onnxc: folded {a.input_model} into {a.output_model}; checked {a.check_n} times: "
          f"{'the outputs agree' if ok else 'THE OUTPUTS DIFFER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
