// Liveness-based placement of values in one arena.
//
// Each value has a size and a lifetime [first, last] in step indices (produced at `first`, last read
// at `last`, both inclusive). Values whose lifetimes intersect must not overlap in memory. The
// planner places values greedily, each in the smallest gap that fits between the values already
// placed whose lifetimes intersect its own (best fit), in four orders (largest first, largest
// size x lifetime, longest lifetime, earliest start) and keeps the smallest arena; it reports the
// lower bound no placement can beat: the largest sum of sizes live at one step.
#pragma once

#include <cstdint>
#include <vector>

namespace gcomp::codegen {

struct LiveRange {
  int64_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per range, multiples of the alignment
  int64_t arena_bytes = 0;
  int64_t peak_live_bytes = 0;   // lower bound on arena_bytes
};

// `alignment` (a power of two: the memory space's, 64 B host, 256 B device): every size is rounded
// up to it, so every offset is a multiple of it.
MemoryPlan PlanMemory(std::vector<LiveRange> ranges, int64_t alignment);

}  // namespace gcomp::codegen
