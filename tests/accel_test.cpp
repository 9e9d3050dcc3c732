// SPDX-License-Identifier: Apache-2.0
// The accelerator's fast tier: the suite of accel_suite.h on four small builds, the invariance,
// weight-reuse, host-port, register and 4 KB tests, and the functional-coverage cases the suite
// does not reach.
#include <functional>

#include "Vaccel_2x128.h"
#include "Vaccel_36x4.h"
#include "Vaccel_3x5.h"
#include "Vaccel_4x4_q4.h"
#include "Vaccel_8x8.h"
#include "accel_suite.h"
#include "tpu/net.h"
#include "tpu/tb/job_pool.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"
#include "tpu/tb/train_run.h"
#include "tpu/tb/vpu_ucode_rom.h"
#include "tpu/train.h"
#include "train_graphs.h"

// ---------------------------------------------------------------------------------------------
// Fast tier: the five small builds of rtl/builds.json.

namespace tpu {
namespace accel_suite {
namespace {

// Each build's configuration is its parameters in rtl/builds.json (accel::ConfigFromBuild).

struct Accel4x4Q4 : Build<Accel4x4Q4, Vaccel_4x4_q4> {
  static constexpr const char* kName = "accel_4x4_q4";
  static Limits TestLimits() { return {30, 80, 40, 40, 9, 8, 24}; }
};

struct Accel3x5 : Build<Accel3x5, Vaccel_3x5> {
  static constexpr const char* kName = "accel_3x5";
  static Limits TestLimits() { return {30, 60, 30, 30, 8, 7, 20}; }
};

struct Accel8x8 : Build<Accel8x8, Vaccel_8x8> {
  static constexpr const char* kName = "accel_8x8";
  static Limits TestLimits() { return {15, 100, 64, 64, 10, 12, 40}; }
};

// Activation rows of 36 elements (72 bytes: up to three beats, the last partial), plain and
// through the transposer (36 x 36 tiles), weight rows transposed from 36-element source rows,
// and dispatch queues of 5 (not a power of two).
struct Accel36x4 : Build<Accel36x4, Vaccel_36x4> {
  static constexpr const char* kName = "accel_36x4";
  static Limits TestLimits() { return {3, 40, 48, 12, 6, 8, 24}; }
};

// Two rows of the TPU's 128 columns on the whole stack: rows of 128 elements in the buffers, fp32
// rows of 512 B (16-beat LOADs to the accumulators and STOREs), N-tiles of 128, and the DMA over
// 16 ports moving 8 beats a cycle.
struct Accel2x128 : Build<Accel2x128, Vaccel_2x128> {
  static constexpr const char* kName = "accel_2x128";
  static Limits TestLimits() { return {4, 24, 12, 300, 5, 4, 140}; }
};

using SmallConfigs = ::testing::Types<Accel4x4Q4, Accel3x5, Accel8x8, Accel36x4, Accel2x128>;

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Small, AccelTest, SmallConfigs, ConfigNames);

// The edge programs of every machine a test or tpusim builds (the 128x128 engines included, which
// only the long tier simulates) on the golden model alone: each is legal and its LOADs read only
// bytes the test writes. On 128x128 the transposing LOADs once read past the data written, and
// the long tier compared the device model's background with the golden model's zeros.
TEST(AccelEdgeCases, ReadOnlyWrittenDataOnEveryMachine) {
  std::vector<Config> cfgs;
  for (const auto& m : builds::kModels) {
    if (std::string(m.top) == "tpu_accel") cfgs.push_back(accel::ConfigFromBuild(m.name));
  }
  for (const char* e : builds::kEngines) cfgs.push_back(accel::ConfigFromName(e));
  const uint64_t seed = test::TestSeed();
  for (const Config& cfg : cfgs) {
    const isa::MachineConfig& c = cfg.machine;
    const EdgeCases ec = LegalEdgeCases(c, seed);
    for (const Case& cs : ec.cases) {
      SCOPED_TRACE(fmt::format("{}: {}", cfg.name, cs.name));
      isa::Machine golden(c);
      golden.WriteHbm(kDataAddr, ec.data.data(), ec.data.size());
      golden.WriteHbm(c.hbm_bytes - kTopBytes, ec.topdata.data(), ec.topdata.size());
      std::vector<uint8_t> bytes;
      for (const auto& b : cs.prog) bytes.insert(bytes.end(), b.begin(), b.end());
      golden.WriteHbm(cs.write_addr, bytes.data(), bytes.size());
      const isa::RunResult g = golden.Run(cs.run_addr, cs.Count());
      EXPECT_TRUE(g.ok()) << g.message;
      EXPECT_EQ(g.unwritten_bytes_read, 0u)
          << fmt::format("first at 0x{:X}, pc {}", g.first_unwritten, g.first_unwritten_pc);
    }
  }
}

namespace {
// The VERSION register: {major, minor} of the instruction set (rtl/accel/isa.json).
constexpr uint32_t kVersionWord = uint32_t(isa::kVersionMajor) << 16 | isa::kVersionMinor;

// The same workloads (same data) on four array shapes: the output bytes are identical (the
// contract fixes the order of the MACs, k = 0 .. K-1, whatever the tiling), and each matches the
// golden model. A convolution may go through GEMM windows on one shape and through the host's
// im2col on another (a window K-tile holds one tap, so few channels on a wide array take im2col):
// the bytes must still agree.
class AccelInvarianceTest : public ::testing::Test {};

TEST_F(AccelInvarianceTest, ShapeInvariance) {
  tb::Rng rng(test::TestSeed());
  Bench<Vaccel_4x4_q4> b4(Accel4x4Q4::MakeConfig());
  Bench<Vaccel_3x5> b3(Accel3x5::MakeConfig());
  Bench<Vaccel_8x8> b8(Accel8x8::MakeConfig());
  Bench<Vaccel_2x128> b2(Accel2x128::MakeConfig());
  using Make = std::function<Workload(const Config&)>;
  std::vector<std::pair<std::string, Make>> makes;
  for (int i = 0; i < int(test::Scaled(6)); ++i) {
    const int m = rng.Range(1, 30), k = rng.Range(1, 30), n = rng.Range(1, 24);
    const uint64_t seed = rng.Next();
    const Init init = Init(rng.Range(0, 2));
    const OutFormat f =
        init == Init::kAccumulate || rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16;
    const bool relu = rng.Bit();
    const auto values = rng.Bit() ? accel::Values::kSpecials : accel::Values::kFinite;
    makes.push_back({"gemm", [=](const Config& c) {
                       return accel::MakeGemm(c, m, k, n, init, f, relu, seed, values);
                     }});
  }
  {
    const int m = rng.Range(1, 16), in = rng.Range(1, 20), hid = rng.Range(1, 20);
    const int out = rng.Range(1, 12);
    const uint64_t seed = rng.Next();
    const bool bias = rng.Bit(), relu = rng.Bit();
    makes.push_back({"mlp", [=](const Config& c) {
                       return accel::MakeMlp(c, m, {in, hid, out}, bias, relu, seed);
                     }});
  }
  {
    host::ConvShape s;
    s.n = rng.Range(1, 2), s.h = rng.Range(3, 7), s.w = rng.Range(3, 7);
    s.cin = rng.Range(1, 10), s.cout = rng.Range(1, 10), s.kh = rng.Range(1, 3);
    s.kw = rng.Range(1, 3), s.stride = rng.Range(1, 2), s.pad = rng.Range(0, 1);
    const uint64_t seed = rng.Next();
    const bool bias = rng.Bit(), relu = rng.Bit();
    const host::OutFormat out = rng.Bit() ? host::OutFormat::kBf16 : host::OutFormat::kFp32;
    makes.push_back(
        {"conv", [=](const Config& c) { return accel::MakeConv(c, s, bias, relu, out, seed); }});
  }
  for (const auto& [kind, make] : makes) {
    const Workload w4 = make(b4.config()), w3 = make(b3.config()), w8 = make(b8.config());
    const Workload w2 = make(b2.config());
    SCOPED_TRACE(fmt::format("{} {}, data seed {}", kind, w4.description, w4.seed));
    ASSERT_EQ(w4.inputs.size(), w3.inputs.size());
    // A convolution's first input is its NHWC input through windows, or the im2col matrix the
    // host made from it, as each machine's lowering has it: the NHWC data must be the same.
    for (const Workload* w : {&w3, &w8, &w2}) {
      ASSERT_EQ(w4.conv_input, w->conv_input) << "the inputs must be the same data";
    }
    for (size_t i = w4.conv ? 1 : 0; i < w4.inputs.size(); ++i) {
      ASSERT_EQ(w4.inputs[i].data, w3.inputs[i].data) << "the inputs must be the same data";
      ASSERT_EQ(w4.inputs[i].data, w8.inputs[i].data) << "the inputs must be the same data";
      ASSERT_EQ(w4.inputs[i].data, w2.inputs[i].data) << "the inputs must be the same data";
    }
    const auto o4 = b4.Check(w4, num::Mode::kIeee);
    const auto o3 = b3.Check(w3, num::Mode::kIeee);
    const auto o8 = b8.Check(w8, num::Mode::kIeee);
    const auto o2 = b2.Check(w2, num::Mode::kIeee);
    ASSERT_EQ(o4.size(), w4.outputs.size());
    ASSERT_EQ(o3.size(), o4.size());
    ASSERT_EQ(o8.size(), o4.size());
    ASSERT_EQ(o2.size(), o4.size());
    for (size_t t = 0; t < o4.size(); ++t) {
      const auto& tensor = w4.outputs[t];
      for (const auto& [name, other] :
           {std::pair{"3x5", &o3[t]}, std::pair{"8x8", &o8[t]}, std::pair{"2x128", &o2[t]}}) {
        ASSERT_EQ(other->size(), o4[t].size());
        for (size_t i = 0; i < o4[t].size(); ++i) {
          ASSERT_EQ((*other)[i], o4[t][i])
              << fmt::format("{}[{}]: {} gives 0x{:08X}, 4x4 gives 0x{:08X}", tensor.name,
                             tensor.Where(i), name, (*other)[i], o4[t][i]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace accel_suite
}  // namespace tpu

// ---------------------------------------------------------------------------------------------
// Functional coverage (tpu/tb/fcov.h): cases the suite above does not reach.

namespace tpu {
namespace accel_suite {
namespace {

// Runs a hand-written program on the machine and on the golden model, both given `data` at
// kDataAddr, the program at prog_addr and a zeroed output area: the program must be legal, and
// the machine must end without an error or a JEDEC violation in the golden model's end state.
// Returns false after a failure that leaves nothing to compare.
template <class S>
bool RunBoth(S& s, isa::Machine& golden, const std::vector<uint8_t>& data,
             const std::vector<Bytes>& prog, uint64_t prog_addr, const accel::RunOptions& opt,
             accel::Result* result = nullptr) {
  std::vector<uint8_t> bytes;
  for (const auto& b : prog) bytes.insert(bytes.end(), b.begin(), b.end());
  const std::vector<uint8_t> zeros(kOutBytes, 0);
  s.WriteHbm(kOutAddr, zeros.data(), zeros.size());
  s.WriteHbm(kDataAddr, data.data(), data.size());
  s.WriteHbm(prog_addr, bytes.data(), bytes.size());
  golden.WriteHbm(kDataAddr, data.data(), data.size());
  golden.WriteHbm(prog_addr, bytes.data(), bytes.size());
  const isa::RunResult g = golden.Run(prog_addr, uint32_t(prog.size()));
  if (!g.ok()) {
    ADD_FAILURE() << "the case is wrong: " << g.message;
    return false;
  }
  const accel::Result r = s.Run(prog_addr, uint32_t(prog.size()), opt);
  ExpectSameRun(s, golden, r, g, prog);
  if (result) *result = r;
  return true;
}
template <class S>
bool RunBoth(S& s, isa::Machine& golden, const std::vector<uint8_t>& data,
             const std::vector<Bytes>& prog, uint64_t prog_addr, uint64_t max_cycles) {
  accel::RunOptions opt;
  opt.max_cycles = max_cycles;
  return RunBoth(s, golden, data, prog, prog_addr, opt);
}

// accel.instr / GEMM.accumulate: a GEMM that reuses the loaded weights and accumulates (the host
// library's accumulating GEMMs always load their weights). Two GEMMs on one weight tile add
// A[0:2]·W and A[2:4]·W onto a loaded C0; the stored bytes must equal the golden model's.
TEST(AccelWeightReuseTest, AccumulateWithReusedWeights) {
  Bench<Vaccel_4x4_q4> bench(Accel4x4Q4::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  tb::Rng rng(test::TestSeed());
  const std::vector<uint8_t> data = SmallBf16(4096, rng);
  const auto prog = Program(
      c, {Ld(isa::kBufAct, 0, 4, R, {}, kDataAddr, 64),
          Ld(isa::kBufWgt, 0, R, C, kPushNext, kDataAddr + 1024, 32),
          Ld(isa::kBufAcc, 0, 2, C, {}, kDataAddr + 2048, 64),
          G(2, R, C, true, kPopPrev, 0, 0, 0, true),    // load the weights, accumulate onto C0
          G(2, R, C, false, kPushNext, 2, 0, 0, true),  // reuse them, accumulate
          St(0, 2, C, kPopPrev, kOutAddr, 64)});
  auto& s = bench.Sim(num::Mode::kIeee);
  isa::Machine golden(c);
  ASSERT_TRUE(RunBoth(s, golden, data, prog, kProgAddr, 200'000));
  ExpectSameHbm(s, golden, kOutAddr, kOutBytes);
}

// The on-chip comparison that follows every test program (ExpectSameOnChip: the buffers, the
// accumulators and the array's weights against the golden model's), on every fast array: every
// part is found through Verilator's public access (a renamed instance or variable would otherwise
// turn the comparison off without a word), holds what the program wrote, and a changed element
// of each part is reported. The GEMM loads a ragged tile (kv = R - 1 where R > 1, nv = C - 1
// where C > 1), so the array's weights hold +0 padding too.
template <class T>
void CheckOnChipState() {
  SCOPED_TRACE(T::kName);
  Bench<typename T::Model> bench(T::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const auto kv = uint16_t(std::max(1, c.r - 1)), nv = uint16_t(std::max(1, c.c - 1));
  tb::Rng rng(test::TestSeed());
  const std::vector<uint8_t> data = SmallBf16(kDataBytes, rng);
  const uint32_t act_row = RowBytes(R, 2), wgt_row = RowBytes(C, 2), acc_row = RowBytes(C, 4);
  const auto prog = Program(
      c, {Ld(isa::kBufAct, 1, 3, R, {}, kDataAddr, act_row),
          Ld(isa::kBufWgt, 2, R, C, kPushNext, kDataAddr + 4 * act_row, wgt_row),
          Ld(isa::kBufAcc, 5, 2, C, {}, kDataAddr + 8192, acc_row),
          G(3, kv, nv, true, kPopPrev, 1, 2, 1), G(2, kv, nv, false, kPushNext, 1, 0, 5, true),
          St(1, 3, C, kPopPrev, kOutAddr, std::max<uint32_t>(64, acc_row))});
  auto& s = bench.Sim(num::Mode::kIeee);
  isa::Machine golden(c);
  ASSERT_TRUE(RunBoth(s, golden, data, prog, kProgAddr, 400'000));
  ExpectSameHbm(s, golden, kOutAddr, kOutBytes);
  const accel::OnChip st = s.ReadOnChip();
  EXPECT_EQ(st.missing, "");
  EXPECT_EQ(accel::OnChipDiff(st, golden), "");
  ASSERT_TRUE(golden.WeightsLoaded());
  // One element of each part that the program wrote, changed in a copy of what was read.
  struct Part {
    const char* name;
    std::function<void(accel::OnChip&)> change;
  };
  const std::vector<Part> parts = {
      {"activation buffer", [&](accel::OnChip& o) { o.act.at(size_t(3) * R + R - 1) ^= 1; }},
      {"weight buffer", [&](accel::OnChip& o) { o.wgt.at(size_t(2 + R - 1) * C) ^= 0x8000; }},
      {"accumulators", [&](accel::OnChip& o) { o.acc.at(size_t(6) * C + nv - 1) ^= 1; }},
      {"array weights", [&](accel::OnChip& o) { o.w.at(size_t(R) * C - 1) ^= 0x4000; }}};
  for (const Part& p : parts) {
    accel::OnChip bad = st;
    p.change(bad);
    const std::string diff = accel::OnChipDiff(bad, golden);
    EXPECT_NE(diff.find(p.name), std::string::npos) << p.name << " changed, reported:\n" << diff;
  }
  // Elements no program wrote are not compared (the machine's memories are not reset).
  accel::OnChip unwritten = st;
  unwritten.act.at(0) ^= 1;  // row 0: the LOAD wrote rows 1..3
  EXPECT_EQ(accel::OnChipDiff(unwritten, golden), "");
}

TEST(AccelOnChipTest, EveryPartReadComparedAndAChangeReported) {
  CheckOnChipState<Accel4x4Q4>();
  CheckOnChipState<Accel3x5>();
  CheckOnChipState<Accel8x8>();
  CheckOnChipState<Accel36x4>();
  CheckOnChipState<Accel2x128>();
}

// Faults that only slow the machine. The timing rule of the matrix unit inside the accelerator:
// with its operands in the buffers, the loader takes the next weight-loading GEMM in the cycle it
// hands the current one to the issue queue (tpu_mxu_ctrl), and its weight rows arrive
// kWeightStream cycles later (tpu_accel_compute starts the weight stream when the matrix unit
// takes the command: the stream's job queue, the buffer's read and its output register), one a
// cycle for R cycles. So the array issues the rows of back-to-back GEMMs of M rows with
// max(0, R + kWeightStream - M) idle cycles between two GEMMs: none from M = R + 3 on. Programs
// of 1, 2 and 4 such GEMMs with M = R and M = R + 3 (operands loaded before the first, the STORE
// after the last) are watched cycle by cycle: the array takes every row, and from the first row
// to the last it idles exactly that often. (The stall counters cannot show it exactly: where
// refresh falls during the LOADs before the first GEMM moves the first GEMM's weight stall.) A
// loader that waits for an empty queue or for the bank it does not want, or an issuer that
// leaves a cycle between commands, fails here and nowhere else; so does a faster weight stream
// (then the rule, and kWeightStream, must be updated).
constexpr int kWeightStream = 3;

template <class T>
void CheckGemmsBackToBack() {
  SCOPED_TRACE(T::kName);
  Bench<typename T::Model> bench(T::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  tb::Rng rng(test::TestSeed());
  const std::vector<uint8_t> data = SmallBf16(kDataBytes, rng);
  auto& s = bench.Sim(num::Mode::kIeee);
  for (const auto M : {R, uint16_t(R + kWeightStream)}) {
    const uint64_t gap = uint64_t(std::max(0, R + kWeightStream - M));
    std::vector<uint64_t> busy;
    for (const int gemms : {1, 2, 4}) {
      std::vector<Instr> body = {
          Ld(isa::kBufAct, 0, M, R, {}, kDataAddr, RowBytes(R, 2)),
          Ld(isa::kBufWgt, 0, R, C, kPushNext, kDataAddr + 16384, RowBytes(C, 2))};
      for (int i = 0; i < gemms; ++i) {
        body.push_back(G(M, R, C, true, D(i == 0, false, false, i == gemms - 1)));
      }
      body.push_back(St(0, M, C, kPopPrev));
      isa::Machine golden(c);
      accel::Result r;
      // The cycles in which the array takes a row (tpu_mxu_ctrl's arr_a_valid_q, public in
      // rtl/sim.vlt).
      uint64_t first = 0, last = 0, rows = 0;
      accel::RunOptions opt;
      opt.max_cycles = 400'000;
      opt.on_cycle =
          [&, issue = s.template PublicVar<uint8_t>(".u_mxu.u_ctrl", "arr_a_valid_q")](uint64_t t) {
            if (!*issue) return;
            if (rows++ == 0) first = t;
            last = t;
          };
      ASSERT_TRUE(RunBoth(s, golden, data, Program(c, body), kProgAddr, opt, &r));
      ExpectSameHbm(s, golden, kOutAddr, kOutBytes);
      EXPECT_EQ(rows, uint64_t(gemms) * M) << gemms << " GEMMs of " << M << " rows: rows issued";
      EXPECT_EQ(last - first + 1, rows + uint64_t(gemms - 1) * gap)
          << gemms << " GEMMs of " << M << " rows: cycles from the first row issued to the last ("
          << gap << " idle between two GEMMs expected)";
      busy.push_back(r.perf.busy);
    }
    EXPECT_EQ(busy[1] - busy[0], uint64_t(M)) << "the array's busy count, M = " << M;
    EXPECT_EQ(busy[2] - busy[0], uint64_t(3) * M) << "the array's busy count, M = " << M;
  }
}

TEST(AccelTimingTest, BackToBackGemmsIssueAsThePipelineAllows) {
  CheckGemmsBackToBack<Accel4x4Q4>();
  CheckGemmsBackToBack<Accel3x5>();
  CheckGemmsBackToBack<Accel8x8>();
  CheckGemmsBackToBack<Accel36x4>();
  CheckGemmsBackToBack<Accel2x128>();
}

// The command processor fetches up to FetchDepth instructions ahead of dispatch (tpu_accel_cmd).
// While the first GEMM waits for its operands (behind eight LOADs of the whole activation buffer),
// the compute queue fills and then the fetch buffer, to within a fetch burst of FetchDepth
// instructions; the run is bit-exact. Machines that do not set FetchDepth (accel_8x8, tpusim's
// engines) have tpu_accel.sv's default, 128 (docs/accel.md): a windowed convolution's step is a
// GEMM per image (16 rows on 4x4 images), and a fetch waiting behind the load module's reads (up to
// 64 bursts in the DMA) left the array without instructions with 32 (make run's 3x3 convolution on
// 4x4 images: 154,540 cycles with 32, 141,967 with 128). So a fault that only lowers the default,
// or stops the fetch short of its buffer, fails here.
// `fetch_depth`: the build's FetchDepth in rtl/builds.json, or the default (not the parameter the
// configuration reports, which is whatever the RTL's default is).
template <class T>
void CheckFetchAhead(int fetch_depth) {
  SCOPED_TRACE(T::kName);
  Bench<typename T::Model> bench(T::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const auto M = uint16_t(std::min(c.act_depth, int(R)));
  auto& s = bench.Sim(num::Mode::kIeee);
  tb::Rng rng(tb::DeriveSeed(test::TestSeed(), T::kName));
  const std::vector<uint8_t> data = SmallBf16(kDataBytes, rng);
  const uint8_t* f_cnt = s.template PublicVar<uint8_t>(".u_cmd", "f_cnt");
  const auto rows = uint16_t(std::min<uint64_t>(c.act_depth, 16384 / RowBytes(R, 2)));
  std::vector<Instr> body;
  for (int i = 0; i < 8; ++i) {
    body.push_back(Ld(isa::kBufAct, 0, rows, R, {}, kDataAddr, RowBytes(R, 2)));
  }
  body.push_back(Ld(isa::kBufWgt, 0, R, C, kPushNext, kDataAddr + 16384, RowBytes(C, 2)));
  const int gemms = fetch_depth + c.queue_depth + 40;
  for (int i = 0; i < gemms; ++i) {
    body.push_back(G(M, R, C, i == 0, D(i == 0, false, false, i == gemms - 1)));
  }
  body.push_back(St(0, M, C, kPopPrev));
  isa::Machine golden(c);
  int peak = 0;
  uint64_t first = 0, last = 0, issued = 0;
  accel::RunOptions opt;
  opt.max_cycles = 400'000;
  opt.on_cycle =
      [&, issue = s.template PublicVar<uint8_t>(".u_mxu.u_ctrl", "arr_a_valid_q")](uint64_t t) {
        peak = std::max(peak, int(*f_cnt));
        if (!*issue) return;
        if (issued++ == 0) first = t;
        last = t;
      };
  ASSERT_TRUE(RunBoth(s, golden, data, Program(c, body), kProgAddr, opt));
  ExpectSameHbm(s, golden, kOutAddr, kOutBytes);
  fmt::print(
      "[  FETCH   ] {}: {} instructions fetched ahead at most (FetchDepth {}); {} GEMMs of {} "
      "rows issued in {} cycles\n",
      T::kName, peak, fetch_depth, gemms, M, last - first + 1);
  // It asks for bursts of min(FetchDepth, 16) instructions (fewer at a 4 KB page's end) while
  // they fit beside those it holds and awaits, so it stops within a burst of full.
  EXPECT_GT(peak, fetch_depth - std::min(fetch_depth, 16)) << "instructions fetched ahead at most";
  EXPECT_LE(peak, fetch_depth) << "instructions fetched ahead at most";
  EXPECT_EQ(issued, uint64_t(gemms) * M);
}

TEST(AccelTimingTest, FetchRunsFetchDepthAhead) {
  constexpr int kDefault = 128;  // tpu_accel.sv's FetchDepth (docs/accel.md)
  CheckFetchAhead<Accel8x8>(kDefault);
  CheckFetchAhead<Accel4x4Q4>(4);  // FetchDepth=4 in rtl/builds.json
  CheckFetchAhead<Accel3x5>(kDefault);
}

// Accumulator LOADs beside GEMMs (tpu_accel_compute; tpu_accumulators' two banks, the halves of
// the rows). Rows A = [0, M) and B = [M, 2M) lie in bank 0. Twelve GEMMs into A, then an
// accumulator LOAD of M rows into L, sixteen GEMMs overwriting B (the first pushes a
// compute->load token), one more onto B that pushes a compute->store token, and one onto L that
// pushes one; the STOREs of A, B and L follow. With L in bank 1 the LOAD starts while the GEMMs
// before it are in flight, GEMMs into B start while it runs and (on machines whose queues hold 8
// instructions or more) its rows are written in cycles in which the array writes results; the GEMM
// that pushes a compute->store token starts only after the LOAD is complete (the store module may
// read what it writes). With L = [2M, 3M) in bank 0 none of this happens: the LOAD waits for the
// GEMMs, the GEMMs into B for the LOAD. A LOAD into bank 1 that pushes a token (the STORE of A pops
// it) waits for the GEMMs before it, and GEMMs into B that push no token still start beside it
// (one that pushes waits for the LOAD's push: tokens come in program order). Each run is bit-exact
// against the golden model; a fault that only serializes the LOAD fails here. The counts land in
// the coverage group accel.acc_load_beside.
template <class T>
void CheckAccLoadsBesideGemms(uint64_t bins[3]) {
  SCOPED_TRACE(T::kName);
  Bench<typename T::Model> bench(T::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const int half = c.acc_depth / 2;  // tpu_pkg::acc_bank_rows
  const auto M = uint16_t(std::min({half / 3, c.act_depth, 16}));
  auto& s = bench.Sim(num::Mode::kIeee);
  tb::Rng rng(tb::DeriveSeed(test::TestSeed(), T::kName));
  const std::vector<uint8_t> data = SmallBf16(kDataBytes, rng);
  const uint8_t* acc_busy = s.template PublicVar<uint8_t>(".u_compute", "acc_busy_q");
  const uint8_t* done_empty = s.template PublicVar<uint8_t>(".u_compute", "done_empty");
  const uint8_t* gemm_go = s.template PublicVar<uint8_t>(".u_compute", "gemm_go");
  const uint8_t* accld_go = s.template PublicVar<uint8_t>(".u_compute", "accld_go");
  const uint8_t* ld_take = s.template PublicVar<uint8_t>(".u_mxu.u_acc", "ld_take");
  uint32_t wr_bytes = 0;
  const auto* wr_v =
      static_cast<const uint8_t*>(s.PublicVarBytes(".u_mxu.u_acc", "wr_v", &wr_bytes));
  const uint32_t row = RowBytes(C, 4);
  constexpr uint64_t kOut = kOutAddr + 0x10000;  // A, B and L's rows, 0x4000 apart
  // 0: L in the other bank; 1: the same, the LOAD pushing a token; 2: L in the GEMMs' bank.
  for (const int v : {0, 1, 2}) {
    const bool other = v < 2, pushes = v == 1;
    SCOPED_TRACE(!other   ? "the LOAD in the GEMMs' bank"
                 : pushes ? "the LOAD in the other bank, pushing"
                          : "the LOAD in the other bank");
    const auto l_row = uint16_t(other ? half : 2 * M);
    const auto Gm = [&](bool load_w, Deps d, uint16_t acc, bool accumulate) {
      return G(M, R, C, load_w, d, 0, 0, acc, accumulate);
    };
    std::vector<Instr> body = {
        Ld(isa::kBufAct, 0, M, R, {}, kDataAddr, RowBytes(R, 2)),
        Ld(isa::kBufWgt, 0, R, C, kPushNext, kDataAddr + 16384, RowBytes(C, 2)),
        Gm(true, kPopPrev, 0, false)};
    for (int i = 0; i < 11; ++i) body.push_back(Gm(false, {}, 0, true));
    body.push_back(
        Ld(isa::kBufAcc, l_row, M, C, pushes ? kPushNext : Deps{}, kDataAddr + 32768, row));
    // Overwriting, so that they stream without waiting for each other's writes. The second pushes
    // compute->load: beside a LOAD that pushes a token it waits for it (tokens in program order).
    for (int i = 0; i < 16; ++i) body.push_back(Gm(false, i == 1 ? kPushPrev : Deps{}, M, false));
    body.push_back(Gm(false, kPushNext, M, true));      // compute->store: waits for the LOAD
    body.push_back(Gm(false, kPushNext, l_row, true));  // onto the LOAD's rows
    body.push_back(St(0, M, C, kPopPrev, kOut, row));
    body.push_back(St(M, M, C, pushes ? kPopPrev : Deps{}, kOut + 0x4000, row));
    body.push_back(St(l_row, M, C, kPopPrev, kOut + 0x8000, row));
    const std::vector<uint8_t> zeros(0xC000, 0);
    s.WriteHbm(kOut, zeros.data(), zeros.size());
    // The LOAD's start with GEMMs in flight (only earlier ones then), the cycles it runs with
    // GEMMs in flight, its rows taken while results are written, GEMMs started while it runs.
    uint64_t early = 0, load_beside = 0, rows_beside = 0, gemms_beside = 0;
    // GEMMs started so far, and whether the LOAD ran when the one pushing to the store started.
    uint64_t gemms = 0;
    bool push_beside = false, prev_beside = false;
    accel::RunOptions opt;
    opt.max_cycles = 400'000;
    opt.on_cycle = [&](uint64_t) {
      bool writing = false;
      for (uint32_t i = 0; i < wr_bytes; ++i) writing = writing || wr_v[i] != 0;
      early += *accld_go && !*done_empty;
      load_beside += *acc_busy && !*done_empty;
      rows_beside += *ld_take && writing;
      gemms_beside += *gemm_go && *acc_busy;
      if (*gemm_go) {
        ++gemms;
        if (gemms == 12 + 2) prev_beside = *acc_busy != 0;
        if (gemms == 12 + 16 + 1) push_beside = *acc_busy != 0;
      }
    };
    isa::Machine golden(c);
    ASSERT_TRUE(RunBoth(s, golden, data, Program(c, body), kProgAddr, opt));
    for (int i = 0; i < 3; ++i) ExpectSameHbm(s, golden, kOut + 0x4000 * i, uint64_t(M) * row);
    fmt::print(
        "[  BESIDE  ] {} M={} LOAD at row {}{}: started {} GEMMs' end, {} cycles with GEMMs in "
        "flight, {} rows written beside results, {} GEMMs started beside it\n",
        T::kName, M, l_row, pushes ? " (pushing)" : "", early ? "before the" : "after the",
        load_beside, rows_beside, gemms_beside);
    EXPECT_EQ(gemms, uint64_t(12 + 16 + 2));
    EXPECT_FALSE(push_beside) << "a GEMM pushing a compute->store token started beside the LOAD";
    if (pushes) {
      EXPECT_EQ(early, 0u) << "a LOAD that pushes started while earlier GEMMs were in flight";
      EXPECT_FALSE(prev_beside) << "a GEMM pushing a token started beside a LOAD that pushes one";
      EXPECT_GT(gemms_beside, 0u) << "no GEMM started beside the LOAD";
    } else if (other) {
      EXPECT_EQ(early, 1u) << "the LOAD waited for the GEMMs of the other bank";
      // The rows come after the LOAD's HBM latency; meanwhile the program fetch waits behind its
      // data (the DMA returns reads in order), so only the GEMMs in the compute queue run beside
      // it: with 8 or more, some are still writing when the rows come.
      if (c.queue_depth >= 8) EXPECT_GT(rows_beside, 0u) << "no LOAD row written beside a result";
      EXPECT_GT(gemms_beside, 0u) << "no GEMM started beside the LOAD";
      bins[0] += load_beside, bins[1] += rows_beside, bins[2] += gemms_beside;
    } else {
      EXPECT_EQ(early, 0u) << "the LOAD started while GEMMs of its bank were in flight";
      EXPECT_EQ(load_beside, 0u) << "the LOAD ran while GEMMs of its bank were in flight";
      EXPECT_EQ(rows_beside, 0u) << "a LOAD row was written beside a result in its bank";
      EXPECT_EQ(gemms_beside, 0u) << "a GEMM of the LOAD's bank started while it ran";
    }
  }
}

TEST(AccelTimingTest, AccumulatorLoadsBesideGemms) {
  uint64_t bins[3] = {0, 0, 0};
  CheckAccLoadsBesideGemms<Accel4x4Q4>(bins);
  CheckAccLoadsBesideGemms<Accel3x5>(bins);
  CheckAccLoadsBesideGemms<Accel8x8>(bins);
  CheckAccLoadsBesideGemms<Accel36x4>(bins);
  CheckAccLoadsBesideGemms<Accel2x128>(bins);
  const tb::fcov::Group& g = tb::fcov::Declare(
      "accel.acc_load_beside",
      "an accumulator LOAD beside GEMMs in the other bank: cycles of the LOAD with GEMMs in "
      "flight, its rows written in cycles with results, GEMMs started while it runs",
      {"LOAD with GEMMs in flight", "row written beside results", "GEMM started beside"});
  for (size_t b = 0; b < 3; ++b) {
    for (uint64_t i = 0; i < bins[b]; ++i) g.Hit(b);
  }
}

// Accumulator LOADs in flight together (tpu_accel_compute's queue of LdQueue = 3 behind the
// running one). Eight LOADs of M rows each into rows of their own, among them two hold + add
// pairs (a bias row held, then rows added to it) and a broadcast (HBM stride 0), then a LOAD
// that pushes a compute->store token, one more LOAD, another pushing one, and the STOREs of
// every row. A LOAD starts once the one before has requested its bursts, so LOADs start while
// another runs and the queue fills; a pushing LOAD waits until every LOAD before it is complete,
// and no LOAD starts beside it.
// Each run is bit-exact against the golden model (the held rows are taken in program order);
// a fault that serializes the LOADs again fails here. The counts land in the coverage group
// accel.acc_loads_queued.
template <class T>
void CheckAccLoadsOverlap(uint64_t bins[3]) {
  SCOPED_TRACE(T::kName);
  Bench<typename T::Model> bench(T::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto C = uint16_t(c.c);
  const auto M = uint16_t(std::min(c.acc_depth / 10, 8));
  auto& s = bench.Sim(num::Mode::kIeee);
  tb::Rng rng(tb::DeriveSeed(test::TestSeed(), T::kName));
  // fp32 data: sums of the held rows round.
  std::vector<uint8_t> data(kDataBytes);
  for (auto& b : data) b = uint8_t(rng.Range(0, 255));
  for (size_t i = 3; i < data.size(); i += 4) data[i] = uint8_t(0x3C + rng.Range(0, 7));
  const uint8_t* acc_busy = s.template PublicVar<uint8_t>(".u_compute", "acc_busy_q");
  const uint8_t* accld_go = s.template PublicVar<uint8_t>(".u_compute", "accld_go");
  const uint8_t* pend_empty = s.template PublicVar<uint8_t>(".u_compute", "pend_empty");
  const uint8_t* pend_full = s.template PublicVar<uint8_t>(".u_compute", "pend_full");
  const uint32_t row = RowBytes(C, 4);
  const auto L = [&](uint16_t dst, uint16_t rows, uint64_t src, bool hold, bool add, Deps d = {},
                     bool once = false) {
    isa::Load l = Ld(isa::kBufAcc, dst, rows, C, d, kDataAddr + src * row, once ? 0 : row);
    l.hold = hold, l.add = add;
    return l;
  };
  const std::vector<Instr> body = {
      L(0, M, 0, false, false),
      L(0, 1, 100, true, false),
      L(M, M, 10, false, true),
      L(2 * M, M, 20, false, false),
      L(0, 1, 101, true, false),
      L(3 * M, M, 30, false, true),
      L(4 * M, M, 40, false, false, {}, true),  // a broadcast: stride 0 (the `once` read)
      L(5 * M, M, 50, false, false),
      L(6 * M, 1, 60, false, false, kPushNext),
      L(6 * M + 1, M, 70, false, false),
      L(7 * M + 1, 1, 80, false, false, kPushNext),
      St(0, uint16_t(6 * M + 1), C, kPopPrev, kOutAddr, row),
      St(uint16_t(6 * M + 1), uint16_t(M + 1), C, kPopPrev, kOutAddr + (6 * M + 1) * row, row)};
  const std::vector<uint8_t> zeros(size_t(7 * M + 2) * row, 0);
  s.WriteHbm(kOutAddr, zeros.data(), zeros.size());
  uint64_t behind = 0, full = 0, beside_push = 0, loads = 0, push_start_busy = 0;
  accel::RunOptions opt;
  opt.max_cycles = 200'000;
  opt.on_cycle = [&](uint64_t) {
    if (*accld_go) {
      ++loads;
      behind += *acc_busy != 0;
      if (loads == 9 || loads == 11) push_start_busy += *acc_busy != 0;
    }
    full += *pend_full != 0;
    beside_push += loads >= 9 && *acc_busy && !*pend_empty;
  };
  isa::Machine golden(c);
  ASSERT_TRUE(RunBoth(s, golden, data, Program(c, body), kProgAddr, opt));
  ExpectSameHbm(s, golden, kOutAddr, uint64_t(7 * M + 2) * row);
  fmt::print(
      "[  QUEUED  ] {} M={}: {} of 11 LOADs started while another ran, {} cycles with the queue "
      "full\n",
      T::kName, M, behind, full);
  EXPECT_EQ(loads, 11u);
  EXPECT_GE(behind, 4u) << "LOADs waited for the one before to complete";
  EXPECT_GT(full, 0u) << "the queue never filled";
  EXPECT_EQ(push_start_busy, 0u) << "a pushing LOAD started beside another";
  EXPECT_EQ(beside_push, 0u) << "a LOAD queued behind a pushing one";
  bins[0] += behind, bins[1] += full, bins[2] += loads;
}

TEST(AccelTimingTest, AccumulatorLoadsOverlap) {
  uint64_t bins[3] = {0, 0, 0};
  CheckAccLoadsOverlap<Accel4x4Q4>(bins);
  CheckAccLoadsOverlap<Accel3x5>(bins);
  CheckAccLoadsOverlap<Accel8x8>(bins);
  CheckAccLoadsOverlap<Accel36x4>(bins);
  CheckAccLoadsOverlap<Accel2x128>(bins);
  const tb::fcov::Group& g = tb::fcov::Declare(
      "accel.acc_loads_queued",
      "accumulator LOADs in flight together: LOADs started while another ran, cycles with the "
      "queue full, LOADs run",
      {"LOAD started behind another", "queue full", "LOAD"});
  for (size_t b = 0; b < 3; ++b) {
    for (uint64_t i = 0; i < bins[b]; ++i) g.Hit(b);
  }
}

// The vector unit's batches (docs/vpu.md, "Inside the accelerator"): a VOP runs its elements in
// batches of kSlots rows. A batch is gathered a row read a cycle (A; B unless the scalar; the old
// destination for mac and select), starts a cycle after its last read, runs in tpu_vpu
// (length x kSlots + kPipe + 3 cycles from its start to its done pulse, both included) and is
// written a row a cycle; the next batch is gathered meanwhile and starts in the cycle of the last
// write at the earliest, 2 cycles after its own last read. So the first batch takes
//   F = kSlots x reads + 1 + (length x kSlots + kPipe + 3) + kSlots
// cycles and each further one P = max(kSlots x reads + 2, length x kSlots + kPipe + 2 + kSlots).
// An accumulation (each element reads the row the element before writes) waits for that write:
// one element a batch, each F with one read a row. Counted by the vector_busy counter
// (deterministic: the vector unit's reads never wait for HBM) for programs of 1, 2 and 3
// batches, each checked bit for bit against the golden model: a fault that only slows the
// vector unit (a batch cut short, a hazard seen where there is none, a cycle lost between the
// phases, gathering no longer overlapped) fails here.
TEST(AccelVectorTest, BatchCyclesAreExact) {
  constexpr int kSlots = 4, kPipe = 3;  // tpu_accel_vec's Slots and PipeRegs
  Bench<Vaccel_3x5> bench(Accel3x5::MakeConfig());
  const MachineConfig m = bench.config().machine;
  ASSERT_GE(m.vmem_depth, 8 + 3 * kSlots);
  tb::Rng rng(test::TestSeed());
  const std::vector<uint8_t> data = SmallBf16(kDataBytes, rng);
  struct Op {
    isa::VectorOp op;
    int reads;
  };
  for (const Op& o : {Op{isa::VectorOp::kAdd, 2}, Op{isa::VectorOp::kExp, 1},
                      Op{isa::VectorOp::kMac, 3}, Op{isa::VectorOp::kSigmoid, 1}}) {
    const int length = tb::ucode::kPrograms[size_t(o.op)].length;
    for (const bool accumulate : {false, true}) {
      if (accumulate && o.reads < 2) continue;
      SCOPED_TRACE(fmt::format("{}{}", isa::kVectorOps[size_t(o.op)].name,
                               accumulate ? ", accumulating" : ""));
      std::vector<uint64_t> cycles;
      for (int batches = 1; batches <= 3; ++batches) {
        // Rows 0..19 loaded into the vector memory and the accumulators. A: vector-memory row 0
        // for add and mac, accumulator row 9 for the functions (a number the batch's
        // destinations share, which is no hazard: A is not in the vector memory); B row 1;
        // destinations from row 8 (or row 8 for all, read back as B: each element a batch of
        // its own).
        const int n = accumulate ? batches : batches * kSlots;
        const bool a_vmem = o.reads > 1;
        // Accumulating, add reads the row the element before wrote as B, mac as its old
        // destination (B stays row 1): each hazard alone.
        const bool b_acc = accumulate && o.op != isa::VectorOp::kMac;
        isa::Vop v =
            Vp(uint8_t(o.op), a_vmem ? 0 : 9, b_acc ? 8 : 1, 8, uint16_t(n), 1, a_vmem, kPopPrev);
        v.asi = 0, v.bsi = 0, v.dsi = accumulate ? 0 : 1;
        const auto rows = uint16_t(8 + 3 * kSlots);
        const auto prog = Program(m, {Lv(0, rows, m.c), Ld(isa::kBufAcc, 0, rows, m.c, kPushNext),
                                      v, Sv(8, uint16_t(3 * kSlots), m.c)});
        auto& s = bench.Sim(num::Mode::kIeee);
        isa::Machine golden(m);
        const std::vector<uint8_t> zeros(kOutBytes, 0);
        s.WriteHbm(kOutAddr, zeros.data(), zeros.size());
        golden.WriteHbm(kOutAddr, zeros.data(), zeros.size());
        s.WriteHbm(kDataAddr, data.data(), data.size());
        golden.WriteHbm(kDataAddr, data.data(), data.size());
        std::vector<uint8_t> bytes;
        for (const auto& b : prog) bytes.insert(bytes.end(), b.begin(), b.end());
        s.WriteHbm(kProgAddr, bytes.data(), bytes.size());
        golden.WriteHbm(kProgAddr, bytes.data(), bytes.size());
        const isa::RunResult g = golden.Run(kProgAddr, uint32_t(prog.size()));
        ASSERT_TRUE(g.ok()) << g.message;
        const accel::Result r = s.Run(kProgAddr, uint32_t(prog.size()), accel::RunOptions{});
        ExpectSameRun(s, golden, r, g, prog);
        ExpectSameHbm(s, golden, kOutAddr, 3 * kSlots * 64);
        cycles.push_back(r.perf.vector_busy);
      }
      const int S = kSlots, reads = accumulate ? o.reads : S * o.reads;
      const uint64_t first = uint64_t(reads + 1 + (length * S + kPipe + 3) + (accumulate ? 1 : S));
      const uint64_t next =
          accumulate ? first : uint64_t(std::max(reads + 2, length * S + kPipe + 2 + S));
      for (size_t b = 0; b < cycles.size(); ++b) {
        EXPECT_EQ(cycles[b], first + b * next) << (b + 1) << " batches";
      }
    }
  }
}

// accel.host: the AXI4-Lite host port under back-pressure on every channel (the harness's host
// stress: AW and W apart in either order, B and R taken late, reads issued back to back so the
// next AR waits for the pending R). Register values must read back, each channel must have seen
// both a stall and a transfer, and a workload must still run bit-exact.
TEST(AccelHostPortTest, BackPressureOnEveryChannel) {
  const uint64_t seed = test::TestSeed();
  Bench<Vaccel_4x4_q4> bench(Accel4x4Q4::MakeConfig());
  auto& sim = bench.Sim(num::Mode::kIeee);
  sim.SetHostStress(seed | 1);
  const tb::fcov::Group& g = *tb::fcov::Groups().accel_host;
  std::vector<uint64_t> before(g.size());
  for (size_t b = 0; b < g.size(); ++b) before[b] = g.Hits(b);
  namespace reg = accel::reg;
  tb::Rng rng(seed);
  const uint32_t shape = (uint32_t(Accel4x4Q4::MakeConfig().machine.c) << 16) |
                         uint32_t(Accel4x4Q4::MakeConfig().machine.r);
  for (int i = 0; i < 20; ++i) {
    const uint32_t lo = rng.U32(), hi = rng.U32(), len = rng.U32();
    sim.WriteReg(reg::kProgLo, lo);
    sim.WriteReg(reg::kProgHi, hi);
    sim.WriteReg(reg::kProgLen, len);
    const std::vector<uint32_t> want = {lo, hi, len, 0x31555054u, kVersionWord, shape};
    EXPECT_EQ(sim.ReadRegs({reg::kProgLo, reg::kProgHi, reg::kProgLen, reg::kMagic, reg::kVersion,
                            reg::kShape}),
              want);
    EXPECT_EQ(sim.ReadReg(reg::kProgLen), len);
  }
  for (size_t b = 0; b < g.size(); ++b) {
    EXPECT_GT(g.Hits(b), before[b]) << g.name() << " / " << g.bins()[b] << " never happened";
  }
  tb::Rng wrng(seed ^ 0x5EED);
  const Workload w = RandomWorkload(bench.config(), wrng, Accel4x4Q4::TestLimits(), 0);
  bench.Check(w, num::Mode::kIeee);
}

}  // namespace
}  // namespace accel_suite
}  // namespace tpu

// ---------------------------------------------------------------------------------------------
// Code coverage (make coverage, docs/coverage.md): RTL lines the tests above do not reach.

namespace tpu {
namespace accel_suite {
namespace {

// The register file: CHANNELS, CTRL's FTZ bit (read back; ignored while busy), STATUS idle, busy,
// done and done with an error, and writes to read-only and unmapped addresses, which change
// nothing. (The harness itself never reads these or writes there.)
TEST(AccelRegsTest, StatusChannelsCtrlAndIgnoredWrites) {
  namespace reg = accel::reg;
  constexpr uint32_t kBusy = 1, kDone = 2, kError = 4;  // STATUS
  constexpr uint32_t kStart = 1, kFtz = 2;              // CTRL
  Bench<Vaccel_4x4_q4> bench(Accel4x4Q4::MakeConfig());
  const Config cfg = bench.config();
  const MachineConfig c = cfg.machine;
  auto& sim = bench.Sim(num::Mode::kIeee);
  const uint32_t shape = (uint32_t(c.c) << 16) | uint32_t(c.r);

  EXPECT_EQ(sim.ReadReg(reg::kChannels), uint32_t(cfg.channels));
  EXPECT_EQ(sim.ReadReg(reg::kStatus), 0u) << "STATUS after reset";
  sim.WriteReg(reg::kCtrl, kFtz);
  EXPECT_EQ(sim.ReadReg(reg::kCtrl), kFtz) << "CTRL: FTZ reads back (start reads 0)";
  sim.WriteReg(reg::kCtrl, 0);
  EXPECT_EQ(sim.ReadReg(reg::kCtrl), 0u);

  sim.WriteReg(reg::kProgLo, 0x1234'5660u);
  for (const uint32_t a : {reg::kMagic, reg::kVersion, reg::kShape, reg::kChannels, reg::kStatus,
                           reg::kErrCode, reg::kErrPc, 0x02Cu, 0x030u, reg::kCounters, 0xFFCu}) {
    sim.WriteReg(a, 0xFFFF'FFFFu);
  }
  EXPECT_EQ(sim.ReadRegs({reg::kMagic, reg::kVersion, reg::kShape, reg::kChannels, reg::kCtrl,
                          reg::kStatus, reg::kErrCode, reg::kProgLo}),
            (std::vector<uint32_t>{0x31555054u, kVersionWord, shape, uint32_t(cfg.channels), 0u, 0u,
                                   0u, 0x1234'5660u}))
      << "a write to a read-only or unmapped address changed a register";

  // A GEMM started by hand: STATUS busy while it runs, a CTRL write then leaves FTZ alone; done
  // after, and the result bit-exact.
  tb::Rng rng(test::TestSeed());
  const Workload w =
      accel::MakeGemm(cfg, 9, 7, 6, Init::kOverwrite, OutFormat::kFp32, false, rng.Next());
  accel::Load(sim, w);
  sim.WriteReg(reg::kProgLo, uint32_t(w.prog.addr));
  sim.WriteReg(reg::kProgHi, uint32_t(w.prog.addr >> 32));
  sim.WriteReg(reg::kProgLen, w.prog.count());
  sim.WriteReg(reg::kCtrl, kStart);
  EXPECT_EQ(sim.ReadReg(reg::kStatus), kBusy) << "STATUS while the program runs";
  sim.WriteReg(reg::kCtrl, kFtz);
  EXPECT_EQ(sim.ReadReg(reg::kCtrl), 0u) << "CTRL's FTZ bit changed while busy";
  // STATUS read back to back for the whole run: busy in every read that ends before the
  // interrupt (a busy bit that falls early, or never rose, fails here).
  uint64_t polls = 0;
  for (int i = 0; i < 100'000 && !sim.dut().irq_o; ++i) {
    const uint32_t st = sim.ReadReg(reg::kStatus);
    if (sim.dut().irq_o) break;
    ++polls;
    ASSERT_EQ(st, kBusy) << "STATUS in read " << polls << " of a running program";
  }
  ASSERT_TRUE(sim.dut().irq_o) << "the GEMM did not finish";
  EXPECT_GT(polls, 20u) << "the run was too short to watch";
  for (int i = 0; i < 1'000'000 && sim.dut().hbm_busy_o; ++i) sim.Step();
  for (int i = 0; i < 64; ++i) sim.Step();
  EXPECT_EQ(sim.ReadReg(reg::kStatus), kDone) << "STATUS after a successful run";
  EXPECT_EQ(sim.ReadReg(reg::kErrCode), 0u);
  isa::Machine golden(c);
  ASSERT_TRUE(accel::RunGolden(golden, w).ok());
  const accel::Report rep = accel::Compare(sim, golden, w);
  EXPECT_TRUE(rep.pass) << rep.Format();

  // A program with an error (a LOAD of zero rows): STATUS done with the error bit.
  const auto prog = Program(c, {Ld(isa::kBufAct, 0, 0, uint16_t(c.r))});
  std::vector<uint8_t> bytes;
  for (const auto& b : prog) bytes.insert(bytes.end(), b.begin(), b.end());
  sim.WriteHbm(kProgAddr, bytes.data(), bytes.size());
  golden.WriteHbm(kProgAddr, bytes.data(), bytes.size());
  const isa::RunResult g = golden.Run(kProgAddr, uint32_t(prog.size()));
  ASSERT_FALSE(g.ok()) << "the case is wrong: the golden model accepts it";
  accel::RunOptions opt;
  opt.max_cycles = 200'000;
  const accel::Result r = sim.Run(kProgAddr, uint32_t(prog.size()), opt);
  EXPECT_EQ(CodeName(r.code), CodeName(g.code));
  EXPECT_EQ(sim.ReadReg(reg::kStatus), kDone | kError) << "STATUS after a failed run";
  EXPECT_EQ(accel::EndStateDiff(r, g), "");
}

// The program fetch and every DMA (activation, weight and accumulator LOADs, a STORE) across a
// 4 KB boundary: the bursts are cut there (AXI4), and the result equals the golden model's.
TEST(AccelEdgeTest, FetchAndTransfersAcross4KBoundaries) {
  constexpr uint64_t kPage = 4096;
  Bench<Vaccel_4x4_q4> bench(Accel4x4Q4::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  ASSERT_LE(R * 2, 32) << "one activation row per beat";
  ASSERT_LE(C * 4, 32) << "one accumulator row per beat";
  tb::Rng rng(test::TestSeed());
  const std::vector<uint8_t> data = SmallBf16(4 * kPage, rng);
  // Rows of one beat at a 32-byte stride: one region, whose first burst stops at the boundary.
  const uint64_t prog_addr = kProgAddr + kPage - 2 * 32;  // the fetch crosses at instruction 2
  const auto prog =
      Program(c, {Ld(isa::kBufAct, 0, 4, R, {}, kDataAddr + kPage - 2 * 32, 32),
                  Ld(isa::kBufWgt, 0, R, C, kPushNext, kDataAddr + 2 * kPage - 32, 32),
                  Ld(isa::kBufAcc, 0, 4, C, {}, kDataAddr + 3 * kPage - 3 * 32, 32),
                  G(4, R, C, true, D(true, false, false, true), 0, 0, 0, true),
                  St(0, 4, C, kPopPrev, kOutAddr + kPage - 2 * 32, 32)});
  auto& s = bench.Sim(num::Mode::kIeee);
  isa::Machine golden(c);
  ASSERT_TRUE(RunBoth(s, golden, data, prog, prog_addr, 200'000));
  ExpectSameHbm(s, golden, kOutAddr, kOutBytes);
}

// STOREs whose rows lie 1 MB apart: every row opens a new DRAM row in the same bank, so the HBM
// drains writes far slower than the store module sends them and the DMA's write port stalls
// (accel_4x4_q4's write queues hold 4 beats). The stored rows and the end state (the bytes
// written count each beat once, however long it waits) equal the golden model's.
TEST(AccelEdgeTest, StoresThatStallTheWritePort) {
  constexpr uint64_t kRowApart = 1 << 20;
  Bench<Vaccel_4x4_q4> bench(Accel4x4Q4::MakeConfig());
  const MachineConfig c = bench.config().machine;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const auto rows = uint16_t(std::min(c.acc_depth, 48));
  tb::Rng rng(test::TestSeed());
  const std::vector<uint8_t> data = SmallBf16(4096, rng);
  const auto prog = Program(c, {Ld(isa::kBufAct, 0, rows, R, {}, kDataAddr, 32),
                                Ld(isa::kBufWgt, 0, R, C, kPushNext, kDataAddr + 2048, 32),
                                G(rows, R, C, true, D(true, false, false, true)),
                                St(0, rows, C, kPopPrev, kOutAddr, uint32_t(kRowApart))});
  auto& s = bench.Sim(num::Mode::kIeee);
  isa::Machine golden(c);
  ASSERT_TRUE(RunBoth(s, golden, data, prog, kProgAddr, 2'000'000));
  for (uint64_t i = 0; i < rows; ++i) ExpectSameHbm(s, golden, kOutAddr + i * kRowApart, C * 4u);
}

// Back-pressure on each DMA port separately. For every port p in turn, the load module reads 24
// activation rows 1 MB apart that all fall on port p (64-byte blocks rotate over the ports, so a
// row of at most 64 bytes at a multiple of 1 MB stays on one port and one bank, a new DRAM row
// each: p's read queue fills), while the compute module loads accumulator rows spread over every
// port; then the store module writes those rows 1 MB apart on port p while the compute module
// loads more, each from the next port and a new DRAM row there. The AXI channels between the DMA
// and the HBM subsystem (public in rtl/sim.vlt) are watched cycle by cycle: in its round, port p's
// AR must wait (valid, not ready) in a cycle in which another port moves data, and its AW or W
// must wait; the bytes stored and the on-chip state must equal the golden model's. (With one DMA
// lane, as on accel_4x4_q4, a waiting W holds the lane, so other ports rarely move then.)
template <class T>
void CheckPortBackPressure() {
  SCOPED_TRACE(T::kName);
  constexpr uint64_t kApart = 1 << 20;
  constexpr int kRows = 24;
  Bench<typename T::Model> bench(T::MakeConfig());
  const Config cfg = bench.config();
  const MachineConfig c = cfg.machine;
  const int ports = 2 * cfg.channels;
  const auto C = uint16_t(c.c);
  const auto ae = uint16_t(std::min(c.r, 32)), se = uint16_t(std::min(c.c, 16));
  auto& s = bench.Sim(num::Mode::kIeee);
  struct Port {
    const void* p;
    uint32_t bytes;
  };
  auto port = [&](const char* name) {
    Port q;
    q.p = s.PublicVarBytes("tpu_accel", name, &q.bytes);
    return q;
  };
  auto bits = [](const Port& q) {
    uint64_t v = 0;
    std::memcpy(&v, q.p, std::min<uint32_t>(q.bytes, 8));
    return v;
  };
  const Port ar_v = port("p_ar_valid"), ar_r = port("p_ar_ready"), r_v = port("p_r_valid"),
             r_r = port("p_r_ready"), aw_v = port("p_aw_valid"), aw_r = port("p_aw_ready"),
             w_v = port("p_w_valid"), w_r = port("p_w_ready");
  std::vector<uint64_t> read_waits(size_t(ports), 0), write_waits(size_t(ports), 0);
  tb::Rng rng(test::TestSeed());
  for (int p = 0; p < ports; ++p) {
    const uint64_t in = kDataAddr + 0x10000 + 64 * uint64_t(p), out = kOutAddr + 64 * uint64_t(p);
    const std::vector<uint8_t> data = SmallBf16(kDataBytes, rng);
    const std::vector<uint8_t> row = SmallBf16(64, rng);
    isa::Machine golden(c);
    for (int i = 0; i < kRows; ++i) {
      s.WriteHbm(in + i * kApart, row.data(), row.size());
      golden.WriteHbm(in + i * kApart, row.data(), row.size());
    }
    // The second accumulator LOAD, beside the STORE: rows 1 MB + 64 bytes apart, so each starts
    // on the next port and opens a new DRAM row there (slow on every port).
    const uint32_t acc_row = RowBytes(C, 4);
    const auto rows1 = uint16_t(std::min(c.acc_depth / 2, 32));
    const auto rows2 = uint16_t(std::min(c.acc_depth - rows1, 32));
    const uint64_t in2 = kDataAddr + 0x20000 + 64 * uint64_t(p + 1);
    const std::vector<uint8_t> arow = SmallBf16(acc_row, rng);
    for (int i = 0; i < rows2; ++i) {
      s.WriteHbm(in2 + i * (kApart + 64), arow.data(), arow.size());
      golden.WriteHbm(in2 + i * (kApart + 64), arow.data(), arow.size());
    }
    const auto prog =
        Program(c, {Ld(isa::kBufAct, 0, kRows, ae, {}, in, uint32_t(kApart)),
                    Ld(isa::kBufAcc, 0, rows1, C, kPushNext, kDataAddr, acc_row),
                    Ld(isa::kBufAcc, rows1, rows2, C, {}, in2, uint32_t(kApart + 64)),
                    St(0, rows1, se, kPopPrev, out, uint32_t(kApart))});  // the first LOAD's rows
    accel::RunOptions opt;
    opt.max_cycles = 2'000'000;
    // Port p, the congested one this round: its AR waiting while another port moves data, and its
    // AW or W waiting.
    const uint64_t bit = uint64_t{1} << p;
    opt.on_cycle = [&](uint64_t) {
      const uint64_t arv = bits(ar_v), arr = bits(ar_r), rv = bits(r_v), rr = bits(r_r);
      const uint64_t awv = bits(aw_v), awr = bits(aw_r), wv = bits(w_v), wr = bits(w_r);
      const uint64_t moving = (arv & arr) | (rv & rr) | (awv & awr) | (wv & wr);
      if ((arv & ~arr & bit) && (moving & ~bit)) ++read_waits[size_t(p)];
      if (((awv & ~awr) | (wv & ~wr)) & bit) ++write_waits[size_t(p)];
    };
    ASSERT_TRUE(RunBoth(s, golden, data, prog, kProgAddr, opt));
    for (int i = 0; i < rows1; ++i) ExpectSameHbm(s, golden, out + i * kApart, se * 4u);
  }
  for (int q = 0; q < ports; ++q) {
    EXPECT_GT(read_waits[size_t(q)], 0u) << "port " << q << ": AR never waited while others moved";
    EXPECT_GT(write_waits[size_t(q)], 0u) << "port " << q << ": AW/W never waited";
  }
  fmt::print(
      "[  PORTS   ] {}: per port, its round's cycles of AR waiting while another port moved "
      "/ of AW or W waiting:",
      T::kName);
  for (int q = 0; q < ports; ++q)
    fmt::print(" {}/{}", read_waits[size_t(q)], write_waits[size_t(q)]);
  fmt::print("\n");
}

TEST(AccelDmaTest, BackPressureOnEveryPortSeparately) {
  CheckPortBackPressure<Accel4x4Q4>();
  CheckPortBackPressure<Accel3x5>();
  CheckPortBackPressure<Accel8x8>();
  CheckPortBackPressure<Accel36x4>();
  CheckPortBackPressure<Accel2x128>();
}

// Back-pressure on each DMA lane separately, each way. The lane caps of tpu_accel (a verification
// hook that synthesis keeps constant; public in rtl/sim.vlt) are drawn before every cycle (the
// write cap only where no W offer can be waiting): with probability 1/2 no cap, else a cap of
// k = 0 .. Lanes-1 beats, for reads and writes separately. A read client then sees at most k of the
// beats the DMA delivered (none at 0), so the DMA sees it take any prefix of its offer, and the
// store offers at most k beats a cycle, so the DMA's W path takes a burst in any cut. Random legal
// programs (tb::MakeRandomProgram, as AccelTest.RandomPrograms) run under it; code, end state,
// on-chip state and every output byte must be the golden model's. Lane k counts as held back in a
// cycle whose cap is k while more than k beats were there to move: the DMA had delivered more than
// k of a read client's beats, or the store had a row's beats ready beyond k (its row and burst
// allowing). Each lane must be held back each way (the store's lanes: those an accumulator row of C
// fills), and the counts land in the coverage group accel.dma_lane_held. Failures (fatal or not) of
// the running test so far.
int FailureCount() {
  return ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
}

// contended[0] and contended[1] gain the cycles in which two or more read clients requested and
// none, or one, was taken (the bins of accel.dma_read_arbiter).
template <class T>
void CheckLaneBackPressure(int programs, uint64_t contended[2]) {
  SCOPED_TRACE(T::kName);
  Bench<typename T::Model> bench(T::MakeConfig());
  const Config cfg = bench.config();
  const MachineConfig c = cfg.machine;
  const int lanes = cfg.DmaLanes();
  ASSERT_LE(lanes, 8);
  auto& s = bench.Sim(num::Mode::kIeee);
  // The caps are written (public_flat_rw); the rest is read.
  auto* cap_rd = const_cast<uint8_t*>(s.template PublicVar<uint8_t>("tpu_accel", "lane_rd_q"));
  auto* cap_wr = const_cast<uint8_t*>(s.template PublicVar<uint8_t>("tpu_accel", "lane_wr_q"));
  const uint8_t* r_count = s.template PublicVar<uint8_t>("tpu_accel", "r_count");
  const uint8_t* r_valid = s.template PublicVar<uint8_t>("tpu_accel", "c_r_valid");
  uint32_t take_bytes = 0;  // 3 x LCntW bits: one or two bytes
  const void* r_take = s.PublicVarBytes("tpu_accel", "c_r_take", &take_bytes);
  ASSERT_LE(take_bytes, 4u);
  const uint8_t* ar_valid = s.template PublicVar<uint8_t>("tpu_accel", "c_ar_valid");
  const uint8_t* ar_ready = s.template PublicVar<uint8_t>("tpu_accel", "c_ar_ready");
  const uint8_t* w_valid = s.template PublicVar<uint8_t>("tpu_accel", "w_valid");
  const uint8_t* w_count = s.template PublicVar<uint8_t>("tpu_accel", "w_count");
  const uint8_t* w_ready = s.template PublicVar<uint8_t>("tpu_accel", "w_ready");
  const uint8_t* row_left = s.template PublicVar<uint8_t>(".u_store", "row_left");
  const uint8_t* burst_left = s.template PublicVar<uint8_t>(".u_store", "burst_left");
  const uint8_t* rows_empty = s.template PublicVar<uint8_t>(".u_store", "rfifo_empty");
  const uint8_t* bursts_empty = s.template PublicVar<uint8_t>(".u_store", "blen_empty");
  EXPECT_EQ(*cap_rd, lanes) << "the read cap after reset is not Lanes";
  EXPECT_EQ(*cap_wr, lanes) << "the write cap after reset is not Lanes";
  std::vector<std::string> bins;
  for (const char* way : {"read", "write"})
    for (int k = 0; k < 8; ++k) bins.push_back(fmt::format("{} lane {}", way, k));
  const tb::fcov::Group& cov = tb::fcov::Declare(
      "accel.dma_lane_held",
      "a DMA lane held back (the lane cap k, more than k beats there to move), per way and lane",
      bins);
  // The read clients' arbiter (tpu_rr_arbiter, Sticky): cycles in which two or more clients
  // request, none is taken (the grant waits and must stay put, its a_sticky_hold), or one is.
  const tb::fcov::Group& arb = tb::fcov::Declare(
      "accel.dma_read_arbiter",
      "the DMA's read clients contending: two or more request, and none or one is taken",
      {"contended, grant waits", "contended, grant taken"});
  uint64_t arb_waits = 0, arb_taken = 0;
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(tb::DeriveSeed(seed, std::string("lane back-pressure ") + T::kName));
  std::vector<uint64_t> held_rd(size_t(lanes), 0), held_wr(size_t(lanes), 0);
  uint64_t over_cap = 0;  // cycles a client took, or the store offered, more than its cap
  int bits = 0;           // LCntW: the width of a client's take
  while ((1 << bits) <= lanes) ++bits;
  tb::RandomProgramSpec spec;
  spec.in_addr = kDataAddr, spec.in_bytes = 0x100000;
  spec.out_addr = kDataAddr + 0x100000, spec.out_bytes = 0x40000;
  spec.instructions = 32;
  auto draw = [&]() { return rng.Range(0, 1) ? uint8_t(lanes) : uint8_t(rng.Range(0, lanes - 1)); };
  // After the random programs, two store streams: every accumulator row (up to 64) loaded, then
  // stored in fp32 (rows packed, 32 bytes off a block) and in bf16, so that the store offers many
  // beats in a row while the write cap moves.
  const auto C = uint16_t(c.c);
  const auto acc_rows = uint16_t(std::min(c.acc_depth, 64));
  for (int n = 0; n < programs + 2; ++n) {
    const bool stream = n >= programs;
    SCOPED_TRACE(
        fmt::format("{} {} of seed {}", stream ? "store stream" : "random program", n, seed));
    const int failures_before = FailureCount();
    std::vector<Bytes> prog;
    std::vector<tb::RandomProgram::Range> inputs;
    if (stream) {
      const uint32_t fp32_row = RowBytes(C, 4), bf16_row = RowBytes(C, 2);
      prog = Program(c, {Ld(isa::kBufAcc, 0, acc_rows, C, kPushNext, kDataAddr, fp32_row),
                         St(0, acc_rows, C, kPopPrev, spec.out_addr + 32, fp32_row),
                         St(0, acc_rows, C, {}, spec.out_addr + 0x20000, bf16_row, isa::kFmtBf16)});
      inputs.push_back({kDataAddr, uint64_t(acc_rows) * fp32_row});
    } else {
      const tb::RandomProgram rp = tb::MakeRandomProgram(c, spec, rng);
      for (const auto& in : rp.instrs) prog.push_back(isa::Encode(in));
      inputs = rp.inputs;
    }
    isa::Machine golden(c);
    const std::vector<uint8_t> zeros(spec.out_bytes, 0);
    s.WriteHbm(spec.out_addr, zeros.data(), zeros.size());
    golden.WriteHbm(spec.out_addr, zeros.data(), zeros.size());
    for (const auto& in : inputs) {
      const std::vector<uint8_t> d = SmallBf16(in.bytes, rng);
      s.WriteHbm(in.addr, d.data(), d.size());
      golden.WriteHbm(in.addr, d.data(), d.size());
    }
    std::vector<uint8_t> bytes;
    for (const auto& b : prog) bytes.insert(bytes.end(), b.begin(), b.end());
    s.WriteHbm(kProgAddr, bytes.data(), bytes.size());
    golden.WriteHbm(kProgAddr, bytes.data(), bytes.size());
    const isa::RunResult g = golden.Run(kProgAddr, uint32_t(prog.size()));
    ASSERT_TRUE(g.ok()) << "the generator made an illegal program: " << g.message;
    accel::RunOptions opt;
    opt.max_cycles = 400'000 + 40'000 * uint64_t(prog.size());
    // Called after each clock edge: what the DMA delivered and the store has ready depend on
    // registers only, so they are what the coming edge sees; the caps written now apply to it.
    bool wr_free = false;
    opt.on_cycle = [&](uint64_t t) {
      // The caps hold: what the clients take and the store offers now was computed under them.
      int took = 0;
      uint32_t takes = 0;
      std::memcpy(&takes, r_take, take_bytes);
      for (int cl = 0; cl < 3; ++cl) took += int(takes >> (cl * bits)) & ((1 << bits) - 1);
      if (took > *cap_rd || (*w_valid && *w_count > *cap_wr)) ++over_cap;
      *cap_rd = draw();
      // A waiting W offer must hold (tpu_accel's a_w_held), and whether it waits depends on the
      // cap: the write cap changes only on even cycles, after an odd one (seen whole, its cap
      // unchanged) in which no W offer waited.
      if (t % 2 == 1) {
        wr_free = !(*w_valid && !*w_ready);
      } else if (wr_free) {
        *cap_wr = draw();
      }
      if (__builtin_popcount(*ar_valid & 7u) >= 2) {
        const bool taken = (*ar_ready & 7) != 0;
        ++(taken ? arb_taken : arb_waits);
        arb.Hit(taken ? 1 : 0);
      }
      if (*cap_rd < lanes && (*r_valid & 7) != 0 && *r_count > *cap_rd) {
        ++held_rd[*cap_rd];
        cov.Hit(*cap_rd);
      }
      const int ready = std::min({lanes, int(*row_left), int(*burst_left)});
      if (*cap_wr < lanes && !*rows_empty && !*bursts_empty && ready > *cap_wr) {
        ++held_wr[*cap_wr];
        cov.Hit(8 + size_t(*cap_wr));
      }
    };
    accel::Result r;
    try {
      r = s.Run(kProgAddr, uint32_t(prog.size()), opt);
    } catch (const std::exception& e) {
      *cap_rd = uint8_t(lanes), *cap_wr = uint8_t(lanes);
      bench.Drop(num::Mode::kIeee);
      FAIL() << "the machine hung: " << e.what();
    }
    *cap_rd = uint8_t(lanes), *cap_wr = uint8_t(lanes);
    ExpectSameRun(s, golden, r, g, prog);
    ExpectSameHbm(s, golden, spec.out_addr, spec.out_bytes);
    if (FailureCount() != failures_before) FAIL() << "the program:\n" << ProgramText(prog);
  }
  EXPECT_EQ(over_cap, 0u) << "cycles in which a read client took, or the store offered, more "
                             "beats than the lane cap";
  // The store moves accumulator rows: it uses min(Lanes, beats of an fp32 row of C) lanes.
  const int wr_lanes = std::min(lanes, (c.c * 4 + 31) / 32);
  for (int k = 0; k < lanes; ++k) {
    EXPECT_GT(held_rd[size_t(k)], 0u) << "read lane " << k << " never held back";
    if (k < wr_lanes) EXPECT_GT(held_wr[size_t(k)], 0u) << "write lane " << k << " never held back";
  }
  contended[0] += arb_waits, contended[1] += arb_taken;
  fmt::print("[  LANES   ] {} ({} lanes): read clients contending: {} cycles waiting, {} taken\n",
             T::kName, lanes, arb_waits, arb_taken);
  fmt::print("[  LANES   ] {} ({} lanes): cycles each lane was held back, read / write:", T::kName,
             lanes);
  for (int k = 0; k < lanes; ++k) fmt::print(" {}/{}", held_rd[size_t(k)], held_wr[size_t(k)]);
  fmt::print("\n");
}

TEST(AccelDmaTest, BackPressureOnEveryLane) {
  uint64_t arb[2] = {0, 0};
  CheckLaneBackPressure<Accel4x4Q4>(6, arb);
  CheckLaneBackPressure<Accel36x4>(8, arb);
  CheckLaneBackPressure<Accel2x128>(16, arb);
  // The sticky arbiter's case (a_sticky_hold): a grant waiting beside another request. The 4x4's
  // shallow queues give hundreds of such cycles; the deeper builds may give none.
  EXPECT_GT(arb[0], 0u) << "no cycle in which two read clients requested and neither was taken";
  EXPECT_GT(arb[1], 0u) << "no cycle in which two read clients requested and one was taken";
}

// Runs run(bench, name) on a fresh bench of each of the fast tier's four arrays, one at a time.
template <class F>
void OnEveryArray(F&& run) {
  {
    Bench<Vaccel_4x4_q4> b(Accel4x4Q4::MakeConfig());
    run(b, "4x4");
  }
  {
    Bench<Vaccel_3x5> b(Accel3x5::MakeConfig());
    run(b, "3x5");
  }
  {
    Bench<Vaccel_8x8> b(Accel8x8::MakeConfig());
    run(b, "8x8");
  }
  {
    Bench<Vaccel_2x128> b(Accel2x128::MakeConfig());
    run(b, "2x128");
  }
}

// Training on the RTL (tpu/train.h; ISA 1.3's transposing LOADs carry the backward GEMMs): SGD
// steps with momentum of a small MLP on each of the four arrays, every job of every step checked
// bit for bit against the golden model (RunAccelJob), and the loss and every weight bit after
// every step equal to the golden training loop's on the golden model (8x8, no vector unit: the
// host computes the vector work). On 4x4 and 3x5 the loss gradient, relu's masks and the update
// run on the vector unit.
TEST(AccelTrainingTest, StepsAreBitExactOnEveryArray) {
  tb::Rng rng(test::TestSeed());
  const std::vector<int> sizes = {21, 13, 10};
  const uint64_t init_seed = rng.Next();
  const train::Recipe recipe{9, 0.1f, 0.9f};
  std::vector<std::vector<float>> xs;
  std::vector<std::vector<int32_t>> ys;
  for (int s = 0; s < 3; ++s) {
    xs.emplace_back(size_t(recipe.batch) * size_t(sizes[0]));
    ys.emplace_back(size_t(recipe.batch));
    for (auto& v : xs.back()) v = float(rng.Range(0, 4096)) / 4096.0f;
    for (auto& v : ys.back()) v = rng.Range(0, sizes.back() - 1);
  }
  auto state = [](const train::Mlp& m, float loss) {
    std::vector<float> v = {loss};
    for (const auto& d : m.layers) {
      v.insert(v.end(), d.w.begin(), d.w.end());
      v.insert(v.end(), d.b.begin(), d.b.end());
    }
    std::vector<uint32_t> bits(v.size());
    std::memcpy(bits.data(), v.data(), v.size() * 4);
    return bits;
  };
  // The golden loop on the golden model.
  std::vector<std::vector<uint32_t>> want;
  {
    const Config cfg = Accel8x8::MakeConfig();
    accel::ModelSim sim(cfg);
    accel::TrainRunner runner(sim, false);
    train::Mlp m = train::InitMlp(sizes, init_seed);
    for (size_t s = 0; s < xs.size(); ++s) {
      const auto r = train::Step(m, recipe, xs[s], ys[s], runner.Fn(), num::Mode::kIeee);
      want.push_back(state(m, r.loss));
    }
  }
  auto run = [&](auto& bench, const char* name) {
    SCOPED_TRACE(name);
    accel::TrainRunner runner(bench.Sim(num::Mode::kIeee), true);
    const auto& mc = bench.config().machine;
    const train::VectorUnit vu{mc.vmem_depth, mc.c};
    train::Mlp m = train::InitMlp(sizes, init_seed);
    for (size_t s = 0; s < xs.size(); ++s) {
      train::StepResult r;
      try {
        r = train::Step(m, recipe, xs[s], ys[s], runner.Fn(), num::Mode::kIeee, vu);
      } catch (const std::exception& e) {
        FAIL() << "step " << s << ": " << e.what();
      }
      const auto got = state(m, r.loss);
      ASSERT_EQ(got.size(), want[s].size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], want[s][i])
            << (i == 0 ? "the loss" : "state word") << " " << i << " after step " << s;
      }
    }
    EXPECT_EQ(runner.pass(accel::TrainRunner::kForward).jobs, 6);
    // Per step dW2, dX2, dW1; with the vector unit also the softmax (10 classes: 16 rows), the
    // loss gradient and relu's mask, and the update's two jobs.
    const bool softmax = mc.vmem_depth >= host::SoftmaxRows(sizes.back());
    EXPECT_EQ(runner.pass(accel::TrainRunner::kBackward).jobs,
              mc.vector_unit() ? 3 * (5 + int(softmax)) : 9);
    EXPECT_EQ(runner.pass(accel::TrainRunner::kUpdate).jobs, mc.vector_unit() ? 6 : 0);
    EXPECT_GT(runner.pass(accel::TrainRunner::kBackward).checked, 0u);
  };
  OnEveryArray(run);
}

// Process-level parallelism on the RTL (tpu/tb/job_pool.h, `--jobs`): SGD steps of an MLP whose
// jobs split by rows and by columns (operands plain and transposed) over three processes, each
// with its own RTL engine (two forked), every part checked against the golden model where it
// runs; the loss and every weight bit after every step equal to the golden loop's in one process.
template <class T>
struct Tag {
  using type = T;
};

TEST(AccelJobPoolTest, TrainingStepsSplitOverThreeProcesses) {
  tb::Rng rng(test::TestSeed());
  const std::vector<int> sizes = {21, 40, 10};
  const uint64_t init_seed = rng.Next();
  const train::Recipe recipe{12, 0.1f, 0.9f};
  std::vector<std::vector<float>> xs;
  std::vector<std::vector<int32_t>> ys;
  for (int s = 0; s < 2; ++s) {
    xs.emplace_back(size_t(recipe.batch) * size_t(sizes[0]));
    ys.emplace_back(size_t(recipe.batch));
    for (auto& v : xs.back()) v = float(rng.Range(0, 4096)) / 4096.0f;
    for (auto& v : ys.back()) v = rng.Range(0, sizes.back() - 1);
  }
  auto steps = [&](accel::TrainRunner& runner) {
    train::Mlp m = train::InitMlp(sizes, init_seed);
    std::vector<uint32_t> bits;
    for (size_t s = 0; s < xs.size(); ++s) {
      const float loss = train::Step(m, recipe, xs[s], ys[s], runner.Fn(), num::Mode::kIeee).loss;
      std::vector<float> v = {loss};
      for (const auto& d : m.layers) {
        v.insert(v.end(), d.w.begin(), d.w.end());
        v.insert(v.end(), d.b.begin(), d.b.end());
      }
      const size_t at = bits.size();
      bits.resize(at + v.size());
      std::memcpy(bits.data() + at, v.data(), v.size() * 4);
    }
    return bits;
  };
  auto run = [&](auto tag, const Config& cfg) {
    using V = typename decltype(tag)::type;
    SCOPED_TRACE(cfg.name);
    std::vector<uint32_t> want;
    {
      accel::ModelSim sim(cfg);
      accel::TrainRunner runner(sim, false);
      want = steps(runner);
    }
    accel::JobPool pool(
        3, [&cfg] { return std::make_unique<accel::AccelSim<V>>(cfg, tb::TraceOptions{}); }, true);
    accel::TrainRunner runner(pool);
    std::vector<uint32_t> got;
    try {
      got = steps(runner);
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "state word " << i;
    const auto t = accel::Sum({runner.pass(0), runner.pass(1), runner.pass(2)});
    EXPECT_EQ(t.jobs, 10);              // per step: 2 forward, 3 backward (dW2, dX2, dW1)
    EXPECT_GT(t.programs, 2 * t.jobs);  // most jobs in three parts
    EXPECT_GT(t.checked, 0u);
  };
  run(Tag<Vaccel_8x8>{}, Accel8x8::MakeConfig());
  run(Tag<Vaccel_2x128>{}, Accel2x128::MakeConfig());
}

// A convolution's gradients (train::ConvBackward; stride 1: dW as the machine's convolution of
// x's channels with G, dX as its convolution of G with the turned weights; stride 2: dW through
// the im2col matrix read transposed, dX through the weights read transposed and col2im) on each
// RTL array, every job checked against the golden model, the gradients' bits equal to the golden
// model's.
TEST(AccelTrainingTest, ConvGradientsBitExactOnEveryArray) {
  tb::Rng rng(test::TestSeed());
  auto rnd = [&](size_t n, int scale) {
    std::vector<uint16_t> v(n);
    for (auto& e : v) {
      const float f = float(rng.Range(-scale, scale)) / float(scale);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      e = num::Fp32ToBf16(u, num::Mode::kIeee);
    }
    return v;
  };
  for (const int stride : {1, 2}) {
    host::ConvShape s;
    s.n = 2, s.h = 6, s.w = 5, s.cin = 5, s.cout = 7, s.kh = 3, s.kw = 3, s.stride = stride;
    s.pad = 1;
    SCOPED_TRACE(fmt::format("3x3, stride {}", stride));
    const auto x = rnd(size_t(s.n * s.h * s.w * s.cin), 100);
    const auto w = rnd(size_t(s.K() * s.cout), 100);
    std::vector<float> dy(size_t(s.M() * s.cout));
    for (auto& v : dy) v = float(rng.Range(-1000, 1000)) / 777.0f;
    train::ConvGradients want;
    {
      accel::ModelSim sim(Accel8x8::MakeConfig());
      accel::TrainRunner runner(sim, false);
      want = train::ConvBackward(s, x, w, dy, true, runner.Fn(), num::Mode::kIeee);
    }
    auto bits = [](const std::vector<float>& v) {
      std::vector<uint32_t> b(v.size());
      std::memcpy(b.data(), v.data(), v.size() * 4);
      return b;
    };
    auto run = [&](auto& bench, const char* name) {
      SCOPED_TRACE(name);
      accel::TrainRunner runner(bench.Sim(num::Mode::kIeee), true);
      train::ConvGradients g;
      try {
        g = train::ConvBackward(s, x, w, dy, true, runner.Fn(), num::Mode::kIeee);
      } catch (const std::exception& e) {
        FAIL() << e.what();
      }
      EXPECT_EQ(bits(g.dw), bits(want.dw));
      EXPECT_EQ(bits(g.dx), bits(want.dx));
      EXPECT_EQ(bits(g.db), bits(want.db));
      EXPECT_EQ(runner.pass(accel::TrainRunner::kBackward).jobs, 2);
    };
    OnEveryArray(run);
  }
}

// A network (train::Network: convolutions, BatchNormalization in training mode, the residual
// Add, pooling, a dense layer; the digits CNN's operators) trained for two SGD steps with
// momentum on each RTL array, every job checked against the golden model; the loss and every
// parameter and running-statistic bit after each step equal to the golden model's run.
TEST(AccelTrainingTest, NetworkStepsAreBitExactOnEveryArray) {
  tb::Rng rng(test::TestSeed());
  const net::Graph g = test::SmallCnnGraph(rng);
  const train::Recipe recipe{6, 0.05f, 0.9f};
  std::vector<std::vector<float>> xs(2, std::vector<float>(size_t(recipe.batch) * 50));
  std::vector<std::vector<int32_t>> ys(2, std::vector<int32_t>(size_t(recipe.batch)));
  for (auto& x : xs) {
    for (auto& v : x) v = float(rng.Range(0, 255)) / 255.0f;
  }
  for (auto& y : ys) {
    for (auto& v : y) v = rng.Range(0, 3);
  }
  auto state = [](const train::Network& nw, float loss) {
    std::vector<uint32_t> bits;
    auto add = [&](float f) {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      bits.push_back(u);
    };
    add(loss);
    for (const auto& [name, t] : nw.Initializers()) {
      for (float f : t.f) add(f);
    }
    return bits;
  };
  std::vector<std::vector<uint32_t>> want;
  {
    accel::ModelSim sim(Accel8x8::MakeConfig());
    accel::TrainRunner runner(sim, false);
    train::Network nw = train::Network::FromGraph(g);
    for (size_t s = 0; s < xs.size(); ++s) {
      const auto r = nw.Step(recipe, xs[s], ys[s], runner.Fn(), num::Mode::kIeee);
      want.push_back(state(nw, r.loss));
    }
  }
  auto run = [&](auto& bench, const char* name) {
    SCOPED_TRACE(name);
    accel::TrainRunner runner(bench.Sim(num::Mode::kIeee), true);
    const auto& mc = bench.config().machine;
    train::Network nw = train::Network::FromGraph(g);
    for (size_t s = 0; s < xs.size(); ++s) {
      train::StepResult r;
      try {
        r = nw.Step(recipe, xs[s], ys[s], runner.Fn(), num::Mode::kIeee, {mc.vmem_depth, mc.c});
      } catch (const std::exception& e) {
        FAIL() << "step " << s << ": " << e.what();
      }
      EXPECT_EQ(state(nw, r.loss), want[s]) << "after step " << s;
    }
    EXPECT_GT(runner.pass(accel::TrainRunner::kBackward).checked, 0u);
    EXPECT_EQ(runner.pass(accel::TrainRunner::kUpdate).jobs, mc.vector_unit() ? 4 : 0);
  };
  OnEveryArray(run);
}

// A whole network as one program on the RTL (NetRunner::SetWholeNetwork, docs/onnx.md): two
// convolutions, a residual add and relu, a max pool, a 1x1 convolution, a global average pool, a
// flatten and a dense layer on accel_4x4_q4's vector unit. One program, every output bit-exact
// (against the golden model's run of the program and its jobs one by one), the outputs the
// job-by-job run's, and the cycles per layer (the store module's progress sampled while it runs)
// adding up to the program's.
TEST(AccelWholeNetworkTest, OneProgramWithCyclesPerLayer) {
  tb::Rng rng(test::TestSeed());
  const Config cfg = Accel4x4Q4::MakeConfig();
  ASSERT_GT(cfg.machine.vmem_depth, 0);
  net::Graph g;
  g.opset = 13;
  net::ValueInfo xi;
  xi.name = "x", xi.shape = {1, 4, 5, 5}, xi.known_rank = true;
  g.inputs = {xi};
  const auto tensor = [&](net::Shape shape) {
    net::Tensor t;
    t.shape = shape;
    for (int64_t i = 0; i < net::Elements(shape); ++i) {
      t.f.push_back(float(rng.Range(-1000, 1000)) / 2000.0f);
    }
    return t;
  };
  const auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out,
                        std::map<std::string, net::Attr> attrs = {}) {
    net::Node n;
    n.name = out, n.op = op, n.inputs = std::move(in), n.outputs = {out};
    n.attrs = std::move(attrs);
    g.nodes.push_back(n);
  };
  const auto ints = [](std::vector<int64_t> v) {
    net::Attr a;
    a.kind = net::Attr::Kind::kInts;
    a.ints = std::move(v);
    return a;
  };
  g.constants["w1"] = tensor({4, 4, 3, 3});
  g.constants["b1"] = tensor({4});
  g.constants["w2"] = tensor({4, 4, 3, 3});
  g.constants["w3"] = tensor({8, 4, 1, 1});
  g.constants["fc"] = tensor({8, 3});
  node("Conv", {"x", "w1", "b1"}, "c1", {{"pads", ints({1, 1, 1, 1})}});
  node("Relu", {"c1"}, "r1");
  node("Conv", {"r1", "w2"}, "c2", {{"pads", ints({1, 1, 1, 1})}});
  node("Add", {"c2", "r1"}, "s");
  node("Relu", {"s"}, "r2");
  node("MaxPool", {"r2"}, "p", {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
  node("Conv", {"p", "w3"}, "c3");
  node("GlobalAveragePool", {"c3"}, "gap");
  node("Flatten", {"gap"}, "f");
  node("Gemm", {"f", "fc"}, "y");
  net::ValueInfo yo;
  yo.name = "y";
  g.outputs = {yo};
  const net::Tensor x = tensor({1, 4, 5, 5});
  const net::Plan plan =
      net::Plan::Build(g, {{"x", x.shape}}, cfg.machine.mode, true, cfg.machine.vmem_depth);
  accel::ModelSim golden(cfg);
  accel::NetRunner jobs(golden, false);
  const auto want = jobs.Run(plan, {{"x", x}});
  accel::AccelSim<Vaccel_4x4_q4> sim(cfg, tb::TraceOptions{});
  accel::NetRunner whole(sim, true);
  whole.SetWholeNetwork(true);
  const auto got = whole.Run(plan, {{"x", x}});
  const auto& a = got.at("y").f;
  const auto& b = want.at("y").f;
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  ASSERT_EQ(whole.programs().size(), 1u);
  const accel::NetProgram& p = whole.programs()[0];
  EXPECT_EQ(p.stats.jobs, jobs.Total().jobs);
  EXPECT_GT(p.stats.checked, 0u);
  EXPECT_EQ(p.stats.perf.macs, plan.Macs());
  uint64_t cycles = 0;
  for (const auto& st : plan.steps()) {
    const accel::NetStepStats& t = whole.steps()[size_t(st.index)];
    if (st.accel) EXPECT_GT(t.perf.cycles, 0u) << st.label;
    cycles += t.perf.cycles;
  }
  EXPECT_EQ(cycles, p.stats.perf.cycles);
  EXPECT_EQ(whole.Total().perf.cycles, p.stats.perf.cycles);
}

}  // namespace
}  // namespace accel_suite
}  // namespace tpu
