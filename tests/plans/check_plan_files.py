"""Plan files through the CLI (DESIGN.md "File format"):
  - two `gcomp compile` runs (two processes) give byte-identical plans, for fp32 and bf16;
  - `inspect PLAN`, `run PLAN` and `bench PLAN --json` work on the file (bench's kernels counted);
  - RUNTIME_ONLY, a program linked with the runtime library alone, gives `run PLAN`'s outputs;
  - a truncated, corrupt (a flipped byte in the program and in the weights), newer-format, bad-magic
    or other-target plan is refused with exit 2 and a message naming the problem, never a crash.
Usage: check_plan_files.py GCOMP MODEL_DIR RUNTIME_ONLY"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xxh64 import xxh64  # noqa: E402


def flip(data, at):
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]


def with_header(data, header):
    """The plan `data` with its header replaced by `header` (same length) and hashed again."""
    n = struct.unpack("<I", data[8:12])[0]
    assert len(header) == n
    return data[:12] + header + struct.pack("<Q", xxh64(header)) + data[20 + n:]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    return p.returncode, (p.stdout + p.stderr).strip()


def main():
    gcomp, case_dir, runtime_only = sys.argv[1], sys.argv[2], sys.argv[3]
    model = os.path.join(case_dir, "model.onnx")
    failures = []

    def expect(cond, what):
        print(f"{'ok' if cond else 'FAIL':4} {what}", flush=True)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        for prec in ("fp32", "bf16"):
            a, b = os.path.join(tmp, f"a_{prec}.gplan"), os.path.join(tmp, f"b_{prec}.gplan")
            ra, oa = run([gcomp, "compile", model, "-o", a, "--precision", prec])
            rb, ob = run([gcomp, "compile", model, "-o", b, "--precision", prec])
            expect(ra == 0 and rb == 0, f"compile {prec} twice: exit {ra}, {rb} {oa if ra else ''}{ob if rb else ''}")
            if ra == 0 and rb == 0:
                same = open(a, "rb").read() == open(b, "rb").read()
                expect(same, f"two compiles ({prec}) in two processes are byte-identical "
                              f"({os.path.getsize(a)} bytes)")
        plan = os.path.join(tmp, "a_fp32.gplan")
        data = open(plan, "rb").read()
        rc, out = run([gcomp, "inspect", plan])
        expect(rc == 0 and "peak-live lower bound" in out and "kernel cpu." in out, "inspect PLAN shows memory and kernels")
        rc, out = run([gcomp, "inspect", plan, "--format", "json"])
        doc = json.loads(out) if rc == 0 else {}
        expect(doc.get("schema_version") == 1 and doc.get("target") == "cpu", "inspect PLAN --format json")
        rc, out = run([gcomp, "run", plan, "--input", f"input={case_dir}/test_data_set_0/input_0.pb",
                       "--output-dir", os.path.join(tmp, "out")])
        expect(rc == 0 and os.path.exists(os.path.join(tmp, "out", "output_0.pb")), f"run PLAN: {out[-200:]}")
        import numpy as np
        import onnx
        from onnx import numpy_helper
        x = numpy_helper.to_array(onnx.load_tensor(f"{case_dir}/test_data_set_0/input_0.pb")).astype(np.float32)
        x.tofile(os.path.join(tmp, "x.bin"))
        rc, out = run([runtime_only, plan, os.path.join(tmp, "x.bin"), os.path.join(tmp, "y.bin")])
        ok = rc == 0 and os.path.exists(os.path.join(tmp, "out", "output_0.pb"))
        if ok:
            want = numpy_helper.to_array(onnx.load_tensor(os.path.join(tmp, "out", "output_0.pb"))).astype(np.float32)
            got = np.fromfile(os.path.join(tmp, "y.bin"), dtype=np.float32).reshape(want.shape)
            ok = np.allclose(got, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())
        expect(ok, f"a program linked with the runtime library alone gives run PLAN's outputs: {out[-200:]}")
        rc, out = run([gcomp, "bench", plan, "--batch", "2", "--iterations", "2", "--warmup", "1", "--json"])
        bench = json.loads(out.splitlines()[-1]) if rc == 0 else {}
        expect(bench.get("batch") == 2 and sum(bench.get("kernels", {}).values()) == 2 * len(doc.get("steps", [])),
               f"bench PLAN --json counts every step's launch over the timed runs: {bench.get('kernels')}")

        header_len = struct.unpack("<I", data[8:12])[0]
        cases = {
            "truncated at 10 bytes": (data[:10], "truncated"),
            "truncated in the header": (data[:12 + header_len // 2], "truncated"),
            "truncated in the weights": (data[:len(data) - 100], "truncated"),
            "bad magic": (b"XXPLAN\0\n" + data[8:], "magic"),
            "flipped byte at the end (weights)": (data[:-70] + bytes([data[-70] ^ 0xFF]) + data[-69:], "hash"),
            "flipped byte in the header's library versions": (flip(data, data.find(b"oneDNN", 12)), "hash"),
            "older format version": (with_header(data, data[12:12 + header_len].replace(b"\x08\x02", b"\x08\x01", 1)),
                                     "older than"),
        }
        for label, (blob, needle) in cases.items():
            bad = os.path.join(tmp, "bad.gplan")
            with open(bad, "wb") as fh:
                fh.write(blob)
            rc, out = run([gcomp, "run", bad, "--input", f"input={case_dir}/test_data_set_0/input_0.pb",
                           "--output-dir", os.path.join(tmp, "bad_out")])
            if label == "bad magic":  # not a plan: then it is read as an ONNX model, which fails to parse
                expect(rc == 2, f"{label}: exit {rc}: {out[:160]}")
                continue
            expect(rc == 2 and needle in out.lower() and bad in out, f"{label}: exit {rc}: {out[:200]}")
        # Another target: the header's length-prefixed target string "cpu" rewritten to "gpu" (same
        # length) and the header hashed again, as a plan for a target without a backend here.
        at = data.find(b"\x03cpu", 12, 12 + header_len)
        expect(at > 0, "the header holds the target string")
        other = os.path.join(tmp, "other.gplan")
        header = data[12:at] + b"\x03gpu" + data[at + 4:12 + header_len]
        with open(other, "wb") as fh:
            fh.write(with_header(data, header))
        rc, out = run([gcomp, "run", other, "--input", f"input={case_dir}/test_data_set_0/input_0.pb",
                       "--output-dir", os.path.join(tmp, "other_out")])
        expect(rc == 2 and "compiled for target 'gpu'" in out, f"other-target plan: exit {rc}: {out[:200]}")
        rc, out = run([gcomp, "inspect", other])
        expect(rc == 0 and "target gpu" in out, "inspect shows the other-target plan's header")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
