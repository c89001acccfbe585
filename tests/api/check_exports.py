"""libgcomp.so exports gcomp's API and nothing else.

`nm -D --defined-only -C` lists the library's exported symbols. Each must be the version node
(GCOMP_0), a C function of gcomp_c.h, or a function of the C++ API (the list below, which is
include/gcomp/gcomp.h's out-of-line functions); any other (a gcomp layer, protobuf, abseil, oneDNN,
OpenBLAS, CUDA, a standard-library instantiation) fails. Every C function the header declares and
every listed C++ function must be exported.
Usage: check_exports.py LIBGCOMP.so include/gcomp/gcomp_c.h"""
import re
import subprocess
import sys

CPP_API = {
    "gcomp::DataTypeName", "gcomp::DataTypeSize",
    "gcomp::HostTensor::Float32", "gcomp::HostTensor::num_elements", "gcomp::HostTensor::ToFloat32",
    "gcomp::Plan::Load", "gcomp::Plan::LoadFromMemory", "gcomp::Plan::Serialize", "gcomp::Plan::Save",
    "gcomp::Plan::target", "gcomp::Plan::precision", "gcomp::Plan::max_batch", "gcomp::Plan::inputs",
    "gcomp::Plan::outputs",
    "gcomp::Session::Create", "gcomp::Session::Session", "gcomp::Session::~Session", "gcomp::Session::Run",
    "gcomp::Session::RunOnDevice", "gcomp::Session::kernel_launches", "gcomp::Session::step_algorithms",
    "gcomp::Session::memory_info",
    "gcomp::Compile", "gcomp::CompileBytes", "gcomp::Inspect",
}


def function_name(demangled):
    """gcomp::Plan::target[abi:cxx11]() const@@GCOMP_0 -> gcomp::Plan::target"""
    name = demangled.split("@")[0]
    name = name.split("(")[0]
    return re.sub(r"\[abi:\w+\]", "", name)


def main():
    lib, header = sys.argv[1], sys.argv[2]
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", lib], capture_output=True, text=True, check=True).stdout
    declared_c = set(re.findall(r"\b(gcomp_\w+)\s*\(", open(header).read()))
    seen_c, seen_cpp, bad = set(), set(), []
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) < 3:
            continue
        sym = parts[2]
        if sym == "GCOMP_0":
            continue
        name = function_name(sym)
        if name in declared_c:
            seen_c.add(name)
        elif name in CPP_API:
            seen_cpp.add(name)
        else:
            bad.append(sym)
    failures = [f"exported but not gcomp's API: {s}" for s in bad]
    failures += [f"declared in gcomp_c.h but not exported: {n}" for n in sorted(declared_c - seen_c)]
    failures += [f"C++ API function not exported: {n}" for n in sorted(CPP_API - seen_cpp)]
    for f in failures:
        print("FAIL", f)
    print(f"{len(seen_c)} C functions and {len(seen_cpp)} C++ API functions exported, {len(bad)} other symbols")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
