#!/bin/sh
# cuda plans of the small dynamic-batch ResNet fixture for the session tests: GCOMP, MODELS, OUT.
set -eu
mkdir -p "$OUT"
for m in tv_small_resnet_op17_dynamic; do
  for p in fp32 fp16 bf16; do
    "$GCOMP" compile "$MODELS/$m/model.onnx" --target cuda --precision "$p" --level O3 --batch 8 \
      -o "$OUT/${m}_$p.gplan" > /dev/null
  done
done
