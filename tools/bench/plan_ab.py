#!/usr/bin/env python3
"""Two cpu plans of one model, step by step, in alternating rounds.

A VM's speed moves by 10-40% within minutes, so two plans timed one after the other can differ by
more than the change between them. This runs `gcomp bench PLAN --profile --warmup W --iterations
N` on plan A, then plan B, then A again, for the given number of rounds, and reports per step the
minimum and the median over the rounds of each plan's mean step time (bench's mean over its
warm-up and timed runs alike), with the steps whose kernel differs or whose minima differ by more
than --threshold ms. The sums of the per-step minima and the rounds' p50 latencies (minimum and
median) give the whole-plan comparison. The plans must run the same ops in the same order (e.g. the
same model compiled with different --exclude-kernels); it stops at the first round where they do
not.

Usage: plan_ab.py GCOMP A.gplan B.gplan [--batch 1] [--threads 2] [--rounds 8] [--warmup 1]
       [--iterations 15] [--threshold 0.03]
"""
import argparse
import collections
import re
import statistics
import subprocess
import sys

STEP = re.compile(r"\s+#(\d+)\s+([\d.]+) ms\s+(\S+)\s+(\S+)")
LATENCY = re.compile(r"latency ms: p50 ([\d.]+)")


def run(gcomp, plan, args):
    cmd = [gcomp, "bench", plan, "--batch", str(args.batch), "--threads", str(args.threads), "--warmup",
           str(args.warmup), "--iterations", str(args.iterations), "--profile", "--profile-top", "100000"]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"{' '.join(cmd)}: still running after {args.timeout} s")
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-2000:]}")
    steps, p50 = {}, None
    for line in r.stdout.splitlines():
        m = STEP.match(line)
        if m:
            steps[int(m.group(1))] = (float(m.group(2)), m.group(3), m.group(4))
        m = LATENCY.search(line)
        if m:
            p50 = float(m.group(1))
    if not steps or p50 is None:
        sys.exit(f"{' '.join(cmd)}: no profile in its output:\n{r.stdout[-2000:]}")
    return steps, p50


def first_difference(x, y):
    """The first position where the lists x and y differ, as (x's item, y's item); None past an end."""
    for i in range(max(len(x), len(y))):
        xi, yi = (x[i] if i < len(x) else None), (y[i] if i < len(y) else None)
        if xi != yi:
            return xi, yi
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gcomp")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=15)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per bench run")
    ap.add_argument("--threshold", type=float, default=0.03)
    args = ap.parse_args()
    if args.rounds < 1 or args.iterations < 1 or args.warmup < 0:
        ap.error("--rounds and --iterations must be >= 1, --warmup >= 0")
    plans = (args.a, args.b)
    times = {p: collections.defaultdict(list) for p in plans}
    kernel = {p: {} for p in plans}
    p50 = {p: [] for p in plans}
    for _ in range(args.rounds):
        ops = {}
        for p in plans:
            steps, lat = run(args.gcomp, p, args)
            p50[p].append(lat)
            ops[p] = [(s, op) for s, (_, op, _) in sorted(steps.items())]
            for s, (ms, _, k) in steps.items():
                times[p][s].append(ms)
                kernel[p][s] = k
        diff = first_difference(ops[args.a], ops[args.b])
        if diff:
            sys.exit(f"the plans run different steps ({len(ops[args.a])} and {len(ops[args.b])}; the first "
                     f"difference: (step, op) {diff[0]} against {diff[1]})")
    print(f"batch {args.batch}, {args.threads} threads, {args.rounds} rounds of {args.warmup} + {args.iterations} "
          "runs, alternating")
    print(f"A {args.a}\nB {args.b}")
    print(f"{'step':>5} {'A kernel':24} {'A min':>7} {'(median)':>9} {'B kernel':24} {'B min':>7} {'(median)':>9}  B/A")
    a, b = plans
    total = {p: 0.0 for p in plans}
    for s in sorted(times[a]):
        lo = {p: min(times[p][s]) for p in plans}
        mid = {p: statistics.median(times[p][s]) for p in plans}
        for p in plans:
            total[p] += lo[p]
        if kernel[a][s] != kernel[b][s] or abs(lo[a] - lo[b]) > args.threshold:
            ratio = lo[b] / lo[a] if lo[a] > 0 else float("nan")
            print(f"#{s:<4} {kernel[a][s]:24} {lo[a]:7.3f} ({mid[a]:7.3f}) {kernel[b][s]:24} {lo[b]:7.3f} "
                  f"({mid[b]:7.3f})  {ratio:.2f}")
    for name, p in zip("AB", plans):
        print(f"{name}: steps' minima sum {total[p]:.3f} ms; p50 latency min {min(p50[p]):.3f}, "
              f"median {statistics.median(p50[p]):.3f} ms")


if __name__ == "__main__":
    main()
