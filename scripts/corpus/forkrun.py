"""Python child processes without the interpreter's start-up.

The corpus runner, the shape fuzzer and the fold comparison run every
case in a child (a segfault of a compiled library or of onnxruntime is a
result, not the end of the run). A fresh `python3 script --worker ...`
spends about a second importing numpy, onnx and onnxruntime, which was
most of those runs' time. Here a server process imports them once; each
child is a fork of it that runs the script as `__main__` with its own
argv, environment, stdout and stderr: the same isolation, exit status and
timeout as a subprocess. A server runs one child at a time, so a caller
with N threads gets up to N servers.

Protocol (server stdin/stdout, one JSON object per line): the request
{"script", "argv", "env", "out", "err", "timeout"}, the reply {"rc"}
(negative for a signal, null on a timeout, the child then killed).
"""

import json
import os
import queue
import runpy
import select
import signal
import subprocess
import sys
import tempfile

# What every worker imports; a module missing here is imported by the
# child itself, as before.
PRELOAD = ["numpy", "onnx", "onnxruntime"]


# ---------------------------------------------------------------- server


def _child(req):
    """In the fork: become `python3 SCRIPT ARGV...`; never returns."""
    code = 1
    try:
        os.environ.update(req["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, req["out"]), (2, req["err"])):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        sys.stdin = open(0, closefd=False)
        sys.argv = [req["script"]] + req["argv"]
        code = 0
        runpy.run_path(req["script"], run_name="__main__")
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 (reported as the interpreter would)
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 (closed by the script)
                pass
        os._exit(code)


def _wait(pid, timeout):
    """The child's exit code, or None after killing it at the timeout."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    return os.waitstatus_to_exitcode(status) if ready else None


def serve():
    for name in PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(req)
        rc = _wait(pid, req["timeout"])
        sys.stdout.write(json.dumps({"rc": rc}) + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------- client


class _Server:
    def __init__(self, env):
        e = dict(os.environ, **env)
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve"], env=e,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise OSError(f"fork server exited ({self.proc.wait()})")
        return json.loads(reply)["rc"]


_idle = queue.LifoQueue()


def run_script(script, argv, env, timeout, server_env):
    """(exit status, stdout, stderr) of `python3 SCRIPT ARGV...` in a
    forked child with ENV added: the status is negative for a signal,
    None on a timeout (the child is killed). SERVER_ENV: what servers
    start with (thread counts must be set before numpy's BLAS starts)."""
    try:
        server = _idle.get_nowait()
    except queue.Empty:
        server = _Server(server_env)
    with tempfile.TemporaryDirectory(prefix="forkrun-") as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        req = {"script": os.path.abspath(script), "argv": list(argv), "env": env,
               "out": out, "err": err, "timeout": timeout}
        try:
            rc = server.run(req)
            _idle.put(server)
        except (OSError, ValueError) as ex:
            # The server itself died (the OOM killer): the call as a plain
            # subprocess; the next call starts a new server.
            server.proc.kill()
            return _subprocess(script, argv, env, timeout, ex)
        texts = []
        for path in (out, err):
            try:
                with open(path, errors="replace") as f:
                    texts.append(f.read())
            except OSError:
                texts.append("")
    return rc, texts[0], texts[1]


def _subprocess(script, argv, env, timeout, why):
    try:
        p = subprocess.run([sys.executable, script] + list(argv), capture_output=True, text=True,
                           timeout=timeout, env=dict(os.environ, **env))
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"timeout (after the fork server failed: {why})"


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: forkrun.py --serve (started by run_script)")
    serve()
