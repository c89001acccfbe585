#!/usr/bin/env python3
"""The layering of gcomp's libraries (docs/ARCHITECTURE.md "Layers"), checked two ways:

  - every source file's project #includes: a file in folder F may include only headers of the
    folders F may depend on (and its own);
  - every library's link line (target_link_libraries in the CMake files): a library may link only
    the project libraries listed for it, and the runtime's closure must not reach the IR.

Any other edge fails, and the message names it: the file and the header it includes, or the
library and the library it links. `--self-test` checks that the checker finds planted edges.

Usage: check_layering.py SOURCE_ROOT | --self-test
"""
import os
import re
import shutil
import sys
import tempfile

# Folder -> the folders its sources may include (besides itself). Longest folder prefix wins.
INCLUDES = {
    "core": [],
    "plan": ["core"],
    "graph": ["core"],
    "frontend": ["core", "graph"],
    "passes": ["core", "graph"],
    # codegen: the IR, the plan format, and each backend's selection side (the kernel table's
    # select/pack through runtime/kernel.h and the selection registry), never an executor.
    "codegen": ["core", "graph", "plan", "runtime/kernel.h", "runtime/backend_kernels.h"],
    "runtime": ["core", "plan", "include/gcomp"],
    # The registries know every backend: the selection sides, and the backends with executors.
    "runtime/backend_kernels.cc": ["core", "plan", "runtime/cpu/cpu_kernels.h", "runtime/cuda/cuda_kernels.h"],
    "runtime/backend.cc": ["core", "plan", "runtime/cpu/cpu_backend.h", "runtime/cuda/cuda_backend.h"],
    # A backend's kernels see the kernel and selection interfaces; only its executor side sees
    # runtime/backend.h.
    # Both see the backend-independent step parsing (fused_op.h, op_geometry.h).
    "runtime/cpu": ["core", "plan", "runtime/kernel.h", "runtime/backend_kernels.h", "runtime/fused_op.h",
                    "runtime/op_geometry.h"],
    "runtime/cuda": ["core", "plan", "runtime/kernel.h", "runtime/backend_kernels.h", "runtime/fused_op.h",
                     "runtime/op_geometry.h"],
    "runtime/cpu/cpu_backend.h": ["core", "plan", "runtime/kernel.h", "runtime/backend_kernels.h", "runtime/backend.h"],
    "runtime/cpu/cpu_backend.cc": ["core", "plan", "runtime/kernel.h", "runtime/backend_kernels.h", "runtime/backend.h"],
    "runtime/cpu/cpu_executor.cc": ["core", "plan", "runtime/kernel.h", "runtime/backend_kernels.h", "runtime/backend.h",
                                    "runtime/plan_steps.h"],
    # The cuda executor side: the backend interface and the executors' shared plan checks.
    "runtime/cuda/cuda_backend.h": ["core", "plan", "runtime/kernel.h", "runtime/backend_kernels.h", "runtime/backend.h"],
    "runtime/cuda/cuda_executor.cc": ["core", "plan", "runtime/kernel.h", "runtime/backend_kernels.h",
                                      "runtime/fused_op.h", "runtime/op_geometry.h", "runtime/backend.h",
                                      "runtime/plan_steps.h"],
    "include/gcomp": [],
    # The compile driver behind the CLI and gcomp::Compile: the whole compiler, and the backend
    # registry for its target checks.
    "driver": ["core", "graph", "plan", "frontend", "passes", "codegen", "runtime/backend.h"],
    # libgcomp.so's own sources: the public API, the driver, plan bytes and the status mapping.
    "api": ["include/gcomp", "driver", "plan", "runtime/api_status.h"],
    # The Triton backend: gcomp's public API only.
    "triton": ["include/gcomp"],
}

# Project library -> the project libraries it may link.
LINKS = {
    "gcomp_core": [],
    "gcomp_plan": ["gcomp_core"],
    "gcomp_graph": ["gcomp_core"],
    "gcomp_frontend": ["gcomp_graph"],
    "gcomp_passes": ["gcomp_graph"],
    "gcomp_codegen": ["gcomp_graph", "gcomp_plan", "gcomp_backend_kernels"],
    "gcomp_backend_api": ["gcomp_core", "gcomp_plan"],
    "gcomp_cpu_kernels": ["gcomp_backend_api"],
    "gcomp_backend_kernels": ["gcomp_backend_api", "gcomp_cpu_kernels", "gcomp_cuda_kernels"],
    "gcomp_cpu_backend": ["gcomp_cpu_kernels"],
    "gcomp_cuda_kernels": ["gcomp_core", "gcomp_backend_api"],
    "gcomp_cuda_backend": ["gcomp_cuda_kernels", "gcomp_backend_api"],
    "gcomp_backends": ["gcomp_backend_kernels", "gcomp_cpu_backend", "gcomp_cuda_backend"],
    "gcomp_runtime": ["gcomp_backends", "gcomp_plan"],
    "gcomp_driver": ["gcomp_frontend", "gcomp_passes", "gcomp_codegen", "gcomp_backends", "gcomp_plan", "gcomp_graph"],
    "gcomp_shared": ["gcomp_runtime", "gcomp_driver"],
    # The Triton backend links libgcomp.so alone (its public API).
    "gcomp_triton_config": ["gcomp_shared"],
    "triton_gcomp": ["gcomp_triton_config", "gcomp_shared"],
}
# What an embedded runtime must never pull in, through any chain of links.
RUNTIME_FORBIDDEN = {"gcomp_graph", "gcomp_passes", "gcomp_frontend", "gcomp_codegen"}
# What codegen must never pull in: executors and sessions.
CODEGEN_FORBIDDEN = {"gcomp_backends", "gcomp_cpu_backend", "gcomp_cuda_backend", "gcomp_runtime"}
PROJECT_FOLDERS = ["core", "plan", "graph", "frontend", "passes", "codegen", "runtime", "driver", "api", "include",
                   "triton", "tools", "tests"]
SOURCE_EXT = (".h", ".cc", ".cpp")


def rule_for(rel):
    """The include rule of a file: the longest matching key of INCLUDES, or None (tools, tests)."""
    best = None
    for key in INCLUDES:
        if rel == key or rel.startswith(key + "/"):
            if best is None or len(key) > len(best):
                best = key
    return best


def allowed_include(rel, header):
    key = rule_for(rel)
    if key is None:
        return True
    own = key if not key.endswith(SOURCE_EXT) else os.path.dirname(key)
    # A folder's own headers, but not those of a nested backend folder it does not list.
    if header.startswith(own + "/") and not (own == "runtime" and header.startswith(("runtime/cpu/", "runtime/cuda/"))):
        return True
    if key == "runtime/cpu" and header.startswith("runtime/cpu/"):
        return True
    for target in INCLUDES[key]:
        if header == target or header.startswith(target + "/"):
            return True
    return False


def check_includes(root):
    errors = []
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for folder in PROJECT_FOLDERS:
        base = os.path.join(root, folder)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if not f.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for lineno, line in enumerate(fh, 1):
                        m = inc.match(line)
                        if not m:
                            continue
                        header = m.group(1)
                        top = header.split("/")[0]
                        if top not in PROJECT_FOLDERS:
                            # protobuf-generated ONNX types are the frontend's alone
                            if header.startswith("onnx/") and rule_for(rel) not in (None, "frontend"):
                                errors.append(f"{rel}:{lineno}: includes {header}: ONNX protobuf types stay in frontend/")
                            continue
                        if not allowed_include(rel, header):
                            errors.append(f"{rel}:{lineno}: includes {header}: the edge {rule_for(rel)} -> "
                                          f"{os.path.dirname(header) or header} is not allowed")
    return errors


def link_lines(root):
    """Library -> the project libraries on its target_link_libraries lines."""
    links = {}
    call = re.compile(r"target_link_libraries\s*\(\s*(\w+)([^)]*)\)", re.S)
    for dirpath, _, files in os.walk(root):
        if "/build" in dirpath or "/.venv" in dirpath or "/.git" in dirpath:
            continue
        for f in files:
            if f != "CMakeLists.txt" and not f.endswith(".cmake"):
                continue
            with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                text = fh.read()
            for m in call.finditer(text):
                name, rest = m.group(1), m.group(2)
                deps = [w for w in re.findall(r"[\w:]+", rest) if w.startswith("gcomp_")]
                links.setdefault(name, set()).update(deps)
    return links


def check_links(root):
    errors = []
    links = link_lines(root)
    for lib, deps in sorted(links.items()):
        if lib not in LINKS:
            continue  # executables (tools, tests) may link everything
        for d in sorted(deps):
            if d not in LINKS[lib]:
                errors.append(f"library {lib} links {d}: the edge {lib} -> {d} is not allowed")
    for lib in LINKS:
        if lib not in links and LINKS[lib]:
            errors.append(f"library {lib}: no target_link_libraries line found")
    # The closures of the runtime and of codegen.
    for root, forbidden in (("gcomp_runtime", RUNTIME_FORBIDDEN), ("gcomp_codegen", CODEGEN_FORBIDDEN)):
        seen, todo = set(), [root]
        while todo:
            lib = todo.pop()
            for d in links.get(lib, ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        for bad in sorted(seen & forbidden):
            errors.append(f"{root} reaches {bad} through its links")
    return errors


def check(root):
    return check_includes(root) + check_links(root)


def self_test():
    """Plants one bad include and one bad link in a copy of a minimal tree: both must be found."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for folder in ["core", "plan", "graph", "frontend", "passes", "codegen", "runtime", "driver", "api", "include",
                       "triton"]:
            shutil.copytree(os.path.join(root, folder), os.path.join(tmp, folder))
        clean = check(tmp)
        if clean:
            failures.append("the copied tree should be clean: " + "; ".join(clean))
        with open(os.path.join(tmp, "runtime", "kernel.cc"), "a") as fh:
            fh.write('\n#include "graph/graph.h"\n')
        with open(os.path.join(tmp, "runtime", "CMakeLists.txt"), "a") as fh:
            fh.write("\ntarget_link_libraries(gcomp_runtime PUBLIC gcomp_graph)\n")
        with open(os.path.join(tmp, "codegen", "codegen.cc"), "a") as fh:
            fh.write('\n#include "runtime/backend.h"\n')
        with open(os.path.join(tmp, "codegen", "CMakeLists.txt"), "a") as fh:
            fh.write("\ntarget_link_libraries(gcomp_codegen PUBLIC gcomp_backends)\n")
        found = check(tmp)
        want = ["runtime/kernel.cc", "includes graph/graph.h", "library gcomp_runtime links gcomp_graph",
                "gcomp_runtime reaches gcomp_graph", "codegen/codegen.cc", "includes runtime/backend.h",
                "gcomp_codegen reaches gcomp_cpu_backend"]
        for w in want:
            if not any(w in e for e in found):
                failures.append(f"a planted edge was not reported: {w}")
    for f in failures:
        print("FAIL", f)
    print("self-test:", "FAIL" if failures else "ok")
    return 1 if failures else 0


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if sys.argv[1] == "--self-test":
        return self_test()
    errors = check(sys.argv[1])
    for e in errors:
        print("FAIL", e)
    print(f"layering: {'FAIL' if errors else 'ok'} ({len(errors)} disallowed edges)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
