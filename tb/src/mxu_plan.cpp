// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/mxu_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tpu::tb {

std::string ArrayConfig::Name() const {
  return fmt::format("{}x{} P={} depth={}", rows, cols, pipe, acc_depth);
}

size_t Plan::NumOps() const {
  size_t n = 0;
  for (const Block& b : blocks) n += b.ops.size();
  return n;
}

Plan PlanGemm(const gemm::Shape& s, const ArrayConfig& a, Init init) {
  if (s.m < 1 || s.k < 1 || s.n < 1) {
    throw std::invalid_argument(
        fmt::format("plan: GEMM dimensions must be at least 1, got M={} K={} N={}", s.m, s.k, s.n));
  }
  if (a.rows < 1 || a.cols < 1 || a.pipe < 1 || a.acc_depth < 2) {
    throw std::invalid_argument(fmt::format("plan: bad array configuration {}", a.Name()));
  }
  Plan p{s, a, init, {}};
  const int half = a.acc_depth / 2;
  const int k_tiles = (s.k + a.rows - 1) / a.rows;
  const int n_tiles = (s.n + a.cols - 1) / a.cols;
  // A bias takes one row per N-tile of the block after the block's rows.
  const bool bias = init == Init::kBias;
  if (bias && half < 2) {
    throw std::invalid_argument(
        fmt::format("plan: a bias row per N-tile needs AccDepth >= 4, got {}", a.Name()));
  }
  const int nt_per_block = std::min(n_tiles, bias ? half / 2 : half);
  const int m_per_block =
      std::min(s.m, std::max(1, (bias ? half - nt_per_block : half) / nt_per_block));
  int index = 0;
  int last_kt = -1, last_nt = -1;
  for (int n_first = 0; n_first < n_tiles; n_first += nt_per_block) {
    const int nt_end = std::min(n_tiles, n_first + nt_per_block);
    for (int m0 = 0; m0 < s.m; m0 += m_per_block, ++index) {
      Block b;
      b.m0 = m0;
      b.rows = std::min(m_per_block, s.m - m0);
      b.n0 = n_first * a.cols;
      b.cols = std::min(s.n, nt_end * a.cols) - b.n0;
      b.base = (index % 2) * half;
      for (int kt = 0; kt < k_tiles; ++kt) {
        for (int nt = n_first; nt < nt_end; ++nt) {
          TileOp op;
          op.rows = b.rows;
          op.kv = std::min(a.rows, s.k - kt * a.rows);
          op.nv = std::min(a.cols, s.n - nt * a.cols);
          op.addr = b.base + (nt - n_first) * b.rows;
          op.acc = kt > 0 || (init != Init::kOverwrite && !bias);
          op.bcast = kt == 0 && bias;
          op.src = op.bcast ? b.base + (nt_end - n_first) * b.rows + (nt - n_first) : 0;
          // Consecutive operations on the same weight tile (one K- and N-tile, several blocks)
          // reuse the loaded weights.
          op.load_w = !(kt == last_kt && nt == last_nt);
          op.m0 = m0;
          op.k0 = kt * a.rows;
          op.n0 = nt * a.cols;
          last_kt = kt;
          last_nt = nt;
          b.ops.push_back(op);
        }
      }
      p.blocks.push_back(std::move(b));
    }
  }
  if (init == Init::kAccumulate && p.blocks.size() != 1) {
    throw std::invalid_argument(fmt::format(
        "plan: accumulating onto the accumulators' contents needs the whole {}x{} result in one "
        "block, but it takes {} blocks on {}",
        s.m, s.n, p.blocks.size(), a.Name()));
  }
  return p;
}

}  // namespace tpu::tb

namespace tpu::tb {

namespace {
uint64_t Folds(const gemm::Shape& s, const ArrayConfig& a) {
  return uint64_t((s.k + a.rows - 1) / a.rows) * uint64_t((s.n + a.cols - 1) / a.cols);
}
}  // namespace

uint64_t PipelinedLimit(const gemm::Shape& s, const ArrayConfig& a) {
  const uint64_t f = Folds(s, a), r = a.rows, c = a.cols, m = s.m, p = a.pipe;
  return r + f * m + (f - 1) * (r > m ? r - m : 0) + p * r + c - 2;
}

uint64_t ScaleSimCycles(const gemm::Shape& s, const ArrayConfig& a) {
  const uint64_t f = Folds(s, a), r = a.rows, c = a.cols, m = s.m;
  return f * (2 * r + c + m - 2) - 1;
}

}  // namespace tpu::tb
