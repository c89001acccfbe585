#!/usr/bin/env python3
"""ONNX backend node tests through `gcomp check --target ref`.

    run_suite.py --suite debian|pypi|pytorch-converted|pytorch-operator --gcomp PATH [--write-lists]
                 [--jobs N] [--only REGEX] [-v] [--target ref|cpu]

Suites: `debian` is Debian's libonnx-testdata (/usr/share/libonnx-testdata/data/node, onnx 1.12);
`pypi` is the node test data of the onnx wheel pinned in tools/requirements.txt (imported from
this Python); `pytorch-converted` and `pytorch-operator` are libonnx-testdata's models exported by
PyTorch (mostly opset 6): a model test counts as of a claimed op ("model") when every op it uses
is claimed.

1. Enumerates the suite's node tests and determines each test's op: the op of its (single,
   non-Constant) node; for `_expanded` / `_expanded_verNN` tests, the op of the test of the same
   name without the suffix.
2. Runs `gcomp check CASE --target ref --rtol 1e-3 --atol 1e-7` (ONNX's own backend-test
   tolerances) on every listed test of an op gcomp claims (frontend/onnx_import.cc
   SupportedOps()), with a small pool of workers.
3. Verifies the lists in this folder: claimed.txt (`SUITE/TEST`) and excluded.txt
   (`SUITE/TEST | CATEGORY | DETAIL`). Every claimed test passes; every test of a claimed op is
   listed exactly once; every listed test exists in the suite and belongs to a claimed op; every
   exclusion has a known category and a detail. Prints a summary with counts per category and
   exits 1 with a list of violations if any. Excluded tests that now pass are printed (not an
   error) so that they can be moved to claimed.txt.

--target cpu runs the claimed tests of the suite through `gcomp check --target cpu` (compiled cpu
plans, same tolerances) instead: every claimed test passes there too, except those listed in
cpu_excluded.txt (`SUITE/TEST | REASON`: what the cpu backend has no kernel for), each of which
must be a claimed test of the suite; cpu-excluded tests that now pass are printed.

--write-lists (a maintainer tool) adds entries for unlisted tests of claimed ops: passing tests
to claimed.txt, the others to excluded.txt with an auto-detected category (opset, dtype,
training, `_expanded` with unclaimed ops) or `unsupported feature: TODO` with gcomp's message,
to be resolved by fixing gcomp or by a precise reason. Nothing is removed.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import onnx

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CLAIMED_FILE = HERE / "claimed.txt"
EXCLUDED_FILE = HERE / "excluded.txt"
CPU_EXCLUDED_FILE = HERE / "cpu_excluded.txt"
SUITES = ("debian", "pypi", "pytorch-converted", "pytorch-operator")
MODEL_SUITES = ("pytorch-converted", "pytorch-operator")
DEBIAN_ROOT = Path("/usr/share/libonnx-testdata/data/node")
RTOL, ATOL = "1e-3", "1e-7"  # onnx/backend/test/runner defaults
CHECK_TIMEOUT_S = 120
MIN_OPSET, MAX_OPSET = 1, 23

CATEGORIES = (
    "dtype out of scope",
    "training mode",
    "_expanded variant needing an unclaimed op",
    "opset out of range",
)
UNSUPPORTED_PREFIX = "unsupported feature: "

# ONNX TensorProto.DataType numbers gcomp supports: FLOAT, UINT8, INT8, INT32, INT64, BOOL,
# FLOAT16, DOUBLE, BFLOAT16, FLOAT8E4M3FN.
SUPPORTED_ONNX_TYPES = {1, 2, 3, 6, 7, 9, 10, 11, 16, 17}


def suite_root(suite: str) -> Path:
    if suite == "debian":
        return DEBIAN_ROOT
    if suite in MODEL_SUITES:
        return DEBIAN_ROOT.parent / suite
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "node"


def claimed_ops() -> set[str]:
    """The op names of SupportedOps() in frontend/onnx_import.cc (the one list of what gcomp reads)."""
    text = (REPO / "frontend" / "onnx_import.cc").read_text()
    m = re.search(r"SupportedOps\(\)\s*\{(.*?)\n\}", text, re.S)
    if not m:
        sys.exit("run_suite.py: SupportedOps() not found in frontend/onnx_import.cc")
    ops = set(re.findall(r'\{"(\w+)",\s*\d+\}', m.group(1)))
    if not ops:
        sys.exit("run_suite.py: SupportedOps() lists no ops")
    return ops


def type_name(t: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(t)
    except ValueError:
        return f"type {t}"


EXPANDED = re.compile(r"^(.*)_expanded(_ver\d+)?$")


@dataclass
class TestCase:
    name: str
    path: Path
    opset: int = 0
    node_ops: list[str] = field(default_factory=list)
    types: set[int] = field(default_factory=set)
    training: bool = False
    op: str | None = None  # the op under test


def collect_types(graph: onnx.GraphProto, out: set[int], node_ops: list[str]) -> None:
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        if vi.type.HasField("tensor_type"):
            out.add(vi.type.tensor_type.elem_type)
        elif vi.type.WhichOneof("value") is not None:
            out.add(-1)  # sequences, maps, optionals
    for init in graph.initializer:
        out.add(init.data_type)
    for n in graph.node:
        node_ops.append(n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}")
        for a in n.attribute:
            if a.name == "to" and a.type == onnx.AttributeProto.INT and n.op_type.startswith("Cast"):
                out.add(a.i)
            if a.type == onnx.AttributeProto.TENSOR:
                out.add(a.t.data_type)
            if a.type == onnx.AttributeProto.GRAPH:
                collect_types(a.g, out, node_ops)
            for g in a.graphs:
                collect_types(g, out, node_ops)


def load_case(path: Path) -> TestCase:
    case = TestCase(path.name, path)
    m = onnx.load(str(path / "model.onnx"), load_external_data=False)
    for os_ in m.opset_import:
        if os_.domain in ("", "ai.onnx"):
            case.opset = os_.version
    collect_types(m.graph, case.types, case.node_ops)
    for n in m.graph.node:
        attrs = {a.name: a for a in n.attribute}
        if "training_mode" in attrs and attrs["training_mode"].i != 0:
            case.training = True
        if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
            case.training = True
    return case


def enumerate_suite(suite: str, claimed: set[str]) -> dict[str, TestCase]:
    root = suite_root(suite)
    if not root.is_dir():
        sys.exit(f"run_suite.py: suite '{suite}' not found at {root} (tools/setup.sh installs it)")
    cases = {}
    for d in sorted(root.iterdir()):
        if d.is_dir() and (d / "model.onnx").is_file():
            cases[d.name] = load_case(d)
    if suite in MODEL_SUITES:
        for c in cases.values():
            c.op = "model" if all(o in claimed for o in c.node_ops if o != "Constant") else None
        return cases
    for c in cases.values():
        if EXPANDED.match(c.name):
            continue
        ops = [o for o in c.node_ops if o != "Constant"] or c.node_ops
        c.op = ops[0] if ops else None
    for c in cases.values():
        m = EXPANDED.match(c.name)
        if m:
            base = cases.get(m.group(1))
            c.op = base.op if base else None
    return cases


# ---- the lists --------------------------------------------------------------------------------


@dataclass
class Entry:
    suite: str
    test: str
    line: int
    category: str = ""
    detail: str = ""


def read_lists(problems: list[str]) -> tuple[list[Entry], list[Entry]]:
    def lines(path: Path):
        if not path.exists():
            return
        for i, raw in enumerate(path.read_text().splitlines(), 1):
            s = raw.strip()
            if s and not s.startswith("#"):
                yield i, s

    def split_key(key: str, where: str):
        suite, _, test = key.partition("/")
        if suite not in SUITES or not test:
            problems.append(f"{where}: '{key}' is not SUITE/TEST with SUITE one of {', '.join(SUITES)}")
            return None
        return suite, test

    claimed, excluded = [], []
    for i, s in lines(CLAIMED_FILE):
        k = split_key(s, f"claimed.txt:{i}")
        if k:
            claimed.append(Entry(k[0], k[1], i))
    for i, s in lines(EXCLUDED_FILE):
        parts = [p.strip() for p in s.split("|")]
        where = f"excluded.txt:{i}"
        if len(parts) != 3:
            problems.append(f"{where}: expected 'SUITE/TEST | CATEGORY | DETAIL', got '{s}'")
            continue
        k = split_key(parts[0], where)
        if not k:
            continue
        e = Entry(k[0], k[1], i, parts[1], parts[2])
        if e.category not in CATEGORIES and not (
            e.category.startswith(UNSUPPORTED_PREFIX) and len(e.category) > len(UNSUPPORTED_PREFIX)
        ):
            problems.append(f"{where}: unknown category '{e.category}' (expected one of "
                            f"{', '.join(CATEGORIES)} or '{UNSUPPORTED_PREFIX}<what>')")
        if "TODO" in e.category or "TODO" in e.detail:
            problems.append(f"{where}: {e.suite}/{e.test} is still TODO: {e.category} | {e.detail}")
        if not e.detail:
            problems.append(f"{where}: {e.suite}/{e.test} has no detail")
        excluded.append(e)
    return claimed, excluded


def category_key(category: str) -> str:
    return "unsupported feature" if category.startswith(UNSUPPORTED_PREFIX) else category


# ---- running gcomp check ----------------------------------------------------------------------


@dataclass
class Result:
    passed: bool
    seconds: float
    message: str  # the reason of a failure (last lines of gcomp's output)


def run_check(gcomp: str, case: TestCase, target: str = "ref") -> Result:
    cmd = [gcomp, "check", str(case.path), "--target", target, "--rtol", RTOL, "--atol", ATOL]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Result(False, time.monotonic() - start, f"timed out after {CHECK_TIMEOUT_S} s")
    elapsed = time.monotonic() - start
    if p.returncode == 0:
        return Result(True, elapsed, "")
    out = (p.stderr.strip() or "") + "\n" + "\n".join(l for l in p.stdout.splitlines() if "FAIL" in l)
    out = out.strip().replace(str(case.path) + "/", "")
    return Result(False, elapsed, f"exit {p.returncode}: {out}")


def run_all(gcomp: str, cases: list[TestCase], jobs: int, target: str = "ref") -> dict[str, Result]:
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_check, gcomp, c, target): c.name for c in cases}
        for f in concurrent.futures.as_completed(futures):
            results[futures[f]] = f.result()
    return results


# ---- auto-detected exclusion categories (--write-lists) ---------------------------------------


def auto_category(case: TestCase, claimed: set[str]) -> tuple[str, str] | None:
    """The exclusion category detectable from the model alone, with its detail, or None."""
    if case.opset < MIN_OPSET or case.opset > MAX_OPSET:
        return ("opset out of range",
                f"model imports opset {case.opset}; gcomp reads opsets {MIN_OPSET} to {MAX_OPSET}")
    bad = sorted({t for t in case.types if t not in SUPPORTED_ONNX_TYPES})
    if bad:
        names = ", ".join("sequence/optional (non-tensor) values" if t == -1 else f"{type_name(t)} tensors"
                          for t in bad)
        return "dtype out of scope", f"uses {names}"
    data_types = set()
    for pb in sorted(case.path.glob("test_data_set_*/*.pb")):
        t = onnx.TensorProto()
        try:
            t.ParseFromString(pb.read_bytes())
        except Exception:  # sequences and optionals are not TensorProto files
            continue
        data_types.add(t.data_type)
    bad = sorted(t for t in data_types if t and t not in SUPPORTED_ONNX_TYPES)
    if bad:
        return "dtype out of scope", f"the test data stores {', '.join(type_name(t) for t in bad)} tensors"
    if case.training:
        what = ("a Dropout training_mode input" if "Dropout" in case.node_ops
                else "training_mode=1")
        return "training mode", f"{what}; gcomp runs inference only"
    if EXPANDED.match(case.name):
        unclaimed = sorted({o for o in case.node_ops if o not in claimed})
        if unclaimed:
            return ("_expanded variant needing an unclaimed op",
                    f"the expanded {case.op} uses {', '.join(unclaimed)}")
    return None


def write_lists(suite: str, unlisted: list[TestCase], results: dict[str, Result], claimed_ops_: set[str]) -> None:
    new_claimed, new_excluded = [], []
    for c in unlisted:
        r = results.get(c.name)
        auto = auto_category(c, claimed_ops_)
        if r and r.passed:
            new_claimed.append(f"{suite}/{c.name}")
        elif auto:
            new_excluded.append(f"{suite}/{c.name} | {auto[0]} | {auto[1]}")
        else:
            msg = (r.message if r else "not run").splitlines()
            first = next((l for l in msg[1:] if l.strip()), msg[0] if msg else "")
            first = first.replace("|", "/")[:200]
            new_excluded.append(f"{suite}/{c.name} | {UNSUPPORTED_PREFIX}TODO | {first}")

    def merge(path: Path, header: str, new: list[str]) -> None:
        old = path.read_text().splitlines() if path.exists() else [header]
        body = [l for l in old if l.strip() and not l.startswith("#")]
        head = [l for l in old if l.startswith("#")]
        body = sorted(set(body) | set(new), key=lambda l: (l.split("|")[0].strip()))
        path.write_text("\n".join(head + body) + "\n")

    merge(CLAIMED_FILE, "# ONNX node tests gcomp claims: SUITE/TEST, each must pass `gcomp check --target ref`.",
          new_claimed)
    merge(EXCLUDED_FILE, "# Tests of claimed ops that gcomp does not claim: SUITE/TEST | CATEGORY | DETAIL",
          new_excluded)
    print(f"--write-lists: {len(new_claimed)} added to claimed.txt, {len(new_excluded)} to excluded.txt")


def verdict(problems: list[str], ok: str) -> int:
    """Prints the problems (exit status 1) or the OK line (0)."""
    if problems:
        print(f"\nFAILED: {len(problems)} problem(s):")
        for p in problems:
            print("  " + p.replace("\n", "\n    "))
        return 1
    print(f"\nOK: {ok}")
    return 0


# ---- --target cpu -------------------------------------------------------------------------------


def run_cpu(args, suite: str, cases: dict[str, TestCase], claimed: dict[str, Entry], problems: list[str]) -> int:
    """The claimed tests of `suite` on compiled cpu plans, against cpu_excluded.txt."""
    start = time.monotonic()
    only = re.compile(args.only) if args.only else None
    skipped: dict[str, str] = {}
    for i, line in enumerate(CPU_EXCLUDED_FILE.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        key_suite, _, test = parts[0].partition("/")
        if len(parts) != 2 or not parts[1]:
            problems.append(f"cpu_excluded.txt:{i}: expected 'SUITE/TEST | REASON', got '{line}'")
            continue
        if key_suite != suite:
            continue
        if test not in claimed:
            problems.append(f"cpu_excluded.txt:{i}: {suite}/{test} is not a claimed test of the suite")
        if test in skipped:
            problems.append(f"cpu_excluded.txt:{i}: {suite}/{test} is listed twice")
        skipped[test] = parts[1]
    names = [n for n in sorted(claimed) if n in cases and (not only or only.search(n))]
    results = run_all(args.gcomp, [cases[n] for n in names], max(1, args.jobs), "cpu")
    passed = [n for n in names if n not in skipped and results[n].passed]
    for n in names:
        if n not in skipped and not results[n].passed:
            problems.append(f"claimed {suite}/{n} fails on --target cpu: {results[n].message}")
    now_pass = [n for n in names if n in skipped and results[n].passed]
    if args.verbose:
        for n in names:
            r = results[n]
            state = "cpu-excluded" if n in skipped else "claimed"
            print(f"{'PASS' if r.passed else 'FAIL'} {r.seconds:6.2f}s {state:12s} {suite}/{n}"
                  + ("" if r.passed else f"  {r.message.splitlines()[0] if r.message else ''}"))
    reasons: dict[str, int] = {}
    for n in names:
        if n in skipped:
            reasons[skipped[n]] = reasons.get(skipped[n], 0) + 1
    print(f"\nconformance suite '{suite}' on --target cpu: {len(names)} claimed tests run in "
          f"{time.monotonic() - start:.1f} s (rtol {RTOL}, atol {ATOL})")
    print(f"  {'pass on cpu':<60s} {len(passed):5d}")
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  {'cpu-excluded: ' + reason[:46]:<60s} {count:5d}")
    if now_pass:
        print("\ncpu-excluded tests that now pass (remove them from cpu_excluded.txt):")
        for n in now_pass:
            print(f"  {suite}/{n}")
    return verdict(problems, "every claimed test passes on --target cpu or is cpu-excluded with its reason")


# ---- main -------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", choices=SUITES, required=True)
    ap.add_argument("--gcomp", required=True, help="path of the gcomp executable")
    ap.add_argument("--write-lists", action="store_true", help="propose entries for unlisted tests")
    ap.add_argument("--jobs", type=int, default=2, help="parallel gcomp checks (default 2)")
    ap.add_argument("--only", help="regex: run and verify only matching tests (no completeness check)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every test's result")
    ap.add_argument("--target", choices=("ref", "cpu"), default="ref",
                    help="cpu: the claimed tests on compiled cpu plans (cpu_excluded.txt)")
    args = ap.parse_args()
    if not (os.path.isfile(args.gcomp) and os.access(args.gcomp, os.X_OK)):
        sys.exit(f"run_suite.py: --gcomp {args.gcomp} is not an executable file (build gcomp first)")
    start = time.monotonic()
    suite = args.suite
    ops = claimed_ops() | ({"model"} if suite in MODEL_SUITES else set())
    cases = enumerate_suite(suite, ops)
    only = re.compile(args.only) if args.only else None
    of_claimed = {n: c for n, c in cases.items() if c.op in ops and (not only or only.search(n))}

    problems: list[str] = []
    if suite == "pypi":
        pin = re.search(r"^onnx==(\S+)", (REPO / "tools" / "requirements.txt").read_text(), re.M)
        if pin and pin.group(1) != onnx.__version__:
            problems.append(f"this Python has onnx {onnx.__version__}, tools/requirements.txt pins {pin.group(1)} "
                            "(run tools/setup.sh)")
    claimed_all, excluded_all = read_lists(problems)
    listed: dict[str, list[str]] = {}
    claimed, excluded = {}, {}
    for e in claimed_all:
        listed.setdefault(f"{e.suite}/{e.test}", []).append(f"claimed.txt:{e.line}")
        if e.suite == suite:
            claimed[e.test] = e
    for e in excluded_all:
        listed.setdefault(f"{e.suite}/{e.test}", []).append(f"excluded.txt:{e.line}")
        if e.suite == suite:
            excluded[e.test] = e
    for key, where in sorted(listed.items()):
        if len(where) > 1:
            problems.append(f"{key} is listed {len(where)} times ({', '.join(where)})")
    if args.target == "cpu":
        return run_cpu(args, suite, cases, claimed, problems)
    for name, e in sorted({**excluded, **claimed}.items()):
        if only and not only.search(name):
            continue
        file = "claimed.txt" if name in claimed else "excluded.txt"
        if name not in cases:
            problems.append(f"{file}:{e.line}: {suite}/{name} is not a test of the {suite} suite")
        elif cases[name].op not in ops:
            problems.append(f"{file}:{e.line}: {suite}/{name} tests {cases[name].op}, which gcomp does not claim")
    unlisted = [c for n, c in sorted(of_claimed.items()) if n not in claimed and n not in excluded]
    if not args.write_lists:
        for c in unlisted:
            problems.append(f"{suite}/{c.name} ({c.op}) is in neither claimed.txt nor excluded.txt")

    to_run = [c for n, c in of_claimed.items() if n in claimed or n in excluded or args.write_lists]
    to_run.sort(key=lambda c: c.name)
    results = run_all(args.gcomp, to_run, max(1, args.jobs))

    failed = [n for n in sorted(claimed) if n in results and not results[n].passed]
    for n in failed:
        problems.append(f"claimed {suite}/{n} ({cases[n].op}) fails: {results[n].message}")
    now_pass = [n for n in sorted(excluded) if n in results and results[n].passed]

    if args.write_lists:
        write_lists(suite, unlisted, results, ops)

    if args.verbose:
        for n in sorted(results):
            r = results[n]
            state = "claimed" if n in claimed else ("excluded" if n in excluded else "unlisted")
            print(f"{'PASS' if r.passed else 'FAIL'} {r.seconds:6.2f}s {state:8s} {suite}/{n}"
                  + ("" if r.passed else f"  {r.message.splitlines()[0] if r.message else ''}"))

    # Summary.
    counts: dict[str, int] = {}
    for n, e in excluded.items():
        if n in of_claimed:
            counts[category_key(e.category)] = counts.get(category_key(e.category), 0) + 1
    n_claimed = sum(1 for n in claimed if n in of_claimed)
    print(f"\nconformance suite '{suite}' ({suite_root(suite)}; models read with onnx {onnx.__version__})")
    print(f"  tolerances: rtol {RTOL}, atol {ATOL}; {len(cases)} node tests, {len(of_claimed)} of claimed ops, "
          f"{len(results)} run in {time.monotonic() - start:.1f} s")
    print(f"  {'claimed':<52s} {n_claimed:5d}  ({n_claimed - len(failed)} pass, {len(failed)} fail)")
    for cat in list(CATEGORIES) + ["unsupported feature"]:
        print(f"  {'excluded: ' + cat:<52s} {counts.get(cat, 0):5d}")
    print(f"  {'unlisted':<52s} {len(unlisted):5d}")
    print(f"  {'total tests of claimed ops':<52s} {len(of_claimed):5d}")
    slow = sorted(results.items(), key=lambda kv: -kv[1].seconds)[:3]
    print("  slowest: " + ", ".join(f"{n} {r.seconds:.2f} s" for n, r in slow))
    if now_pass:
        print("\nexcluded tests that now pass (move them to claimed.txt):")
        for n in now_pass:
            print(f"  {suite}/{n}  [{excluded[n].category}]")
    return verdict(problems, "every claimed test passes and every test of a claimed op is listed once")


if __name__ == "__main__":
    sys.exit(main())
