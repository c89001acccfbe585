"""cuda plans of the ResNet and ViT fixtures, built and checked on a machine without a GPU.

For each model and precision (fp32, tf32, fp16, bf16, and fp8 calibrated on the model's
test_data_set_0):
  - `gcomp compile --target cuda` twice, in two processes: the plan files are byte-identical;
  - `gcomp inspect PLAN`: every step runs on a kernel of the cuda table (FusedConv on the cuDNN conv
    graph, FusedGemm on cuBLASLt with its epilogue), the device bytes and the workspace bound are
    shown, and every generated device function reports 0 spill bytes on sm_90 and sm_80;
  - `gcomp inspect PLAN --device-code DIR` and cuobjdump (PyPI's nvidia-cuda-cuobjdump): each
    module's cubin holds SASS for its architecture and every function the steps launch.
Where no CUDA device is present, `gcomp run PLAN` is refused with exit 2 and a message saying so
(on a machine with a device, the gpu-labelled tests run the plans instead).
Attention steps run on the exact kernel at fp32/tf32 and on cuDNN's SDPA at fp16/bf16, with the
flash-attention kernel compiled in as its fallback; that kernel's SASS holds Tensor Core MMAs
(HMMA) on both architectures. At fp8, every FusedGemm that reads e4m3 operands runs on cuBLASLt's
fp8 GEMM (outer-vector scales), at least one does, and the e4m3 quantization runs on its generated
kernel. With cuDNN's entry excluded (`--exclude-kernels`), ViT attention
compiles onto the flash-attention entry itself.
Usage: check_cuda_plans.py GCOMP MODELS_DIR MODEL [MODEL ...]"""
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

PRECISIONS = ["fp32", "tf32", "fp16", "bf16", "fp8"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def cuobjdump():
    d = os.path.join(sysconfig.get_paths()["purelib"], "nvidia", "cu13", "bin")
    exe = os.path.join(d, "cuobjdump")
    if not os.path.exists(exe):
        sys.exit(f"FAIL: {exe} not found (tools/setup.sh installs nvidia-cuda-cuobjdump)")
    return exe, d


def check_plan(gcomp, model, precision, tmp, cuobj):
    failures = []
    plans = []
    for k in range(2):
        out = os.path.join(tmp, f"{precision}_{k}.gplan")
        extra = ["--calibration", os.path.join(os.path.dirname(model), "test_data_set_0")] if precision == "fp8" else []
        r = run([gcomp, "compile", model, "--target", "cuda", "--precision", precision, "--level", "O3", "-o", out]
                + extra)
        if r.returncode != 0:
            return [f"compile failed: {r.stderr.strip()}"]
        plans.append(out)
    if open(plans[0], "rb").read() != open(plans[1], "rb").read():
        failures.append("two compiles in two processes wrote different plan files")
    text = run([gcomp, "inspect", plans[0]]).stdout
    steps = re.findall(r"^  #\d+ .* \((\w+)\) -> kernel (\S+): (.*)$", text, re.M)
    if not steps:
        failures.append("inspect shows no steps")
    # Each step's first input line: its dtype says whether a GEMM reads e4m3 bytes.
    first_inputs = re.findall(r"^  #\d+ .* \((\w+)\) -> kernel \S+: .*\n(?:      (?!in ).*\n)*      in  %\S+: (\w+)\[",
                              text, re.M)
    fp8_gemms = [op for op, dtype in first_inputs if op == "FusedGemm" and dtype == "f8e4m3"]
    if precision == "fp8":
        if not fp8_gemms:
            failures.append("no FusedGemm reads e4m3 operands")
        for op, kernel, reason in steps:
            if op in ("QuantizeFp8", "FakeQuantFp8") and kernel != "cuda.nvrtc.fp8_quantize":
                failures.append(f"{op} on {kernel}")
        fp8_on_lt = [r for op, k, r in steps if op == "FusedGemm" and "fp8 e4m3 -> fp16, outer-vector scales" in r]
        if len(fp8_on_lt) != len(fp8_gemms):
            failures.append(f"{len(fp8_gemms)} FusedGemms read e4m3, {len(fp8_on_lt)} run on cuBLASLt's fp8 GEMM")
    for op, kernel, reason in steps:
        if not kernel.startswith("cuda."):
            failures.append(f"{op} runs on {kernel}")
        if op == "FusedConv" and kernel != "cuda.cudnn.conv_graph":
            failures.append(f"FusedConv on {kernel}")
        if op == "FusedGemm" and not (kernel.startswith("cuda.cublaslt.gemm") and "epilogue" in reason):
            failures.append(f"FusedGemm on {kernel}: {reason}")
        if op == "Attention":
            want = "cuda.nvrtc.attention_exact" if precision in ("fp32", "tf32") else "cuda.cudnn.sdpa"  # fp8: fp16
            if kernel != want:
                failures.append(f"Attention at {precision} on {kernel}, not {want}")
            if want == "cuda.cudnn.sdpa" and not ("cuDNN SDPA" in reason and "flash attention" in reason):
                failures.append(f"Attention's decision does not name cuDNN SDPA and its flash fallback: {reason}")
    if not re.search(r"device \(device, 256-byte aligned\): weights \d+ bytes .* workspace bound \d+ bytes", text):
        failures.append("inspect shows no device bytes / workspace bound")
    functions = re.findall(r"device function (\S+): (.*)$", text, re.M)
    if not functions:
        failures.append("no generated device functions")
    for name, report in functions:
        for arch in ("sm_90", "sm_80"):
            m = re.search(arch + r" (\d+) registers, (\d+) spill bytes", report)
            if not m:
                failures.append(f"{name}: no {arch} report")
            elif int(m.group(2)) != 0:
                failures.append(f"{name}: {m.group(2)} spill bytes on {arch}")
    exe, bindir = cuobj
    code = os.path.join(tmp, f"code_{precision}")
    os.makedirs(code, exist_ok=True)
    r = run([gcomp, "inspect", plans[0], "--device-code", code])
    if r.returncode != 0:
        failures.append(f"inspect --device-code failed: {r.stderr.strip()}")
    names = {n for n, _ in functions}
    for arch in ("sm_90", "sm_80"):
        cubin = os.path.join(code, f"gcomp_kernels_{arch}.cubin")
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        sass = run([exe, "-sass", cubin], env=env)
        if sass.returncode != 0:
            failures.append(f"cuobjdump {arch}: {sass.stderr.strip()[:200]}")
            continue
        if f"code for {arch}" not in sass.stdout:
            failures.append(f"{cubin}: no SASS for {arch}")
        found = set(re.findall(r"Function : (\S+)", sass.stdout))
        if names - found:
            failures.append(f"{arch} cubin lacks {sorted(names - found)}")
        # Each function's SASS: the flash-attention kernels must use the Tensor Cores.
        for fn, body in re.findall(r"Function : (\S+)\n(.*?)(?=\n\s*Function : |\Z)", sass.stdout, re.S):
            if "flash_attention" in fn and not re.search(r"\bHMMA\.16816\.F32", body):
                failures.append(f"{arch} {fn}: no HMMA.16816.F32 in its SASS")
        if not re.search(r"\b(LDG|STG)\.E", sass.stdout):
            failures.append(f"{arch} SASS has no global loads/stores")
    return failures, plans[0], len(steps), len(functions)


def check_flash_entry(gcomp, model, tmp):
    """fp16 with cuDNN's entry excluded: every Attention step on the flash-attention entry."""
    plan = os.path.join(tmp, "flash.gplan")
    r = run([gcomp, "compile", model, "--target", "cuda", "--precision", "fp16", "--exclude-kernels",
             "cuda.cudnn.sdpa", "-o", plan])
    if r.returncode != 0:
        return [f"compile --exclude-kernels cuda.cudnn.sdpa failed: {r.stderr.strip()}"]
    text = run([gcomp, "inspect", plan]).stdout
    kernels = re.findall(r"^  #\d+ .* \(Attention\) -> kernel (\S+):", text, re.M)
    return [f"Attention on {k} with cuda.cudnn.sdpa excluded" for k in kernels if k != "cuda.nvrtc.flash_attention"]


def main():
    gcomp, models_dir, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    cuobj = cuobjdump()
    failed = 0
    refused_checked = False
    for name in models:
        model = os.path.join(models_dir, name, "model.onnx")
        with tempfile.TemporaryDirectory() as tmp:
            for precision in PRECISIONS:
                res = check_plan(gcomp, model, precision, tmp, cuobj)
                if isinstance(res, list):
                    failures, steps, fns = res, 0, 0
                else:
                    failures, plan, steps, fns = res
                status = "PASS" if not failures else "FAIL"
                print(f"{status} {name} {precision}: {steps} steps, {fns} generated functions")
                for f in failures:
                    print(f"    {f}")
                failed += bool(failures)
                if not failures and not refused_checked:
                    # No device here: a session is refused with exit 2 and says why.
                    probe = run([gcomp, "run", plan])
                    if "no CUDA device" in probe.stderr:
                        ok = probe.returncode == 2
                        print(f"{'PASS' if ok else 'FAIL'} run without a device: exit {probe.returncode}: "
                              f"{probe.stderr.strip()[:160]}")
                        failed += not ok
                    else:
                        print(f"SKIP run-without-device check: this machine has a CUDA device "
                              f"(the gpu-labelled tests run the plans)")
                    refused_checked = True
            if "vit" in name:
                failures = check_flash_entry(gcomp, model, tmp)
                print(f"{'PASS' if not failures else 'FAIL'} {name} fp16 without cuDNN SDPA: attention on the flash entry")
                for f in failures:
                    print(f"    {f}")
                failed += bool(failures)
    if failed:
        print(f"{failed} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
