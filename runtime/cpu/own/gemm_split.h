// How the own AMX GEMM (gemm.cc) splits Y's blocks between the threads and orders each thread's
// share. Y is cut into row blocks x panels of columns, each block
// computed over the whole K. The threads split the panels when A has fewer row blocks than B has
// panels (few rows: each thread streams its share of the weights once), else the row blocks.
// Each thread then walks its share so that one operand's part stays in L2 (kGemmL2Bytes) while
// the other streams past it: with A the smaller, chunks of its row blocks in L2 and the thread's
// panels streamed once per chunk; with B the smaller, groups of panels in L2 and the thread's row
// blocks streamed once per group.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gcomp::cpu::own {

inline constexpr int64_t kGemmL2Bytes = int64_t{1} << 20;

class GemmSplit {
 public:
  GemmSplit() = default;
  // `block_bytes`: the bytes of A in one row block, about those of B in one panel.
  GemmSplit(int64_t row_blocks, int64_t panels, int64_t block_bytes)
      : row_blocks_(row_blocks),
        panels_(panels),
        per_l2_(std::max<int64_t>(1, kGemmL2Bytes / std::max<int64_t>(1, block_bytes))),
        split_panels_(row_blocks < panels) {}

  // The threads worth starting, at most `threads`.
  int Threads(int threads) const {
    return static_cast<int>(std::min<int64_t>(threads, split_panels_ ? panels_ : row_blocks_));
  }

  // run(row_block0, row_block1, panel) over thread t's share of nt, in its order.
  template <typename Run>
  void ForShare(int64_t t, int64_t nt, Run run) const {
    if (split_panels_) {
      const int64_t p0 = panels_ * t / nt, p1 = panels_ * (t + 1) / nt;
      for (int64_t rb0 = 0; rb0 < row_blocks_; rb0 += per_l2_) {
        for (int64_t panel = p0; panel < p1; ++panel) run(rb0, std::min(row_blocks_, rb0 + per_l2_), panel);
      }
      return;
    }
    const int64_t r0 = row_blocks_ * t / nt, r1 = row_blocks_ * (t + 1) / nt;
    for (int64_t q0 = 0; q0 < panels_; q0 += per_l2_) {
      for (int64_t rb = r0; rb < r1; ++rb) {
        for (int64_t panel = q0; panel < std::min(panels_, q0 + per_l2_); ++panel) run(rb, rb + 1, panel);
      }
    }
  }

 private:
  int64_t row_blocks_ = 0, panels_ = 0, per_l2_ = 1;
  bool split_panels_ = false;
};

}  // namespace gcomp::cpu::own
