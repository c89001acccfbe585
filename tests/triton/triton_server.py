"""A real tritonserver (PyPI's nvidia-pytriton bundles the binary) serving gcomp plans through
libtriton_gcomp.so, for the tests and the serving benchmark: model repositories, free loopback
ports, start, readiness, and a stop that leaves no process behind."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import json
import shutil
import tempfile


def tritonserver_binary():
    """The tritonserver that nvidia-pytriton installs into this Python environment."""
    import importlib.util
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("nvidia-pytriton is not installed in " + sys.prefix + " (tools/setup.sh makes .venv-triton)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "tritonserver", "bin", "tritonserver")
    if not os.access(path, os.X_OK):
        sys.exit("no tritonserver binary at " + path)
    return path


def read_pb(path):
    """An ONNX TensorProto file as a numpy array."""
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def gcomp_run(gcomp, plan, name, x, work):
    """`gcomp run PLAN --input NAME=x` in a scratch folder under `work`: the outputs, in the plan's order."""
    from onnx import numpy_helper
    d = tempfile.mkdtemp(dir=work)
    try:
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x).SerializeToString())
        subprocess.run([gcomp, "run", plan, "--input", f"{name}={d}/input_0.pb", "--output-dir", d], check=True,
                       stdout=subprocess.DEVNULL)
        outs = []
        while os.path.exists(os.path.join(d, f"output_{len(outs)}.pb")):
            outs.append(read_pb(os.path.join(d, f"output_{len(outs)}.pb")))
        return outs
    finally:
        shutil.rmtree(d)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def compile_plan(gcomp, model_onnx, plan_path, batch=8, extra=()):
    os.makedirs(os.path.dirname(plan_path), exist_ok=True)
    subprocess.run([gcomp, "compile", model_onnx, "-o", plan_path, "--batch", str(batch), *extra], check=True,
                   stdout=subprocess.DEVNULL)


def write_model(repo, name, config, plan_bytes=None, plan_from=None):
    """MODEL/config.pbtxt and MODEL/1/model.gplan (copied from `plan_from` or given as bytes)."""
    os.makedirs(os.path.join(repo, name, "1"), exist_ok=True)
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as f:
        f.write(config)
    if plan_from is not None:
        with open(plan_from, "rb") as f:
            plan_bytes = f.read()
    with open(os.path.join(repo, name, "1", "model.gplan"), "wb") as f:
        f.write(plan_bytes)


class Server:
    """tritonserver on loopback ports, in its own process group; `stop()` checks a clean exit."""

    def __init__(self, repo, backends, log_path, extra_args=(), binary=None, env=None, prefix=()):
        """`binary`: a tritonserver other than nvidia-pytriton's; `prefix`: a command to run it under
        (a dynamic loader); `env`: its environment."""
        self.http_port, self.grpc_port, self.metrics_port = free_port(), free_port(), free_port()
        self.log_path = log_path
        self.log = open(log_path, "w")
        args = [*prefix, binary or tritonserver_binary(), "--model-repository", repo, "--backend-directory", backends,
                "--http-address", "127.0.0.1", "--http-port", str(self.http_port),
                "--grpc-address", "127.0.0.1", "--grpc-port", str(self.grpc_port),
                "--metrics-address", "127.0.0.1", "--metrics-port", str(self.metrics_port),
                "--exit-on-error=false", "--strict-readiness=false", "--log-verbose=0", *extra_args]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True, env=env)

    @property
    def http_url(self):
        return f"127.0.0.1:{self.http_port}"

    @property
    def grpc_url(self):
        return f"127.0.0.1:{self.grpc_port}"

    def get(self, path, port=None):
        url = f"http://127.0.0.1:{port or self.http_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post(self, path, body=b"{}"):
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", data=body, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def wait_ready(self, models, timeout=120):
        """Waits until the server is live and `models` are ready; raises with the log otherwise."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tritonserver exited with {self.proc.returncode}:\n" + self.read_log())
            try:
                if self.get("/v2/health/live")[0] == 200 and all(
                        self.get(f"/v2/models/{m}/ready")[0] == 200 for m in models):
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("tritonserver not ready in time:\n" + self.read_log())

    def repository_index(self):
        status, body = self.post("/v2/repository/index")
        assert status == 200, body
        return {m["name"]: m for m in json.loads(body)}

    def read_log(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self, timeout=60):
        """SIGTERM, then the exit status; returns (returncode, leftover process ids of the group)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            code = None
        self.log.close()
        leftovers = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                if os.getpgid(int(pid)) == self.proc.pid:
                    leftovers.append(int(pid))
            except (ProcessLookupError, PermissionError):
                pass
        return code, leftovers
