#include "codegen/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace gcomp::codegen {

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

  // Largest first (ties: earlier first, then index, so the result is deterministic).
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ranges[a].bytes != ranges[b].bytes) return ranges[a].bytes > ranges[b].bytes;
    return ranges[a].first < ranges[b].first;
  });
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
      busy.push_back({plan.offsets[j], plan.offsets[j] + o.bytes});
    }
    std::sort(busy.begin(), busy.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    // Best fit: the smallest gap that holds r; else after the last busy interval.
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const Interval& b : busy) {
      if (b.begin > cursor) {
        int64_t gap = b.begin - cursor;
        if (gap >= r.bytes && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, b.end);
    }
    if (best < 0) best = cursor;
    plan.offsets[i] = best;
    plan.arena_bytes = std::max(plan.arena_bytes, best + r.bytes);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace gcomp::codegen
