// Running a batch in parts: a cpu plan whose every step computes each image from that image alone
// runs a large batch as several runs of a smaller one, one after the other, on slices of the
// caller's inputs and outputs. The arena of a part can then stay in the last-level cache between
// steps, where the whole batch's would stream through memory (ResNet-50 fp32 at batch 8: 41.7 MB
// of activations against a 32 MB L3; two runs of 4 took 117-121 ms against 128 ms for one of 8).
#pragma once

#include <cstdint>
#include <string>

#include "plan/plan.h"

namespace gcomp::cpu {

// Why the plan cannot run a batch in parts (the first step or buffer that mixes images, or whose op
// is not known to keep them apart), or "" when it can: every step's op is one whose output for
// image i reads only image i of its inputs (checked with its parameters and constant operands), and
// every buffer a step reads or writes that is not a constant holds its images one after another
// (the batch is a multiple of the outermost dim only), as do the plan's inputs and outputs.
std::string BatchPartsBlocker(const plan::Plan& plan);

// The size of the parts a run of `batch` is split into (`batch` itself: not split): `batch` halved
// (rounded up) until the part's arena (`arena_per_item` bytes per image) fits in half of
// `cache_bytes`; `batch` when cache_bytes <= 0 (unknown). `max_part` > 0 caps the part. Half:
// the weights of the layers stream through the same cache, and a VM shares it with other
// tenants (ResNet-50 bf16 at batch 8, 19.9 MB of arena against a 32 MB L3, ran 6% faster as
// two parts of 4); halving: uneven parts lose more to their smaller GEMMs than the cache gives
// (fp32 at batch 8: parts of 3 + 3 + 2 ran slower than parts of 4 or of 2).
int64_t BatchPart(int64_t batch, int64_t arena_per_item, int64_t cache_bytes, int64_t max_part);

// The size in bytes of the last-level cache that cpu 0 shares with the others (Linux sysfs), or 0
// when it cannot be read.
int64_t LastLevelCacheBytes();

}  // namespace gcomp::cpu
