// SPDX-License-Identifier: Apache-2.0
// The accelerator under the SystemC kernel (tb/include/tpu/tb/accel_sc.h): the `verilator --sc`
// tpu_accel (4x4, 64-row buffers, one HBM2 channel) clocked by an sc_clock, with the HBM2 device
// model as a SystemC module; the host thread loads a workload (program and tensors) into HBM,
// starts the accelerator, waits for its interrupt and checks, bit for bit, every output against
// the instruction-level golden model (accel_scoreboard.h), the error code and pc, the
// performance counters, and the device model's JEDEC checks.
//
// SystemC 2.3 allows one elaboration and simulation per process: ctest runs every test of this
// binary in a process of its own. Run directly, only the first test of the process can simulate;
// the others fail with a message saying so (use --gtest_filter to pick one).
#include "tpu/tb/accel_sc.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <systemc>
#include <variant>

#include "sc_test_support.h"
#include "tpu/host.h"
#include "tpu/isa.h"
#include "tpu/isa_model.h"
#include "tpu/tb/accel_scoreboard.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/workloads.h"

namespace tpu {
namespace {

using tb::accel::AccelSc;
using tb::accel::Config;
using tb::accel::Result;
using tb::accel::RunOptions;
using tb::accel::Workload;

class AccelScTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sc_core::sc_get_status(), sc_core::SC_ELABORATION)
        << "SystemC allows one simulation per process and this one has already run: run each "
           "test of this binary in its own process (ctest does; or --gtest_filter=one test)";
  }

  // Runs `w` on the golden model, then on the SystemC system, whose host thread loads it, runs
  // it and reads every output back. Returns the system's result; `golden` holds the golden run.
  struct Outcome {
    isa::RunResult golden;
    Result dut;
    tb::accel::Report report;
    uint64_t cycles_simulated = 0;
  };
  Outcome RunBoth(const Config& cfg, const Workload& w, uint64_t seed) {
    Outcome o;
    isa::Machine golden(cfg.machine);
    o.golden = tb::accel::RunGolden(golden, w);
    bool ran = false;
    AccelSc sys("sys", cfg, [&](AccelSc& s) {
      tb::accel::Load(s, w);
      RunOptions opt;
      opt.max_cycles = 2'000'000;
      o.dut = tb::accel::Run(s, w, opt);
      if (o.golden.ok()) o.report = tb::accel::Compare(s, golden, w);
      ran = true;
    });
    sys.Simulate();
    EXPECT_TRUE(ran && sys.host_done()) << "the host program did not run to its end";
    o.cycles_simulated = sys.cycle();
    fmt::print("[   INFO   ] {} ({}, seed {}): {} instructions, {} cycles ({} simulated), {}\n",
               w.kind, w.description, seed, w.Instructions(), o.dut.perf.cycles, o.cycles_simulated,
               o.golden.ok() ? o.report.Format() : "error run");
    return o;
  }

  // A clean run: bit-exact outputs, no error, no JEDEC violation, and the
  // performance counters consistent with the workload.
  static void ExpectClean(const Workload& w, const Outcome& o, uint64_t seed) {
    const std::string ctx = fmt::format("{} ({}), seed {}", w.kind, w.description, seed);
    ASSERT_TRUE(o.golden.ok()) << ctx << ": golden model: " << o.golden.message;
    EXPECT_EQ(o.dut.code, isa::ErrorCode::kOk)
        << ctx << ": error " << isa::ErrorName(o.dut.code) << " at pc " << o.dut.pc;
    EXPECT_EQ(o.dut.hbm_violations, 0u) << ctx << ": JEDEC violations:\n" << o.dut.violations;
    EXPECT_TRUE(o.report.pass) << ctx << ":\n" << o.report.Format();
    EXPECT_EQ(o.report.Elements(),
              [&] {
                uint64_t n = 0;
                for (const auto& t : w.outputs) n += t.Elements();
                return n;
              }())
        << ctx << ": every output element compared";
    const tb::accel::Perf& p = o.dut.perf;
    EXPECT_EQ(p.macs, w.Macs()) << ctx;
    EXPECT_EQ(p.instructions, w.Instructions()) << ctx;
    EXPECT_EQ(tb::accel::EndStateDiff(o.dut, o.golden), "") << ctx;
  }
};

// A GEMM with a preloaded C0, several K, M and N tiles of the 4x4 array and the 64-row buffers,
// special values (inf, NaN, subnormals) mixed into the inputs.
TEST_F(AccelScTest, GemmBitExact) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  const Config cfg = AccelSc::ModelConfig();
  const int m = rng.Range(40, 90), k = rng.Range(9, 40), n = rng.Range(5, 20);
  const Workload w = tb::accel::MakeGemm(cfg, m, k, n, host::Init::kPreload, host::OutFormat::kFp32,
                                         false, rng.Next(), tb::accel::Values::kSpecials);
  ExpectClean(w, RunBoth(cfg, w, seed), seed);
}

// A 3x3 convolution (im2col) with bias and relu, stride 1, padding 1.
TEST_F(AccelScTest, ConvBitExact) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  const Config cfg = AccelSc::ModelConfig();
  host::ConvShape s;
  s.n = 1;
  s.h = rng.Range(4, 6);
  s.w = rng.Range(4, 6);
  s.cin = rng.Range(2, 3);
  s.cout = rng.Range(3, 6);
  s.kh = 3;
  s.kw = 3;
  s.stride = 1;
  s.pad = 1;
  const Workload w =
      tb::accel::MakeConv(cfg, s, true, true, tpu::host::OutFormat::kBf16, rng.Next());
  ExpectClean(w, RunBoth(cfg, w, seed), seed);
}

// A GEMM program with one instruction made illegal part-way through (a GEMM whose kv exceeds
// the array's R): the accelerator stops with the golden model's error code and pc.
TEST_F(AccelScTest, IllegalProgramError) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  const Config cfg = AccelSc::ModelConfig();
  Workload w = tb::accel::MakeGemm(cfg, 24, 12, 8, host::Init::kOverwrite, host::OutFormat::kFp32,
                                   false, rng.Next());
  // The GEMMs of the program; break one of the later ones.
  std::vector<size_t> gemms;
  for (size_t i = 0; i < w.prog.instrs.size(); ++i) {
    if (std::holds_alternative<isa::Gemm>(w.prog.instrs[i])) gemms.push_back(i);
  }
  ASSERT_GE(gemms.size(), 2u) << "the GEMM should need several GEMM instructions";
  const size_t bad = gemms[rng.Range(1, static_cast<int>(gemms.size()) - 1)];
  std::get<isa::Gemm>(w.prog.instrs[bad]).kv = static_cast<uint16_t>(cfg.machine.r + 1);

  const Outcome o = RunBoth(cfg, w, seed);
  ASSERT_FALSE(o.golden.ok()) << "the golden model accepted kv = R + 1 at pc " << bad;
  EXPECT_EQ(o.golden.pc, bad) << o.golden.message;
  fmt::print("[   INFO   ] golden: {} at pc {}: {}\n", isa::ErrorName(o.golden.code), o.golden.pc,
             o.golden.message);
  EXPECT_EQ(o.dut.code, o.golden.code) << "got " << isa::ErrorName(o.dut.code) << ", want "
                                       << isa::ErrorName(o.golden.code) << " (seed " << seed << ")";
  EXPECT_EQ(o.dut.pc, o.golden.pc) << "seed " << seed;
  EXPECT_EQ(tb::accel::EndStateDiff(o.dut, o.golden), "") << "seed " << seed;
  EXPECT_EQ(o.dut.hbm_violations, 0u) << o.dut.violations;
}

}  // namespace
}  // namespace tpu
