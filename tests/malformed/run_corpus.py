"""Runs gcomp on every case of the malformed-model corpus (make_corpus.py) and checks that bad
input is harmless: the expected exit code (2), no crash (no signal, no exit code 3, no sanitizer
report) and every expected part of the message (file, node, op, expected vs actual).

Then runs every case again with the address space capped (RLIMIT_AS, --rlimit-mb, 1 GiB by
default), and every `inspect` case also as `run --target cpu` (import, O3, codegen and the run's
allocations). An accepted case (exit code 0) gets the cap plus what its plan holds (planned_mb):
run allocates its arena and the caller's tensors, not more. A model that declares a huge tensor must be refused with the same clean message, which
proves that nothing proportional to a declared size is allocated before the size is validated.
That second pass cannot run under AddressSanitizer (it reserves terabytes of virtual memory), so
--sanitized skips it, saying so.

Usage: run_corpus.py GCOMP CORPUS_DIR [--sanitized] [--rlimit-mb N]
Prints a table: case, exit code, message (first line).
"""
import argparse
import json
import os
import resource
import signal
import subprocess
import sys

TIMEOUT_S = 120
MIN_CASES = 30
# Signs of a crash or an internal error in gcomp's output.
CRASH_MARKERS = ("internal error", "AddressSanitizer", "LeakSanitizer", "runtime error:", "terminate called",
                 "Segmentation fault", "Aborted")


def substitute(text, case_dir, model):
    return text.replace("{file}", model).replace("{dir}", case_dir)


def as_run(case):
    """The case as `gcomp run --target cpu` (compiled at O3 in memory), when it is a refusal by
    inspect: the model must be refused by run as it is by inspect, with the same message."""
    if case["command"][:1] != ["inspect"] or case["exit_code"] != 2:
        return None
    return dict(case, command=["run", "{file}", "--target", "cpu", "--output-dir", "{dir}/run_out"])


def run_case(gcomp, root, case, rlimit_bytes=None):
    case_dir = os.path.join(root, case["dir"])
    model = os.path.join(root, case["file"])
    argv = [gcomp] + [substitute(a, case_dir, model) for a in case["command"]]

    def cap_address_space():
        resource.setrlimit(resource.RLIMIT_AS, (rlimit_bytes, rlimit_bytes))

    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S,
                           preexec_fn=cap_address_space if rlimit_bytes else None)
    except subprocess.TimeoutExpired:
        return None, "", [f"timed out after {TIMEOUT_S} s"]
    problems = []
    rc = p.returncode
    if rc < 0:
        problems.append(f"killed by signal {signal.Signals(-rc).name}")
    elif rc == 3:
        problems.append("exit code 3 (internal error)")
    elif rc != case["exit_code"]:
        problems.append(f"exit code {rc}, expected {case['exit_code']}")
    for marker in CRASH_MARKERS:
        if marker in p.stderr:
            problems.append(f"output contains '{marker}'")
    # A case that must succeed (exit code 0) expects its parts in the output, a refusal in the message.
    accepted = case["exit_code"] == 0
    for part in case["expect"]:
        part = substitute(part, case_dir, model)
        if part not in (p.stdout if accepted else p.stderr):
            problems.append(f"{'output' if accepted else 'message'} lacks: {part!r}")
    if not accepted and not p.stderr.startswith("gcomp: "):
        problems.append("message does not start with 'gcomp: '")
    return rc, p.stdout if accepted else p.stderr, problems


def first_line(message, root):
    line = message.strip().splitlines()[0] if message.strip() else "<no message>"
    lines = message.strip().splitlines()
    if len(lines) > 1:
        line += f" (+{len(lines) - 1} lines)"
    return line.replace(root + os.sep, "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gcomp")
    ap.add_argument("corpus")
    ap.add_argument("--sanitized", action="store_true",
                    help="gcomp is built with AddressSanitizer: skip the address-space-limit pass")
    ap.add_argument("--rlimit-mb", type=int, default=1024, help="address-space cap of the second pass")
    args = ap.parse_args()
    gcomp = os.path.abspath(args.gcomp)
    root = os.path.abspath(args.corpus)
    with open(os.path.join(root, "cases.json")) as f:
        cases = json.load(f)["cases"]

    failures = []
    if len(cases) < MIN_CASES:
        failures.append(f"corpus has {len(cases)} cases, expected at least {MIN_CASES}")

    width = max(len(c["name"]) for c in cases)
    print(f"{'case':{width}}  exit  message")
    for c in cases:
        rc, message, problems = run_case(gcomp, root, c)
        print(f"{c['name']:{width}}  {rc if rc is not None else '-':>4}  {first_line(message, root)}")
        failures += [f"{c['name']}: {p}" for p in problems]
        if problems:
            print(f"    full message:\n      " + "\n      ".join(message.strip().splitlines()))

    print()
    if args.sanitized:
        print("SKIPPED: the address-space-limit (RLIMIT_AS) pass, because gcomp is built with "
              "AddressSanitizer, which reserves more virtual memory than any useful cap")
    else:
        cap = args.rlimit_mb << 20
        huge = [c["name"] for c in cases if c["huge"]]
        print(f"address space capped at {args.rlimit_mb} MiB (RLIMIT_AS): all {len(cases)} cases again, "
              f"{len(huge)} of them huge declarations: {', '.join(huge)}")
        as_runs = [r for r in map(as_run, cases) if r]
        print(f"and the {len(as_runs)} inspect cases as `run --target cpu`")
        for c, how in [(c, "") for c in cases] + [(r, ", as run") for r in as_runs]:
            rc, message, problems = run_case(gcomp, root, c, rlimit_bytes=cap + (c.get("planned_mb", 0) << 20))
            if problems:
                print(f"{c['name']:{width}}  {rc if rc is not None else '-':>4}  {first_line(message, root)}{how}")
            failures += [f"{c['name']} (RLIMIT_AS {args.rlimit_mb} MiB{how}): {p}" for p in problems]
        if not huge:
            failures.append("no huge-declaration case in the corpus")

    print()
    if failures:
        print(f"FAILED: {len(failures)} problem(s)")
        for f in failures:
            print("  " + f)
        return 1
    accepted = sum(1 for c in cases if c["exit_code"] == 0)
    print(f"PASSED: {len(cases) - accepted} malformed models refused cleanly, {accepted} accepted model(s) ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
