#!/usr/bin/env python3
"""Generates gcomp's model test fixtures in the ONNX backend-test layout.

    make_models.py --out DIR [--tier small|full|all] [--only NAME[,NAME...]] [--list] [--force]

Every model becomes a folder DIR/NAME/ holding

    model.onnx
    test_data_set_K/input_0.pb, output_0.pb   (onnx TensorProto, named after the graph input/output)
    meta.json                                 (written last: its presence marks a complete folder)

Set 0 has batch 1; dynamic-batch models also get set 1 with batch 3. Inputs are standard-normal
images from a numpy RNG seeded by the model name; reference outputs come from onnxruntime's CPU
provider in fp32 with graph optimizations disabled (op-by-op semantics, see REFERENCE_OPT).

Three kinds of models (see README.md for the table):
  * real exports: torchvision ResNet / VisionTransformer through torch.onnx.export;
  * dynamo exports: torchvision, timm and HuggingFace models through torch 2.x's dynamo exporter,
    written by export_dynamo.py in its own environment and committed (small tier); read here;
  * generators (onnx.helper + numpy) for forms that exporter does not write: a model-zoo
    ResNet-50 v1 (Conv + separate BatchNormalization), a HuggingFace-style ViT (decomposed
    LayerNorm, Shape/Gather/Concat reshape chains, erf GELU) and a ViT built on the opset-23
    Attention op.

All weights are random but scaled so that outputs depend on the input (see the "Weight recipe"
section below); check_models.py verifies that.

Re-running is cheap: a folder whose meta.json carries this script's VERSION is skipped.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import math
import shutil
import sys
import time
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper

# Bump whenever anything that ends up in a generated folder changes; folders written by another
# version are regenerated.
VERSION = 1
# Fixtures record the hash of this script: any change to a recipe regenerates them (a folder made
# by another version of the script is not "complete").
SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]

# Reference outputs are computed op by op (no ORT graph rewrites such as Conv+Add fusion or the
# NCHWc layout transform), which is the semantics gcomp's reference interpreter implements.
REFERENCE_OPT = ort.GraphOptimizationLevel.ORT_DISABLE_ALL

FORM_TV = "torchvision export"
FORM_ZOO = "model-zoo generator"
FORM_HF = "huggingface generator"
FORM_ATTN = "attention-op generator"
FORM_DYNAMO = "dynamo export"

# Exports by torch 2.x's dynamo exporter (export_dynamo.py, its own virtual environment). The
# small tier's files are committed in DYNAMO_DIR; the full tier's are exported into the build
# folder when that environment exists.
DYNAMO_DIR = Path(__file__).resolve().parent / "dynamo"
DYNAMO_OPSET = 20  # torch 2.15's default

TIERS = ("small", "full")

# ---------------------------------------------------------------------------------------------
# Architectures. Every model refers to one of these by (family, arch).
# ---------------------------------------------------------------------------------------------

RESNETS = {
    # Narrow bottleneck ResNet: one block per stage, inner widths 16/32/64/128 (width_per_group
    # 16), outputs 256..2048 as in ResNet-50; 64x64 input.
    "small": dict(block="bottleneck", layers=(1, 1, 1, 1), width_per_group=16, num_classes=100,
                  image=64),
    # ResNeXt: grouped 3x3 convolutions (8 groups of width 4 per 64 planes: inner widths
    # 32/64/128/256), 64x64 input.
    "small_resnext": dict(block="bottleneck", layers=(1, 1, 1, 1), width_per_group=4, groups=8,
                          num_classes=100, image=64),
    "resnet18": dict(block="basic", layers=(2, 2, 2, 2), width_per_group=64, num_classes=1000,
                     image=224),
    "resnet50": dict(block="bottleneck", layers=(3, 4, 6, 3), width_per_group=64,
                     num_classes=1000, image=224),
    "resnext50_32x4d": dict(block="bottleneck", layers=(3, 4, 6, 3), width_per_group=4, groups=32,
                            num_classes=1000, image=224),
    # The dynamo exports' small ResNets (export_dynamo.py): planes 8/16/32/64, one block per
    # stage, so that the committed files stay under 1 MB; resnet50d has timm's deep stem (three
    # 3x3 convs) and average-pool downsampling.
    "dyn_small_basic": dict(block="basic", layers=(1, 1, 1, 1), num_classes=100, image=64),
    "dyn_small_bottleneck": dict(block="bottleneck", layers=(1, 1, 1, 1), num_classes=100,
                                 image=64),
    "dyn_small_resnet50d": dict(block="bottleneck", layers=(1, 1, 1, 1), num_classes=100,
                                image=64, stem_convs=3),
    "resnet50d": dict(block="bottleneck", layers=(3, 4, 6, 3), num_classes=1000, image=224,
                      stem_convs=3),
}

VITS = {
    "small": dict(image=32, patch=8, layers=2, heads=4, hidden=64, mlp=128, num_classes=100),
    "b16": dict(image=224, patch=16, layers=12, heads=12, hidden=768, mlp=3072, num_classes=1000),
}

ARCH_TABLES = {"resnet": RESNETS, "vit": VITS}


@dataclass(frozen=True)
class Spec:
    """One generated test case."""
    name: str
    family: str      # "resnet" | "vit"
    arch: str        # key into RESNETS / VITS
    form: str        # FORM_*
    opset: int
    dynamic: bool    # batch dimension symbolic ("batch") instead of fixed 1
    tier: str        # "small" | "full"
    builder: str     # key into BUILDERS
    key: str = ""    # weight key when it is not the name without its "_opN..." suffix

    @property
    def config(self) -> dict:
        return ARCH_TABLES[self.family][self.arch]

    @property
    def image(self) -> int:
        return self.config["image"]

    @property
    def weight_key(self) -> str:
        # Variants of one model that differ only in opset/batch form share their weights
        # (tv_small_resnet_op13_static and ..._op17_dynamic compute the same function).
        return self.key or self.name.rsplit("_op", 1)[0]

    @property
    def batches(self) -> list[int]:
        return [1, 3] if self.dynamic else [1]


def all_specs() -> list[Spec]:
    specs = []
    # Small torchvision exports: opset 13/17 x static/dynamic.
    for stem, family in (("small_resnet", "resnet"), ("small_vit", "vit")):
        for opset in (13, 17):
            for dynamic in (False, True):
                specs.append(Spec(f"tv_{stem}_op{opset}_{'dynamic' if dynamic else 'static'}",
                                  family, "small", FORM_TV, opset, dynamic, "small", "torchvision"))
    specs += [
        Spec("tv_small_resnext_op17_dynamic", "resnet", "small_resnext", FORM_TV, 17, True, "small",
             "torchvision"),
        Spec("zoo_small_resnet_op9", "resnet", "small", FORM_ZOO, 9, False, "small", "zoo_resnet"),
        Spec("zoo_small_resnet_op7", "resnet", "small", FORM_ZOO, 7, False, "small", "zoo_resnet"),
        Spec("hf_small_vit_op13", "vit", "small", FORM_HF, 13, True, "small", "hf_vit"),
        Spec("attn23_small_vit_op23", "vit", "small", FORM_ATTN, 23, True, "small", "attn23_vit"),
    ]
    # Full-size torchvision exports: opset 13 static and opset 17 dynamic.
    for tv_name, family, arch in (("resnet18", "resnet", "resnet18"),
                                  ("resnet50", "resnet", "resnet50"),
                                  ("vit_b_16", "vit", "b16")):
        specs.append(Spec(f"tv_{tv_name}_op13_static", family, arch, FORM_TV, 13, False, "full",
                          "torchvision"))
        specs.append(Spec(f"tv_{tv_name}_op17_dynamic", family, arch, FORM_TV, 17, True, "full",
                          "torchvision"))
    specs += [
        Spec("tv_resnext50_32x4d_op17_dynamic", "resnet", "resnext50_32x4d", FORM_TV, 17, True, "full",
             "torchvision"),
        Spec("zoo_resnet50_op9", "resnet", "resnet50", FORM_ZOO, 9, False, "full", "zoo_resnet"),
        Spec("zoo_resnet50_op7", "resnet", "resnet50", FORM_ZOO, 7, False, "full", "zoo_resnet"),
        Spec("hf_vit_op13", "vit", "b16", FORM_HF, 13, True, "full", "hf_vit"),
        Spec("attn23_vit_op23", "vit", "b16", FORM_ATTN, 23, True, "full", "attn23_vit"),
    ]
    return specs + dynamo_specs()


@dataclass(frozen=True)
class DynamoExport:
    """One model exported by export_dynamo.py."""
    name: str
    family: str
    arch: str        # key into RESNETS / VITS (image size, classes, expected structure)
    source: str      # "torchvision" | "timm" | "transformers"
    what: str        # the model as its library names it
    dynamic: bool
    tier: str
    key: str = ""    # weight key shared with another export (static vs dynamic batch)


DYNAMO_EXPORTS = [
    DynamoExport("dyn_tv_small_resnet18", "resnet", "dyn_small_basic", "torchvision",
                 "resnet18 (BasicBlock, planes 8-64, 1 block per stage)", True, "small"),
    DynamoExport("dyn_tv_small_resnet50", "resnet", "dyn_small_bottleneck", "torchvision",
                 "resnet50 (Bottleneck, planes 8-64, 1 block per stage)", True, "small"),
    DynamoExport("dyn_tv_small_vit", "vit", "small", "torchvision",
                 "vit_b_16 (2 layers, width 64)", True, "small"),
    DynamoExport("dyn_tv_small_vit_static", "vit", "small", "torchvision",
                 "vit_b_16 (2 layers, width 64)", False, "small", key="dyn_tv_small_vit"),
    DynamoExport("dyn_timm_small_deit_distilled", "vit", "small", "timm",
                 "deit_tiny_distilled_patch16_224 (2 layers, width 64)", True, "small"),
    DynamoExport("dyn_timm_small_vit_avgpool", "vit", "small", "timm",
                 "vit_tiny_patch16_224, global_pool=avg, class_token=False (2 layers, width 64)",
                 True, "small"),
    DynamoExport("dyn_timm_small_resnet50d", "resnet", "dyn_small_resnet50d", "timm",
                 "resnet50d (channels 8-64, 1 block per stage)", True, "small"),
    DynamoExport("dyn_hf_small_vit", "vit", "small", "transformers",
                 "ViTForImageClassification, SDPA attention (2 layers, width 64)", True, "small"),
    DynamoExport("dyn_tv_resnet18", "resnet", "resnet18", "torchvision", "resnet18", True, "full"),
    DynamoExport("dyn_tv_resnet50", "resnet", "resnet50", "torchvision", "resnet50", True, "full"),
    DynamoExport("dyn_tv_vit_b_16", "vit", "b16", "torchvision", "vit_b_16", True, "full"),
    DynamoExport("dyn_timm_deit_base_distilled", "vit", "b16", "timm",
                 "deit_base_distilled_patch16_224", True, "full"),
    DynamoExport("dyn_timm_vit_base_avgpool", "vit", "b16", "timm",
                 "vit_base_patch16_224, global_pool=avg, class_token=False", True, "full"),
    DynamoExport("dyn_timm_resnet50d", "resnet", "resnet50d", "timm", "resnet50d", True, "full"),
    DynamoExport("dyn_hf_vit_base", "vit", "b16", "transformers",
                 "ViTForImageClassification (ViT-Base config), SDPA attention", True, "full"),
]


def dynamo_specs() -> list[Spec]:
    return [Spec(e.name, e.family, e.arch, FORM_DYNAMO, DYNAMO_OPSET, e.dynamic, e.tier, "dynamo",
                 key=e.key) for e in DYNAMO_EXPORTS]


def select_specs(tier: str, only: str | None) -> list[Spec]:
    specs = all_specs()
    if only:
        names = [n for n in only.split(",") if n]
        known = {s.name: s for s in specs}
        unknown = [n for n in names if n not in known]
        if unknown:
            sys.exit(f"unknown model(s): {', '.join(unknown)} (see --list)")
        return [known[n] for n in names]
    return [s for s in specs if tier == "all" or s.tier == tier]


# ---------------------------------------------------------------------------------------------
# Determinism helpers
# ---------------------------------------------------------------------------------------------

def seed_of(*parts: str) -> int:
    """A stable 63-bit seed from strings (Python's hash() is salted per process)."""
    digest = hashlib.sha256("/".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def calibration_images(spec: Spec) -> np.ndarray:
    """Images used to calibrate BatchNorm statistics and the classifier (never test inputs)."""
    n = 16 if spec.tier == "small" else 8
    rng = np.random.default_rng(seed_of(spec.weight_key, "calibration"))
    return rng.standard_normal((n, 3, spec.image, spec.image), dtype=np.float32)


def test_inputs(spec: Spec) -> list[np.ndarray]:
    """The stored inputs: one standard-normal image batch per test_data_set."""
    rng = np.random.default_rng(seed_of(spec.name, "inputs"))
    return [rng.standard_normal((b, 3, spec.image, spec.image), dtype=np.float32)
            for b in spec.batches]


# ---------------------------------------------------------------------------------------------
# Weight recipe (shared by the torch exports and the numpy generators)
#
#   Conv feeding ReLU (ResNet)          N(0, 2/fan_in)            He / Kaiming, fan-in mode
#   patch-embedding Conv (ViT)          N(0, 1/fan_in), bias N(0, 0.02^2)
#   Linear before GELU                  N(0, 2/fan_in), bias N(0, 0.02^2)
#   other Linear (Q/K/V/out/fc2)        N(0, 1/fan_in), bias N(0, 0.02^2)
#   BatchNorm gamma / beta              U(0.8, 1.2) / N(0, 0.1^2); the BatchNorm closing a
#                                       residual branch has gamma x RESIDUAL_GAIN (see below)
#   BatchNorm running mean / var        measured on calibration images (batch statistics), so
#                                       every BN really normalizes; this gives var 0.3..1.5
#                                       (median 0.7) and |mean| median 0.4, 99th pct. ~2
#   LayerNorm gamma / beta              U(0.8, 1.2) / N(0, 0.05^2)
#   class token, position embedding     N(0, 0.02^2)
#   classifier                          N(0, 1/fan_in) / s, bias = -W m, where m and s are the
#                                       mean and RMS std of the pooled features over the
#                                       calibration images: logits are centred, ~unit spread.
#
# RESIDUAL_GAIN: with every BatchNorm really normalizing, a deep random ResNet amplifies small
# perturbations by ~1.15x per conv; on ResNet-50 fp32 rounding then reaches ~1e-4 of the logits
# (ORT with and without its optimizations disagreed by 1.2e-4 relative, fp32 vs fp64 in torch by
# 1.3e-4), too close to the C++ side's rtol 1e-4. Damping each residual branch to 1/4 (the
# trunk carries the signal, as with zero-init-residual, but the branches stay non-trivial) brings
# it to ~1e-5 without making the outputs less input-dependent.
#
# Without the classifier centring a random network's logits are dominated by an input-independent
# offset (post-ReLU features have a large common mean): with a plain N(0, 1/fan_in) classifier
# the ResNet-50 gives only 4 distinct top-1 classes over 32 inputs. torchvision's own defaults
# are unusable here: the ViT head is zero-initialized (all outputs 0) and the MLP biases have
# std 1e-6; those are all re-drawn by the recipe before export.
# ---------------------------------------------------------------------------------------------

BN_EPS = 1e-5
RESIDUAL_GAIN = 0.25


def centred_classifier(rng: np.random.Generator, feats: np.ndarray, num_classes: int,
                       notes: dict):
    """Weight [num_classes, d] and bias [num_classes] centred on calibration features [n, d].

    Rescaling would make even a collapsed network (features constant up to rounding) look
    informative, so the features' own spread across inputs, relative to their mean magnitude,
    is recorded in notes["feature_std_ratio"] (check_models.py applies its floor to it)."""
    d = feats.shape[1]
    spread = float(np.sqrt(feats.var(axis=0).mean()))
    notes["feature_std_ratio"] = spread / float(np.abs(feats).mean())
    w = rng.standard_normal((num_classes, d)) / math.sqrt(d) / (spread + 1e-6)
    b = -w @ feats.mean(axis=0)
    return w.astype(np.float32), b.astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Graph builder for the generators
# ---------------------------------------------------------------------------------------------

class GraphBuilder:
    """Collects nodes and initializers of one ONNX graph and names them readably."""

    def __init__(self):
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, np.ndarray] = {}
        self._scope: list[str] = []
        self._count: Counter = Counter()
        self._consts: dict[tuple, str] = {}

    @contextlib.contextmanager
    def scope(self, name: str):
        self._scope.append(name)
        try:
            yield
        finally:
            self._scope.pop()

    def _prefix(self) -> str:
        return "/".join(self._scope)

    def weight(self, name: str, array, dtype=np.float32) -> str:
        full = f"{self._prefix()}/{name}" if self._scope else name
        assert full not in self.inits, full
        self.inits[full] = np.asarray(array, dtype=dtype)
        return full

    def const(self, value, dtype) -> str:
        """A small shared constant initializer (shapes, axes, scalars); scalars stay 0-d."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self._consts:
            name = f"const_{len(self._consts)}"
            self.inits[name] = arr
            self._consts[key] = name
        return self._consts[key]

    def i64(self, value) -> str:
        return self.const(value, np.int64)

    def f32(self, value) -> str:
        return self.const(value, np.float32)

    def op(self, op_type: str, inputs: list[str], **attrs) -> str:
        """Appends a single-output node and returns its output name."""
        stem = f"{self._prefix()}/{op_type}" if self._scope else op_type
        self._count[stem] += 1
        name = f"{stem}_{self._count[stem]}"
        out = f"{name}_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out

    def rename_output(self, old: str, new: str):
        """Gives the producing node's output its public graph-output name."""
        for node in self.nodes:
            node.output[:] = [new if o == old else o for o in node.output]
            node.input[:] = [new if i == old else i for i in node.input]

    def model(self, inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
              opset: int, ir_version: int, graph_name: str,
              weights_as_inputs: bool = False) -> onnx.ModelProto:
        inits = [numpy_helper.from_array(a, n) for n, a in self.inits.items()]
        graph_inputs = list(inputs)
        if weights_as_inputs:  # IR version 3: every initializer is also listed as graph input
            graph_inputs += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                             for t in inits]
        graph = helper.make_graph(self.nodes, graph_name, graph_inputs, outputs, inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="gcomp-tests-make_models",
                                  producer_version=str(VERSION))
        model.ir_version = ir_version
        return model


def image_input(name: str, spec: Spec) -> onnx.ValueInfoProto:
    batch = "batch" if spec.dynamic else 1
    return helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                         [batch, 3, spec.image, spec.image])


def batch_output(name: str, spec: Spec, width: int) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                         ["batch" if spec.dynamic else 1, width])


def ort_session(model, opt_level=REFERENCE_OPT, threads: int = 1) -> ort.InferenceSession:
    """CPU session; `model` is a path or a ModelProto."""
    so = ort.SessionOptions()
    so.graph_optimization_level = opt_level
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3  # IR-3 models warn about initializers listed as inputs
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


# ---------------------------------------------------------------------------------------------
# Model-zoo ResNet v1 generator (Conv without bias + BatchNormalization + Relu ...)
# ---------------------------------------------------------------------------------------------

def np_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """NCHW convolution (group 1) for the calibration pass."""
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]
    y = np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3]))  # [n, ho, wo, cout]
    return np.ascontiguousarray(y.transpose(0, 3, 1, 2))


def np_maxpool(x: np.ndarray, k: int, stride: int, pad: int) -> np.ndarray:
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    return sliding_window_view(xp, (k, k), axis=(2, 3))[:, :, ::stride, ::stride].max(axis=(4, 5))


def build_zoo_resnet(spec: Spec) -> tuple[onnx.ModelProto, dict]:
    """ResNet v1 as in the ONNX model zoo (resnet50-v1-7 / caffe2 v1-9 style).

    v1 topology: the stride of a downsampling bottleneck sits on its first 1x1 conv (torchvision
    puts it on the 3x3; op counts are identical). Each conv is bias-free and followed by its own
    BatchNormalization. The graph is built and evaluated in numpy on calibration images at the
    same time, so every BatchNormalization gets the statistics its input really has.

    opset 7: IR version 3, BatchNormalization-7 (spatial=1) and all weights also listed as graph
    inputs, as IR 3 requires. opset 9: IR version 4, weights as plain initializers.
    """
    cfg, opset = spec.config, spec.opset
    assert cfg["block"] == "bottleneck"
    rng = np.random.default_rng(seed_of(spec.weight_key, "weights"))
    g = GraphBuilder()
    bn_attrs = dict(epsilon=BN_EPS, momentum=0.9)
    if opset < 9:
        bn_attrs["spatial"] = 1

    def conv_bn(tag, x, xv, cin, cout, k, stride, relu, gain=1.0):
        with g.scope(tag):
            return _conv_bn(x, xv, cin, cout, k, stride, relu, gain)

    def _conv_bn(x, xv, cin, cout, k, stride, relu, gain):
        w = (rng.standard_normal((cout, cin, k, k)) * math.sqrt(2.0 / (cin * k * k))).astype(
            np.float32)
        y = g.op("Conv", [x, g.weight("conv_w", w)], kernel_shape=[k, k], strides=[stride] * 2,
                 pads=[k // 2] * 4, dilations=[1, 1], group=1)
        yv = np_conv(xv, w, stride, k // 2)
        mean, var = yv.mean(axis=(0, 2, 3)), yv.var(axis=(0, 2, 3))
        gamma, beta = gain * rng.uniform(0.8, 1.2, cout), rng.normal(0.0, 0.1, cout)
        z = g.op("BatchNormalization",
                 [y, g.weight("bn_gamma", gamma), g.weight("bn_beta", beta),
                  g.weight("bn_mean", mean), g.weight("bn_var", var)], **bn_attrs)
        c = lambda a: np.asarray(a, np.float32)[None, :, None, None]  # noqa: E731
        zv = (yv - c(mean)) / np.sqrt(c(var) + BN_EPS) * c(gamma) + c(beta)
        if relu:
            z, zv = g.op("Relu", [z]), np.maximum(zv, 0)
        return z, zv

    x, xv = "data", calibration_images(spec)
    with g.scope("stem"):
        x, xv = conv_bn("conv", x, xv, 3, 64, 7, 2, relu=True)
        x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        xv = np_maxpool(xv, 3, 2, 1)
    cin = 64
    for stage, blocks in enumerate(cfg["layers"]):
        planes = 64 * 2 ** stage
        width, cout = planes * cfg["width_per_group"] // 64, planes * 4
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            with g.scope(f"stage{stage + 1}/unit{block + 1}"):
                a, av = conv_bn("conv1", x, xv, cin, width, 1, stride, relu=True)
                b, bv = conv_bn("conv2", a, av, width, width, 3, 1, relu=True)
                c, cv = conv_bn("conv3", b, bv, width, cout, 1, 1, relu=False,
                                 gain=RESIDUAL_GAIN)
                if stride != 1 or cin != cout:
                    s, sv = conv_bn("downsample", x, xv, cin, cout, 1, stride, relu=False)
                else:
                    s, sv = x, xv
                x = g.op("Relu", [g.op("Add", [c, s])])
                xv = np.maximum(cv + sv, 0)
            cin = cout
    with g.scope("head"):
        x = g.op("GlobalAveragePool", [x])
        x = g.op("Reshape", [x, g.i64([0, -1])])  # flatten, shape from a constant initializer
        feats = xv.mean(axis=(2, 3))
        notes = {}
        w, b = centred_classifier(rng, feats, cfg["num_classes"], notes)
        logits = g.op("Gemm", [x, g.weight("fc_w", w), g.weight("fc_b", b)], alpha=1.0,
                      beta=1.0, transA=0, transB=1)
    g.rename_output(logits, "output")
    ir_version = 3 if opset < 9 else 4
    model = g.model([image_input("data", spec)], [batch_output("output", spec,
                                                               cfg["num_classes"])],
                    opset, ir_version, spec.name, weights_as_inputs=ir_version < 4)
    notes.update(stride_placement="v1: stride on the first 1x1 conv of a downsampling block",
                 weights_as_graph_inputs=ir_version < 4)
    return model, notes


# ---------------------------------------------------------------------------------------------
# ViT generators: HuggingFace-style (opset 13) and opset-23 Attention op
# ---------------------------------------------------------------------------------------------

def build_generated_vit(spec: Spec, style: str) -> tuple[onnx.ModelProto, dict]:
    """ViT classifier, dynamic batch, in one of two styles.

    style "hf" (opset 13), the form transformers' ONNX export of ViTForImageClassification has:
      decomposed LayerNorm (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul, Add),
      separate Q/K/V MatMul+Add, heads split by Shape->Gather->Unsqueeze->Concat->Reshape chains,
      Transpose, MatMul, Div by sqrt(head_dim), Softmax, MatMul, erf GELU
      (Div sqrt2, Erf, Add 1, Mul, Mul 0.5), eps 1e-12 as in HF's ViTConfig.
    style "attn23" (opset 23): LayerNormalization op, one Attention node per layer on 3D
      Q/K/V [batch, seq, hidden] with q_num_heads = kv_num_heads = heads and the default scale
      1/sqrt(head_dim), Gelu op (approximate="none").
    """
    cfg = spec.config
    d, heads, mlp, p = cfg["hidden"], cfg["heads"], cfg["mlp"], cfg["patch"]
    hd = d // heads
    n_patches = (spec.image // p) ** 2
    rng = np.random.default_rng(seed_of(spec.weight_key, "weights"))
    g = GraphBuilder()
    hf = style == "hf"
    eps = 1e-12 if hf else 1e-6

    def normal(shape, std):
        return rng.standard_normal(shape) * std

    def linear(x, fan_in, fan_out, gain):
        w = g.weight("weight", normal((fan_in, fan_out), math.sqrt(gain / fan_in)))
        b = g.weight("bias", normal((fan_out,), 0.02))
        return g.op("Add", [g.op("MatMul", [x, w]), b])

    def layer_norm(x):
        gamma = g.weight("gamma", rng.uniform(0.8, 1.2, d))
        beta = g.weight("beta", normal((d,), 0.05))
        if not hf:
            return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)
        mean = g.op("ReduceMean", [x], axes=[-1], keepdims=1)
        centred = g.op("Sub", [x, mean])
        var = g.op("ReduceMean", [g.op("Pow", [centred, g.f32(2.0)])], axes=[-1], keepdims=1)
        std = g.op("Sqrt", [g.op("Add", [var, g.f32(eps)])])
        return g.op("Add", [g.op("Mul", [g.op("Div", [centred, std]), gamma]), beta])

    def gelu(x):
        if not hf:
            return g.op("Gelu", [x], approximate="none")
        erf = g.op("Erf", [g.op("Div", [x, g.f32(math.sqrt(2.0))])])
        return g.op("Mul", [g.op("Mul", [x, g.op("Add", [erf, g.f32(1.0)])]), g.f32(0.5)])

    def dim(shape, i):  # Shape -> Gather(i) -> Unsqueeze: the 1-element dim i of a runtime shape
        return g.op("Unsqueeze", [g.op("Gather", [shape, g.i64(i)], axis=0), g.i64([0])])

    def split_heads(x, perm):  # [B, S, D] -> Reshape [B, S, H, hd] -> Transpose(perm)
        shape = g.op("Shape", [x])
        new_shape = g.op("Concat", [dim(shape, 0), dim(shape, 1), g.i64([heads]), g.i64([hd])],
                         axis=0)
        return g.op("Transpose", [g.op("Reshape", [x, new_shape])], perm=perm)

    def attention(x):
        with g.scope("query"):
            q = linear(x, d, d, 1.0)
        with g.scope("key"):
            k = linear(x, d, d, 1.0)
        with g.scope("value"):
            v = linear(x, d, d, 1.0)
        if not hf:
            return g.op("Attention", [q, k, v], q_num_heads=heads, kv_num_heads=heads)
        q = split_heads(q, [0, 2, 1, 3])        # [B, H, S, hd]
        k = split_heads(k, [0, 2, 3, 1])        # [B, H, hd, S]
        v = split_heads(v, [0, 2, 1, 3])        # [B, H, S, hd]
        scores = g.op("Div", [g.op("MatMul", [q, k]), g.f32(math.sqrt(hd))])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Transpose", [ctx], perm=[0, 2, 1, 3])  # [B, S, H, hd]
        shape = g.op("Shape", [ctx])
        merged = g.op("Concat", [dim(shape, 0), dim(shape, 1), g.i64([d])], axis=0)
        return g.op("Reshape", [ctx, merged])

    # Embeddings: patch Conv, flatten + transpose, class token, position embedding.
    x = "pixel_values"
    with g.scope("embeddings"):
        w = g.weight("patch_w", normal((d, 3, p, p), math.sqrt(1.0 / (3 * p * p))))
        b = g.weight("patch_b", normal((d,), 0.02))
        patches = g.op("Conv", [x, w, b], kernel_shape=[p, p], strides=[p, p])
        batch = dim(g.op("Shape", [x]), 0)
        if hf:   # flatten(2) with the batch taken from the runtime shape
            flat_shape = g.op("Concat", [batch, g.i64([d]), g.i64([-1])], axis=0)
        else:    # 0 in a Reshape shape copies the batch dimension
            flat_shape = g.i64([0, d, -1])
        tokens = g.op("Transpose", [g.op("Reshape", [patches, flat_shape])], perm=[0, 2, 1])
        cls = g.weight("cls_token", normal((1, 1, d), 0.02))
        cls = g.op("Expand", [cls, g.op("Concat", [batch, g.i64([1, 1])], axis=0)])
        h = g.op("Concat", [cls, tokens], axis=1)
        h = g.op("Add", [h, g.weight("position", normal((1, n_patches + 1, d), 0.02))])

    for layer in range(cfg["layers"]):
        with g.scope(f"encoder/layer.{layer}"):
            with g.scope("ln_before"):
                a = layer_norm(h)
            with g.scope("attention"):
                a = attention(a)
                with g.scope("output"):
                    a = linear(a, d, d, 1.0)
            h = g.op("Add", [a, h])
            with g.scope("ln_after"):
                m = layer_norm(h)
            with g.scope("intermediate"):
                m = gelu(linear(m, d, mlp, 2.0))
            with g.scope("output"):
                m = linear(m, mlp, d, 1.0)
            h = g.op("Add", [m, h])

    with g.scope("final"):
        h = layer_norm(h)
        feats = g.op("Gather", [h, g.i64(0)], axis=1)  # class token [B, D]

    # Calibrate the classifier on the features this graph produces for the calibration images.
    opset, ir_version = (13, 7) if hf else (23, 11)
    body = g.model([image_input("pixel_values", spec)], [batch_output(feats, spec, d)],
                   opset, ir_version, spec.name)
    calib = ort_session(body, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(
        None, {"pixel_values": calibration_images(spec)})[0]
    del body
    notes = {}
    with g.scope("classifier"):
        w, b = centred_classifier(rng, calib, cfg["num_classes"], notes)
        logits = g.op("Add", [g.op("MatMul", [feats, g.weight("weight", w.T)]),
                              g.weight("bias", b)])
    g.rename_output(logits, "logits")
    model = g.model([image_input("pixel_values", spec)],
                    [batch_output("logits", spec, cfg["num_classes"])],
                    opset, ir_version, spec.name)
    if not hf:
        notes["attention_form"] = ("Attention-23 on 3D Q/K/V [batch, seq, hidden], "
                                   f"q_num_heads=kv_num_heads={heads}, default scale, no mask")
    return model, notes


def build_hf_vit(spec):
    return build_generated_vit(spec, "hf")


def build_attn23_vit(spec):
    return build_generated_vit(spec, "attn23")


# ---------------------------------------------------------------------------------------------
# torchvision exports
# ---------------------------------------------------------------------------------------------

def build_torchvision(spec: Spec) -> tuple[onnx.ModelProto, dict]:
    """Exports a torchvision ResNet / VisionTransformer with torch.onnx.export (eval mode,
    constant folding, so BatchNorm is folded into the Conv weights). The classifier is set
    after export by centre_exported_classifier."""
    import torch
    import torchvision
    from torch import nn
    from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet
    from torchvision.models.vision_transformer import VisionTransformer

    torch.set_num_threads(1)
    torch.manual_seed(seed_of(spec.weight_key, "weights"))
    cfg = spec.config
    if spec.family == "resnet":
        block = Bottleneck if cfg["block"] == "bottleneck" else BasicBlock
        model = ResNet(block, list(cfg["layers"]), num_classes=cfg["num_classes"],
                       width_per_group=cfg["width_per_group"], groups=cfg.get("groups", 1))
    else:
        model = VisionTransformer(image_size=cfg["image"], patch_size=cfg["patch"],
                                  num_layers=cfg["layers"], num_heads=cfg["heads"],
                                  hidden_dim=cfg["hidden"], mlp_dim=cfg["mlp"],
                                  num_classes=cfg["num_classes"])

    with torch.no_grad():
        # Re-initialize by the weight recipe (see the top of this file).
        before_gelu = set()
        for module in model.modules():
            kids = list(module.children())
            before_gelu.update(id(a) for a, b in zip(kids, kids[1:])
                               if isinstance(a, nn.Linear) and isinstance(b, nn.GELU))
        reinit_modules(model, spec.family, before_gelu)
        if spec.family == "vit":
            model.class_token.normal_(0.0, 0.02)
            model.encoder.pos_embedding.normal_(0.0, 0.02)

        for m in model.modules():  # damp the BatchNorm closing each residual branch
            if isinstance(m, (Bottleneck, BasicBlock)):
                (m.bn3 if isinstance(m, Bottleneck) else m.bn2).weight.mul_(RESIDUAL_GAIN)

        # BatchNorm statistics: one train-mode pass over the calibration images.
        if spec.family == "resnet":
            model.train()
            model(torch.from_numpy(calibration_images(spec)))
        model.eval()

    buf = io.BytesIO()
    dynamic_axes = {"input": {0: "batch"}, "output": {0: "batch"}} if spec.dynamic else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.zeros(1, 3, spec.image, spec.image), buf,
                          opset_version=spec.opset, input_names=["input"],
                          output_names=["output"], dynamic_axes=dynamic_axes,
                          do_constant_folding=True)
    exported = onnx.load_from_string(buf.getvalue())
    notes = {"torch": torch.__version__, "torchvision": torchvision.__version__}
    centre_exported_classifier(exported, spec, notes)
    return exported, notes


def reinit_modules(model, family: str, gelu_in: set, skip: frozenset = frozenset()):
    """Re-draws the weights of `model`'s Conv2d, BatchNorm2d, LayerNorm, MultiheadAttention and
    Linear modules by the weight recipe (module order; under torch.no_grad, seeded by the caller).
    `gelu_in`: ids of Linear layers feeding a GELU (He gain 2); `skip`: ids of modules left alone."""
    from torch import nn
    for m in model.modules():
        if id(m) in skip:
            continue
        if isinstance(m, nn.Conv2d):
            fan_in = m.in_channels * m.kernel_size[0] * m.kernel_size[1] // m.groups
            gain = 2.0 if family == "resnet" else 1.0
            m.weight.normal_(0.0, math.sqrt(gain / fan_in))
            if m.bias is not None:
                m.bias.normal_(0.0, 0.02)
        elif isinstance(m, nn.BatchNorm2d):
            m.weight.uniform_(0.8, 1.2)
            m.bias.normal_(0.0, 0.1)
            m.reset_running_stats()
            m.momentum = None  # cumulative average: one batch -> exactly its statistics
        elif isinstance(m, nn.LayerNorm):
            m.weight.uniform_(0.8, 1.2)
            m.bias.normal_(0.0, 0.05)
        elif isinstance(m, nn.MultiheadAttention):
            m.in_proj_weight.normal_(0.0, math.sqrt(1.0 / m.embed_dim))
            m.in_proj_bias.normal_(0.0, 0.02)
        elif isinstance(m, nn.Linear):
            gain = 2.0 if id(m) in gelu_in else 1.0
            m.weight.normal_(0.0, math.sqrt(gain / m.in_features))
            if m.bias is not None:
                m.bias.normal_(0.0, 0.02)


def centre_exported_classifier(model: onnx.ModelProto, spec: Spec, notes: dict):
    """Sets the exported classifier Gemm's weight/bias initializers by the recipe, from the
    features ORT computes for the calibration images. (Done after export because Debian's torch
    has a generic BLAS: a ViT-B calibration pass in torch takes minutes, in ORT seconds.)"""
    gemm = model.graph.node[-1]
    trans_b = next((a.i for a in gemm.attribute if a.name == "transB"), 0)
    inits = {t.name: t for t in model.graph.initializer}
    assert gemm.op_type == "Gemm" and trans_b == 1 and gemm.input[1] in inits \
        and gemm.input[2] in inits and gemm.output[0] == model.graph.output[0].name, \
        f"{spec.name}: unexpected classifier form {gemm}"
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    probe.graph.output.append(helper.make_empty_tensor_value_info(gemm.input[0]))
    session = ort_session(probe, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    calib = calibration_images(spec)
    step = len(calib) if spec.dynamic else 1
    feats = np.concatenate([session.run([gemm.input[0]], {"input": calib[i:i + step]})[0]
                            for i in range(0, len(calib), step)])
    w, b = centred_classifier(np.random.default_rng(seed_of(spec.weight_key, "head")), feats,
                              spec.config["num_classes"], notes)
    for name, value in ((gemm.input[1], w), (gemm.input[2], b)):
        assert list(inits[name].dims) == list(value.shape), (name, value.shape)
        inits[name].CopyFrom(numpy_helper.from_array(value, name))


# ---------------------------------------------------------------------------------------------
# dynamo exports (written by export_dynamo.py; here only read)
# ---------------------------------------------------------------------------------------------

# Folders holding NAME.onnx and manifest.json from export_dynamo.py: the committed small tier,
# then what --dynamo-dir adds (the full tier's exports in the build folder).
dynamo_dirs: list[Path] = [DYNAMO_DIR]


class ExportMissing(Exception):
    """A dynamo export that is not committed and was not exported on this machine."""


def build_dynamo(spec: Spec) -> tuple[onnx.ModelProto, dict]:
    for folder in dynamo_dirs:
        path = folder / f"{spec.name}.onnx"
        if path.is_file():
            break
    else:
        raise ExportMissing(
            f"{spec.name}: no {spec.name}.onnx in {', '.join(map(str, dynamo_dirs))} (the full "
            f"tier's dynamo exports need export_dynamo.py's environment, tests/models/README.md)")
    model = onnx.load(str(path))
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    assert opset == spec.opset, f"{path}: opset {opset}, expected {spec.opset}"
    manifest = json.loads((path.parent / "manifest.json").read_text())
    entry = manifest["models"][spec.name]
    notes = dict(entry["notes"])
    notes.update(manifest["versions"])
    notes["exported_as"] = f"{entry['source']}: {entry['what']}"
    return model, notes


BUILDERS = {
    "dynamo": build_dynamo,
    "torchvision": build_torchvision,
    "zoo_resnet": build_zoo_resnet,
    "hf_vit": build_hf_vit,
    "attn23_vit": build_attn23_vit,
}


# ---------------------------------------------------------------------------------------------
# Model statistics: op histogram, parameters, FLOPs
# ---------------------------------------------------------------------------------------------

def op_histogram(model: onnx.ModelProto) -> dict[str, int]:
    hist = Counter(n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
                   for n in model.graph.node)
    return dict(sorted(hist.items()))


def param_count(model: onnx.ModelProto) -> int:
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer)


class ValueProbe:
    """An op-by-op (ORT_DISABLE_ALL) session that returns the feeds and every node output."""

    def __init__(self, model: onnx.ModelProto, threads: int = 1):
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        g = probe.graph
        known = {v.name for v in list(g.input) + list(g.output)}
        known |= {t.name for t in g.initializer}
        extra = dict.fromkeys(o for n in g.node for o in n.output if o and o not in known)
        g.output.extend(helper.make_empty_tensor_value_info(name) for name in extra)
        self.names = [o.name for o in g.output]
        self.session = ort_session(probe, threads=threads)

    def __call__(self, feeds: dict) -> dict[str, np.ndarray]:
        values = dict(feeds)
        values.update(zip(self.names, self.session.run(self.names, feeds)))
        return values


def gflops(model: onnx.ModelProto, values: dict[str, np.ndarray]) -> float:
    """Multiply-add FLOPs (2 per MAC) of Conv/MatMul/Gemm/Attention, from the value shapes of a
    batch-1 run (ValueProbe), so that runtime-computed reshapes are counted correctly."""
    dims = {t.name: list(t.dims) for t in model.graph.initializer}
    dims.update((k, list(v.shape)) for k, v in values.items())
    total = 0
    for n in model.graph.node:
        if n.op_type not in ("Conv", "MatMul", "Gemm", "Attention"):
            continue
        out, a, b = dims[n.output[0]], dims[n.input[0]], dims[n.input[1]]
        if n.op_type == "Conv":      # out [N, M, ...], weight [M, C/group, k...]
            total += 2 * math.prod(out) * math.prod(b[1:])
        elif n.op_type == "Gemm":
            trans_a = next((at.i for at in n.attribute if at.name == "transA"), 0)
            total += 2 * math.prod(out) * (a[0] if trans_a else a[1])
        elif n.op_type == "MatMul":
            total += 2 * math.prod(out) * a[-1]
        else:                        # Attention on 3D Q [B, S, D], K [B, Skv, D]: QK^T and PV
            total += 2 * 2 * math.prod(a) * b[-2]
    return total / 1e9


# ---------------------------------------------------------------------------------------------
# Writing a test case
# ---------------------------------------------------------------------------------------------

def graph_io(model: onnx.ModelProto) -> tuple[str, str]:
    """(image input name, output name); initializers listed as inputs (IR 3) are skipped."""
    inits = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    assert len(inputs) == 1 and len(model.graph.output) == 1, (inputs, model.graph.output)
    return inputs[0], model.graph.output[0].name


def is_complete(folder: Path) -> bool:
    try:
        meta = json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return False
    return meta.get("generator_version") == VERSION and meta.get("generator_hash") == SOURCE_HASH and all(
        (folder / f).is_file() for f in meta.get("files", []))


def max_rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


def write_case(spec: Spec, model: onnx.ModelProto, notes: dict, out: Path) -> dict:
    """Writes DIR/NAME atomically (into a temporary folder, then renamed)."""
    final, tmp = out / spec.name, out / f".{spec.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(tmp / "model.onnx"))

    in_name, out_name = graph_io(model)
    ref = ort_session(tmp / "model.onnx")
    opt = ort_session(tmp / "model.onnx", ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    files, opt_diff = ["model.onnx"], 0.0
    for k, x in enumerate(test_inputs(spec)):
        y = ref.run([out_name], {in_name: x})[0]
        assert y.dtype == np.float32 and np.isfinite(y).all(), spec.name
        opt_diff = max(opt_diff, max_rel_diff(opt.run([out_name], {in_name: x})[0], y))
        case = tmp / f"test_data_set_{k}"
        case.mkdir()
        for fname, name, arr in (("input_0.pb", in_name, x), ("output_0.pb", out_name, y)):
            (case / fname).write_bytes(numpy_helper.from_array(arr, name).SerializeToString())
            files.append(f"{case.name}/{fname}")

    out_shape = [d.dim_param or d.dim_value
                 for d in model.graph.output[0].type.tensor_type.shape.dim]
    values = ValueProbe(model)({in_name: test_inputs(spec)[0]})
    flops = gflops(model, values)
    max_abs = max(float(np.abs(v).max()) for v in values.values()
                  if v.dtype == np.float32 and v.size)
    del values
    meta = {
        "name": spec.name,
        "family": spec.family,
        "arch": spec.arch,
        "form": spec.form,
        "opset": spec.opset,
        "ir_version": model.ir_version,
        "batch": "dynamic" if spec.dynamic else "static",
        "tier": spec.tier,
        "input": {"name": in_name, "shape": ["batch" if spec.dynamic else 1, 3, spec.image,
                                             spec.image], "dtype": "float32"},
        "output": {"name": out_name, "shape": out_shape, "dtype": "float32"},
        "test_sets": [{"batch": b} for b in spec.batches],
        "params": param_count(model),
        "gflops_per_image": float(f"{flops:.4g}"),
        "max_abs_value_set0": max_abs,   # over every float tensor of the graph (fp16 range)
        "op_histogram": op_histogram(model),
        "reference": f"onnxruntime {ort.__version__} CPUExecutionProvider, fp32, "
                     "ORT_DISABLE_ALL",
        "ort_enable_all_max_rel_diff": opt_diff,
        "notes": notes,
        "files": files,
        "generator_version": VERSION,
        "generator_hash": SOURCE_HASH,
    }
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="output folder (one sub-folder per model)")
    ap.add_argument("--tier", choices=("small", "full", "all"), default="small")
    ap.add_argument("--only", help="comma-separated model names (any tier)")
    ap.add_argument("--list", action="store_true", help="list the selected models and exit")
    ap.add_argument("--force", action="store_true", help="regenerate complete folders too")
    ap.add_argument("--dynamo-dir", type=Path, action="append", default=[],
                    help="another folder of export_dynamo.py output (the full tier's exports)")
    args = ap.parse_args(argv)
    specs = select_specs(args.tier, args.only)
    dynamo_dirs.extend(args.dynamo_dir)

    if args.list:
        for s in specs:
            print(f"{s.name:28} {s.tier:5} {s.form:24} opset {s.opset:2} "
                  f"{'dynamic' if s.dynamic else 'static':7} 3x{s.image}x{s.image}")
        return 0
    if args.out is None:
        ap.error("--out is required")
    args.out.mkdir(parents=True, exist_ok=True)

    t_all = time.time()
    for spec in specs:
        folder = args.out / spec.name
        if not args.force and is_complete(folder):
            print(f"{spec.name:28} up to date")
            continue
        t0 = time.time()
        try:
            model, notes = BUILDERS[spec.builder](spec)
        except ExportMissing as e:
            if spec.tier == "small":
                raise
            print(f"{spec.name:28} skipped: {e}")
            continue
        meta = write_case(spec, model, notes, args.out)
        print(f"{spec.name:28} {time.time() - t0:6.1f} s  {meta['params'] / 1e6:7.2f} M params  "
              f"{meta['gflops_per_image']:7.3f} GFLOP  "
              f"opt-vs-ref {meta['ort_enable_all_max_rel_diff']:.1e}", flush=True)
    print(f"done in {time.time() - t_all:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
