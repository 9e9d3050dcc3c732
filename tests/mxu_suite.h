// SPDX-License-Identifier: Apache-2.0
// The matrix-unit test suite, as a typed-parameterized GoogleTest suite over tpu_mxu
// configurations: the fast tier instantiates it on small arrays (mxu_test.cpp), the long tier on
// 16×16 and 32×32 (mxu_long_test.cpp). Every result is compared bit for bit with the golden GEMM.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mxu_test_support.h"

namespace tpu::test {

template <class Cfg>
class MxuTest : public MxuFixture<Cfg> {};
TYPED_TEST_SUITE_P(MxuTest);

TYPED_TEST_P(MxuTest, RaggedRowsKeepNegativeZero) {
  // The contract's directed case: A = [0x8001], B = [0x0001], K = 1 gives -0 (the product
  // underflows and keeps its sign); padding the array's other rows with +0 × +0 would give +0.
  const auto r = this->RunCase(MxuCase{{1, 1, 1}, {0x8001}, {0x0001}, {}, num::Mode::kIeee});
  EXPECT_EQ(r.c[0], 0x80000000u);
  // In FTZ mode those subnormal operands read as zeros, (-0)·(+0) + (+0) = +0; a normal pair
  // whose product underflows, -2^-126 · 2^-126, keeps the -0 in both modes.
  for (const num::Mode mode : {num::Mode::kIeee, num::Mode::kFtz}) {
    const auto r2 = this->RunCase(MxuCase{{1, 1, 1}, {0x8080}, {0x0080}, {}, mode});
    EXPECT_EQ(r2.c[0], 0x80000000u) << (mode == num::Mode::kFtz ? "FTZ" : "IEEE");
  }
}

TYPED_TEST_P(MxuTest, OverwriteStartsFromPositiveZero) {
  // (-0)·(+1) + (+0) = +0: an overwrite that passed the first product through would give -0.
  const auto r = this->RunCase(MxuCase{{1, 1, 1}, {0x8000}, {0x3F80}, {}, num::Mode::kIeee});
  EXPECT_EQ(r.c[0], 0x00000000u);
  // and (-0)·(+1) + (-0) = -0 when C0 is -0 (accumulate from a stored -0).
  const auto r2 =
      this->RunCase(MxuCase{{1, 1, 1}, {0x8000}, {0x3F80}, {0x80000000u}, num::Mode::kIeee});
  EXPECT_EQ(r2.c[0], 0x80000000u);
}

TYPED_TEST_P(MxuTest, NegativeZeroChainThroughRaggedColumnsAndRows) {
  // Every product is -0 and C0 is -0: the chain must stay -0 through every row and tile.
  const gemm::Shape s{5, 7, 6};
  std::vector<uint16_t> a(35, 0x8000), b(42, 0x3F80);
  std::vector<uint32_t> c0(30, 0x80000000u);
  const auto r = this->RunCase(MxuCase{s, a, b, c0, num::Mode::kIeee});
  for (uint32_t x : r.c) ASSERT_EQ(x, 0x80000000u);
}

TYPED_TEST_P(MxuTest, RandomShapesAndData) {
  tb::Rng rng(TestSeed());
  const int iters = static_cast<int>(Scaled(40));
  for (int i = 0; i < iters; ++i) {
    const auto cfg = TypeParam::Config();
    const gemm::Shape s = this->RandomShape(rng, 3 * std::max(cfg.rows, cfg.cols) + 10);
    this->RunRandom(rng, s, static_cast<tb::GemmData>(rng.Range(0, 2)), rng.Bit(),
                    tb::Stimulus::Random(rng.Range(0, 2) * 0.2, rng.Next()));
  }
}

TYPED_TEST_P(MxuTest, HeavyBackPressure) {
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  const gemm::Shape s{cfg.rows + 3, 2 * cfg.rows + 1, 2 * cfg.cols + 1};
  this->RunRandom(rng, s, tb::GemmData::kSpecials, true, tb::Stimulus::Random(0.6, rng.Next()));
}

TYPED_TEST_P(MxuTest, PrimeAndUnitShapes) {
  tb::Rng rng(TestSeed());
  for (const gemm::Shape s : {gemm::Shape{1, 1, 1}, gemm::Shape{1, 13, 1}, gemm::Shape{13, 1, 17},
                              gemm::Shape{1, 31, 29}, gemm::Shape{17, 19, 23}}) {
    this->RunRandom(rng, s, tb::GemmData::kSpecials, false, {});
  }
}

TYPED_TEST_P(MxuTest, AccumulateAcrossCalls) {
  // Three calls onto the same accumulators: overwrite, then accumulate twice (no reload).
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  // The whole result must fit one accumulator block (half the depth) to stay in place.
  const gemm::Shape s1{std::min(cfg.rows + 1, cfg.acc_depth / 4), 2 * cfg.rows + 3, cfg.cols + 2};
  std::vector<uint32_t> expect;
  for (int call = 0; call < 3; ++call) {
    const gemm::Shape s{s1.m, s1.k + call, s1.n};
    const auto g = tb::RandomGemm(rng, s, tb::GemmData::kModerate, false);
    const auto init = call == 0 ? tb::Init::kOverwrite : tb::Init::kAccumulate;
    expect =
        gemm::Gemm(s, g.a, g.b, call == 0 ? std::vector<uint32_t>{} : expect, num::Mode::kIeee);
    const auto plan = tb::PlanGemm(s, cfg, init);
    const auto r = this->runner_.Run(plan, g.a, g.b, {}, num::Mode::kIeee);
    ExpectBitsEqual(s, expect, r.c, fmt::format("call {}", call));
  }
}

TYPED_TEST_P(MxuTest, WeightReuseAcrossBlocks) {
  // One weight tile and more rows than one accumulator block: later blocks reuse the weights.
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  const gemm::Shape s{cfg.acc_depth + 7, cfg.rows - 1 > 0 ? cfg.rows - 1 : 1, cfg.cols};
  const auto plan = tb::PlanGemm(s, cfg);
  ASSERT_GT(plan.blocks.size(), 1u);
  int reuse = 0;
  for (const auto& b : plan.blocks) {
    for (const auto& op : b.ops) reuse += !op.load_w;
  }
  EXPECT_GT(reuse, 0);
  this->RunRandom(rng, s, tb::GemmData::kModerate, false, {});
}

TYPED_TEST_P(MxuTest, AccumulatorHazardStallsAndStaysExact) {
  // M·⌈N/C⌉ = 1 < R·P + 1: every K-tile waits for the previous one's partial sums.
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  const gemm::Shape s{1, 3 * cfg.rows, cfg.cols};
  const auto r = this->RunRandom(rng, s, tb::GemmData::kModerate, false, {});
  EXPECT_GT(r.perf.hazard, 0u);
}

// A bias broadcast (tb::Init::kBias): one accumulator row per N-tile of a block, read by the
// first K-tile's commands as every row's initial value; random shapes, data and back-pressure.
TYPED_TEST_P(MxuTest, BiasBroadcastFromOneRow) {
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  const int iters = static_cast<int>(Scaled(10));
  for (int i = 0; i < iters; ++i) {
    const gemm::Shape s = this->RandomShape(rng, 3 * std::max(cfg.rows, cfg.cols) + 10);
    const auto kind = static_cast<tb::GemmData>(rng.Range(0, 2));
    auto g = tb::RandomGemm(rng, s, kind, false);
    auto bias = tb::RandomGemm(rng, {1, 1, s.n}, kind, true).c0;
    const num::Mode mode = rng.Bit() ? num::Mode::kFtz : num::Mode::kIeee;
    SCOPED_TRACE(fmt::format("{} {} data, bias, mode {}", tb::ShapeName(s), tb::GemmDataName(kind),
                             mode == num::Mode::kFtz ? "FTZ" : "IEEE"));
    const auto plan = tb::PlanGemm(s, cfg, tb::Init::kBias);
    int bcast = 0;
    for (const auto& b : plan.blocks) {
      for (const auto& op : b.ops) bcast += op.bcast;
    }
    EXPECT_GT(bcast, 0);
    this->RunCase(MxuCase{s, std::move(g.a), std::move(g.b), std::move(bias), mode, true},
                  tb::Stimulus::Random(rng.Range(0, 2) * 0.2, rng.Next()));
    if (this->HasFatalFailure()) return;
  }
}

// A broadcast right after the command that writes its source row: the read waits for that
// write (an accumulator hazard) and sees the new value.
TYPED_TEST_P(MxuTest, BroadcastWaitsForTheRowItReads) {
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  const int K = cfg.rows, N = cfg.cols;
  const gemm::Shape s{3, K, N};
  const auto g = tb::RandomGemm(rng, s, tb::GemmData::kModerate, false);
  tb::Plan p{s, cfg, tb::Init::kOverwrite, {}};
  tb::Block b;
  b.rows = 3, b.cols = N;
  tb::TileOp first, second;
  first.rows = 2, first.kv = K, first.nv = N, first.load_w = true;  // rows 0, 1 from +0
  second.rows = 1, second.kv = K, second.nv = N, second.addr = 2, second.m0 = 2;
  second.bcast = true, second.src = 0;  // row 2 from row 0, still being written
  b.ops = {first, second};
  p.blocks.push_back(b);
  const auto r = this->runner_.Run(p, g.a, g.b, {}, num::Mode::kIeee);
  const std::vector<uint16_t> a01(g.a.begin(), g.a.begin() + 2 * K),
      a2(g.a.begin() + 2 * K, g.a.end());
  auto want = gemm::Gemm({2, K, N}, a01, g.b, {}, num::Mode::kIeee);
  const std::vector<uint32_t> row0(want.begin(), want.begin() + N);
  const auto last = gemm::Gemm({1, K, N}, a2, g.b, row0, num::Mode::kIeee);
  want.insert(want.end(), last.begin(), last.end());
  ExpectBitsEqual(s, want, r.c, "broadcast from a row in flight");
  EXPECT_GT(r.perf.hazard, 0u) << "the broadcast read must have waited for the write";
}

TYPED_TEST_P(MxuTest, PerformanceCountersAddUp) {
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  // M = R (a new weight tile every R cycles: no bubble allowed) and a longer M.
  for (const int m : {cfg.rows, 2 * cfg.rows + 5}) {
    const gemm::Shape s{std::min(m, cfg.acc_depth / 4), 3 * cfg.rows, 2 * cfg.cols};
    SCOPED_TRACE(tb::ShapeName(s));
    const auto r = this->RunRandom(rng, s, tb::GemmData::kModerate, false, {});
    const auto& p = r.perf;
    EXPECT_EQ(p.macs, uint64_t(s.m) * s.k * s.n);
    EXPECT_EQ(p.cycles, p.busy + p.wstall + p.starve + p.hazard + p.drain);
    const auto plan = tb::PlanGemm(s, cfg);
    uint64_t rows = 0;
    for (const auto& b : plan.blocks) {
      for (const auto& op : b.ops) rows += op.rows;
    }
    EXPECT_EQ(p.busy, rows);
    // One block, operands always valid: the only idle cycles are the first weight load, the
    // folds shorter than R, the drain (together the fully pipelined limit, plus 3 cycles of
    // latency) and accumulator hazards, which exist only when M·⌈N/C⌉ < R·P + 2.
    ASSERT_EQ(plan.blocks.size(), 1u);
    EXPECT_EQ(p.starve, 0u);
    const int n_tiles = (s.n + cfg.cols - 1) / cfg.cols;
    if (s.m * n_tiles >= cfg.rows * cfg.pipe + 2) {
      EXPECT_EQ(p.hazard, 0u);
    } else {
      EXPECT_GT(p.hazard, 0u);
    }
    EXPECT_LE(p.cycles, PipelinedLimit(s, cfg) + p.hazard + 3)
        << fmt::format("busy {} wstall {} hazard {} drain {}", p.busy, p.wstall, p.hazard, p.drain);
  }
}

TYPED_TEST_P(MxuTest, IllegalCommandsAreFlaggedAndDropped) {
  const auto cfg = TypeParam::Config();
  this->ExpectCommandError({1, 0, 1, 0, false, true}, 1u << 2, "kv = 0");
  // kv = Rows + 1 only fits the kv field when Rows + 1 is not a power of two (the field is
  // ⌈log2(Rows + 1)⌉ bits); likewise nv.
  const auto fits = [](int v) { return (v & (v - 1)) != 0; };
  if (fits(cfg.rows + 1)) {
    this->ExpectCommandError({1, cfg.rows + 1, 1, 0, false, true}, 1u << 2, "kv > Rows");
  }
  this->ExpectCommandError({1, 1, 0, 0, false, true}, 1u << 3, "nv = 0");
  if (fits(cfg.cols + 1)) {
    this->ExpectCommandError({1, 1, cfg.cols + 1, 0, false, true}, 1u << 3, "nv > Cols");
  }
  this->ExpectCommandError({0, 1, 1, 0, false, true}, 1u << 0, "rows = 0");
  this->ExpectCommandError({2, 1, 1, cfg.acc_depth - 1, false, true}, 1u << 1,
                           "addr + rows beyond the accumulators");
  // rows as large as the field allows: addr + rows must not wrap around to a legal value.
  this->ExpectCommandError({cfg.acc_depth + 1, 1, 1, cfg.acc_depth - 1, false, true}, 1u << 1,
                           "addr + rows wrapping");
  this->ExpectCommandError({1, 1, 1, 0, false, false}, 1u << 4, "no weights loaded yet");
}

TYPED_TEST_P(MxuTest, ErrorsDuringWorkLeaveTheWeightsAlone) {
  // A tile is loaded and used; then an illegal load command (dropped, so the loaded bank stays
  // current) and a reuse command with another kv (dropped, error bit 5); then a legal reuse of
  // the loaded tile must give the right results on top of the first call's.
  tb::Rng rng(TestSeed());
  const auto cfg = TypeParam::Config();
  const gemm::Shape s{std::min(3, cfg.acc_depth / 2), cfg.rows, cfg.cols};
  const auto g1 = tb::RandomGemm(rng, s, tb::GemmData::kModerate, false);
  const auto first = gemm::Gemm(s, g1.a, g1.b, {}, num::Mode::kIeee);
  const auto p1 = tb::PlanGemm(s, cfg);
  ASSERT_EQ(p1.NumOps(), 1u);
  ExpectBitsEqual(s, first, this->runner_.Run(p1, g1.a, g1.b, {}, num::Mode::kIeee).c, "call 1");
  EXPECT_TRUE(this->SendRawCommand({1, 0, cfg.cols, 0, false, true}));
  EXPECT_EQ(static_cast<unsigned>(this->sim_.dut().err_o), 1u << 2);
  if (cfg.rows > 1) {
    EXPECT_TRUE(this->SendRawCommand({1, cfg.rows - 1, cfg.cols, 0, true, false}));
    EXPECT_EQ(static_cast<unsigned>(this->sim_.dut().err_o), (1u << 2) | (1u << 5));
  }
  // The error bits stay set (only reset clears them, and reset would also forget the weights),
  // so the runner reports them at the end; the results are read back through the store port.
  auto a2 = tb::RandomGemm(rng, s, tb::GemmData::kModerate, false).a;
  auto p2 = tb::PlanGemm(s, cfg, tb::Init::kAccumulate);
  p2.blocks[0].ops[0].load_w = false;
  const auto second = gemm::Gemm(s, a2, g1.b, first, num::Mode::kIeee);
  try {
    this->runner_.Run(p2, a2, g1.b, {}, num::Mode::kIeee);
    ADD_FAILURE() << "the runner must report the sticky error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("error code"), std::string::npos) << e.what();
  }
  std::vector<uint32_t> got(size_t(s.m) * s.n);
  const int base = p2.blocks[0].base;
  for (int m = 0; m < s.m; ++m) {
    const auto row = this->StoreRow(base + m);
    for (int n = 0; n < s.n; ++n) got[size_t(m) * s.n + n] = row[n];
  }
  ExpectBitsEqual(s, second, got, "reuse after dropped commands");
}

TYPED_TEST_P(MxuTest, ColumnsBeyondNvAreNotWritten) {
  // Preload every column with a sentinel, run one accumulate operation with nv = Cols - 1 (the
  // weight stream carries NaN in the last column, which the loader replaces by +0): the last
  // column must keep its sentinel.
  const auto cfg = TypeParam::Config();
  if (cfg.cols < 2) GTEST_SKIP() << "needs at least two columns";
  tb::Rng rng(TestSeed());
  const int rows = std::min(4, cfg.acc_depth), kv = std::min(cfg.rows, 2), nv = cfg.cols - 1;
  std::vector<std::pair<int, std::vector<uint32_t>>> loads;
  for (int m = 0; m < rows; ++m) {
    std::vector<uint32_t> row(cfg.cols);
    // Beyond nv the sentinel is -0, which any write would change: the masked weights are +0,
    // so a write would add (+a)·(+0) = +0 or, for the infinity below, NaN.
    for (int c = 0; c < cfg.cols; ++c) {
      row[c] = c < cfg.cols - 1 ? 0x3F800000u + uint32_t(m) * 64 + uint32_t(c) : 0x80000000u;
    }
    loads.emplace_back(m, row);
  }
  const auto g = tb::RandomGemm(rng, {rows, kv, cfg.cols}, tb::GemmData::kModerate, false);
  std::vector<std::vector<uint16_t>> w(kv, std::vector<uint16_t>(cfg.cols));
  for (int k = 0; k < kv; ++k) {
    for (int c = 0; c < cfg.cols; ++c) w[k][c] = c < nv ? g.b[size_t(k) * cfg.cols + c] : 0x7FC1;
  }
  std::vector<std::vector<uint16_t>> a(rows, std::vector<uint16_t>(cfg.rows, 0x7F80));
  for (int m = 0; m < rows; ++m) {
    for (int k = 0; k < kv; ++k) a[m][k] = g.a[size_t(m) * kv + k] & 0x7FFF;  // positive
  }
  a[0][0] = 0x7F80;  // +inf
  this->sim_.dut().ftz_i = 0;
  this->DriveRaw(loads, {rows, kv, nv, 0, true, true}, w, a);
  EXPECT_EQ(static_cast<unsigned>(this->sim_.dut().err_o), 0u);
  for (int m = 0; m < rows; ++m) {
    const auto got = this->StoreRow(m);
    for (int c = 0; c < cfg.cols; ++c) {
      uint32_t expect = loads[m].second[c];
      if (c < nv) {
        for (int k = 0; k < kv; ++k) expect = num::Mac(a[m][k], w[k][c], expect, num::Mode::kIeee);
      }
      EXPECT_EQ(got[c], expect) << "row " << m << " column " << c << (c < nv ? "" : " (beyond nv)");
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(MxuTest, RaggedRowsKeepNegativeZero, OverwriteStartsFromPositiveZero,
                            NegativeZeroChainThroughRaggedColumnsAndRows, RandomShapesAndData,
                            HeavyBackPressure, PrimeAndUnitShapes, AccumulateAcrossCalls,
                            WeightReuseAcrossBlocks, AccumulatorHazardStallsAndStaysExact,
                            BiasBroadcastFromOneRow, BroadcastWaitsForTheRowItReads,
                            PerformanceCountersAddUp, IllegalCommandsAreFlaggedAndDropped,
                            ErrorsDuringWorkLeaveTheWeightsAlone, ColumnsBeyondNvAreNotWritten);

}  // namespace tpu::test
