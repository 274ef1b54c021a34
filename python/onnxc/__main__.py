"""`python -m onnxc cache info|prune [--dir DIR] [--max-bytes SIZE]`: the
library cache of sessions, as `onnxc cache` (the CLI) shows and prunes it.
`python -m onnxc.simplify` is onnx-simplifier's command."""

import argparse
import sys

from . import _onnxc


def _size(s):
    """`--max-bytes` as the CLI reads sizes (`512M`, `2G`)."""
    try:
        return _onnxc.parse_size(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


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
