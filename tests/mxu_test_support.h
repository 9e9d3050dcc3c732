// SPDX-License-Identifier: Apache-2.0
// Fixture for the matrix-unit suites: one Verilated tpu_mxu configuration (Cfg::Model), the
// runner, and helpers that run a GEMM and compare every result bit with the golden model.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "test_support.h"
#include "tpu/gemm.h"
#include "tpu/numerics.h"
#include "tpu/tb/gemm_data.h"
#include "tpu/tb/mxu_plan.h"
#include "tpu/tb/mxu_runner.h"

namespace tpu::test {

struct MxuCase {
  gemm::Shape shape;
  std::vector<uint16_t> a, b;
  std::vector<uint32_t> c0;  // empty: overwrite mode; with `bias` one row (1 × N)
  num::Mode mode = num::Mode::kIeee;
  bool bias = false;  // c0 is a bias row, broadcast from one accumulator row (tb::Init::kBias)
};

// A raw command for the directed tests: rows, kv, nv, addr, acc, load_w.
using RawCmd = tb::TileOp;

using tb::PipelinedLimit;

// Compares result bits; reports the first mismatches with their coordinates.
inline void ExpectBitsEqual(const gemm::Shape& s, const std::vector<uint32_t>& expect,
                            const std::vector<uint32_t>& got, const std::string& what) {
  ASSERT_EQ(expect.size(), got.size()) << what;
  size_t bad = 0;
  std::string report;
  for (size_t i = 0; i < expect.size(); ++i) {
    if (expect[i] == got[i]) continue;
    if (++bad <= 8) {
      report += fmt::format("  C[{}][{}]: expected {} got {}\n", i / s.n, i % s.n,
                            num::FormatFp32(expect[i]), num::FormatFp32(got[i]));
    }
  }
  EXPECT_EQ(bad, 0u) << what << " (" << tb::ShapeName(s) << "): " << bad << " of " << expect.size()
                     << " results differ\n"
                     << report;
}

template <class Cfg>
class MxuFixture : public ::testing::Test {
 protected:
  using Model = typename Cfg::Model;
  MxuFixture() : sim_(Cfg::kName, 50'000'000, TestTrace()), runner_(sim_, Cfg::Config()) {
    sim_.Reset();
  }
  void TearDown() override { EXPECT_FALSE(sim_.AssertionFailed()) << "an RTL assertion failed"; }

  tb::MxuResult RunCase(const MxuCase& c, const tb::Stimulus& st = {}) {
    const auto init = c.bias         ? tb::Init::kBias
                      : c.c0.empty() ? tb::Init::kOverwrite
                                     : tb::Init::kPreload;
    const auto plan = tb::PlanGemm(c.shape, Cfg::Config(), init);
    auto r = runner_.Run(plan, c.a, c.b, c.c0, c.mode, st);
    std::vector<uint32_t> c0;  // the contract's C0: the bias on every row
    for (int m = 0; m < (c.bias ? c.shape.m : 0); ++m)
      c0.insert(c0.end(), c.c0.begin(), c.c0.end());
    ExpectBitsEqual(
        c.shape, gemm::Gemm(c.shape, c.a, c.b, c.bias ? c0 : c.c0, c.mode), r.c,
        fmt::format("{} on {}", c.mode == num::Mode::kFtz ? "FTZ" : "IEEE", Cfg::kName));
    return r;
  }

  tb::MxuResult RunRandom(tb::Rng& rng, const gemm::Shape& s, tb::GemmData kind, bool with_c0,
                          const tb::Stimulus& st) {
    auto g = tb::RandomGemm(rng, s, kind, with_c0);
    const num::Mode mode = rng.Bit() ? num::Mode::kFtz : num::Mode::kIeee;
    SCOPED_TRACE(fmt::format("{} {} data, C0 {}, mode {}, gap {}", tb::ShapeName(s),
                             tb::GemmDataName(kind), with_c0 ? "preloaded" : "+0",
                             mode == num::Mode::kFtz ? "FTZ" : "IEEE", st.a_gap));
    return RunCase(MxuCase{s, std::move(g.a), std::move(g.b), std::move(g.c0), mode}, st);
  }

  static gemm::Shape RandomShape(tb::Rng& rng, int max) {
    return {rng.Range(1, max), rng.Range(1, max), rng.Range(1, max)};
  }

  // Offers one command for a cycle and returns whether it was taken. With `offer_weight`, a
  // weight beat is offered too, which a dropped command must not take; that beat is then left
  // waiting (valid must not drop before ready), so the caller resets afterwards.
  bool SendRawCommand(const RawCmd& c, bool offer_weight = false) {
    Model& m = sim_.dut();
    m.cmd_valid_i = 1;
    tb::SetCommand(m, Cfg::Config(), c);
    m.w_valid_i = offer_weight;
    m.a_valid_i = m.ld_valid_i = m.st_valid_i = 0;
    sim_.FallingEdge();
    const bool taken = m.cmd_ready_o;
    sim_.RisingEdge();
    m.cmd_valid_i = 0;
    for (int i = 0; i < 4; ++i) {
      sim_.FallingEdge();
      EXPECT_FALSE(m.w_ready_o) << "a dropped command must not take weight beats";
      sim_.RisingEdge();
      EXPECT_FALSE(m.done_o);
    }
    return taken;
  }

  // Sends one command after a reset and expects it to be dropped with error bits `code`.
  void ExpectCommandError(const RawCmd& c, unsigned code, const char* what) {
    SCOPED_TRACE(what);
    sim_.Reset();
    Model& m = sim_.dut();
    EXPECT_TRUE(SendRawCommand(c, true)) << "an illegal command must be consumed, not left hanging";
    EXPECT_EQ(static_cast<unsigned>(m.err_o), code);
    EXPECT_TRUE(m.idle_o) << "the dropped command must not start";
    m.w_valid_i = 0;
    sim_.Reset();
    EXPECT_EQ(static_cast<unsigned>(m.err_o), 0u) << "reset clears the error";
  }

  // Drives raw beats on the load, command, weight and activation ports until every one was
  // taken, then waits for the done pulse (for the directed tests that need exact port control).
  void DriveRaw(const std::vector<std::pair<int, std::vector<uint32_t>>>& loads, const RawCmd& c,
                const std::vector<std::vector<uint16_t>>& w,
                const std::vector<std::vector<uint16_t>>& a) {
    Model& m = sim_.dut();
    const auto cfg = Cfg::Config();
    for (const auto& [addr, row] : loads) {
      m.ld_valid_i = 1;
      m.ld_addr_i = addr;
      for (int col = 0; col < cfg.cols; ++col) tb::SetLane(m.ld_data_i, col * 32, 32, row[col]);
      bool taken = false;
      while (!taken) {
        sim_.FallingEdge();
        taken = m.ld_ready_o;
        sim_.RisingEdge();
      }
      m.ld_valid_i = 0;
    }
    m.cmd_valid_i = 1;
    tb::SetCommand(m, cfg, c);
    size_t wi = 0, ai = 0;
    bool done = false;
    for (int cyc = 0; cyc < 10000 && !done; ++cyc) {
      m.w_valid_i = wi < w.size();
      if (wi < w.size()) {
        for (int col = 0; col < cfg.cols; ++col) tb::SetLane(m.w_data_i, col * 16, 16, w[wi][col]);
      }
      m.a_valid_i = ai < a.size();
      if (ai < a.size()) {
        for (int r = 0; r < cfg.rows; ++r) tb::SetLane(m.a_data_i, r * 16, 16, a[ai][r]);
      }
      sim_.FallingEdge();
      const bool fc = m.cmd_valid_i && m.cmd_ready_o, fw = m.w_valid_i && m.w_ready_o;
      const bool fa = m.a_valid_i && m.a_ready_o;
      sim_.RisingEdge();
      if (fc) m.cmd_valid_i = 0;
      wi += fw;
      ai += fa;
      done = m.done_o;
    }
    m.w_valid_i = m.a_valid_i = 0;
    ASSERT_TRUE(done) << "no done pulse";
  }

  // Reads accumulator row `addr` through the store port.
  std::vector<uint32_t> StoreRow(int addr) {
    Model& m = sim_.dut();
    m.st_valid_i = 1;
    m.st_addr_i = addr;
    sim_.FallingEdge();
    sim_.RisingEdge();
    m.st_valid_i = 0;
    EXPECT_TRUE(m.st_valid_o);
    std::vector<uint32_t> row(Cfg::Config().cols);
    for (int col = 0; col < Cfg::Config().cols; ++col) {
      row[col] = tb::GetLane(m.st_data_o, col * 32, 32);
    }
    return row;
  }

  tb::SimCtrl<Model> sim_;
  tb::MxuRunner<Model> runner_;
};

}  // namespace tpu::test
