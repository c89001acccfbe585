#!/usr/bin/env python3
"""Checks the model folders written by make_models.py, with onnxruntime.

    check_models.py DIR [--tier small|full|all] [--only NAME[,NAME...]] [--threads N]

Per model:
  * the stored test sets reproduce: an op-by-op ORT run of input_K.pb gives output_K.pb
    (max |diff| / max |ref| <= REPRO_TOL), and ORT with all graph optimizations agrees within
    OPT_TOL (conditioning: a model whose result moves more under other summation orders is
    too ill-conditioned for the C++ side's rtol 1e-4 comparison);
  * every float tensor of the graph (not just the output) is finite and inside the fp16 range on
    the stored inputs, so half-precision targets can run the same fixtures;
  * outputs are informative over 64 fresh standard-normal inputs: no inf/NaN, the mean over
    output elements of the std across inputs is at least STD_FLOOR x mean |output|, and the
    top-1 class takes at least MIN_CLASSES distinct values;
  * variants sharing weights (same model at another opset / batch form) agree on one input;
  * the op histogram has the structure the architecture implies (convs, residual adds,
    attentions, GELUs, LayerNorms ...), and each generator matches the torchvision export it
    imitates (same family and size) on those counts, where both folders are present.

Exit status 1 with a list of failures if any check fails; 2 if a selected folder is missing
(unless --skip-missing). Generator-vs-export comparisons cover the pairs present among the
checked models.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_models as mm  # noqa: E402

N_INPUTS = 64
# A network whose output no longer depends on its input shows std/mean|y| at the level of fp32
# rounding noise (1e-7..1e-5); a merely weak dependence (e.g. logits dominated by a constant
# bias) shows 1e-3..1e-2. The weight recipe gives ~0.5..1, so 1e-2 has two orders of margin on
# the healthy side and still rejects "almost constant" outputs.
STD_FLOOR = 1e-2
MIN_CLASSES = 8
FP16_MAX = 65504.0
REPRO_TOL = 1e-6
# ORT's optimized kernels sum in other orders, as gcomp's will; if that moves the outputs by more
# than a third of the C++ side's rtol 1e-4, the fixture is too ill-conditioned to compare against.
OPT_TOL = 3e-5


def load_tensor(path: Path) -> tuple[str, np.ndarray]:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return t.name, numpy_helper.to_array(t)


def signature(hist: dict[str, int], family: str) -> dict[str, int]:
    """Structural op counts that do not depend on the export form."""
    h = lambda op: hist.get(op, 0)  # noqa: E731
    if family == "resnet":
        return {"Conv": h("Conv"), "residual Add": h("Add"), "Relu": h("Relu"),
                "MaxPool": h("MaxPool"),
                "global pool (GlobalAveragePool|ReduceMean)": h("GlobalAveragePool") + h("ReduceMean"),
                "Gemm": h("Gemm")}
    return {"Conv": h("Conv"),
            "attention (Softmax|Attention)": h("Softmax") + h("Attention"),
            "GELU (Erf|Gelu)": h("Erf") + h("Gelu"),
            "LayerNorm (LayerNormalization|ReduceMean/2)":
                h("LayerNormalization") + h("ReduceMean") // 2}


def expected_signature(spec: mm.Spec) -> dict[str, int]:
    """The counts the architecture config implies."""
    c = spec.config
    if spec.family == "resnet":
        blocks = sum(c["layers"])
        per_block = 3 if c["block"] == "bottleneck" else 2
        # A stage's first block needs a projection shortcut when stride or width changes:
        # all four stages for bottlenecks (64 -> 256 in stage 1), three for basic blocks.
        downsamples = 4 if c["block"] == "bottleneck" else 3
        stem = c.get("stem_convs", 1)  # timm's deep stem: three 3x3 convs, each with its ReLU
        return {"Conv": stem + per_block * blocks + downsamples, "residual Add": blocks,
                "Relu": stem + per_block * blocks, "MaxPool": 1,
                "global pool (GlobalAveragePool|ReduceMean)": 1, "Gemm": 1}
    n = c["layers"]
    return {"Conv": 1, "attention (Softmax|Attention)": n, "GELU (Erf|Gelu)": n,
            "LayerNorm (LayerNormalization|ReduceMean/2)": 2 * n + 1}


def check_one(spec: mm.Spec, folder: Path, threads: int) -> tuple[dict, list[str], dict]:
    """Returns (table row, failure messages, op histogram)."""
    fails = []
    meta = json.loads((folder / "meta.json").read_text())
    model = onnx.load(str(folder / "model.onnx"))
    hist = mm.op_histogram(model)
    in_name, out_name = mm.graph_io(model)

    # Stored test sets: reproduction, optimized-vs-reference agreement, fp16 range.
    probe = mm.ValueProbe(model, threads)
    opt = mm.ort_session(folder / "model.onnx", ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
                         threads)
    repro = opt_diff = max_act = 0.0
    for k, info in enumerate(meta["test_sets"]):
        case = folder / f"test_data_set_{k}"
        (xn, x), (yn, y) = load_tensor(case / "input_0.pb"), load_tensor(case / "output_0.pb")
        if (xn, yn) != (in_name, out_name) or x.shape[0] != info["batch"]:
            fails.append(f"{case.name}: tensor names {xn}/{yn} or batch {x.shape[0]} do not "
                         f"match the graph ({in_name}/{out_name}) and meta ({info['batch']})")
        values = probe({in_name: x})
        repro = max(repro, mm.max_rel_diff(values[out_name], y))
        opt_diff = max(opt_diff, mm.max_rel_diff(opt.run([out_name], {in_name: x})[0],
                                                 values[out_name]))
        for name, v in values.items():
            if v.dtype != np.float32 or not v.size:
                continue
            if not np.isfinite(v).all():
                fails.append(f"{case.name}: non-finite values in {name}")
                break
            max_act = max(max_act, float(np.abs(v).max()))
        del values
    del probe
    if repro > REPRO_TOL:
        fails.append(f"stored outputs do not reproduce: max rel diff {repro:.2e}")
    if opt_diff > OPT_TOL:
        fails.append(f"ORT_ENABLE_ALL differs from the reference by {opt_diff:.2e} (rel)")
    if max_act >= FP16_MAX:
        fails.append(f"an intermediate reaches {max_act:.3g}, beyond the fp16 range")

    # Informative outputs over fresh inputs. Dynamic models run in batches (the whole set for
    # small models, 8 x 8 for full-size ones); static ones (batch 1) one image at a time.
    rng = np.random.default_rng(mm.seed_of(spec.name, "check"))
    xs = rng.standard_normal((N_INPUTS, 3, spec.image, spec.image), dtype=np.float32)
    chunk = (N_INPUTS if spec.tier == "small" else 8) if spec.dynamic else 1
    ys = np.concatenate([opt.run([out_name], {in_name: xs[i:i + chunk]})[0]
                         for i in range(0, N_INPUTS, chunk)])
    std_ratio = float(ys.std(axis=0).mean() / max(np.abs(ys).mean(), 1e-30))
    classes = len(np.unique(ys.argmax(axis=1)))
    if not np.isfinite(ys).all():
        fails.append("non-finite outputs on random inputs")
    if not std_ratio >= STD_FLOOR:
        fails.append(f"outputs barely depend on the input: std/mean|y| {std_ratio:.2e} "
                     f"< {STD_FLOOR}")
    if classes < MIN_CLASSES:
        fails.append(f"only {classes} distinct top-1 classes over {N_INPUTS} inputs "
                     f"(need {MIN_CLASSES})")

    # The classifier is centred and scaled on calibration features (see make_models.py), so
    # the features themselves must vary across inputs, or the logits' spread is just amplified
    # rounding noise.
    feat_ratio = meta["notes"]["feature_std_ratio"]
    if not feat_ratio >= STD_FLOOR:
        fails.append(f"pre-classifier features barely depend on the input: std/mean|f| "
                     f"{feat_ratio:.2e} < {STD_FLOOR}")

    # Structure.
    sig, want = signature(hist, spec.family), expected_signature(spec)
    for key, n in want.items():
        if sig[key] != n:
            fails.append(f"op histogram: {key} = {sig[key]}, architecture implies {n}")
    if spec.family == "resnet":
        # The exporter folds BatchNorm into the convs; the zoo form keeps one per conv.
        bn = hist.get("BatchNormalization", 0)
        want_bn = sig["Conv"] if spec.form == mm.FORM_ZOO else 0
        if bn != want_bn:
            fails.append(f"op histogram: BatchNormalization = {bn}, expected {want_bn}")
    if hist != meta["op_histogram"]:
        fails.append("op histogram differs from meta.json")

    # One fixed image per weight key, for comparing variants that share weights.
    shared = np.random.default_rng(mm.seed_of(spec.weight_key, "variant")).standard_normal(
        (1, 3, spec.image, spec.image), dtype=np.float32)
    variant_out = opt.run([out_name], {in_name: shared})[0]

    row = {"name": spec.name, "batch": "x".join(str(t["batch"]) for t in meta["test_sets"]),
           "feat": feat_ratio, "std": std_ratio, "classes": classes,
           "max_out": float(np.abs(ys).max()), "max_act": max_act, "repro": repro,
           "opt": opt_diff, "variant_out": variant_out}
    return row, fails, hist


def compare_pairs(specs: list[mm.Spec], hists: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Each generator against every present torchvision export of the same family and size."""
    lines, fails = [], []
    exports = [s for s in specs if s.form == mm.FORM_TV and s.name in hists]
    for gen in specs:
        if gen.form == mm.FORM_TV or gen.name not in hists:
            continue
        for tv in exports:
            if (tv.family, tv.arch) != (gen.family, gen.arch):
                continue
            a, b = signature(hists[gen.name], gen.family), signature(hists[tv.name], tv.family)
            diffs = [f"{k} {a[k]} vs {b[k]}" for k in a if a[k] != b[k]]
            counts = ", ".join(f"{k.split(' ')[0]} {a[k]}" for k in a)
            lines.append(f"  {gen.name:24} vs {tv.name:27} "
                         f"{'OK  ' + counts if not diffs else 'DIFF ' + '; '.join(diffs)}")
            if diffs:
                fails.append(f"{gen.name} vs {tv.name}: {'; '.join(diffs)}")
    return lines, fails


def compare_variants(specs: list[mm.Spec], rows: dict[str, dict]) -> tuple[list[str], list[str]]:
    """Variants of one model (same weights, other opset / batch form / export form) must
    compute the same function: e.g. zoo_resnet50_op7 and _op9, or tv_small_vit_op13_static
    (decomposed LayerNorm) and tv_small_vit_op17_dynamic (LayerNormalization)."""
    lines, fails, groups = [], [], {}
    for s in specs:
        if s.name in rows:
            groups.setdefault(s.weight_key, []).append(s.name)
    for key, names in groups.items():
        if len(names) < 2:
            continue
        base = rows[names[0]]["variant_out"]
        diff = max(mm.max_rel_diff(rows[n]["variant_out"], base) for n in names[1:])
        ok = diff <= OPT_TOL
        lines.append(f"  {key:24} {len(names)} variants, max rel diff {diff:.1e} "
                     f"{'OK' if ok else 'DIFF'}")
        if not ok:
            fails.append(f"variants of {key} disagree: max rel diff {diff:.2e}")
    return lines, fails


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="folder given to make_models.py --out")
    ap.add_argument("--tier", choices=("small", "full", "all"), default="small")
    ap.add_argument("--only", help="comma-separated model names (any tier)")
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    ap.add_argument("--skip-missing", action="store_true",
                    help="check the selected models that are present, skip the others")
    args = ap.parse_args(argv)
    specs = mm.select_specs(args.tier, args.only)

    missing = [s.name for s in specs if not mm.is_complete(args.dir / s.name)]
    if missing and args.skip_missing:
        print(f"skipped (not generated): {', '.join(missing)}")
        specs = [s for s in specs if s.name not in missing]
    elif missing:
        print(f"FAIL: missing or stale model folders in {args.dir}: {', '.join(missing)}\n"
              f"      run: make_models.py --out {args.dir} --tier {args.tier}", file=sys.stderr)
        return 2

    print(f"{'model':30} {'batch':5} {'std/|f|':>8} {'std/|y|':>8} {'top1':>4} {'max|y|':>8} "
          f"{'max|act|':>9} {'repro':>8} {'opt':>8} {'sec':>5}  status")
    failures, hists, rows = [], {}, {}
    t_all = time.time()
    for spec in specs:
        t0 = time.time()
        row, fails, hists[spec.name] = check_one(spec, args.dir / spec.name, args.threads)
        rows[spec.name] = row
        failures += [f"{spec.name}: {f}" for f in fails]
        print(f"{row['name']:30} {row['batch']:5} {row['feat']:8.3f} {row['std']:8.3f} "
              f"{row['classes']:4d} {row['max_out']:8.3g} {row['max_act']:9.3g} "
              f"{row['repro']:8.1e} {row['opt']:8.1e} {time.time() - t0:5.1f}  "
              f"{'ok' if not fails else 'FAIL'}", flush=True)

    lines, pair_fails = compare_pairs(specs, hists)
    failures += pair_fails
    if lines:
        print("op-histogram comparison, generator vs torchvision export:")
        print("\n".join(lines))
    lines, variant_fails = compare_variants(specs, rows)
    failures += variant_fails
    if lines:
        print("variants sharing weights, same input:")
        print("\n".join(lines))
    print(f"checked {len(specs)} models in {time.time() - t_all:.1f} s")
    if failures:
        print(f"FAIL: {len(failures)} problem(s):", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
