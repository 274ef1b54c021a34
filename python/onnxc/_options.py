"""Arguments shared by the entry points: models and input shapes."""

import os


def shape_specs(input_shapes):
    """`input_shapes` as the compiler's `NAME=DIMS` strings.

    Accepts None, a dict {name: dims} where a dim is an int, or None (or a
    name) to keep it dynamic, or a list of "name=1x3x?x?" strings.
    """
    if input_shapes is None:
        return []
    if isinstance(input_shapes, dict):
        specs = []
        for name, dims in input_shapes.items():
            if not isinstance(name, str):
                raise TypeError(f"input_shapes: input names are strings, got {name!r}")
            if isinstance(dims, str):
                specs.append(f"{name}={dims}")
                continue
            try:
                dims = list(dims)
            except TypeError:
                raise TypeError(f"input_shapes[{name!r}]: expected a list of dims, got {dims!r}") from None
            specs.append(f"{name}=" + "x".join(_dim(name, d) for d in dims))
        return specs
    if isinstance(input_shapes, (list, tuple)):
        for s in input_shapes:
            if not isinstance(s, str):
                raise TypeError(f"input_shapes: expected 'name=1x3x224x224' strings, got {s!r}")
        return list(input_shapes)
    raise TypeError(
        "input_shapes: expected a dict {name: [dims]} or a list of 'name=dims' strings, "
        f"got {type(input_shapes).__name__}"
    )


def _dim(name, d):
    if d is None or isinstance(d, str):
        return "?"
    if isinstance(d, bool) or not hasattr(d, "__index__"):
        raise TypeError(f"input_shapes[{name!r}]: a dim is an int or None, got {d!r}")
    d = d.__index__()
    if d < 0:
        raise ValueError(f"input_shapes[{name!r}]: dim {d} is negative (use None for a dynamic dim)")
    return str(d)


def model_source(model):
    """A path (str) or the model's bytes, from a path, bytes or a ModelProto."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        return existing(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    raise TypeError(
        f"expected a model path, its bytes or an onnx.ModelProto, got {type(model).__name__}"
    )


def existing(path):
    """`path` as a str; `NoSuchFile` (a FileNotFoundError) when there is no
    such file."""
    from ._ort import NoSuchFile

    path = os.fspath(path)
    if not os.path.exists(path):
        raise NoSuchFile(2, "no such model file", path)
    return path


def writable(path):
    """`path` as a str; FileNotFoundError when its directory does not exist
    (writers do not create directories)."""
    path = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise FileNotFoundError(2, "no such directory for the output", parent)
    return path


def llvm_bin():
    """The directory of clang when ONNXC_LLVM_BIN says where it is."""
    d = os.environ.get("ONNXC_LLVM_BIN")
    return d or None
