#include "codegen/memory_planner.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace gcomp::codegen {
namespace {

// Offsets for `ranges` placed in `order`: each at the smallest gap that holds it between the values
// already placed whose lifetimes intersect its own, else after the last of them.
std::vector<int64_t> Place(const std::vector<LiveRange>& ranges, const std::vector<size_t>& order) {
  std::vector<int64_t> offsets(ranges.size(), 0);
  std::vector<size_t> placed;
  struct Interval {
    int64_t begin, end;
  };
  std::vector<Interval> busy;
  for (size_t i : order) {
    const LiveRange& r = ranges[i];
    busy.clear();
    for (size_t j : placed) {
      const LiveRange& o = ranges[j];
      if (o.last < r.first || r.last < o.first || o.bytes == 0) continue;
      busy.push_back({offsets[j], offsets[j] + o.bytes});
    }
    std::sort(busy.begin(), busy.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const Interval& b : busy) {
      if (b.begin > cursor) {
        const int64_t gap = b.begin - cursor;
        if (gap >= r.bytes && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, b.end);
    }
    offsets[i] = best < 0 ? cursor : best;
    placed.push_back(i);
  }
  return offsets;
}

}  // namespace

MemoryPlan PlanMemory(std::vector<LiveRange> ranges, int64_t alignment) {
  for (LiveRange& r : ranges) r.bytes = (r.bytes + alignment - 1) / alignment * alignment;
  MemoryPlan plan;
  plan.offsets.assign(ranges.size(), 0);
  if (ranges.empty()) return plan;

  // Lower bound: the largest sum of sizes live at one step (sweep over step boundaries).
  int last_step = 0;
  for (const LiveRange& r : ranges) last_step = std::max(last_step, r.last);
  std::vector<int64_t> delta(static_cast<size_t>(last_step) + 2, 0);
  for (const LiveRange& r : ranges) {
    delta[r.first] += r.bytes;
    delta[r.last + 1] -= r.bytes;
  }
  int64_t live = 0;
  for (int64_t d : delta) {
    live += d;
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, live);
  }

  // Greedy best-fit placement in several orders; the smallest arena wins (ties: the first order).
  // Largest first is the usual winner; on chains of small values with long-lived shortcuts (ResNet
  // downsample branches) placing by size x lifetime or by start leaves fewer holes.
  auto by = [&](auto key) {
    std::vector<size_t> order(ranges.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const auto ka = key(ranges[a]), kb = key(ranges[b]);
      if (ka != kb) return ka > kb;
      return ranges[a].first < ranges[b].first;
    });
    return order;
  };
  const std::vector<std::vector<size_t>> orders = {
      by([](const LiveRange& r) { return r.bytes; }),
      by([](const LiveRange& r) { return r.bytes * (r.last - r.first + 1); }),
      by([](const LiveRange& r) { return static_cast<int64_t>(r.last - r.first); }),
      by([](const LiveRange& r) { return -static_cast<int64_t>(r.first); }),
  };
  bool first_order = true;
  for (const std::vector<size_t>& order : orders) {
    std::vector<int64_t> offsets = Place(ranges, order);
    int64_t arena = 0;
    for (size_t i = 0; i < ranges.size(); ++i) arena = std::max(arena, offsets[i] + ranges[i].bytes);
    if (first_order || arena < plan.arena_bytes) {
      plan.offsets = std::move(offsets);
      plan.arena_bytes = arena;
      first_order = false;
    }
  }
  return plan;
}

}  // namespace gcomp::codegen
