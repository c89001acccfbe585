#!/usr/bin/env python3
"""Exports ResNets and ViTs with torch 2.x's dynamo exporter (`torch.onnx.export(dynamo=True)`,
the default since torch 2.9), as users export them today.

    export_dynamo.py --out DIR [--tier small|full|all] [--only NAME[,NAME...]] [--list]

Runs in its own virtual environment with torch >= 2.9, torchvision, timm, transformers,
onnxscript and onnxruntime from PyPI (tests/models/README.md, "Dynamo exports"); CI never
installs it. The small tier's files are committed in tests/models/dynamo/ with manifest.json
(the versions that wrote them, and per model its family, image size, batch form and notes);
make_models.py turns them into fixture folders (inputs and ONNX Runtime references) like the
others. The full tier writes to DIR only (hundreds of MB).

Weights are random, re-drawn by make_models.py's weight recipe (He convolutions, BatchNorm
statistics measured on calibration images, residual branches damped, classifier centred on the
calibration features) so that outputs depend on the input. Nothing is downloaded.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_models as mm  # noqa: E402  (seeds, calibration images, classifier recipe)

MAX_COMMITTED_BYTES = 1 << 20


def image_of(e) -> int:
    return mm.ARCH_TABLES[e.family][e.arch]["image"]


def classes_of(e) -> int:
    return mm.ARCH_TABLES[e.family][e.arch]["num_classes"]


SMALL_VIT = dict(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=4, mlp_ratio=2.0)


# ---------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------

def narrow_tv_resnet(block, layers, planes, num_classes):
    """torchvision's ResNet class with narrower stages (its constructor fixes 64..512)."""
    from torchvision.models.resnet import ResNet
    model = ResNet(block, [1, 1, 1, 1], num_classes=num_classes)
    model.inplanes = planes[0]
    model.conv1 = nn.Conv2d(3, planes[0], kernel_size=7, stride=2, padding=3, bias=False)
    model.bn1 = nn.BatchNorm2d(planes[0])
    model.layer1 = model._make_layer(block, planes[0], layers[0])
    model.layer2 = model._make_layer(block, planes[1], layers[1], stride=2)
    model.layer3 = model._make_layer(block, planes[2], layers[2], stride=2)
    model.layer4 = model._make_layer(block, planes[3], layers[3], stride=2)
    model.fc = nn.Linear(planes[3] * block.expansion, num_classes)
    return model


class LogitsOnly(nn.Module):
    """HuggingFace models return an output object; exported graphs return its logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values).logits


def build(e: mm.DynamoExport) -> nn.Module:
    small = e.tier == "small"
    if e.source == "torchvision":
        import torchvision
        from torchvision.models.resnet import BasicBlock, Bottleneck
        from torchvision.models.vision_transformer import VisionTransformer
        if e.family == "resnet":
            block = BasicBlock if mm.RESNETS[e.arch]["block"] == "basic" else Bottleneck
            if small:
                return narrow_tv_resnet(block, [1, 1, 1, 1], (8, 16, 32, 64), classes_of(e))
            return getattr(torchvision.models, e.name.removeprefix("dyn_tv_"))(weights=None)
        if small:
            return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                                     hidden_dim=64, mlp_dim=128, num_classes=classes_of(e))
        return torchvision.models.vit_b_16(weights=None)
    if e.source == "timm":
        import timm
        if "resnet50d" in e.name:
            extra = dict(layers=(1, 1, 1, 1), channels=(8, 16, 32, 64), stem_width=8) if small \
                else {}
            return timm.create_model("resnet50d", pretrained=False, num_classes=classes_of(e),
                                     **extra)
        if "deit" in e.name:
            arch = "deit_tiny_distilled_patch16_224" if small else "deit_base_distilled_patch16_224"
            return timm.create_model(arch, pretrained=False, num_classes=classes_of(e),
                                     **(SMALL_VIT if small else {}))
        arch = "vit_tiny_patch16_224" if small else "vit_base_patch16_224"
        return timm.create_model(arch, pretrained=False, num_classes=classes_of(e),
                                 global_pool="avg", class_token=False,
                                 **(SMALL_VIT if small else {}))
    from transformers import ViTConfig, ViTForImageClassification
    if small:
        config = ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=128, num_labels=classes_of(e))
    else:
        config = ViTConfig(num_labels=classes_of(e))
    config._attn_implementation = "sdpa"
    return LogitsOnly(ViTForImageClassification(config))


def classifier_heads(model: nn.Module) -> list[nn.Linear]:
    """The Linear layers producing the logits (two for distilled DeiT: class and distillation)."""
    heads = []
    for name, m in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if isinstance(m, nn.Linear) and leaf in ("fc", "head", "head_dist", "classifier") \
                and not name.endswith("mlp.fc"):
            heads.append(m)
    assert heads, "no classifier found"
    return heads


# ---------------------------------------------------------------------------------------------
# Weight recipe (make_models.py's, applied to any module tree)
# ---------------------------------------------------------------------------------------------

def feeds_gelu(model: nn.Module) -> set[int]:
    """ids of Linear layers whose output goes into a GELU (He gain 2 as before ReLU)."""
    ids = set()
    for name, m in model.named_modules():
        kids = list(m.named_children())
        for (an, a), (_, b) in zip(kids, kids[1:]):
            if isinstance(a, nn.Linear) and (isinstance(b, nn.GELU) or "act" in type(b).__name__.lower()
                                             or "Activation" in type(b).__name__):
                ids.add(id(a))
        if hasattr(m, "fc1") and isinstance(m.fc1, nn.Linear):          # timm Mlp
            ids.add(id(m.fc1))
        if type(m).__name__ == "ViTIntermediate":                        # transformers
            ids.add(id(m.dense))
    return ids


@torch.no_grad()
def apply_recipe(model: nn.Module, e: mm.DynamoExport, notes: dict):
    spec_key = e.key or e.name
    torch.manual_seed(mm.seed_of(spec_key, "weights"))
    gelu_in = feeds_gelu(model)
    heads = {id(h) for h in classifier_heads(model)}
    mm.reinit_modules(model, e.family, gelu_in, skip=frozenset(heads))
    # Tokens and position embeddings: N(0, 0.02^2), whatever the library calls them.
    for name, p in model.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        if leaf in ("class_token", "cls_token", "dist_token", "pos_embedding", "pos_embed",
                    "position_embeddings"):
            p.normal_(0.0, 0.02)
    # Damp the BatchNorm closing each residual branch.
    for m in model.modules():
        kind = type(m).__name__
        if kind == "Bottleneck" and hasattr(m, "bn3"):
            m.bn3.weight.mul_(mm.RESIDUAL_GAIN)
        elif kind == "BasicBlock" and hasattr(m, "bn2"):
            m.bn2.weight.mul_(mm.RESIDUAL_GAIN)

    calib = torch.from_numpy(calibration_images(e))
    if any(isinstance(m, nn.BatchNorm2d) for m in model.modules()):
        model.train()
        model(calib)          # BatchNorm statistics: one train-mode pass
    model.eval()

    # Classifier(s): centred on the features they see for the calibration images.
    feats = {}
    hooks = [h.register_forward_hook(lambda mod, inp, out: feats.__setitem__(id(mod), inp[0]))
             for h in classifier_heads(model)]
    model(calib)
    for h in hooks:
        h.remove()
    ratios = []
    for k, head in enumerate(classifier_heads(model)):
        f = feats[id(head)].reshape(-1, head.in_features).double().numpy()
        head_notes = {}
        w, b = mm.centred_classifier(np.random.default_rng(mm.seed_of(spec_key, f"head{k}")), f,
                                     head.out_features, head_notes)
        head.weight.copy_(torch.from_numpy(w))
        head.bias.copy_(torch.from_numpy(b))
        ratios.append(head_notes["feature_std_ratio"])
    notes["feature_std_ratio"] = min(ratios)


def calibration_images(e: mm.DynamoExport) -> np.ndarray:
    n = 16 if e.tier == "small" else 8
    rng = np.random.default_rng(mm.seed_of(e.key or e.name, "calibration"))
    return rng.standard_normal((n, 3, image_of(e), image_of(e)), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------

def export(e: mm.DynamoExport) -> tuple[bytes, dict]:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    model = build(e)
    notes = {}
    apply_recipe(model, e, notes)
    example = torch.zeros(2 if e.dynamic else 1, 3, image_of(e), image_of(e))
    dynamic_shapes = ({0: torch.export.Dim("batch", min=1, max=4096)},) if e.dynamic else None
    log = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(log):
        warnings.simplefilter("ignore")
        program = torch.onnx.export(model, (example,), dynamo=True, input_names=["input"],
                                    output_names=["output"], dynamic_shapes=dynamic_shapes,
                                    verbose=False)
    proto = program.model_proto
    data = proto.SerializeToString()
    opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    notes["opset"] = opset
    # The export must compute what the module computes.
    import onnxruntime as ort
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(mm.seed_of(e.name, "export-check")).standard_normal(
        (3 if e.dynamic else 1, 3, image_of(e), image_of(e)), dtype=np.float32)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    got = session.run(None, {"input": x})[0]
    rel = float(np.abs(got - want).max() / np.abs(want).max())
    assert rel < 1e-4, f"{e.name}: ONNX Runtime differs from torch by {rel:.2e}"
    notes["torch_vs_ort_max_rel_diff"] = float(f"{rel:.3g}")
    return data, notes


def versions() -> dict:
    import onnxscript
    import timm
    import torchvision
    import transformers
    return {"torch": torch.__version__, "torchvision": torchvision.__version__,
            "timm": timm.__version__, "transformers": transformers.__version__,
            "onnxscript": onnxscript.__version__, "onnx": onnx.__version__}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None,
                    help=f"output folder (default for the small tier: {mm.DYNAMO_DIR})")
    ap.add_argument("--tier", choices=("small", "full", "all"), default="small")
    ap.add_argument("--only", help="comma-separated names")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    chosen = [e for e in mm.DYNAMO_EXPORTS if args.tier == "all" or e.tier == args.tier]
    if args.only:
        names = set(args.only.split(","))
        unknown = names - {e.name for e in mm.DYNAMO_EXPORTS}
        if unknown:
            sys.exit(f"unknown export(s): {', '.join(sorted(unknown))} (see --list)")
        chosen = [e for e in mm.DYNAMO_EXPORTS if e.name in names]
    if args.list:
        for e in chosen:
            print(f"{e.name:32} {e.tier:5} {e.source:12} {'dynamic' if e.dynamic else 'static':7} "
                  f"3x{image_of(e)}x{image_of(e)}  {e.what}")
        return 0
    out = args.out or mm.DYNAMO_DIR
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest["versions"] = versions()
    models = manifest.setdefault("models", {})
    for e in chosen:
        t0 = time.time()
        data, notes = export(e)
        if e.tier == "small":
            assert len(data) < MAX_COMMITTED_BYTES, f"{e.name}: {len(data)} bytes, over 1 MB"
        (out / f"{e.name}.onnx").write_bytes(data)
        models[e.name] = {"family": e.family, "source": e.source, "what": e.what,
                          "image": image_of(e), "dynamic": e.dynamic, "tier": e.tier,
                          "num_classes": classes_of(e), "bytes": len(data), "notes": notes}
        print(f"{e.name:32} {time.time() - t0:6.1f} s  {len(data) / 1e6:7.3f} MB  opset "
              f"{notes['opset']}  torch-vs-ORT {notes['torch_vs_ort_max_rel_diff']:.1e}",
              flush=True)
    manifest["models"] = dict(sorted(models.items()))
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
