// SPDX-License-Identifier: Apache-2.0
// The GEMM tiler (tb/src/mxu_plan.cpp): every output element is covered once per K-tile, in
// increasing k, inside the accumulators and its block; bad shapes are refused by name. The
// matrix unit's command as the testbench packs it (tpu/tb/channels.h, from rtl/channels.json).
#include "tpu/tb/mxu_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "test_support.h"
#include "tpu/tb/channels.h"
#include "tpu/tb/mxu_runner.h"

namespace tpu {
namespace {

using tb::ArrayConfig;
using tb::Init;
using tb::PlanGemm;

// Replays a plan on paper: for every (m, n) the sequence of k0 values that touch it, and the
// accumulator row it lives in.
void CheckPlan(const gemm::Shape& s, const ArrayConfig& a, Init init) {
  SCOPED_TRACE(fmt::format("{}x{}x{} on {}", s.m, s.k, s.n, a.Name()));
  const auto p = PlanGemm(s, a, init);
  std::vector<std::vector<int>> ks(size_t(s.m) * s.n);
  for (const auto& b : p.blocks) {
    ASSERT_LE(b.base + b.rows * ((b.cols + a.cols - 1) / a.cols), a.acc_depth);
    for (const auto& op : b.ops) {
      ASSERT_GE(op.rows, 1);
      ASSERT_GE(op.kv, 1);
      ASSERT_LE(op.kv, a.rows);
      ASSERT_GE(op.nv, 1);
      ASSERT_LE(op.nv, a.cols);
      ASSERT_LE(op.addr + op.rows, a.acc_depth);
      if (init == Init::kBias) {
        // The first K-tile starts from the tile's bias row, after the block's rows in its half.
        ASSERT_EQ(op.acc, op.k0 > 0);
        ASSERT_EQ(op.bcast, op.k0 == 0);
        if (op.bcast) {
          const int tiles = (b.cols + a.cols - 1) / a.cols;
          ASSERT_EQ(op.src, b.base + tiles * b.rows + (op.n0 - b.n0) / a.cols);
          ASSERT_LT(op.src, b.base + a.acc_depth / 2);
        }
      } else {
        ASSERT_EQ(op.acc, op.k0 > 0 || init != Init::kOverwrite);
        ASSERT_FALSE(op.bcast);
      }
      for (int i = 0; i < op.rows; ++i) {
        for (int c = 0; c < op.nv; ++c) {
          const int m = op.m0 + i, n = op.n0 + c;
          ASSERT_LT(m, s.m);
          ASSERT_LT(n, s.n);
          // The accumulator row the store path reads for (m, n) is the one the op writes.
          const int nt = (n - b.n0) / a.cols;
          ASSERT_EQ(op.addr + i, b.base + nt * b.rows + (m - b.m0));
          ks[size_t(m) * s.n + n].push_back(op.k0);
        }
      }
    }
  }
  for (size_t i = 0; i < ks.size(); ++i) {
    const auto& v = ks[i];
    ASSERT_EQ(v.size(), size_t((s.k + a.rows - 1) / a.rows)) << "element " << i;
    for (size_t j = 0; j < v.size(); ++j) ASSERT_EQ(v[j], int(j) * a.rows) << "element " << i;
  }
}

TEST(MxuPlanTest, CoversEveryElementInKOrder) {
  const ArrayConfig cfgs[] = {
      {4, 4, 1, 64}, {8, 16, 1, 128}, {16, 4, 3, 64}, {32, 32, 1, 4096}, {3, 5, 2, 10}};
  const gemm::Shape shapes[] = {{1, 1, 1},    {1, 256, 256}, {100, 300, 70}, {17, 19, 23},
                                {64, 64, 64}, {200, 7, 90},  {5, 33, 1}};
  for (const auto& a : cfgs) {
    for (const auto& s : shapes) {
      for (const Init init : {Init::kOverwrite, Init::kPreload, Init::kBias}) {
        CheckPlan(s, a, init);
      }
    }
  }
}

TEST(MxuPlanTest, RandomShapes) {
  tb::Rng rng(test::TestSeed());
  for (int i = 0; i < 200; ++i) {
    const gemm::Shape s{rng.Range(1, 150), rng.Range(1, 150), rng.Range(1, 150)};
    const ArrayConfig a{rng.Range(1, 20), rng.Range(1, 20), rng.Range(1, 3), rng.Range(2, 300)};
    CheckPlan(s, a, a.acc_depth >= 4 && rng.Bit() ? Init::kBias : Init::kOverwrite);
  }
}

TEST(MxuPlanTest, ReusesWeightsAcrossBlocksOfOneTile) {
  const auto p = PlanGemm({100, 3, 4}, {4, 4, 1, 16}, Init::kOverwrite);
  ASSERT_GT(p.blocks.size(), 1u);
  EXPECT_TRUE(p.blocks[0].ops[0].load_w);
  for (size_t b = 1; b < p.blocks.size(); ++b) EXPECT_FALSE(p.blocks[b].ops[0].load_w);
}

TEST(MxuPlanTest, RefusesBadInput) {
  EXPECT_THROW(PlanGemm({0, 1, 1}, {}, Init::kOverwrite), std::invalid_argument);
  EXPECT_THROW(PlanGemm({1, 1, -3}, {}, Init::kOverwrite), std::invalid_argument);
  EXPECT_THROW(PlanGemm({1, 1, 1}, {4, 4, 0, 64}, Init::kOverwrite), std::invalid_argument);
  EXPECT_THROW(PlanGemm({1, 1, 1}, {4, 4, 1, 1}, Init::kOverwrite), std::invalid_argument);
  EXPECT_THROW(PlanGemm({1, 1, 1}, {4, 4, 1, 3}, Init::kBias), std::invalid_argument);
  // Accumulating onto the accumulators' contents needs one block.
  EXPECT_THROW(PlanGemm({100, 4, 4}, {4, 4, 1, 16}, Init::kAccumulate), std::invalid_argument);
  try {
    PlanGemm({0, 5, 5}, {}, Init::kOverwrite);
    ADD_FAILURE() << "M = 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("M=0"), std::string::npos) << e.what();
  }
}

TEST(MxuPlanTest, CycleReferences) {
  // 1024³ on 16×16, P = 1: F = 4096 folds.
  const gemm::Shape s{1024, 1024, 1024};
  const ArrayConfig a{16, 16, 1, 4096};
  EXPECT_EQ(tb::PipelinedLimit(s, a), 16u + 4096u * 1024u + 0u + 16u + 16u - 2u);
  EXPECT_EQ(tb::ScaleSimCycles(s, a), 4096u * (32u + 16u + 1024u - 2u) - 1u);
  // M < R: every fold after the first waits R − M cycles for its weights.
  const gemm::Shape t{1, 256, 256};
  EXPECT_EQ(tb::PipelinedLimit(t, a), 16u + 256u * 1u + 255u * 15u + 16u + 16u - 2u);
}

// The command's layout: the first field of rtl/channels.json the most significant, each at its
// RTL width, on an integer port and on a VlWide alike; a value too wide for its field refused.
TEST(MxuCmdLayoutTest, PacksFieldsMostSignificantFirst) {
  const tb::ArrayConfig a{16, 16, 1, 4096};
  const auto w = tb::CmdWidths(a);
  EXPECT_EQ(w.cnt_w, 13);  // rows up to 4096
  EXPECT_EQ(w.kv_w, 5);
  EXPECT_EQ(w.nv_w, 5);
  EXPECT_EQ(w.addr_w, 12);
  ASSERT_EQ(tb::ChannelWidth<tb::MxuCmd>(w), 13 + 5 + 5 + 12 + 1 + 1 + 12 + 1);

  // rows, kv, nv, addr, acc, bcast, src, load_w
  tb::MxuCmd c{4096, 16, 3, 0xabc, 1, 0, 0x123, 1};
  uint64_t port = 0;
  tb::PackChannel(c, w, port);
  // load_w at bit 0, src above it, then bcast, acc, addr, nv, kv, rows at the top.
  const std::pair<uint64_t, int> at[] = {{1, 0},      {0x123, 1}, {0, 13},  {1, 14},
                                         {0xabc, 15}, {3, 27},    {16, 32}, {4096, 37}};
  uint64_t expect = 0;
  for (const auto& [v, lsb] : at) expect |= v << lsb;
  EXPECT_EQ(port, expect);

  VlWide<3> wide;
  for (int i = 0; i < 3; ++i) wide[i] = 0xffffffffu;  // every bit of the channel is written
  tb::PackChannel(c, w, wide);
  EXPECT_EQ(wide[0], static_cast<uint32_t>(expect));
  EXPECT_EQ(wide[1] & ((1u << (50 - 32)) - 1), static_cast<uint32_t>(expect >> 32));
  const auto back = tb::UnpackChannel<tb::MxuCmd>(w, wide);
  for (const auto f : tb::MxuCmd::Fields()) EXPECT_EQ(back.*f, c.*f);

  c.kv = 32;  // needs 6 bits
  try {
    tb::PackChannel(c, w, port);
    FAIL() << "a kv of 32 in 5 bits was packed";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "mxu_cmd.kv = 32 does not fit its 5 bits");
  }
  // A field wider than the uint64_t that holds it (or of no width) is refused both ways.
  for (const int bad : {65, 0}) {
    auto wide_w = w;
    wide_w.addr_w = bad;
    const std::string msg =
        "mxu_cmd.addr is " + std::to_string(bad) + " bits wide: a C++ channel field holds 1 to 64";
    try {
      tb::PackChannel(c, wide_w, wide);
      FAIL() << "packed with a field of " << bad << " bits";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(e.what(), msg);
    }
    EXPECT_THROW(tb::UnpackChannel<tb::MxuCmd>(wide_w, wide), std::invalid_argument);
  }
}

}  // namespace
}  // namespace tpu
