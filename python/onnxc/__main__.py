"""`python -m onnxc cache info|prune [--dir DIR] [--max-bytes SIZE]`: the
library cache of sessions, as `onnxc cache` (the CLI) shows and prunes it.
`python -m onnxc.simplify` is onnx-simplifier's command."""

import argparse
import sys

from . import _onnxc


def _size(s):
    units = {"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20, "G": 30, "GB": 30, "GIB": 30}
    t = s.strip().upper()
    digits = len(t) - len(t.lstrip("0123456789"))
    if digits == 0 or t[digits:].strip() not in units:
        raise argparse.ArgumentTypeError(f"invalid size {s!r} (use K, M or G)")
    return int(t[:digits]) << units[t[digits:].strip()]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m onnxc", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    cache = sub.add_parser("cache", help="the library cache of sessions")
    cache.add_argument("action", choices=["info", "prune"])
    cache.add_argument("--dir", help="default: $ONNXC_CACHE_DIR, else ~/.cache/onnxc/sessions")
    cache.add_argument("--max-bytes", type=_size, help="prune to this size (default: the bound; 0 empties it)")
    a = p.parse_args(argv)
    info = _onnxc.cache_info(a.dir)
    if a.action == "info":
        print(f"cache: {info['dir']}\nentries: {info['entries']}\n"
              f"size: {info['bytes'] / 2**20:.1f} MiB of {info['max_bytes'] / 2**20:.1f} MiB")
        return 0
    removed, freed = _onnxc.cache_prune(a.max_bytes, a.dir)
    left = _onnxc.cache_info(a.dir)
    print(f"removed {removed} entries ({freed / 2**20:.1f} MiB); {left['entries']} left "
          f"({left['bytes'] / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
