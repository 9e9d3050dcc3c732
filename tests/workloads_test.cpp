// SPDX-License-Identifier: Apache-2.0
// The accelerator front-end library: configurations (tpu/tb/accel_config.h), workloads
// (tpu/tb/workloads.h) on the model back end (tpu/tb/model_sim.h), and the scoreboard
// (tpu/tb/accel_scoreboard.h). Every workload kind passes against a second golden run and
// matches the golden GEMM directly; a corrupted output element is found and named with its
// coordinates; bad configurations are refused naming the key; host data is rounded per the
// numerics contract.
#include "tpu/tb/workloads.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpu/gemm.h"
#include "tpu/numerics.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_scoreboard.h"
#include "tpu/tb/model_sim.h"

namespace tpu {
namespace {

using host::Init;
using host::OutFormat;
using tb::accel::Config;
using tb::accel::ModelSim;
using tb::accel::Report;
using tb::accel::Workload;
namespace accel = tb::accel;

// Configurations: named ones and a JSON one with tight buffers (several blocks, slot reuse).
std::vector<Config> Configs() {
  return {accel::ConfigFromName("4x4_1ch"), accel::ConfigFromName("16x16_1ch"),
          accel::ConfigFromJson(R"({"rows": 4, "cols": 8, "act_depth": 10, "wgt_depth": 6,
                                    "acc_depth": 20, "mode": "ftz"})"),
          accel::ConfigFromJson(R"({"rows": 3, "cols": 5, "act_depth": 1, "wgt_depth": 1,
                                    "acc_depth": 1})")};
}

class WorkloadsTest : public ::testing::Test {
 protected:
  // Runs `w` on a ModelSim (the DUT) and on a second golden model; returns the scoreboard's
  // report. `corrupt` may change the DUT's HBM between the run and the comparison.
  static Report RunBoth(const Config& cfg, const Workload& w,
                        const std::function<void(accel::Sim&)>& corrupt = nullptr) {
    ModelSim dut(cfg);
    accel::Load(dut, w);
    const accel::Result r = accel::Run(dut, w, {});
    EXPECT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at pc " << r.pc << ": "
                        << dut.last_run().message;
    EXPECT_EQ(r.perf.macs, w.Macs());
    EXPECT_EQ(r.perf.instructions, w.Instructions());
    EXPECT_EQ(r.perf.cycles, 0u);
    isa::Machine golden(cfg.machine);
    const auto g = accel::RunGolden(golden, w);
    EXPECT_TRUE(g.ok()) << g.message;
    if (corrupt) corrupt(dut);
    return accel::Compare(dut, golden, w);
  }

  // Flips the low bit of byte `byte` of element `index` (row-major) of a matrix tensor.
  static void Corrupt(accel::Sim& sim, const accel::Tensor& t, uint64_t index, int byte = 0) {
    ASSERT_FALSE(t.weights);
    const int row = int(index / t.Cols()), col = int(index % t.Cols());
    const int tile = col / t.mat.tile;
    const uint64_t addr =
        t.mat.RowAddr(tile, row) + uint64_t(col % t.mat.tile) * t.elem_bytes + byte;
    uint8_t b = 0;
    sim.ReadHbm(addr, &b, 1);
    b ^= 1;
    sim.WriteHbm(addr, &b, 1);
  }
};

TEST_F(WorkloadsTest, EveryKindPassesOnTheModel) {
  tb::Rng rng(test::TestSeed());
  for (const Config& cfg : Configs()) {
    SCOPED_TRACE(cfg.name);
    for (int i = 0; i < 3; ++i) {
      const int m = rng.Range(1, 40), k = rng.Range(1, 40), n = rng.Range(1, 40);
      const uint64_t seed = rng.Next();
      SCOPED_TRACE(fmt::format("m {} k {} n {} data seed {}", m, k, n, seed));
      for (Init init : {Init::kOverwrite, Init::kPreload, Init::kAccumulate}) {
        const OutFormat f =
            init == Init::kAccumulate || rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16;
        const Workload w =
            accel::MakeGemm(cfg, m, k, n, init, f, rng.Bit(), seed,
                            rng.Bit() ? accel::Values::kSpecials : accel::Values::kFinite);
        SCOPED_TRACE(w.description);
        const Report rep = RunBoth(cfg, w);
        EXPECT_TRUE(rep.pass) << rep.Format();
        EXPECT_EQ(rep.Elements(), uint64_t(m) * n);
      }
      const Workload d = accel::MakeDense(cfg, m, k, n, true, true, OutFormat::kBf16, seed);
      EXPECT_TRUE(RunBoth(cfg, d).pass) << d.description;
      const Workload mlp =
          accel::MakeMlp(cfg, m, {k, rng.Range(1, 30), rng.Range(1, 30), n}, rng.Bit(), true, seed);
      const Report rm = RunBoth(cfg, mlp);
      EXPECT_TRUE(rm.pass) << mlp.description << "\n" << rm.Format();
      ASSERT_EQ(rm.tensors.size(), 3u);  // every layer's output, hidden ones included
      EXPECT_EQ(rm.tensors[0].name, "L0.out");
      host::ConvShape s;
      s.n = rng.Range(1, 2), s.h = rng.Range(3, 7), s.w = rng.Range(3, 7);
      s.cin = rng.Range(1, 5), s.cout = rng.Range(1, 9), s.kh = rng.Range(1, 3);
      s.kw = rng.Range(1, 3), s.stride = rng.Range(1, 2), s.pad = rng.Range(0, 1);
      const bool bias = rng.Bit(), relu = rng.Bit();
      const Workload c = accel::MakeConv(cfg, s, bias, relu, host::OutFormat::kFp32, seed);
      EXPECT_TRUE(RunBoth(cfg, c).pass) << c.description;
    }
  }
}

// The layouts the workloads write and read are the host library's: a GEMM read back equals the
// golden GEMM of the host data (an error common to both back ends would not show otherwise).
TEST_F(WorkloadsTest, GemmMatchesTheGoldenGemmDirectly) {
  tb::Rng rng(test::TestSeed());
  for (const Config& cfg : Configs()) {
    const int m = rng.Range(1, 50), k = rng.Range(1, 50), n = rng.Range(1, 50);
    const Workload w =
        accel::MakeGemm(cfg, m, k, n, Init::kPreload, OutFormat::kFp32, false, rng.Next());
    ModelSim dut(cfg);
    accel::Load(dut, w);
    ASSERT_TRUE(accel::Run(dut, w, {}).ok());
    const std::vector<uint16_t> a(w.inputs[0].data.begin(), w.inputs[0].data.end());
    const std::vector<uint16_t> b(w.inputs[1].data.begin(), w.inputs[1].data.end());
    const auto want = gemm::Gemm({m, k, n}, a, b, w.inputs[2].data, cfg.machine.mode);
    EXPECT_EQ(accel::ReadTensor(dut, w.Output("C")), want) << cfg.name << " " << w.description;
  }
}

TEST_F(WorkloadsTest, RandomDataIsFiniteAndSpread) {
  const uint64_t seed = test::TestSeed();
  const Config cfg = accel::ConfigFromName("16x16_1ch");
  const Workload w =
      accel::MakeGemm(cfg, 64, 64, 64, Init::kOverwrite, OutFormat::kFp32, false, seed);
  int zeros = 0, negatives = 0;
  std::vector<bool> binades(256);
  for (uint32_t x : w.inputs[0].data) {
    const auto h = uint16_t(x);
    ASSERT_NE(num::Classify16(h), num::FpClass::kNaN);
    ASSERT_NE(num::Classify16(h), num::FpClass::kInf);
    zeros += num::Classify16(h) == num::FpClass::kZero;
    negatives += (h & 0x8000) != 0;
    binades[(h >> 7) & 0xFF] = true;
  }
  int spread = 0;
  for (bool b : binades) spread += b;
  EXPECT_GT(zeros, 0);
  EXPECT_GT(negatives, 1000);
  EXPECT_GE(spread, 20);
  // The same seed gives the same data.
  const Workload again =
      accel::MakeGemm(cfg, 64, 64, 64, Init::kOverwrite, OutFormat::kFp32, false, seed);
  EXPECT_EQ(again.inputs[0].data, w.inputs[0].data);
}

TEST_F(WorkloadsTest, CorruptedGemmOutputIsNamed) {
  tb::Rng rng(test::TestSeed());
  const Config cfg = accel::ConfigFromName("4x4_1ch");
  const int m = rng.Range(5, 30), n = rng.Range(5, 30);
  const Workload w =
      accel::MakeGemm(cfg, m, 12, n, Init::kOverwrite, OutFormat::kFp32, false, rng.Next());
  const int row = rng.Range(0, m - 1), col = rng.Range(0, n - 1);
  const Report rep = RunBoth(cfg, w, [&](accel::Sim& s) {
    Corrupt(s, w.Output("C"), uint64_t(row) * n + col, rng.Range(0, 3));
  });
  ASSERT_FALSE(rep.pass);
  EXPECT_EQ(rep.Mismatches(), 1u);
  ASSERT_EQ(rep.first.size(), 1u);
  EXPECT_EQ(rep.first[0].tensor, "C");
  EXPECT_EQ(rep.first[0].where, fmt::format("row {}, col {}", row, col));
  EXPECT_NE(rep.Format().find(fmt::format("C[row {}, col {}]: got 0x", row, col)),
            std::string::npos)
      << rep.Format();
}

TEST_F(WorkloadsTest, CorruptedConvOutputIsNamedByNOhOwCout) {
  tb::Rng rng(test::TestSeed());
  const Config cfg = accel::ConfigFromName("4x4_1ch");
  host::ConvShape s;
  s.n = 2, s.h = 6, s.w = 5, s.cin = 3, s.cout = 7, s.kh = 3, s.kw = 2, s.stride = 1, s.pad = 1;
  const Workload w = accel::MakeConv(cfg, s, true, false, host::OutFormat::kFp32, rng.Next());
  const int n = rng.Range(0, s.n - 1), oh = rng.Range(0, s.OutH() - 1);
  const int ow = rng.Range(0, s.OutW() - 1), co = rng.Range(0, s.cout - 1);
  const uint64_t index = (uint64_t(n * s.OutH() + oh) * s.OutW() + ow) * s.cout + co;
  const Report rep =
      RunBoth(cfg, w, [&](accel::Sim& sim) { Corrupt(sim, w.Output("Y"), index, 3); });
  ASSERT_FALSE(rep.pass);
  EXPECT_EQ(rep.Mismatches(), 1u);
  ASSERT_EQ(rep.first.size(), 1u);
  EXPECT_EQ(rep.first[0].tensor, "Y");
  EXPECT_EQ(rep.first[0].where, fmt::format("n {}, oh {}, ow {}, cout {}", n, oh, ow, co));
  EXPECT_EQ(rep.first[0].got ^ rep.first[0].want, 0x01000000u);  // byte 3's low bit
}

TEST_F(WorkloadsTest, CorruptedHiddenLayerIsNamedAndReportsAreCapped) {
  tb::Rng rng(test::TestSeed());
  const Config cfg = accel::ConfigFromName("8x8_1ch");
  const Workload w = accel::MakeMlp(cfg, 20, {16, 24, 8}, true, true, rng.Next());
  const Report rep = RunBoth(cfg, w, [&](accel::Sim& s) {
    for (uint64_t i = 0; i < 12; ++i) Corrupt(s, w.Output("L0.out"), i * 7, 1);
  });
  ASSERT_FALSE(rep.pass);
  ASSERT_EQ(rep.tensors.size(), 2u);
  EXPECT_EQ(rep.tensors[0].name, "L0.out");
  EXPECT_EQ(rep.tensors[0].mismatches, 12u);
  EXPECT_EQ(rep.tensors[1].mismatches, 0u);
  EXPECT_EQ(rep.first.size(), 10u);  // the first 10 only
  EXPECT_EQ(rep.first[1].where, "row 0, col 7");
  EXPECT_EQ(rep.first[1].elem_bytes, 2);
}

TEST_F(WorkloadsTest, ConfigNames) {
  const Config d = accel::ConfigFromName("16x16_1ch");
  EXPECT_EQ(d.name, "16x16_1ch");
  EXPECT_EQ(d.machine.r, 16);
  EXPECT_EQ(d.machine.act_depth, 2048);
  EXPECT_EQ(d.machine.wgt_depth, 2048);
  EXPECT_EQ(d.machine.acc_depth, 4096);
  EXPECT_EQ(d.machine.queue_depth, 32);
  EXPECT_EQ(d.machine.hbm_bytes, uint64_t(1) << 31);
  EXPECT_EQ(d.machine.mode, num::Mode::kIeee);
  EXPECT_TRUE(d.per_bank_refresh);
  EXPECT_EQ(d.preset, 0);
  const Config e = accel::ConfigFromName("16x16_8ch");
  EXPECT_EQ(e.channels, 8);
  EXPECT_EQ(e.machine.hbm_bytes, uint64_t(1) << 34);
  EXPECT_EQ(accel::ConfigFromName("64x1_2ch").machine.c, 1);
  EXPECT_EQ(accel::ConfigFromName("128x128_8ch").machine.r, 128);
  EXPECT_EQ(accel::ResolveConfig("4x4_1ch").name, "4x4_1ch");
  // Every row of accel_params, in order, at its default but for the name's R, C and N.
  const std::vector<std::string> front = {"Rows=16", "Cols=16", "Channels=8", "ActDepth=2048"};
  const std::vector<std::string> got = accel::VerilogParams(e);
  ASSERT_EQ(got.size(), accel::Params().size());
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + 4), front);
  EXPECT_EQ(accel::VerilogArgs(e)[0], "-GRows=16");
  // CMake builds each engine with the parameters the C++ side computes for its name (the engines
  // check this at start; here for every engine at once, without building one).
  std::ifstream engines(std::string(TPU_BINARY_DIR) + "/sim/tpusim_engines.txt");
  ASSERT_TRUE(engines) << "no sim/tpusim_engines.txt in the build folder";
  int listed = 0;
  for (std::string line; std::getline(engines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string name, param;
    in >> name;
    std::vector<std::string> params;
    while (in >> param) params.push_back(param);
    if (name.find('_', name.find("ch")) != std::string::npos) continue;  // a JSON engine
    EXPECT_EQ(accel::VerilogParams(accel::ConfigFromName(name)), params) << name;
    ++listed;
  }
  EXPECT_GE(listed, int(std::size(builds::kEngines)));
  for (const auto& [name, part] :
       std::vector<std::pair<std::string, std::string>>{{"0x4_1ch", "rows"},
                                                        {"129x4_1ch", "rows"},
                                                        {"4x0_1ch", "cols"},
                                                        {"4x4_3ch", "channels"},
                                                        {"4x4", "RxC_Nch"},
                                                        {"sixteen", "RxC_Nch"}}) {
    try {
      accel::ConfigFromName(name);
      ADD_FAILURE() << name << " accepted";
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find(part), std::string::npos) << ex.what();
    }
  }
}

TEST_F(WorkloadsTest, ConfigFromBuildReadsTheBuildsFile) {
  // accel_3x5 in rtl/builds.json: Rows=3 Cols=5 ActDepth=32 WgtDepth=24 AccDepth=40
  // QueueDepth=8 Channels=4, the rest at tpu_accel.sv's defaults.
  const Config c = accel::ConfigFromBuild("accel_3x5");
  EXPECT_EQ(c.machine.r, 3);
  EXPECT_EQ(c.machine.c, 5);
  EXPECT_EQ(c.machine.act_depth, 32);
  EXPECT_EQ(c.machine.wgt_depth, 24);
  EXPECT_EQ(c.machine.acc_depth, 40);
  EXPECT_EQ(c.machine.queue_depth, 8);
  EXPECT_EQ(c.channels, 4);
  EXPECT_EQ(c.preset, builds::kAccelDefaultPreset);
  EXPECT_EQ(c.per_bank_refresh, builds::kAccelDefaultPerBankRefresh != 0);
  EXPECT_EQ(c.machine.hbm_bytes, 4 * accel::kHbmBytesPerChannel);
  EXPECT_THROW(accel::ConfigFromBuild("mac_p0"), std::invalid_argument);  // not an accelerator
  EXPECT_THROW(accel::ConfigFromBuild("accel_9x9"), std::invalid_argument);
}

TEST_F(WorkloadsTest, ConfigJson) {
  const Config c = accel::ConfigFromJson(
      R"({"rows": 8, "cols": 32, "channels": 4, "act_depth": 100, "wgt_depth": 200,
          "acc_depth": 300, "queue_depth": 7, "preset": 1, "per_bank_refresh": false,
          "mode": "ftz"})");
  EXPECT_EQ(c.machine.r, 8);
  EXPECT_EQ(c.machine.c, 32);
  EXPECT_EQ(c.channels, 4);
  EXPECT_EQ(c.machine.act_depth, 100);
  EXPECT_EQ(c.machine.wgt_depth, 200);
  EXPECT_EQ(c.machine.acc_depth, 300);
  EXPECT_EQ(c.machine.queue_depth, 7);
  EXPECT_EQ(c.preset, 1);
  EXPECT_FALSE(c.per_bank_refresh);
  EXPECT_EQ(c.machine.mode, num::Mode::kFtz);
  EXPECT_EQ(c.machine.hbm_bytes, uint64_t(1) << 33);
  // Canonical names: the plain name only when everything else is default; the hash otherwise,
  // and the engine name ignores the mode (a register).
  EXPECT_EQ(accel::ConfigFromJson(R"({"rows": 4, "cols": 4})").name, "4x4_1ch");
  const Config ftz = accel::ConfigFromJson(R"({"mode": "ftz"})");
  EXPECT_EQ(ftz.name.substr(0, 10), "16x16_1ch_");
  EXPECT_EQ(ftz.name.size(), 18u);
  EXPECT_EQ(ftz.name.find_first_not_of("0123456789abcdef", 10), std::string::npos);
  EXPECT_EQ(accel::EngineName(ftz), "16x16_1ch");
  EXPECT_NE(accel::CanonicalName(c), accel::EngineName(c));
  EXPECT_NE(accel::ConfigFromJson(R"({"acc_depth": 64})").name,
            accel::ConfigFromJson(R"({"acc_depth": 65})").name);
  EXPECT_EQ(accel::VerilogParams(c)[8], "PerBankRefresh=0");

  for (const auto& [json, key] : std::vector<std::pair<std::string, std::string>>{
           {R"({"rows": 0})", "rows"},
           {R"({"cols": 129})", "cols"},
           {R"({"rows": 2.5})", "rows"},
           {R"({"channels": 3})", "channels"},
           {R"({"act_depth": 0})", "act_depth"},
           {R"({"wgt_depth": 70000})", "wgt_depth"},
           {R"({"acc_depth": "big"})", "acc_depth"},
           {R"({"queue_depth": 0})", "queue_depth"},
           {fmt::format(R"({{"preset": {}}})", hbm::kNumPresets), "preset"},  // past the table
           {R"({"per_bank_refresh": 1})", "per_bank_refresh"},
           {R"({"mode": "fast"})", "mode"},
           {R"({"row": 4})", "unknown key 'row'"},
           {R"([1, 2])", "JSON object"},
           {R"({"rows": )", "not valid JSON"}}) {
    try {
      accel::ConfigFromJson(json, "t.json");
      ADD_FAILURE() << json << " accepted";
    } catch (const std::invalid_argument& ex) {
      const std::string msg = ex.what();
      EXPECT_NE(msg.find(key), std::string::npos) << json << ": " << msg;
      EXPECT_NE(msg.find("t.json"), std::string::npos) << msg;
    }
  }
  // A range is named for out-of-range values.
  try {
    accel::ConfigFromJson(R"({"cols": 129})");
    ADD_FAILURE() << "cols 129 accepted";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("1..128"), std::string::npos) << ex.what();
  }
  EXPECT_THROW(accel::ConfigFromFile("/nonexistent/x.json"), std::invalid_argument);
}

// The table of parameters drives every use: each row's key is read from a file, checked against
// its range, given to Verilog under its name and counted in the canonical name, so a new row is
// covered here without a line of test.
TEST_F(WorkloadsTest, EveryParameterRowIsParsedCheckedAndPassedOn) {
  const Config base = accel::ConfigFromJson("{}");
  for (const accel::Param& p : accel::Params()) {
    SCOPED_TRACE(p.key);
    EXPECT_NE(accel::ConfigKeys().find(p.key), std::string::npos);
    EXPECT_EQ(p.Get(base), p.def);
    EXPECT_NE(accel::ParamsTable().find(p.key), std::string::npos);
    // A legal value other than the default: the range's other end, or for channels 2 or 1.
    const int v = p.kind == accel::Param::Kind::kChannels ? (p.def == 1 ? 2 : 1)
                  : p.def == p.Hi()                       ? p.lo
                                                          : p.Hi();
    const std::string value =
        p.kind == accel::Param::Kind::kBool ? (v ? "true" : "false") : std::to_string(v);
    const Config c = accel::ConfigFromJson(fmt::format(R"({{"{}": {}}})", p.key, value));
    EXPECT_EQ(p.Get(c), v);
    const auto params = accel::VerilogParams(c);
    EXPECT_NE(std::find(params.begin(), params.end(), fmt::format("{}={}", p.verilog, v)),
              params.end());
    EXPECT_NE(c.name, base.name);
    // One past the range's end is an error naming the key and the file.
    if (p.kind == accel::Param::Kind::kInt || p.kind == accel::Param::Kind::kPreset) {
      try {
        accel::ConfigFromJson(fmt::format(R"({{"{}": {}}})", p.key, p.Hi() + 1), "t.json");
        ADD_FAILURE() << p.key << " = " << p.Hi() + 1 << " accepted";
      } catch (const std::invalid_argument& ex) {
        EXPECT_NE(std::string(ex.what()).find(fmt::format("t.json: {} = {}", p.key, p.Hi() + 1)),
                  std::string::npos)
            << ex.what();
      }
    }
  }
  // A preset by name, and a name the table does not have.
  EXPECT_EQ(accel::ConfigFromJson(R"({"preset": "2400"})").preset, hbm::kPreset2400);
  EXPECT_EQ(accel::ConfigFromJson(R"({"preset": "test"})").preset, hbm::kPresetTest);
  try {
    accel::ConfigFromJson(R"({"preset": "3200"})", "t.json");
    ADD_FAILURE() << "preset 3200 accepted";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find(R"(preset "3200" is not one of "2000", "2400", "test")"),
              std::string::npos)
        << ex.what();
  }
}

TEST_F(WorkloadsTest, FromHostRoundsPerTheContract) {
  tb::Rng rng(test::TestSeed());
  for (const char* cfg_name : {"4x4_1ch", R"({"rows": 4, "cols": 4, "mode": "ftz"})"}) {
    const Config cfg =
        cfg_name[0] == '{' ? accel::ConfigFromJson(cfg_name) : accel::ConfigFromName(cfg_name);
    const int m = rng.Range(1, 20), k = rng.Range(1, 20), n = rng.Range(1, 20);
    auto f32 = [](uint32_t u) {
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    };
    auto bits = [](float f) {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    };
    // Random bits with rounding ties, carries, subnormals, NaN and infinities mixed in.
    const uint32_t special[] = {0x3F808000u, 0x3F818000u, 0x3F7FFFFFu, 0x7F7FFFFFu, 0x00008000u,
                                0x00400000u, 0x80018000u, 0x7F800000u, 0x7FC00001u, 0xFF800001u};
    auto draw = [&]() {
      if (rng.Range(0, 3) == 0) return f32(special[rng.Range(0, 9)]);
      return f32(rng.U32());
    };
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
    for (auto& x : a) x = draw();
    for (auto& x : b) x = draw();
    for (auto& x : c) x = f32(rng.U32());
    const Workload w = accel::MakeFromHost(cfg, m, k, n, a, b, &c);
    ASSERT_EQ(w.inputs.size(), 3u);
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(w.inputs[0].data[i], num::Fp32ToBf16(bits(a[i]), cfg.machine.mode))
          << fmt::format("A[{}] = {:#010x}", i, bits(a[i]));
    }
    for (size_t i = 0; i < b.size(); ++i) {
      ASSERT_EQ(w.inputs[1].data[i], num::Fp32ToBf16(bits(b[i]), cfg.machine.mode))
          << fmt::format("B[{}] = {:#010x}", i, bits(b[i]));
    }
    for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(w.inputs[2].data[i], bits(c[i]));  // fp32 kept
    EXPECT_TRUE(RunBoth(cfg, w).pass);
  }
  // Fixed cases: ties to even, NaN canonical.
  const Config cfg = accel::ConfigFromName("4x4_1ch");
  const std::vector<float> a = {1.00390625f, 1.01171875f}, b = {1.0f, 2.0f};
  const Workload w = accel::MakeFromHost(cfg, 1, 2, 1, a, b);
  EXPECT_EQ(w.inputs[0].data[0], 0x3F80u);  // 0x3F808000: a tie, to even
  EXPECT_EQ(w.inputs[0].data[1], 0x3F82u);  // 0x3F818000: a tie, up to even
  EXPECT_EQ(w.inputs.size(), 2u);           // overwrite: no C0
  EXPECT_THROW(accel::MakeFromHost(cfg, 2, 2, 1, a, b), std::invalid_argument);
}

}  // namespace
}  // namespace tpu
