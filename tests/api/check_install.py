"""The installed tree and the embedding examples, as a user builds them.

`cmake --install BUILD --prefix P` into a temporary folder must hold the headers, libgcomp.so with
its SONAME link, lib/cmake/gcomp/gcompConfig.cmake with its version file, and
lib/pkgconfig/gcomp.pc. examples/embed_c and examples/embed_cpp are configured outside the source
tree with CMAKE_PREFIX_PATH=P (find_package(gcomp)), built, and run on a small fixture's plan; their
logits must equal `gcomp run` on the same plan and image. A C program compiled with only
`pkg-config --cflags --libs gcomp` must link too. The Triton backend, where built, is installed as
lib/triton/backends/gcomp/libtriton_gcomp.so and finds the installed libgcomp.so.0 by its RUNPATH.
Usage: check_install.py BUILD_DIR SOURCE_DIR GCOMP MODELS_DIR"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

MODEL = "tv_small_resnet_op17_dynamic"


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout


def main():
    build, source, gcomp, models = sys.argv[1:5]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "prefix")
        run(["cmake", "--install", build, "--prefix", prefix])
        for rel in ("include/gcomp/gcomp.h", "include/gcomp/gcomp_c.h", "lib/libgcomp.so", "lib/libgcomp.so.0",
                    "lib/cmake/gcomp/gcompConfig.cmake", "lib/cmake/gcomp/gcompConfigVersion.cmake",
                    "lib/cmake/gcomp/gcompTargets.cmake", "lib/pkgconfig/gcomp.pc"):
            if not os.path.exists(os.path.join(prefix, rel)):
                failures.append(f"not installed: {rel}")
        # The Triton backend, where it is built: next to libgcomp.so, which its RUNPATH must find.
        backend = os.path.join(prefix, "lib", "triton", "backends", "gcomp", "libtriton_gcomp.so")
        if os.path.exists(os.path.join(build, "triton", "backends", "gcomp", "libtriton_gcomp.so")):
            if not os.path.exists(backend):
                failures.append("not installed: lib/triton/backends/gcomp/libtriton_gcomp.so")
            else:
                env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
                deps = run(["ldd", backend], env=env)
                want = os.path.join(prefix, "lib", "libgcomp.so.0")
                if not any("libgcomp.so.0 => " in line and os.path.realpath(line.split("=> ")[1].split(" (")[0]) ==
                           os.path.realpath(want) for line in deps.splitlines()):
                    failures.append("the installed libtriton_gcomp.so does not find the installed libgcomp.so.0:\n" + deps)
        soname = run(["objdump", "-p", os.path.join(prefix, "lib", "libgcomp.so")])
        if "SONAME               libgcomp.so.0" not in soname:
            failures.append("libgcomp.so has no SONAME libgcomp.so.0")

        case = os.path.join(models, MODEL)
        plan = os.path.join(tmp, "model.gplan")
        run([gcomp, "compile", os.path.join(case, "model.onnx"), "-o", plan])
        x_pb = os.path.join(case, "test_data_set_0", "input_0.pb")
        t = onnx.TensorProto()
        t.ParseFromString(open(x_pb, "rb").read())
        x = numpy_helper.to_array(t).astype(np.float32)
        image = os.path.join(tmp, "image.f32")
        x[:1].tofile(image)
        single = os.path.join(tmp, "single.pb")
        with open(single, "wb") as f:
            f.write(numpy_helper.from_array(x[:1], t.name).SerializeToString())
        ref_dir = os.path.join(tmp, "ref")
        # One kernel thread, as the examples: on CPUs without AVX-512 a result may differ in its
        # last bits between thread counts (README, "Threads").
        run([gcomp, "run", plan, "--threads", "1", "--input", f"{t.name}={single}", "--output-dir", ref_dir])
        out_t = onnx.TensorProto()
        out_t.ParseFromString(open(os.path.join(ref_dir, "output_0.pb"), "rb").read())
        ref = numpy_helper.to_array(out_t).astype(np.float32).ravel()

        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
        for example, exe in (("embed_c", "classify_c"), ("embed_cpp", "classify_cpp")):
            bdir = os.path.join(tmp, f"build_{example}")
            try:
                run(["cmake", "-S", os.path.join(source, "examples", example), "-B", bdir,
                     f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release"])
                run(["cmake", "--build", bdir])
                logits = os.path.join(tmp, f"{example}.f32")
                text = run([os.path.join(bdir, exe), plan, image, logits], env=env)
            except RuntimeError as e:
                failures.append(f"{example}: {e}")
                continue
            got = np.fromfile(logits, dtype=np.float32)
            if got.shape != ref.shape or not np.allclose(got, ref, rtol=1e-5, atol=1e-6):
                failures.append(f"{example}: logits differ from gcomp run (max |diff| "
                                f"{np.abs(got - ref).max() if got.shape == ref.shape else 'shape'})")
            elif f"class {int(np.argmax(ref))} " not in text.splitlines()[0]:
                failures.append(f"{example}: top-1 is not gcomp run's argmax: {text.splitlines()[0]}")
            else:
                print(f"PASS {example}: {text.splitlines()[0]}; logits equal gcomp run's (max |diff| "
                      f"{np.abs(got - ref).max():.2e})")

        # pkg-config alone.
        c_file = os.path.join(tmp, "version.c")
        with open(c_file, "w") as f:
            f.write('#include <gcomp/gcomp_c.h>\n#include <stdio.h>\nint main(void) { puts(gcomp_version()); return 0; }\n')
        pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
        try:
            flags = run(["pkg-config", "--cflags", "--libs", "gcomp"], env=pc_env).split()
            exe = os.path.join(tmp, "version")
            run(["cc", c_file, "-o", exe, *flags])
            v = run([exe], env=env).strip()
            if v != "0.1.0":
                failures.append(f"pkg-config build prints {v!r}")
            else:
                print(f"PASS pkg-config build: gcomp_version() = {v}")
        except (RuntimeError, FileNotFoundError) as e:
            failures.append(f"pkg-config: {e}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
