// SPDX-License-Identifier: Apache-2.0
// The accelerator's test suite, as a typed-parameterized GoogleTest suite over tpu_accel
// configurations (accel_test.cpp: the fast tier's small builds; accel_long_test.cpp: 16x16).
// The accelerator (tpu_accel with the HBM2 device models, tpu/tb/accel_harness.h) against the
// instruction-level golden model (isa::Machine), end to end:
//  * RandomWorkloads: GEMMs (overwrite / preload / accumulate, fp32 / bf16 out, relu, operands
//    stored transposed and read by transposing LOADs), dense
//    layers, MLPs and convolutions (stride, padding) of random shapes and data (finite or with
//    specials), with the vector unit also pooling, depthwise convolutions and softmax
//    (host::CompilePool, CompileDepthwise, CompileSoftmax) and eight jobs linked into one program
//    (host::Link, second bf16 outputs), in both numerics modes, bit-exact
//    through the scoreboard, with zero JEDEC timing violations and consistent performance counters
//    (the six stall classes add up to the cycles, the useful MACs and the instruction count are the
//    program's, the DMA bytes are its beats);
//  * IllegalPrograms*: hand-encoded programs that hit every error code 1..10 (each field rule,
//    the precedence rules, dispatch-queue deadlocks, token overflow, a decode error after a
//    runtime deadlock): the machine reports exactly the golden model's code and pc, does not
//    hang, and then runs a legal workload correctly on the same simulation (it recovers);
//  * LegalEdgePrograms: rows shorter than the buffers' (zero fill), windows with padding on every
//    side, buffer ranges and HBM
//    ranges up to their last row / byte, a newer minor version, tokens left at END, bytes after
//    END, QueueDepth GEMMs waiting for their LOADs, 255 pushes: all run, and what they store equals
//    the golden model's bytes;
//  * ShapeInvariance (fast tier only): the same GEMM, MLP and convolution (same data) on four
//    array shapes give identical output bytes.
//
// Fast tier (accel_test): four small builds of rtl/builds.json, whose configurations the tests
// read from the same entries (accel::ConfigFromBuild):
//   accel_4x4_q4  4x4,  act 64,  wgt 64,  acc 64, QueueDepth 4 (blocks, slots, full queues)
//   accel_3x5     3x5,  act 32,  wgt 24,  acc 40, QueueDepth 8 (odd, non-square)
//   accel_8x8     8x8,  act 256, wgt 128, acc 48, QueueDepth 32 (the default queues)
//   accel_2x128   2x128, act 48, wgt 16,  acc 64, QueueDepth 8 (the TPU's 128 columns)
// The long tier (accel_long_test.cpp, `make test-long`) instantiates the same suite on the
// default 16x16 one-channel accelerator with larger shapes and more iterations.
//
// Reproducing: every test prints its run seed; `--seed=N` (or SEED=N) replays it. Every workload
// is named in the failure with its shape, options, data seed and mode.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpu/builds.h"
#include "tpu/host.h"
#include "tpu/isa.h"
#include "tpu/isa_model.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_harness.h"
#include "tpu/tb/accel_scoreboard.h"
#include "tpu/tb/accel_sim.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/random_program.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/workloads.h"

namespace tpu {
namespace accel_suite {

using host::Init;
using host::OutFormat;
using isa::Bytes;
using isa::Deps;
using isa::ErrorCode;
using isa::Instr;
using isa::MachineConfig;
using tb::accel::Config;
using tb::accel::Workload;
namespace accel = tb::accel;

// How big the random workloads of one configuration get, and how many there are.
struct Limits {
  int iterations = 4;  // rounds of (GEMM, dense, MLP, conv)
  int max_m = 40, max_k = 24, max_n = 24;
  int max_hw = 7, max_c = 10;  // convolution: input height/width, input channels
  int max_hidden = 20;         // MLP hidden sizes
};

// ---------------------------------------------------------------------------------------------
// Small helpers

std::string CodeName(ErrorCode c) {
  return isa::ErrorName(c);
}

Deps D(bool pop_prev, bool pop_next, bool push_prev, bool push_next) {
  Deps d;
  d.pop_prev = pop_prev;
  d.pop_next = pop_next;
  d.push_prev = push_prev;
  d.push_next = push_next;
  return d;
}
const Deps kPopPrev = D(true, false, false, false);
const Deps kPopNext = D(false, true, false, false);
const Deps kPushPrev = D(false, false, true, false);
const Deps kPushNext = D(false, false, false, true);

// HBM regions of the hand-written programs (the workloads use the low addresses).
constexpr uint64_t kProgAddr = 0x100000;  // programs
constexpr uint64_t kDataAddr = 0x200000;  // what their LOADs read (written first)
constexpr uint64_t kDataBytes = 0x10000;
constexpr uint64_t kOutAddr = 0x300000;  // where their STOREs write
constexpr uint64_t kOutBytes = 0x2000;

isa::Load Ld(uint8_t buffer, uint16_t dst, uint16_t rows, uint16_t elems, Deps d = {},
             uint64_t addr = kDataAddr, uint32_t stride = 64) {
  isa::Load l;
  l.deps = d;
  l.buffer = buffer;
  l.hbm_addr = addr;
  l.hbm_stride = stride;
  l.dst = dst;
  l.rows = rows;
  l.elems = elems;
  return l;
}
isa::Gemm G(uint16_t rows, uint16_t kv, uint16_t nv, bool load_w, Deps d = {}, uint16_t act = 0,
            uint16_t wgt = 0, uint16_t acc = 0, bool accumulate = false) {
  isa::Gemm g;
  g.deps = d;
  g.act = act;
  g.wgt = wgt;
  g.acc = acc;
  g.rows = rows;
  g.kv = kv;
  g.nv = nv;
  g.load_weights = load_w;
  g.accumulate = accumulate;
  return g;
}
// The bytes of a row of `elems` values of `size` bytes in HBM: a whole number of 32-byte beats.
// The same LOAD, transposing (version 1.3).
isa::Load Tr(isa::Load l) {
  l.transpose = true;
  return l;
}

uint32_t RowBytes(int elems, int size) {
  return uint32_t((elems * size + 31) / 32 * 32);
}
// A STORE; stride kRowStride: 64 bytes, or the row's bytes where a row is longer (128 fp32).
constexpr uint32_t kRowStride = ~uint32_t(0);
isa::Store St(uint16_t acc, uint16_t rows, uint16_t elems, Deps d = {}, uint64_t addr = kOutAddr,
              uint32_t stride = kRowStride, uint8_t format = isa::kFmtFp32,
              uint8_t act = isa::kActNone) {
  if (stride == kRowStride) {
    stride = std::max<uint32_t>(64, RowBytes(elems, format == isa::kFmtBf16 ? 2 : 4));
  }
  isa::Store s;
  s.deps = d;
  s.format = format;
  s.activation = act;
  s.hbm_addr = addr;
  s.hbm_stride = stride;
  s.acc = acc;
  s.rows = rows;
  s.elems = elems;
  return s;
}
// A VOP (version 1.4): op on n x m elements, unit strides inside (asi = bsi = dsi = 1), outer
// strides n; A from the accumulators unless a_vmem, B a row of the vector memory unless b_acc.
isa::Vop Vp(uint8_t op, uint16_t a, uint16_t b, uint16_t d, uint16_t n, uint16_t m = 1,
            bool a_vmem = false, Deps deps = {}) {
  isa::Vop v;
  v.deps = deps;
  v.op = op;
  v.a_vmem = a_vmem;
  v.b_vmem = true;
  v.a = a, v.b = b, v.d = d, v.n = n, v.m = m;
  v.asi = v.bsi = v.dsi = 1;
  v.aso = v.bso = v.dso = n;
  return v;
}
// A LOAD into the vector memory (version 1.4), fp32 unless bf16.
isa::Load Lv(uint16_t dst, uint16_t rows, uint16_t elems, bool bf16 = false, Deps d = {}) {
  isa::Load l = Ld(isa::kBufVmem, dst, rows, elems, d);
  l.format = uint8_t(bf16 ? isa::kFmtBf16 : isa::kFmtFp32);
  return l;
}
// A STORE from the vector memory (version 1.4).
isa::Store Sv(uint16_t row, uint16_t rows, uint16_t elems, Deps d = {}) {
  isa::Store s = St(row, rows, elems, d);
  s.source = isa::kSrcVmem;
  return s;
}

// HEADER (count = the program's length) + body [+ END], encoded.
std::vector<Bytes> Program(const MachineConfig& cfg, const std::vector<Instr>& body,
                           bool end = true) {
  isa::Header h;
  h.r = uint16_t(cfg.r);
  h.c = uint16_t(cfg.c);
  h.count = uint32_t(body.size() + 1 + (end ? 1 : 0));
  std::vector<Bytes> p{isa::Encode(h)};
  for (const auto& in : body) p.push_back(isa::Encode(in));
  if (end) p.push_back(isa::Encode(isa::End{}));
  return p;
}
// An instruction with one byte changed (reserved bytes, unknown opcodes).
Bytes With(const Instr& in, int byte, uint8_t value) {
  Bytes b = isa::Encode(in);
  b[size_t(byte)] = value;
  return b;
}
// A GEMM through a convolution window (version 1.1).
isa::Gemm Win(isa::Gemm g, uint8_t stride, int8_t dh, int8_t dw, uint16_t band_row,
              uint16_t band_rows, uint16_t width, uint16_t out_width, uint16_t out_row,
              uint16_t out_col) {
  g.window = true;
  g.win.stride = stride, g.win.dh = dh, g.win.dw = dw;
  g.win.band_row = band_row, g.win.band_rows = band_rows, g.win.width = width;
  g.win.out_width = out_width, g.win.out_row = out_row, g.win.out_col = out_col;
  return g;
}
// A legal weight-loading GEMM that pushes / pops nothing.
Instr Gw(const MachineConfig& c) {
  return G(1, uint16_t(c.r), uint16_t(c.c), true);
}

std::string Disasm(const std::vector<Bytes>& prog, uint32_t pc) {
  if (pc >= prog.size()) return "(past the program)";
  const auto d = isa::Decode(prog[pc].data());
  return d.ok() ? isa::Disassemble(d.instr) : fmt::format("(undecodable: {})", d.message);
}

// Random small finite bf16 values (never special), little-endian.
std::vector<uint8_t> SmallBf16(size_t bytes, tb::Rng& rng) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < v.size(); i += 2) {
    const uint16_t x = uint16_t(0x3C00 + rng.Range(0, 0x07FF)) ^ (rng.Bit() ? 0x8000 : 0);
    std::memcpy(&v[i], &x, 2);
  }
  return v;
}

// Compares `n` bytes of HBM at `addr` between the accelerator and the golden model, word by word.
template <class S>
void ExpectSameHbm(S& sim, isa::Machine& golden, uint64_t addr, uint64_t n) {
  std::vector<uint8_t> got(n), want(n);
  sim.ReadHbm(addr, got.data(), n);
  golden.ReadHbm(addr, want.data(), n);
  for (uint64_t i = 0; i < n; i += 4) {
    uint32_t gw = 0, ww = 0;
    std::memcpy(&gw, &got[i], 4);
    std::memcpy(&ww, &want[i], 4);
    ASSERT_EQ(gw, ww) << fmt::format("HBM word at 0x{:X}: got 0x{:08X}, want 0x{:08X}", addr + i,
                                     gw, ww);
  }
}

// The machine's buffers, accumulators and array weights against the golden model's, after a run
// that both finished without error (accel::OnChipDiff: the elements the golden model wrote).
inline void ExpectSameOnChip(accel::Sim& sim, const isa::Machine& golden) {
  EXPECT_EQ(accel::OnChipDiff(sim.ReadOnChip(), golden), "") << "on-chip state";
}

// A run of a legal program against the golden model's: finished without error (the pc and its
// instruction otherwise), no HBM timing violation, the same end state and on-chip state.
inline void ExpectSameRun(accel::Sim& sim, const isa::Machine& golden, const accel::Result& r,
                          const isa::RunResult& g, const std::vector<Bytes>& prog) {
  EXPECT_EQ(CodeName(r.code), "OK") << "at pc " << r.pc << ": " << Disasm(prog, r.pc);
  EXPECT_EQ(r.hbm_violations, 0u) << r.violations;
  EXPECT_EQ(accel::EndStateDiff(r, g), "");
  if (r.code == ErrorCode::kOk) ExpectSameOnChip(sim, golden);
}

// A program listed one instruction a line with its pc (for a failing random program's message).
inline std::string ProgramText(const std::vector<Bytes>& prog) {
  std::string text;
  for (size_t i = 0; i < prog.size(); ++i)
    text += fmt::format("  {:3}: {}\n", i, Disasm(prog, uint32_t(i)));
  return text;
}

// One hand-written program and where it is written and run.
struct Case {
  Case(std::string n, ErrorCode w, std::vector<Bytes> p)
      : name(std::move(n)), want(w), prog(std::move(p)) {}
  std::string name;
  ErrorCode want = ErrorCode::kOk;  // what the golden model must say (a check on the case)
  std::vector<Bytes> prog;
  uint64_t write_addr = kProgAddr;  // where the bytes go
  uint64_t run_addr = kProgAddr;    // the program address the host writes
  std::optional<uint32_t> count;    // the length the host writes (default: prog.size())
  uint32_t Count() const { return count ? *count : uint32_t(prog.size()); }
};

// ---------------------------------------------------------------------------------------------
// The bench: one accelerator simulation per numerics mode (the mode is a register: the same
// build), created lazily and re-created after a watchdog (a stuck machine is not reused).

template <class V>
class Bench {
 public:
  explicit Bench(Config cfg) : cfg_(std::move(cfg)) {}

  const Config& config() const { return cfg_; }
  Config ConfigFor(num::Mode mode) const {
    Config c = cfg_;
    c.machine.mode = mode;
    return c;
  }
  accel::AccelSim<V>& Sim(num::Mode mode) {
    auto& s = mode == num::Mode::kFtz ? ftz_ : ieee_;
    if (!s) s = std::make_unique<accel::AccelSim<V>>(ConfigFor(mode), test::TestTrace());
    return *s;
  }
  void Drop(num::Mode mode) { (mode == num::Mode::kFtz ? ftz_ : ieee_).reset(); }

  // A watchdog bound generous enough for the workload: a few thousand cycles per instruction
  // plus the array's and the DMA's minimum times, several times over.
  static uint64_t CycleBound(const Config& cfg, const Workload& w) {
    const uint64_t peak = uint64_t(cfg.machine.r) * cfg.machine.c;
    return 200'000 + 2'000 * uint64_t(w.Instructions()) + 20 * (w.Macs() / peak) +
           (w.InputBytes() + w.OutputBytes()) / 2;
  }

  // Runs `w` on the accelerator and on a fresh golden model; checks the machine's status, the
  // HBM timing, the counters and every output bit. Returns the DUT's outputs (row-major), empty
  // after a failure that left nothing to compare.
  std::vector<std::vector<uint32_t>> Check(const Workload& w, num::Mode mode) {
    const Config cfg = ConfigFor(mode);
    SCOPED_TRACE(fmt::format("{} {} on {} ({}), data seed {}", w.kind, w.description, cfg.name,
                             mode == num::Mode::kFtz ? "ftz" : "ieee", w.seed));
    auto& sim = Sim(mode);
    accel::Load(sim, w);
    accel::RunOptions opt;
    opt.max_cycles = CycleBound(cfg, w);
    accel::Result r;
    try {
      r = accel::Run(sim, w, opt);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the accelerator did not finish: " << e.what();
      Drop(mode);
      return {};
    }
    EXPECT_EQ(CodeName(r.code), CodeName(ErrorCode::kOk))
        << "at pc " << r.pc << ": "
        << (r.pc < w.prog.instrs.size() ? isa::Disassemble(w.prog.instrs[r.pc]) : "");
    EXPECT_EQ(r.hbm_violations, 0u) << r.violations;
    CheckPerf(w, r.perf);
    ++runs_, cycles_ += r.perf.cycles, macs_ += r.perf.macs, busy_ += r.perf.busy;

    isa::Machine golden(cfg.machine);
    const isa::RunResult g = accel::RunGolden(golden, w);
    EXPECT_TRUE(g.ok()) << "golden model: " << g.message;
    EXPECT_EQ(accel::EndStateDiff(r, g), "")
        << (g.unwritten_bytes_read ? isa::Disassemble(w.prog.instrs[g.first_unwritten_pc]) : "");
    if (r.code != ErrorCode::kOk || !g.ok()) return {};
    ExpectSameOnChip(sim, golden);
    const accel::Report rep = accel::Compare(sim, golden, w);
    EXPECT_TRUE(rep.pass) << rep.Format();
    std::vector<std::vector<uint32_t>> out;
    for (const auto& t : w.outputs) out.push_back(accel::ReadTensor(sim, t));
    return out;
  }

  // The counters against the program: every busy cycle in exactly one class; the MACs, the
  // instructions (HEADER .. END) and the DMA beats are the program's.
  // "12 workloads, 345,678 cycles, 1,234,567 MACs (busy 45%)".
  std::string Stats() const {
    return fmt::format("{} workloads, {} cycles, {} MACs, array busy {:.1f}% of the cycles", runs_,
                       cycles_, macs_, cycles_ ? 100.0 * double(busy_) / double(cycles_) : 0.0);
  }

  static void CheckPerf(const Workload& w, const accel::Perf& p) {
    EXPECT_GT(p.cycles, 0u);
    EXPECT_EQ(p.busy + p.weight_stall + p.input_stall + p.acc_hazard + p.store_stall + p.idle,
              p.cycles)
        << fmt::format("busy {} weight {} input {} hazard {} store {} idle {}", p.busy,
                       p.weight_stall, p.input_stall, p.acc_hazard, p.store_stall, p.idle);
    EXPECT_EQ(p.macs, w.Macs());
    EXPECT_EQ(p.instructions, uint64_t(w.Instructions()));
    // Each LOAD row and STORE row moves whole 32-byte beats from a 32-byte aligned address.
    uint64_t load_bytes = 0, store_bytes = 0;
    for (const auto& in : w.prog.instrs) {
      if (const auto* l = std::get_if<isa::Load>(&in)) {
        // An accumulator LOAD with stride 0 (a bias) reads its row once and repeats it.
        const bool acc = l->buffer == isa::kBufAcc;
        const uint64_t rows = acc && l->hbm_stride == 0 ? 1 : l->rows;
        load_bytes += rows * host::RoundUp32(l->elems * (acc ? 4 : 2));
      } else if (const auto* s = std::get_if<isa::Store>(&in)) {
        const uint64_t size = s->format == isa::kFmtBf16 ? 2 : 4;
        store_bytes += uint64_t(s->rows) * host::RoundUp32(s->elems * size);
      }
    }
    EXPECT_EQ(p.hbm_write_bytes, store_bytes);
    EXPECT_EQ(p.hbm_read_bytes, load_bytes + w.ProgramBytes())
        << fmt::format("LOADs {} B + program {} B", load_bytes, w.ProgramBytes());
  }

 private:
  Config cfg_;
  std::unique_ptr<accel::AccelSim<V>> ieee_, ftz_;
  uint64_t runs_ = 0, cycles_ = 0, macs_ = 0, busy_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Random workloads

Workload RandomWorkload(const Config& cfg, tb::Rng& rng, const Limits& lim, int kind) {
  const uint64_t seed = rng.Next();
  const auto values = rng.Range(0, 3) == 0 ? accel::Values::kSpecials : accel::Values::kFinite;
  const int m = rng.Range(1, lim.max_m), k = rng.Range(1, lim.max_k), n = rng.Range(1, lim.max_n);
  switch (kind) {
    case 0:
    case 1:
    case 2: {
      const Init init = Init(kind);  // overwrite, preload, accumulate
      const OutFormat f =
          init == Init::kAccumulate || rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16;
      return accel::MakeGemm(cfg, m, k, n, init, f, rng.Bit(), seed, values);
    }
    case 6: {  // transposes in hardware (ISA 1.3): A, B or both stored transposed
      const int t = rng.Range(1, 3);
      const Init init = Init(rng.Range(0, 2));
      const OutFormat f =
          init == Init::kAccumulate || rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16;
      return accel::MakeGemm(cfg, m, k, n, init, f, rng.Bit(), seed, values,
                             host::GemmTranspose{(t & 1) != 0, (t & 2) != 0});
    }
    case 3:
      return accel::MakeDense(cfg, m, k, n, rng.Bit(), rng.Bit(),
                              rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16, seed, values);
    case 4: {
      std::vector<int> sizes{k};
      const int hidden = rng.Range(1, 2);
      for (int i = 0; i < hidden; ++i) sizes.push_back(rng.Range(1, lim.max_hidden));
      sizes.push_back(n);
      return accel::MakeMlp(cfg, std::max(1, m / 2), sizes, rng.Bit(), rng.Bit(), seed, values);
    }
    case 7:    // pooling on the vector unit (version 1.4)
    case 8: {  // a depthwise convolution on the vector unit
      const bool dw = kind == 8;
      host::PoolShape s;
      s.n = rng.Range(1, 2), s.c = rng.Range(1, lim.max_c);
      s.kh = rng.Range(1, 3), s.kw = rng.Range(1, 3);
      s.sh = rng.Range(1, 2), s.sw = rng.Range(1, 2);
      s.dh = rng.Range(1, 2), s.dw = rng.Range(1, 2);
      s.pt = rng.Range(0, s.kh - 1), s.pb = rng.Range(0, s.kh - 1);
      s.pl = rng.Range(0, s.kw - 1), s.pr = rng.Range(0, s.kw - 1);
      const int eh = (s.kh - 1) * s.dh + 1, ew = (s.kw - 1) * s.dw + 1;
      s.h = rng.Range(std::max(1, eh - s.pt - s.pb), lim.max_hw);
      s.w = rng.Range(std::max(1, ew - s.pl - s.pr), lim.max_hw);
      s.oh = (s.h + s.pt + s.pb - eh) / s.sh + 1, s.ow = (s.w + s.pl + s.pr - ew) / s.sw + 1;
      s.max = rng.Bit();
      s.count_include_pad = rng.Bit();
      net::AccelJob job;
      job.kind = dw ? net::AccelJob::Kind::kDepthwise : net::AccelJob::Kind::kPool;
      job.pool = s;
      job.m = s.n * s.oh * s.ow, job.k = s.kh * s.kw, job.n = s.c;
      // Values of a few binades around 1 with zeros, or (a third of the time) any pattern.
      const auto value = [&]() -> uint32_t {
        if (values == accel::Values::kSpecials && rng.Range(0, 3) == 0) return uint32_t(rng.Next());
        if (rng.Range(0, 15) == 0) return uint32_t(rng.Bit()) << 31;
        return uint32_t(rng.Bit()) << 31 | uint32_t(rng.Range(121, 133)) << 23 |
               (uint32_t(rng.Next()) & 0x7FFFFFu);
      };
      const size_t in = size_t(s.n) * s.h * s.w * s.c;
      if (dw) {
        for (size_t i = 0; i < in; ++i) job.a.push_back(uint16_t(value() >> 16));
        for (int i = 0; i < job.k * s.c; ++i) job.b.push_back(uint16_t(value() >> 16));
        if (rng.Bit()) {
          for (int i = 0; i < s.c; ++i) job.bias.push_back(value());
        }
        job.relu = rng.Bit();
        job.out = rng.Bit() ? OutFormat::kBf16 : OutFormat::kFp32;
      } else {
        for (size_t i = 0; i < in; ++i) job.va.push_back(value());
      }
      return accel::MakeJob(cfg, job);
    }
    case 10: {  // jobs linked into one program (host::Link): conv, conv, pool, vector, dense,
                //  and two convolutions placed side by side into a third's input (a Concat)
      // Each job's activations are its producer's output where the layouts agree (a bf16
      // copy for the convolution and the dense layer), else random data the host writes.
      const auto value = [&]() -> uint32_t {
        if (values == accel::Values::kSpecials && rng.Range(0, 7) == 0) return uint32_t(rng.Next());
        return uint32_t(rng.Bit()) << 31 | uint32_t(rng.Range(122, 130)) << 23 |
               (uint32_t(rng.Next()) & 0x7FFFFFu);
      };
      const auto fill32 = [&](std::vector<uint32_t>* v, size_t n) {
        for (size_t i = 0; i < n; ++i) v->push_back(value());
      };
      const auto fill16 = [&](std::vector<uint16_t>* v, size_t n) {
        for (size_t i = 0; i < n; ++i) v->push_back(uint16_t(value() >> 16));
      };
      const int nimg = rng.Range(1, 2), h = rng.Range(2, lim.max_hw), w = rng.Range(2, lim.max_hw);
      const int c0 = rng.Range(1, lim.max_c), c1 = rng.Range(1, lim.max_c);
      const int c2 = rng.Range(1, lim.max_c);
      std::vector<net::AccelJob> jobs(8);
      auto& a = jobs[0];  // conv: fp32 out and its bf16 copy
      a.kind = net::AccelJob::Kind::kConv;
      a.conv = {nimg, h, w, c0, c1, 3, 3, 1, 1};
      fill16(&a.a, size_t(nimg) * h * w * c0);
      fill16(&a.b, size_t(9) * c0 * c1);
      fill32(&a.bias, size_t(c1));
      a.relu = rng.Bit();
      a.also_bf16 = true;
      auto& b = jobs[1];  // conv on a's bf16 copy
      b.kind = net::AccelJob::Kind::kConv;
      b.conv = {nimg, h, w, c1, c2, rng.Range(1, 3), rng.Range(1, 3), 1, 1};
      fill16(&b.a, size_t(nimg) * h * w * c1);
      fill16(&b.b, size_t(b.conv.kh) * b.conv.kw * c1 * c2);
      b.also_bf16 = rng.Bit();
      host::PoolShape ps;  // max or average pooling of b's output
      ps.n = nimg, ps.h = b.conv.OutH(), ps.w = b.conv.OutW(), ps.c = c2;
      ps.kh = ps.kw = 2, ps.pb = ps.pr = 1, ps.oh = ps.h, ps.ow = ps.w, ps.max = rng.Bit();
      auto& c = jobs[2];
      c.kind = net::AccelJob::Kind::kPool;
      c.pool = ps;
      c.m = nimg * ps.oh * ps.ow, c.n = c2;
      fill32(&c.va, size_t(nimg) * ps.h * ps.w * c2);
      auto& d = jobs[3];  // vector: A the pool's output, B random; a bf16 copy
      d.kind = net::AccelJob::Kind::kVector;
      d.m = c.m, d.n = c2;
      d.stages = {{isa::VectorOp::kMul, host::VectorB::kTensor}, {isa::VectorOp::kRelu}};
      fill32(&d.va, size_t(d.m) * c2);
      fill32(&d.vb, size_t(d.m) * c2);
      d.also_bf16 = true;
      auto& e = jobs[4];  // dense on d's bf16 copy
      e.kind = net::AccelJob::Kind::kGemm;
      e.m = d.m, e.k = c2, e.n = rng.Range(1, lim.max_n);
      fill16(&e.a, size_t(e.m) * e.k);
      fill16(&e.b, size_t(e.k) * e.n);
      if (rng.Bit()) fill32(&e.bias, size_t(e.n));
      // Two convolutions stored side by side (a Concat: host::LinkPlace) into a pointwise one's
      // input: the first of a whole number of the array's columns, so the second starts at a
      // tile boundary.
      const int p1c = int(cfg.machine.c) * rng.Range(1, 2), p2c = rng.Range(1, lim.max_c);
      for (int i = 5; i <= 6; ++i) {
        auto& p = jobs[size_t(i)];
        p.kind = net::AccelJob::Kind::kConv;
        p.conv = {nimg, h, w, c0, i == 5 ? p1c : p2c, 1, 3, 1, 1};
        p.conv.pad = 1;
        fill16(&p.a, size_t(nimg) * h * w * c0);
        fill16(&p.b, size_t(3) * c0 * p.conv.cout);
        p.out = OutFormat::kBf16;
      }
      auto& q = jobs[7];
      q.kind = net::AccelJob::Kind::kConv;
      q.conv = {nimg,
                jobs[5].conv.OutH(),
                jobs[5].conv.OutW(),
                p1c + p2c,
                rng.Range(1, lim.max_n),
                1,
                1,
                1,
                0};
      fill16(&q.a, size_t(q.conv.n) * q.conv.h * q.conv.w * q.conv.cin);
      fill16(&q.b, size_t(q.conv.cin) * q.conv.cout);
      std::vector<Workload> parts;
      uint64_t base = 0;
      for (const auto& j : jobs) {
        parts.push_back(accel::MakeJob(cfg, j, base, true));
        base = parts.back().prog.addr;
      }
      std::vector<accel::WorkloadLink> links;
      const auto link = [&](size_t part, size_t from, int elem_bytes) {
        const accel::Tensor* in = accel::JobOperand(parts[part], jobs[part], 0);
        for (const auto& o : parts[from].outputs) {
          if (in != nullptr && o.elem_bytes == elem_bytes && host::Bindable(in->mat, o.mat)) {
            links.push_back({part, in->name, from, o.name});
            return;
          }
        }
      };
      link(1, 0, 2);
      link(2, 1, 4);
      link(3, 2, 4);
      link(4, 3, 2);
      const accel::Tensor* qin = accel::JobOperand(parts[7], jobs[7], 0);
      const auto& o5 = parts[5].outputs.at(0);
      const auto& o6 = parts[6].outputs.at(0);
      if (qin != nullptr && host::Placeable(o5.mat, qin->mat, 0) &&
          host::Placeable(o6.mat, qin->mat, p1c)) {
        accel::WorkloadLink l5{7, qin->name, 5, o5.name}, l6{7, qin->name, 6, o6.name};
        l5.col0 = 0, l6.col0 = p1c;
        links.push_back(l5);
        links.push_back(l6);
      }
      Workload lw = accel::LinkWorkloads(cfg, parts, links);
      lw.seed = seed;
      lw.description += fmt::format(" ({} bound)", links.size());
      return lw;
    }
    case 9: {  // softmax or log-softmax on the vector unit
      net::AccelJob job;
      job.kind = net::AccelJob::Kind::kSoftmax;
      job.log = rng.Bit();
      job.m = rng.Range(1, std::max(1, cfg.machine.vmem_depth - 6));
      job.n = rng.Range(1, 3 * cfg.machine.c + 1);
      for (int i = 0; i < job.m * job.n; ++i) {
        const float f = float(rng.Range(-16000, 16000)) / 1000.0f;
        uint32_t u;
        std::memcpy(&u, &f, 4);
        job.va.push_back(
            values == accel::Values::kSpecials && rng.Range(0, 40) == 0 ? uint32_t(rng.Next()) : u);
      }
      return accel::MakeJob(cfg, job);
    }
    default: {
      host::ConvShape s;
      s.n = rng.Range(1, 2);
      s.kh = rng.Range(1, 3);
      s.kw = rng.Range(1, 3);
      s.pad = rng.Range(0, 1);
      s.stride = rng.Range(1, 2);
      s.h = rng.Range(std::max(1, s.kh - 2 * s.pad), lim.max_hw);
      s.w = rng.Range(std::max(1, s.kw - 2 * s.pad), lim.max_hw);
      s.cin = rng.Range(1, lim.max_c);
      s.cout = rng.Range(1, lim.max_n);
      const bool bias = rng.Bit(), relu = rng.Bit();
      const host::OutFormat out = rng.Bit() ? host::OutFormat::kBf16 : host::OutFormat::kFp32;
      return accel::MakeConv(cfg, s, bias, relu, out, seed, values);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The suite, typed over a configuration: T::Model (the Verilated class), T::MakeConfig() (its
// accel::Config), T::kName, T::TestLimits(), T::kOnChipParts. A configuration derives from Build,
// which gives all but kName and TestLimits: the build's parameters from rtl/builds.json.

template <class Self, class ModelT, int OnChipParts = 4>
struct Build {
  using Model = ModelT;
  static constexpr int kOnChipParts = OnChipParts;  // accel::OnChip parts read (OnChipStateRead)
  static Config MakeConfig() { return accel::ConfigFromBuild(Self::kName); }
};

template <class T>
class AccelTest : public ::testing::Test {
 protected:
  using V = typename T::Model;

  AccelTest() : bench_(T::MakeConfig()) {}
  const MachineConfig& mc() const { return bench_.config().machine; }

  // A small legal GEMM after an error: the machine must have recovered (queues, tokens, fetch,
  // weights state), checked bit for bit.
  void ExpectRecovers(const std::string& after, tb::Rng& rng) {
    SCOPED_TRACE("the legal workload after " + after);
    const Config cfg = bench_.config();
    const Init init = Init(rng.Range(0, 2));
    // Up to two tiles each way, of at most 16 (a 128x128 array recovers with small GEMMs).
    const int r = std::min(cfg.machine.r, 16), c = std::min(cfg.machine.c, 16);
    const Workload w =
        accel::MakeGemm(cfg, rng.Range(1, 2 * r + 3), rng.Range(1, 2 * r + 1),
                        rng.Range(1, 2 * c + 1), init, OutFormat::kFp32, false, rng.Next());
    bench_.Check(w, num::Mode::kIeee);
  }

  // Runs a hand-written program on the accelerator and on the golden model (same bytes, same
  // program address and length): the golden model must say `c.want` (the case hits what it is
  // meant to), and the machine exactly the golden model's code and pc, without hanging. Returns
  // the machine's result (nullopt when it hung).
  std::optional<accel::Result> RunCase(const Case& c) {
    SCOPED_TRACE(fmt::format("case '{}' on {}", c.name, bench_.config().name));
    isa::Machine golden(mc());
    auto& sim = bench_.Sim(num::Mode::kIeee);
    // What the LOADs read: zeros in both machines (a device model's unwritten bytes are its
    // background, the golden model's zeros).
    const std::vector<uint8_t> data(kDataBytes, 0);
    golden.WriteHbm(kDataAddr, data.data(), data.size());
    sim.WriteHbm(kDataAddr, data.data(), data.size());
    std::vector<uint8_t> bytes;
    for (const auto& b : c.prog) bytes.insert(bytes.end(), b.begin(), b.end());
    if (!bytes.empty()) golden.WriteHbm(c.write_addr, bytes.data(), bytes.size());
    const isa::RunResult g = golden.Run(c.run_addr, c.Count());
    EXPECT_EQ(CodeName(g.code), CodeName(c.want)) << "the case is wrong: " << g.message;
    EXPECT_EQ(g.unwritten_bytes_read, 0u) << fmt::format(
        "the case is wrong: its LOADs read HBM never written, first at 0x{:X}", g.first_unwritten);

    // Clear the program area first: a stale longer program must not help a short one.
    const std::vector<uint8_t> zeros(64 * 32, 0);
    if (c.write_addr + zeros.size() <= mc().hbm_bytes) {
      sim.WriteHbm(c.write_addr, zeros.data(), zeros.size());
    }
    if (!bytes.empty()) sim.WriteHbm(c.write_addr, bytes.data(), bytes.size());
    accel::RunOptions opt;
    opt.max_cycles = 200'000 + 4'000 * uint64_t(c.prog.size());
    accel::Result r;
    try {
      r = sim.Run(c.run_addr, c.Count(), opt);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the machine hung (golden: " << CodeName(g.code) << " at pc " << g.pc
                    << "): " << e.what();
      bench_.Drop(num::Mode::kIeee);
      return std::nullopt;
    }
    EXPECT_EQ(CodeName(r.code), CodeName(g.code))
        << "machine pc " << r.pc << "; golden pc " << g.pc << ": " << g.message;
    // The pc is the offending instruction's, or END's on success (both report it).
    {
      EXPECT_EQ(r.pc, g.pc) << "golden: " << CodeName(g.code) << ": " << g.message
                            << "\n  machine's pc: " << Disasm(c.prog, r.pc)
                            << "\n  golden's pc:  " << Disasm(c.prog, g.pc);
    }
    EXPECT_EQ(r.hbm_violations, 0u) << r.violations;
    EXPECT_EQ(accel::EndStateDiff(r, g), "") << Disasm(c.prog, g.pc);
    if (g.ok() && r.code == ErrorCode::kOk) ExpectSameOnChip(sim, golden);
    if (g.ok()) {
      // A legal program: what it stored equals the golden model's bytes.
      std::vector<uint8_t> got(kOutBytes), want(kOutBytes);
      sim.ReadHbm(kOutAddr, got.data(), got.size());
      golden.ReadHbm(kOutAddr, want.data(), want.size());
      EXPECT_TRUE(got == want) << "stored bytes differ from the golden model's";
      EXPECT_EQ(r.perf.instructions, uint64_t(g.pc) + 1);
    }
    return r;
  }

  // What the golden model says of a case (with RunCase's data: zeros at kDataAddr).
  isa::RunResult Golden(const Case& c) {
    isa::Machine golden(mc());
    const std::vector<uint8_t> data(kDataBytes, 0);
    golden.WriteHbm(kDataAddr, data.data(), data.size());
    std::vector<uint8_t> bytes;
    for (const auto& b : c.prog) bytes.insert(bytes.end(), b.begin(), b.end());
    if (!bytes.empty()) golden.WriteHbm(c.write_addr, bytes.data(), bytes.size());
    return golden.Run(c.run_addr, c.Count());
  }

  // The case with a legal instruction of the faulty instruction's module right behind it (a
  // LOAD, a GEMM or a STORE by its opcode byte; a LOAD's module by its buffer byte: 2 is the
  // compute module's), when the golden model reports the same error at the same pc for both:
  // the machine must still name the faulty instruction, not the next one its module holds.
  // Cases at pc 0, with their own length or addresses, or whose error moves, have none.
  std::optional<Case> Behind(const Case& c) {
    if (c.count || c.write_addr != kProgAddr || c.run_addr != kProgAddr || c.prog.size() < 3)
      return std::nullopt;
    uint32_t count = 0;
    std::memcpy(&count, c.prog[0].data() + 16, 4);
    if (count != c.prog.size()) return std::nullopt;
    const isa::RunResult g = Golden(c);
    if (g.ok() || g.pc == 0 || size_t(g.pc) + 1 >= c.prog.size()) return std::nullopt;
    const MachineConfig m = mc();
    const Bytes& bad = c.prog[g.pc];
    Instr more;
    const char* what = "";
    const std::optional<isa::Module> module = isa::ModuleOfBytes(bad.data(), m.vector_unit());
    if (!module) return std::nullopt;
    switch (*module) {
      case isa::Module::kLoad:
        more = Ld(isa::kBufAct, 0, 1, 1);
        what = "a LOAD";
        break;
      case isa::Module::kCompute:
        // An accumulator LOAD behind an accumulator LOAD, a GEMM behind a GEMM.
        if (bad[isa::kOpcodeByte] == uint8_t(isa::Opcode::kLoad)) {
          more = Ld(isa::kBufAcc, 0, 1, 1);
          what = "an accumulator LOAD";
        } else {
          more = G(1, uint16_t(m.r), uint16_t(m.c), true);
          what = "a GEMM";
        }
        break;
      case isa::Module::kStore:
        more = St(0, 1, 1);
        what = "a STORE";
        break;
      default: return std::nullopt;
    }
    Case v(fmt::format("{}, {} behind it", c.name, what), c.want, c.prog);
    v.prog.insert(v.prog.begin() + g.pc + 1, isa::Encode(more));
    const uint32_t n = count + 1;
    std::memcpy(v.prog[0].data() + 16, &n, 4);
    const isa::RunResult gv = Golden(v);
    if (gv.code != g.code || gv.pc != g.pc) return std::nullopt;
    return v;
  }

  // Every case, each followed by a legal workload; then each case's Behind variant, if it has
  // one, the same way.
  void RunCases(const std::vector<Case>& cases) {
    tb::Rng rng(test::TestSeed());
    int behind = 0;
    auto run = [&](const Case& c) {
      // The workload's tensors and program live below kProgAddr: clear the stores' area only.
      const std::vector<uint8_t> zeros(kOutBytes, 0);
      bench_.Sim(num::Mode::kIeee).WriteHbm(kOutAddr, zeros.data(), zeros.size());
      RunCase(c);
      ExpectRecovers(c.name, rng);
    };
    for (const Case& c : cases) {
      run(c);
      if (HasFatalFailure()) return;
      if (const auto v = Behind(c)) {
        // The run counts in accel.error_behind (tpu/tb/fcov.h), in its error code's bin, when
        // coverage is collected (TPU_FCOV_DIR).
        const tb::fcov::Group& g = *tb::fcov::Groups().accel_error_behind;
        const auto& bins = g.bins();
        const size_t bin = size_t(
            std::find(bins.begin(), bins.end(), std::string(CodeName(v->want))) - bins.begin());
        const uint64_t before = bin < bins.size() ? g.Hits(bin) : 0;
        run(*v);
        ++behind;
        if (HasFatalFailure()) return;
        EXPECT_LT(bin, bins.size()) << v->name << ": no accel.error_behind bin for its code";
        // (The harness reads the program back for coverage only when it is written.)
        if (bin < bins.size() && tb::fcov::Enabled())
          EXPECT_GT(g.Hits(bin), before) << v->name << ": not counted in accel.error_behind";
      }
    }
    fmt::print(
        "[  CASES   ] {}: {} cases, {} of them again with an instruction of the faulty "
        "one's module behind it\n",
        bench_.config().name, cases.size(), behind);
  }

  Bench<V> bench_;
};

TYPED_TEST_SUITE_P(AccelTest);

TYPED_TEST_P(AccelTest, RandomWorkloads) {
  tb::Rng rng(test::TestSeed());
  const Limits lim = TypeParam::TestLimits();
  const Config cfg = this->bench_.config();
  fmt::print("[  CONFIG  ] {}: {}\n", cfg.name, accel::Describe(cfg));
  for (uint64_t it = 0; it < test::Scaled(uint64_t(lim.iterations)); ++it) {
    // Every kind each round, in a random order and mode.
    std::vector<int> kinds = {0, 1, 2, 3, 4, 5, 6};
    if (cfg.machine.vector_unit())
      kinds.insert(kinds.end(), {7, 8, 9, 10});  // pool, depthwise, softmax, linked jobs
    for (size_t i = kinds.size(); i > 1; --i)
      std::swap(kinds[i - 1], kinds[rng.Range(0, int(i) - 1)]);
    for (int kind : kinds) {
      const num::Mode mode = rng.Range(0, 3) == 0 ? num::Mode::kFtz : num::Mode::kIeee;
      const Workload w = RandomWorkload(this->bench_.ConfigFor(mode), rng, lim, kind);
      this->bench_.Check(w, mode);
      if (this->HasFailure()) return;  // the first failing workload is the reproduction
    }
  }
  fmt::print("[  STATS   ] {}\n", this->bench_.Stats());
}

// ERR_OPCODE, ERR_RESERVED (reserved bytes and bits, illegal dependency flags) and their
// precedence within an instruction.
TYPED_TEST_P(AccelTest, IllegalProgramsDecode) {
  const MachineConfig c = this->mc();
  const Instr ld = Ld(isa::kBufAct, 0, 1, 1), gw = Gw(c), st = St(0, 1, 1), end = isa::End{};
  std::vector<Case> cases;
  auto add = [&](std::string name, ErrorCode want, std::vector<Bytes> prog) {
    cases.push_back({std::move(name), want, std::move(prog)});
  };
  // Opcodes.
  {
    auto p = Program(c, {ld, gw, st});
    p[2] = With(gw, 0, 0x00);
    add("opcode 0x00", ErrorCode::kOpcode, p);
    p = Program(c, {ld, gw, st});
    // 0x06 is VOP on a machine with the vector unit (version 1.4), unknown without it.
    const uint8_t unused = c.vector_unit() ? 0x07 : 0x06;
    p[3] = With(st, 0, unused);
    add(fmt::format("opcode 0x{:02X} (the first unused)", unused), ErrorCode::kOpcode, p);

    p = Program(c, {ld, gw, st});
    p[4] = With(end, 0, 0xFF);
    add("opcode 0xFF where END would be", ErrorCode::kOpcode, p);
    p = Program(c, {ld});
    p[1] = With(ld, 0, 0x86);
    p[1][2] = 0xFF;  // an unknown opcode is reported before its reserved bytes
    add("opcode before reserved", ErrorCode::kOpcode, p);
  }
  // Reserved bytes and bits, per kind.
  {
    struct R {
      const char* what;
      Instr in;
      int byte;
      uint8_t value;
    };
    const R rs[] = {{"LOAD byte 2", ld, 2, 0x01},         {"LOAD byte 3", ld, 3, 0x80},
                    {"LOAD byte 5 bit 3", ld, 5, 0x08},   {"LOAD byte 7", ld, 7, 0x40},
                    {"LOAD byte 26", ld, 26, 0x01},       {"LOAD byte 31", ld, 31, 0x80},
                    {"GEMM byte 2", gw, 2, 0x10},         {"GEMM byte 16 bit 4", gw, 16, 0x12},
                    {"GEMM byte 16 bit 7", gw, 16, 0x82}, {"GEMM byte 17", gw, 17, 0x01},
                    {"GEMM byte 31", gw, 31, 0x01},       {"STORE byte 6", st, 6, 0x01},
                    {"LOAD byte 6", ld, 6, 0x01},         {"STORE byte 7", st, 7, 0x20},
                    {"STORE byte 28", st, 28, 0x01},      {"STORE byte 31", st, 31, 0x04},
                    {"END byte 4", end, 4, 0x01},         {"END byte 31", end, 31, 0x80},
                    {"LOAD flag bit 4", ld, 1, 0x10},     {"GEMM flag bit 7", gw, 1, 0x80},
                    {"LOAD byte 5 bit 7", ld, 5, 0x81}};
    for (const R& r : rs) {
      // STORE byte 6 is `source` with the vector unit: 1 is legal there, 2 a field error.
      if (c.vector_unit() && std::string(r.what) == "STORE byte 6") continue;
      auto p = Program(c, {ld, gw, st});
      const size_t at = std::holds_alternative<isa::Load>(r.in)    ? 1
                        : std::holds_alternative<isa::Gemm>(r.in)  ? 2
                        : std::holds_alternative<isa::Store>(r.in) ? 3
                                                                   : 4;
      p[at] = With(r.in, r.byte, r.value);
      add(r.what, ErrorCode::kReserved, p);
    }
    // HEADER's reserved bytes and flags: pc 0.
    auto p = Program(c, {ld});
    p[0][2] = 0x01;
    add("HEADER byte 2", ErrorCode::kReserved, p);
    p = Program(c, {ld});
    p[0][25] = 0x01;
    add("HEADER byte 25", ErrorCode::kReserved, p);
    p = Program(c, {ld});
    p[0][1] = 0x04;
    add("HEADER with push_prev", ErrorCode::kReserved, p);
  }
  // The vector unit's instructions (version 1.4): reserved bytes, bits and flags.
  if (c.vector_unit()) {
    const Instr vop = Vp(uint8_t(isa::VectorOp::kAdd), 0, 0, 0, 1, 1, true), lv = Lv(0, 1, 1);
    const Instr sv = Sv(0, 1, 1);
    struct R {
      const char* what;
      Instr in;
      int byte;
      uint8_t value;
    };
    isa::Vop sc = std::get<isa::Vop>(vop);
    sc.b_vmem = false, sc.b_scalar = true, sc.scalar = 0x3F800000;
    const R rs[] = {{"VOP byte 2", vop, 2, 0x01},
                    {"VOP byte 3", vop, 3, 0x80},
                    {"VOP byte 5 bit 3", vop, 5, 0x0B},
                    {"VOP byte 5 bit 7", vop, 5, 0x81},
                    {"VOP scalar byte 28 without b_scalar", vop, 28, 0x01},
                    {"VOP scalar byte 31 without b_scalar", vop, 31, 0x3F},
                    {"VOP flag bit 4", vop, 1, 0x10},
                    {"VOP pop_next", vop, 1, 0x02},
                    {"VOP push_next", vop, 1, 0x08},
                    {"vector LOAD byte 7", lv, 7, 0x01},
                    {"vector LOAD push_next", lv, 1, 0x08},
                    {"vector STORE byte 7", sv, 7, 0x01}};
    for (const R& r : rs) {
      add(r.what, ErrorCode::kReserved, Program(c, {lv, gw, r.in}));
      auto p = Program(c, {lv, gw, r.in});
      p[3] = With(r.in, r.byte, r.value);
      cases.back().prog = p;
    }
    add("VOP with a scalar: byte 5 bit 6", ErrorCode::kReserved, Program(c, {lv, sc}));
    cases.back().prog[2] = With(sc, 5, 0x44);
  }
  // Dependency flags the module cannot use.
  add("LOAD pop_prev (load has no prev)", ErrorCode::kReserved,
      Program(c, {ld, Ld(isa::kBufWgt, 0, 1, 1, kPopPrev)}));
  add("LOAD push_prev", ErrorCode::kReserved, Program(c, {Ld(isa::kBufAct, 0, 1, 1, kPushPrev)}));
  add("STORE push_next (store has no next)", ErrorCode::kReserved,
      Program(c, {gw, St(0, 1, 1, kPushNext)}));
  add("STORE pop_next", ErrorCode::kReserved, Program(c, {gw, St(0, 1, 1, kPopNext)}));
  {
    isa::End e;
    e.deps = kPopPrev;
    add("END pop_prev", ErrorCode::kReserved, Program(c, {ld, e}, false));
  }
  // Reserved before the kind's rules: a LOAD with rows = 0 and a reserved byte.
  {
    auto p = Program(c, {ld});
    p[1] = With(Ld(isa::kBufAct, 0, 0, 1), 30, 0x01);
    add("reserved before field", ErrorCode::kReserved, p);
  }
  this->RunCases(cases);
}

// ERR_HEADER, ERR_SHAPE, ERR_NO_END (and the first END ends the program).
TYPED_TEST_P(AccelTest, IllegalProgramsHeader) {
  const MachineConfig c = this->mc();
  const Instr ld = Ld(isa::kBufAct, 0, 1, 1), gw = Gw(c);
  std::vector<Case> cases;
  auto add = [&](std::string name, ErrorCode want, std::vector<Bytes> prog) {
    cases.push_back({std::move(name), want, std::move(prog)});
  };
  {
    auto p = Program(c, {ld});
    p[0] = isa::Encode(ld);
    add("no HEADER (a LOAD at pc 0)", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][0] = 0x07;
    add("unknown opcode at pc 0", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][7] = 0x32;
    add("magic TPU2", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][8] = 2;
    add("major version 2", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][8] = 0, p[0][9] = 1;
    add("major version 256", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][16] += 1;
    add("HEADER count above the length", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][16] -= 1;  // the length covers the END; the count says one fewer
    add("HEADER count below the length", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][12] = uint8_t(c.r + 1);
    p[0][16] += 1;  // count before shape
    add("count before shape", ErrorCode::kHeader, p);
    p = Program(c, {ld});
    p[0][19] = 0x01;  // a count of 2^24 + ...
    add("HEADER count high byte", ErrorCode::kHeader, p);
  }
  {
    isa::Header h2;
    h2.r = uint16_t(c.r);
    h2.c = uint16_t(c.c);
    h2.count = 4;
    add("a second HEADER", ErrorCode::kHeader, Program(c, {ld, h2}));
  }
  {
    Case len0{"length 0", ErrorCode::kHeader, Program(c, {ld})};
    len0.count = 0;
    cases.push_back(len0);
  }
  {
    auto p = Program(c, {ld});
    p[0][12] = uint8_t(c.r + 1);
    add("R + 1", ErrorCode::kShape, p);
    p = Program(c, {ld});
    p[0][14] = uint8_t(c.c + 1);
    add("C + 1", ErrorCode::kShape, p);
    p = Program(c, {ld});
    p[0][13] = 1;  // R + 256
    add("R + 256", ErrorCode::kShape, p);
    p = Program(c, {ld});
    std::swap(p[0][12], p[0][14]);
    add("R and C swapped", c.r == c.c ? ErrorCode::kOk : ErrorCode::kShape, p);
  }
  add("no END", ErrorCode::kNoEnd, Program(c, {ld, gw, St(0, 1, 1)}, false));
  add("HEADER only", ErrorCode::kNoEnd, Program(c, {}, false));
  this->RunCases(cases);
}

// ERR_FIELD: every rule of every kind, the buffer ranges one past their last row, weight reuse.
TYPED_TEST_P(AccelTest, IllegalProgramsField) {
  const MachineConfig c = this->mc();
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const auto A = uint16_t(c.act_depth), W = uint16_t(c.wgt_depth), Acc = uint16_t(c.acc_depth);
  const Instr ld = Ld(isa::kBufAct, 0, 1, 1), gw = Gw(c);
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<Instr> body) {
    cases.push_back({std::move(name), ErrorCode::kField, Program(c, body)});
  };
  // LOAD.
  // Buffer 3 is the vector memory on a machine with the vector unit (version 1.4).
  const uint8_t unused_buffer = c.vector_unit() ? 4 : 3;
  add(fmt::format("LOAD buffer {}", unused_buffer), {ld, Ld(unused_buffer, 0, 1, 1)});
  add("LOAD buffer 255", {Ld(255, 0, 1, 1)});
  add("LOAD rows 0", {ld, Ld(isa::kBufWgt, 0, 0, 1)});
  add("LOAD act elems 0", {Ld(isa::kBufAct, 0, 1, 0)});
  add("LOAD act elems R+1", {Ld(isa::kBufAct, 0, 1, uint16_t(R + 1))});
  add("LOAD wgt elems C+1", {Ld(isa::kBufWgt, 0, 1, uint16_t(C + 1))});
  add("LOAD acc elems C+1", {gw, Ld(isa::kBufAcc, 0, 1, uint16_t(C + 1))});
  add("LOAD acc elems 0", {Ld(isa::kBufAcc, 0, 1, 0)});
  add("LOAD act dst+rows = ActDepth+1", {Ld(isa::kBufAct, uint16_t(A - 1), 2, R)});
  add("LOAD wgt dst = WgtDepth", {Ld(isa::kBufWgt, W, 1, C)});
  add("LOAD acc dst+rows = AccDepth+1", {Ld(isa::kBufAcc, 1, Acc, C)});
  add("LOAD act rows 65535", {Ld(isa::kBufAct, 0, 65535, 1, {}, kDataAddr, 0)});
  add("LOAD field before HBM", {Ld(isa::kBufAct, 0, 1, uint16_t(R + 1), {}, kDataAddr + 2, 3)});
  // Transposing LOADs (version 1.3): rows up to the buffer's width, elems up to max(R, C).
  const auto S = std::max(R, C);
  add("LOAD transposed into the accumulators", {gw, Tr(Ld(isa::kBufAcc, 0, 1, 1))});
  add("LOAD transposed act rows R+1", {Tr(Ld(isa::kBufAct, 0, uint16_t(R + 1), 1))});
  add("LOAD transposed wgt rows C+1", {Tr(Ld(isa::kBufWgt, 0, uint16_t(C + 1), 1))});
  add("LOAD transposed elems max(R,C)+1", {Tr(Ld(isa::kBufWgt, 0, 1, uint16_t(S + 1)))});
  add("LOAD transposed elems 0", {Tr(Ld(isa::kBufAct, 0, 1, 0))});
  {
    const auto e = uint16_t(std::min<int>(S, A));
    add("LOAD transposed act dst+elems = ActDepth+1",
        {Tr(Ld(isa::kBufAct, uint16_t(A - e + 1), 1, e))});
    const auto ew = uint16_t(std::min<int>(S, W));
    add("LOAD transposed wgt dst+elems = WgtDepth+1",
        {Tr(Ld(isa::kBufWgt, uint16_t(W - ew + 1), 1, ew))});
  }
  // Residual adds (version 1.5): hold and add only into the accumulators, not both; hold 1 row.
  {
    auto mode = [](isa::Load l, bool h, bool a) {
      l.hold = h, l.add = a;
      return l;
    };
    add("LOAD held into act", {mode(Ld(isa::kBufAct, 0, 1, 1), true, false)});
    add("LOAD added into wgt", {mode(Ld(isa::kBufWgt, 0, 1, 1), false, true)});
    add("LOAD acc hold and add", {gw, mode(Ld(isa::kBufAcc, 0, 1, 1), true, true)});
    add("LOAD acc hold rows 2", {gw, mode(Ld(isa::kBufAcc, 0, 2, 1), true, false)});
    add("LOAD acc hold rows 0", {mode(Ld(isa::kBufAcc, 0, 0, 1), true, false)});
  }
  // GEMM.
  add("GEMM rows 0", {ld, G(0, R, C, true)});
  add("GEMM kv 0", {G(1, 0, C, true)});
  add("GEMM kv R+1", {G(1, uint16_t(R + 1), C, true)});
  add("GEMM nv 0", {G(1, R, 0, true)});
  add("GEMM nv C+1", {G(1, R, uint16_t(C + 1), true)});
  add("GEMM act+rows = ActDepth+1", {G(2, R, C, true, {}, uint16_t(A - 1))});
  add("GEMM wgt+kv = WgtDepth+1", {G(1, R, C, true, {}, 0, uint16_t(W - R + 1))});
  add("GEMM acc+rows = AccDepth+1", {G(2, 1, 1, true, {}, 0, 0, uint16_t(Acc - 1))});
  add("GEMM reuse before any load", {ld, G(1, R, C, false)});
  if (C > 1)
    add("GEMM reuse with another nv", {gw, G(1, R, C, false), G(1, R, uint16_t(C - 1), false)});
  if (R > 1) add("GEMM reuse with another kv", {gw, G(1, uint16_t(R - 1), C, false)});
  // Reuse still checks wgt + kv against WgtDepth (wgt is not read, but the rule holds).
  add("GEMM reuse with wgt past WgtDepth", {gw, G(1, R, C, false, {}, 0, uint16_t(W - R + 1))});
  // Broadcast (version 1.2): not with accumulate, init_row inside the accumulators and outside
  // the GEMM's own rows.
  {
    auto bc = [&](isa::Gemm g, uint16_t init_row) {
      g.broadcast = true;
      g.init_row = init_row;
      return g;
    };
    add("GEMM broadcast with accumulate", {bc(G(2, R, C, true, {}, 0, 0, 0, true), 2)});
    add("GEMM broadcast init_row = AccDepth", {bc(G(1, R, C, true), Acc)});
    add("GEMM broadcast from its first row", {bc(G(2, R, C, true, {}, 0, 0, 1), 1)});
    add("GEMM broadcast from its last row", {bc(G(3, R, C, true, {}, 0, 0, 1), 3)});
    isa::Gemm kv = bc(G(1, R, C, true), Acc);
    kv.kv = uint16_t(R + 1);
    add("GEMM kv R+1 with a broadcast past AccDepth", {kv});
  }
  // STORE.
  add("STORE format 2", {gw, St(0, 1, 1, {}, kOutAddr, 64, 2)});
  add("STORE activation 2", {gw, St(0, 1, 1, {}, kOutAddr, 64, isa::kFmtFp32, 2)});
  add("STORE rows 0", {gw, St(0, 0, 1)});
  add("STORE elems 0", {gw, St(0, 1, 0)});
  add("STORE elems C+1", {gw, St(0, 1, uint16_t(C + 1))});
  add("STORE acc+rows = AccDepth+1", {gw, St(uint16_t(Acc - 1), 2, 1)});
  // STORE's col (version 1.6): a multiple of 32 bytes, col + elems within C.
  {
    auto col = [](isa::Store st, uint16_t c0) {
      st.col = c0;
      return st;
    };
    add("STORE fp32 col 4 (16 bytes)", {gw, col(St(0, 1, 1), 4)});
    add("STORE bf16 col 8 (16 bytes)", {gw, col(St(0, 1, 1, {}, kOutAddr, 64, isa::kFmtBf16), 8)});
    add("STORE fp32 col 8, col+elems = C+1", {gw, col(St(0, 1, uint16_t(std::max(1, C - 7))), 8)});
    add("STORE col 65535", {gw, col(St(0, 1, 1), 65535)});
  }
  add("STORE stride 0 (one row)", {gw, St(0, 1, 1, {}, kOutAddr, 0)});
  add("STORE bf16 stride 0", {gw, St(0, 3, C, {}, kOutAddr, 0, isa::kFmtBf16)});
  if (C * 4 > 32) add("STORE fp32 stride 32 below the row", {gw, St(0, 2, C, {}, kOutAddr, 32)});
  add("STORE field before HBM", {gw, St(0, 1, uint16_t(C + 1), {}, kOutAddr + 4, 48)});
  // The vector unit (version 1.4): LOAD into the vector memory, STORE from it, VOP.
  if (c.vector_unit()) {
    const auto V = uint16_t(c.vmem_depth);
    const Instr lv = Lv(0, 1, C);
    isa::Load tr = Lv(0, 1, 1);
    tr.transpose = true;
    add("vector LOAD transposed", {tr});
    isa::Load f2 = Lv(0, 1, 1);
    f2.format = 2;
    add("vector LOAD format 2", {f2});
    add("vector LOAD rows 0", {Lv(0, 0, 1)});
    add("vector LOAD elems 0", {Lv(0, 1, 0)});
    add("vector LOAD elems C+1", {Lv(0, 1, uint16_t(C + 1))});
    add("vector LOAD dst+rows = VmemDepth+1", {Lv(uint16_t(V - 1), 2, C)});
    add("vector LOAD bf16 dst = VmemDepth", {Lv(V, 1, C, true)});
    isa::Store s2 = Sv(0, 1, 1);
    s2.source = 2;
    add("STORE source 2", {lv, s2});
    add("vector STORE row+rows = VmemDepth+1", {lv, Sv(uint16_t(V - 1), 2, 1)});
    add("vector STORE elems C+1", {lv, Sv(0, 1, uint16_t(C + 1))});
    // A STORE from the accumulators still checks AccDepth (not VmemDepth) and the reverse.
    if (Acc < V) add("STORE acc+rows = AccDepth+1 (< VmemDepth)", {gw, St(Acc, 1, 1)});
    if (V < Acc) add("vector STORE row = VmemDepth (< AccDepth)", {lv, Sv(V, 1, 1)});
    add(fmt::format("VOP op {} (the first undefined)", isa::kNumVectorOps),
        {lv, Vp(uint8_t(isa::kNumVectorOps), 0, 0, 0, 1, 1, true)});
    add("VOP op 255", {lv, Vp(255, 0, 0, 0, 1, 1, true)});
    isa::Vop both = Vp(uint8_t(isa::VectorOp::kAdd), 0, 0, 1, 1, 1, true);
    both.b_scalar = true;
    add("VOP b_vmem with b_scalar", {lv, both});
    add("VOP n 0", {lv, Vp(uint8_t(isa::VectorOp::kAdd), 0, 0, 1, 0, 1, true)});
    add("VOP m 0", {lv, Vp(uint8_t(isa::VectorOp::kAdd), 0, 0, 1, 1, 0, true)});
    add("VOP a past VmemDepth",
        {lv, Vp(uint8_t(isa::VectorOp::kRelu), uint16_t(V - 1), 0, 1, 2, 1, true)});
    add("VOP a past AccDepth",
        {gw, lv, Vp(uint8_t(isa::VectorOp::kRelu), uint16_t(Acc - 2), 0, 1, 3)});
    isa::Vop far = Vp(uint8_t(isa::VectorOp::kAdd), 0, 0, 1, 2, 2, true);
    far.aso = uint16_t(V);  // the outer stride reaches row V + 1
    add("VOP a outer stride past VmemDepth", {lv, far});
    add("VOP b past VmemDepth",
        {lv, Vp(uint8_t(isa::VectorOp::kAdd), 0, uint16_t(V - 1), 1, 2, 1, true)});
    isa::Vop bacc = Vp(uint8_t(isa::VectorOp::kMul), 0, uint16_t(Acc), 1, 1, 1, true);
    bacc.b_vmem = false;
    add("VOP b at AccDepth", {gw, lv, bacc});
    add("VOP d past VmemDepth",
        {lv, Vp(uint8_t(isa::VectorOp::kExp), 0, 0, uint16_t(V - 2), 3, 1, true)});
    isa::Vop dfar = Vp(uint8_t(isa::VectorOp::kExp), 0, 0, 0, 1, 2, true);
    dfar.dso = uint16_t(V);
    add("VOP d outer stride past VmemDepth", {lv, dfar});
    isa::Vop dsi = Vp(uint8_t(isa::VectorOp::kCopy), 0, 0, 0, 65535, 1, true);
    dsi.dsi = 65535, dsi.asi = 0;  // 65534 x 65535 rows: no overflow in the check
    add("VOP d stride x n near 2^32", {lv, dsi});
  }
  // The lowest pc wins across modules: a STORE error after a LOAD error.
  add("two errors: the lower pc", {Ld(isa::kBufAct, 0, 0, 1), gw, St(0, 0, 1)});
  this->RunCases(cases);
}

// ERR_WINDOW (version 1.1): every window rule, the band one past the activation buffer, and the
// precedence of reserved and field errors over window errors.
TYPED_TEST_P(AccelTest, IllegalProgramsWindow) {
  const MachineConfig c = this->mc();
  const auto R = uint16_t(c.r), C = uint16_t(c.c), A = uint16_t(c.act_depth);
  const Instr ld = Ld(isa::kBufAct, 0, 1, 1);
  const isa::Gemm g = G(2, R, C, true);
  std::vector<Case> cases;
  auto add = [&](std::string name, ErrorCode want, std::vector<Instr> body) {
    cases.push_back({std::move(name), want, Program(c, body)});
  };
  add("window stride 0", ErrorCode::kWindow, {ld, Win(g, 0, 0, 0, 0, 1, 1, 1, 0, 0)});
  add("window width 0", ErrorCode::kWindow, {ld, Win(g, 1, 0, 0, 0, 1, 0, 1, 0, 0)});
  add("window out_width 0", ErrorCode::kWindow, {ld, Win(g, 1, 0, 0, 0, 1, 1, 0, 0, 0)});
  add("window band_rows 0", ErrorCode::kWindow, {ld, Win(g, 1, 0, 0, 0, 0, 1, 1, 0, 0)});
  add("window out_col = out_width", ErrorCode::kWindow, {ld, Win(g, 1, 0, 0, 0, 1, 1, 3, 0, 3)});
  {
    isa::Gemm past = Win(g, 1, 0, 0, 0, 2, uint16_t(A / 2), 1, 0, 0);
    past.act = uint16_t(A % 2 + 1);  // act + 2·(A/2) = A + 1
    add("window band ends at ActDepth + 1", ErrorCode::kWindow, {ld, past});
    isa::Gemm big = Win(g, 1, 0, 0, 0, 65535, 65535, 1, 0, 0);  // 2^32 rows: no wrap-around
    add("window band of 65535 x 65535 rows", ErrorCode::kWindow, {ld, big});
  }
  {
    isa::Gemm kv = Win(g, 0, 0, 0, 0, 1, 1, 1, 0, 0);
    kv.kv = uint16_t(R + 1);
    add("field before window", ErrorCode::kField, {kv});
    isa::Gemm reuse = Win(g, 0, 0, 0, 0, 1, 1, 1, 0, 0);
    reuse.load_weights = false;
    add("window reuse before any load", ErrorCode::kField, {ld, reuse});
  }
  {
    auto p = Program(c, {ld, Win(g, 0, 0, 0, 0, 1, 1, 1, 0, 0)});
    p[2][16] |= 0x10;  // a reserved mode bit next to the window bit
    add("reserved before window", ErrorCode::kReserved, {});
    cases.back().prog = p;
  }
  // Rows are output pixels, not buffer rows: more rows than ActDepth are legal.
  add("window with more rows than its band", ErrorCode::kOk,
      {Win(G(uint16_t(std::min<int>(c.acc_depth, A + 3)), R, C, true), 1, 0, 0, 0, 1, 1, 1, 0, 0)});
  this->RunCases(cases);
}

// ERR_HBM: misaligned and out-of-range LOAD / STORE addresses and strides, and the program's own
// address and extent.
TYPED_TEST_P(AccelTest, IllegalProgramsHbm) {
  const MachineConfig c = this->mc();
  const auto C = uint16_t(c.c);
  const uint64_t top = c.hbm_bytes;
  const Instr ld = Ld(isa::kBufAct, 0, 1, 1), gw = Gw(c);
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<Instr> body) {
    cases.push_back({std::move(name), ErrorCode::kHbm, Program(c, body)});
  };
  add("LOAD hbm_addr + 16", {ld, Ld(isa::kBufWgt, 0, 1, 1, {}, kDataAddr + 16)});
  add("LOAD hbm_addr + 1", {Ld(isa::kBufAct, 0, 1, 1, {}, kDataAddr + 1)});
  add("LOAD stride 48", {Ld(isa::kBufAct, 0, 2, 1, {}, kDataAddr, 48)});
  add("LOAD stride 16, one row", {Ld(isa::kBufAct, 0, 1, 1, {}, kDataAddr, 16)});
  add("LOAD at HbmBytes", {Ld(isa::kBufAct, 0, 1, 1, {}, top)});
  add("LOAD at 2 HbmBytes", {Ld(isa::kBufAct, 0, 1, 1, {}, 2 * top)});
  add("LOAD at 2^40 + its data address",
      {Ld(isa::kBufAct, 0, 1, 1, {}, (uint64_t(1) << 40) + kDataAddr)});
  add("LOAD at 2^64 - 32", {Ld(isa::kBufAct, 0, 1, 1, {}, ~uint64_t(31))});
  add("LOAD last row past HbmBytes", {Ld(isa::kBufAct, 0, 3, 1, {}, top - 64, 32)});
  add("LOAD acc row past HbmBytes", {gw, Ld(isa::kBufAcc, 0, 2, C, {}, top - 32, 32)});
  // HbmBytes is at least 2^31 (one channel): the second row lies 2^31 - 32 bytes beyond it.
  add("LOAD huge stride", {Ld(isa::kBufWgt, 0, 2, C, {}, top - (uint64_t(1) << 31), 0xFFFFFFE0u)});
  add("STORE hbm_addr + 8", {gw, St(0, 1, 1, {}, kOutAddr + 8)});
  add("STORE stride 96 + 16", {gw, St(0, 2, 1, {}, kOutAddr, 112)});
  add("STORE at HbmBytes", {gw, St(0, 1, 1, {}, top)});
  add("STORE last row past HbmBytes", {gw, St(0, 2, C, {}, top - std::max(64u, RowBytes(C, 4)))});
  add("STORE at 4 HbmBytes", {gw, St(0, 1, 1, {}, 4 * top)});
  // The program itself.
  {
    Case m{"program address + 16", ErrorCode::kHbm, Program(c, {ld})};
    m.run_addr = kProgAddr + 16;
    cases.push_back(m);
    Case m4{"program address + 4", ErrorCode::kHbm, Program(c, {ld})};
    m4.run_addr = kProgAddr + 4;
    cases.push_back(m4);
    // Two valid instructions in the last 64 bytes, the length says 4: pc 2 is beyond HbmBytes.
    Case b{"program beyond HbmBytes", ErrorCode::kHbm, Program(c, {ld}, false)};
    b.write_addr = b.run_addr = top - 64;
    b.count = 4;
    b.prog[0][16] = 4;
    cases.push_back(b);
    // A program address above the address space must not alias to the valid program below it.
    Case a{"program at 2 HbmBytes + a valid program's address", ErrorCode::kHbm, Program(c, {ld})};
    a.run_addr = 2 * top + kProgAddr;
    cases.push_back(a);
    Case h{"program at HbmBytes + its address", ErrorCode::kHbm, Program(c, {ld})};
    h.run_addr = top + kProgAddr;
    cases.push_back(h);
  }
  // Field before HBM at the same pc; a lower-pc HBM error before a higher-pc field error.
  add("HBM at pc 1, field at pc 2",
      {Ld(isa::kBufAct, 0, 1, 1, {}, kDataAddr + 32 + 2), Ld(isa::kBufAct, 0, 0, 1)});
  this->RunCases(cases);
}

// ERR_DEADLOCK and ERR_TOKEN_OVERFLOW, and their precedence against check errors found later in
// program order (the check error wins: the golden model checks the whole program first).
TYPED_TEST_P(AccelTest, IllegalProgramsTokens) {
  const MachineConfig c = this->mc();
  const int q = c.queue_depth;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const Instr ld = Ld(isa::kBufAct, 0, 1, 1), gw = Gw(c);
  const Instr g_reuse = G(1, R, C, false);
  std::vector<Case> cases;
  auto add = [&](std::string name, ErrorCode want, std::vector<Bytes> prog) {
    cases.push_back({std::move(name), want, std::move(prog)});
  };
  // Pops with no producer.
  add("GEMM pops load->compute, nothing pushes", ErrorCode::kDeadlock,
      Program(c, {ld, G(1, R, C, true, kPopPrev)}));
  add("STORE pops compute->store, nothing pushes", ErrorCode::kDeadlock,
      Program(c, {gw, St(0, 1, 1, kPopPrev), ld}));
  add("LOAD pops compute->load after work", ErrorCode::kDeadlock,
      Program(c, {ld, gw, St(0, 1, 1), Ld(isa::kBufWgt, 0, 1, 1, kPopNext)}));
  add("GEMM pops store->compute", ErrorCode::kDeadlock,
      Program(c, {gw, St(0, 1, 1), G(1, R, C, false, kPopNext)}));
  // Circular wait: store waits for compute, load for compute, compute for load.
  add("circular wait", ErrorCode::kDeadlock,
      Program(c, {St(0, 1, 1, D(true, false, true, false)), Ld(isa::kBufAct, 0, 1, 1, kPopNext),
                  G(1, R, C, true, D(false, true, false, true))}));
  // A push after the wait in the same module cannot help.
  add("push after the wait in one module", ErrorCode::kDeadlock,
      Program(c, {G(1, R, C, true, kPopNext), St(0, 1, 1, D(true, false, true, false)),
                  G(1, R, C, false, kPushNext)}));
  // Dispatch-queue deadlock: QueueDepth + 1 GEMMs popping load->compute, then their LOADs.
  std::vector<Instr> dq;
  for (int i = 0; i <= q; ++i) dq.push_back(G(1, R, C, true, kPopPrev));
  for (int i = 0; i <= q; ++i) dq.push_back(Ld(isa::kBufAct, 0, 1, 1, kPushNext));
  add(fmt::format("dispatch deadlock: {} GEMMs before their LOADs (QueueDepth {})", q + 1, q),
      ErrorCode::kDeadlock, Program(c, dq));
  // The same in the store module: a STORE blocked on a token, QueueDepth more STOREs behind it,
  // then the GEMM that would push its token.
  std::vector<Instr> sq{St(0, 1, 1, kPopPrev)};
  for (int i = 0; i < q; ++i) sq.push_back(St(0, 1, 1));
  sq.push_back(G(1, R, C, true, kPushNext));
  add("dispatch deadlock in the store queue", ErrorCode::kDeadlock, Program(c, sq));
  // Deadlocks followed, later in program order, by a check error: the check error wins.
  {
    std::vector<Instr> b{ld, G(1, R, C, true, kPopPrev)};
    for (int i = 0; i < 40; ++i) b.push_back(Ld(isa::kBufWgt, 0, 1, 1));
    b.push_back(St(0, 0, 1));
    add("field error 40 instructions after a deadlock", ErrorCode::kField, Program(c, b));
    auto p = Program(c, b);
    p[p.size() - 2] = With(St(0, 1, 1), 0, 0x0E);
    add("opcode error after a deadlock", ErrorCode::kOpcode, p);
    b.back() = St(0, 1, 1, {}, kOutAddr + 32 + 16);
    add("HBM error after a deadlock", ErrorCode::kHbm, Program(c, b));
    b.pop_back();
    add("no END after a deadlock", ErrorCode::kNoEnd, Program(c, b, false));
    std::vector<Instr> d2 = dq;
    d2.push_back(Ld(isa::kBufAct, 0, 1, 1));
    auto p2 = Program(c, d2);
    p2[p2.size() - 2] = With(Ld(isa::kBufAct, 0, 1, 1), 27, 0x01);
    add("reserved byte after a dispatch deadlock", ErrorCode::kReserved, p2);
    std::vector<Instr> d3 = dq;
    d3.push_back(G(1, R, uint16_t(C + 1), true));
    add("field error after a dispatch deadlock", ErrorCode::kField, Program(c, d3));
    add("no END after a dispatch deadlock", ErrorCode::kNoEnd, Program(c, dq, false));
  }
  // Token overflow: 256 pushes into one queue with no pop, in each of the four queues.
  {
    std::vector<Instr> lc(256, Ld(isa::kBufAct, 0, 1, 1, kPushNext));
    add("256 pushes load->compute", ErrorCode::kTokenOverflow, Program(c, lc));
    std::vector<Instr> cs{G(1, R, C, true, kPushNext)};
    for (int i = 1; i < 256; ++i) cs.push_back(G(1, R, C, false, kPushNext));
    add("256 pushes compute->store", ErrorCode::kTokenOverflow, Program(c, cs));
    std::vector<Instr> cl{G(1, R, C, true, kPushPrev)};
    for (int i = 1; i < 260; ++i) cl.push_back(G(1, R, C, false, kPushPrev));
    add("260 pushes compute->load", ErrorCode::kTokenOverflow, Program(c, cl));
    std::vector<Instr> sc(256, St(0, 1, 1, kPushPrev));
    add("256 pushes store->compute", ErrorCode::kTokenOverflow, Program(c, sc));
    // Each overflow with instructions of the same module behind it (the pc is the 256th push's,
    // not the module's last instruction's), and the accumulator LOADs' pushes (compute module).
    auto behind = [](std::vector<Instr> v, const Instr& more) {
      for (int i = 0; i < 3; ++i) v.push_back(more);
      return v;
    };
    add("256 pushes load->compute, LOADs behind", ErrorCode::kTokenOverflow,
        Program(c, behind(lc, ld)));
    add("256 pushes compute->store, GEMMs behind", ErrorCode::kTokenOverflow,
        Program(c, behind(cs, g_reuse)));
    add("260 pushes compute->load, GEMMs behind", ErrorCode::kTokenOverflow,
        Program(c, behind(cl, g_reuse)));
    add("256 pushes store->compute, STOREs behind", ErrorCode::kTokenOverflow,
        Program(c, behind(sc, St(0, 1, 1))));
    const Instr acc_ld = Ld(isa::kBufAcc, 0, 1, 1);
    add("256 accumulator LOADs push compute->store, one behind", ErrorCode::kTokenOverflow,
        Program(c, behind(std::vector<Instr>(256, Ld(isa::kBufAcc, 0, 1, 1, kPushNext)), acc_ld)));
    add("256 accumulator LOADs push compute->load, a GEMM behind", ErrorCode::kTokenOverflow,
        Program(c, behind(std::vector<Instr>(256, Ld(isa::kBufAcc, 0, 1, 1, kPushPrev)), gw)));
    // The overflow in the cycle END is dispatched (the error must not be lost: once END is
    // dispatched a runtime error is final at once, before it pends): the 256th push followed by
    // k instructions of the same module without flags, for every k up to a few queues' worth,
    // so that the push lands in END's dispatch cycle for some k (on 3x5, 8x8 and
    // 36x4, measured with the fault injected; the two others have no such k).
    for (int k = 0; k <= q + 12; ++k) {
      std::vector<Instr> e = cl;
      e.resize(256);
      for (int i = 0; i < k; ++i) e.push_back(g_reuse);
      add(fmt::format("256 pushes compute->load, {} GEMMs then END behind", k),
          ErrorCode::kTokenOverflow, Program(c, e));
      std::vector<Instr> f = lc;
      for (int i = 0; i < k; ++i) f.push_back(ld);
      add(fmt::format("256 pushes load->compute, {} LOADs then END behind", k),
          ErrorCode::kTokenOverflow, Program(c, f));
    }
    // An overflow before a deadlock later in the program: the overflow.
    std::vector<Instr> od = lc;
    od.push_back(St(0, 1, 1, kPopPrev));
    add("overflow, then a deadlock", ErrorCode::kTokenOverflow, Program(c, od));
    // An overflow before a check error later in the program: the check error.
    std::vector<Instr> oc = lc;
    for (int i = 0; i < 5; ++i) oc.push_back(ld);
    oc.push_back(Ld(isa::kBufAct, 0, 1, 1, {}, c.hbm_bytes));
    add("HBM error after an overflow", ErrorCode::kHbm, Program(c, oc));
    // A deadlock that stops the modules before the pushes that would overflow: the deadlock
    // (the overflow rule applies to the instructions that start).
    std::vector<Instr> dl{G(1, R, C, true, kPopPrev)};
    for (int i = 0; i < 256; ++i) dl.push_back(g_reuse);
    for (int i = 0; i < 256; ++i) dl.push_back(Ld(isa::kBufAct, 0, 1, 1, kPushNext));
    add("deadlock before an overflow", ErrorCode::kDeadlock, Program(c, dl));
  }
  this->RunCases(cases);
}

// Bytes written at the top of HBM for LegalEdgeCases (see there).
constexpr uint64_t kTopBytes = 8192;

// The instruction stream's edges (part of LegalEdgeCases): a newer minor version, bytes after END,
// a full dispatcher, 255 pushes never popped, tokens in flight, the end state after many steps.
inline void AddStreamEdgeCases(const MachineConfig& c, std::vector<Case>& cases) {
  const int q = c.queue_depth;
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const auto A = uint16_t(c.act_depth), Acc = uint16_t(c.acc_depth);
  const Instr ld_act = Ld(isa::kBufAct, 0, 1, R);             // act row 0
  const Instr ld_wgt = Ld(isa::kBufWgt, 0, R, C, kPushNext);  // weight rows 0 .. R-1, token
  auto add = [&](std::string name, std::vector<Bytes> prog) {
    cases.push_back({std::move(name), ErrorCode::kOk, std::move(prog)});
  };
  // A newer minor version; bytes after END are not fetched; a token left at END.
  {
    auto p = Program(
        c, {ld_act, ld_wgt, G(1, R, C, true, kPopPrev), G(1, R, C, false, kPushNext, 0, 0, 1),
            G(1, R, C, false, kPushNext), St(0, 2, C, kPopPrev)});
    p[0][10] = 7;                            // minor version 7
    p.push_back(With(isa::End{}, 0, 0xEE));  // junk after END, inside the length
    p[0][16] += 1;
    add("minor 7, junk after END, a token left", p);
  }
  // QueueDepth GEMMs waiting for the LOADs that follow them: the dispatcher fits them all. (The
  // tokens order each LOAD before its GEMM against program order, so what the GEMMs compute is
  // undefined: nothing is stored.)
  {
    std::vector<Instr> b;
    const int n = std::min(q, int(Acc));
    for (int i = 0; i < n; ++i) {
      b.push_back(G(1, R, C, true, kPopPrev, 0, 0, uint16_t(i)));
    }
    for (int i = 0; i < n; ++i) {
      b.push_back(ld_act);
      b.push_back(ld_wgt);
    }
    add(fmt::format("{} GEMMs before their LOADs (QueueDepth {})", n, q), Program(c, b));
  }
  // 255 pushes never popped.
  add("255 tokens left", Program(c, std::vector<Instr>(255, Ld(isa::kBufAct, 0, 1, 1, kPushNext))));
  // 300 steps paced by a token back every 100 GEMMs: never more than 100 tokens in flight.
  {
    std::vector<Instr> b;
    for (int i = 0; i < 300; ++i) {
      b.push_back(Ld(isa::kBufAct, 0, 1, R, D(false, i >= 100 && i % 100 == 0, false, false)));
      b.push_back(ld_wgt);
      b.push_back(G(1, R, C, true, D(true, false, i % 100 == 99 && i < 200, i == 299), 0, 0,
                    uint16_t(i % Acc), i >= Acc));
    }
    b.push_back(St(0, uint16_t(std::min<int>(Acc, 8)), C, kPopPrev));
    add("300 steps paced by tokens", Program(c, b));
  }
  // Hundreds of instructions of each kind with tokens through all four queues, some left in each
  // at the end (load->compute 3, compute->load 1, compute->store 2, store->compute 2): the end
  // state (register TOKENS, the counters of each module) must be the golden model's. Step i:
  // the weights, activation row i (after GEMM i-1's token), GEMM i (after LOAD i, and after
  // STORE i-2 frees its accumulators), STORE i. Then three LOADs into a row no GEMM reads and two
  // GEMMs into an accumulator row no STORE reads, whose tokens nobody takes.
  if (A >= 2 && Acc >= 3) {
    const int n = 150;
    const auto act_rows = uint16_t(A - 1), acc_rows = uint16_t(Acc - 1);
    std::vector<Instr> b;
    for (int i = 0; i < n; ++i) {
      b.push_back(Ld(isa::kBufWgt, 0, R, C));
      b.push_back(Ld(isa::kBufAct, uint16_t(i % act_rows), 1, R, D(false, i >= 1, false, true),
                     kDataAddr + uint64_t(i % 16) * 64));
      b.push_back(G(1, R, C, true, D(true, i >= 2, true, true), uint16_t(i % act_rows), 0,
                    uint16_t(i % acc_rows)));
      b.push_back(St(uint16_t(i % acc_rows), 1, C, D(true, false, true, false),
                     kOutAddr + uint64_t(i % 64) * 64));
    }
    for (int i = 0; i < 3; ++i) b.push_back(Ld(isa::kBufAct, act_rows, 1, R, kPushNext));
    for (int i = 0; i < 2; ++i) b.push_back(G(1, R, C, false, kPushNext, 0, 0, acc_rows));
    add(fmt::format("{} steps of each kind, tokens left in every queue", n), Program(c, b));
  }
}

// Transposing LOADs (version 1.3; part of LegalEdgeCases). Into both buffers with fewer rows than
// the buffer's width (the rest of each written row +0, over rows holding other data first), the
// activation tile at the end of its buffer, a plain LOAD overwriting a row of a transposed tile
// right after it (the buffers' writes stay in program order), and tiles back to back (both of the
// transposer's tiles busy, a plain LOAD waiting behind them), each GEMM reading them.
inline void AddTransposeEdgeCases(const MachineConfig& c, std::vector<Case>& cases) {
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const auto A = uint16_t(c.act_depth), W = uint16_t(c.wgt_depth), Acc = uint16_t(c.acc_depth);
  const uint64_t top = c.hbm_bytes;
  auto add = [&](std::string name, std::vector<Bytes> prog) {
    cases.push_back({std::move(name), ErrorCode::kOk, std::move(prog)});
  };
  const auto S = std::max(R, C);
  auto stride = [](int elems) { return RowBytes(elems, 2); };
  const int fit = int(kOutBytes / std::max(64u, RowBytes(C, 4)));  // stored rows
  const auto m = uint16_t(std::min<int>({S, A, Acc, fit}));  // GEMM rows = the act LOAD's elems
  const auto ar = uint16_t(std::max(1, R - 1)), wr = uint16_t(std::max(1, C - 1));
  const uint16_t adst = uint16_t(A - m);
  const auto kv = uint16_t(std::min<int>(R, W));
  std::vector<Instr> b = {Ld(isa::kBufAct, adst, m, R, {}, top - kTopBytes, 0),  // other data first
                          Ld(isa::kBufWgt, 0, kv, C, {}, top - kTopBytes, 0),
                          Tr(Ld(isa::kBufAct, adst, ar, m, {}, kDataAddr, stride(m))),
                          Tr(Ld(isa::kBufWgt, 0, wr, kv, kPushNext, kDataAddr + 4096, stride(kv))),
                          G(m, kv, C, true, D(true, false, false, true), adst),
                          St(0, m, C, kPopPrev, kOutAddr)};
  add("transposing LOADs into both buffers", Program(c, b));
  if (m > 1) {
    b[3] = Tr(Ld(isa::kBufWgt, 0, wr, kv, {}, kDataAddr + 4096, stride(kv)));
    b.insert(b.begin() + 4,
             Ld(isa::kBufAct, uint16_t(adst + 1), 1, R, kPushNext, kDataAddr + 8192, 0));
    add("a plain LOAD right after a transposing one", Program(c, b));
  }
  // Four transposing LOADs back to back into consecutive tiles of e rows, then a plain one
  // over the second tile's first row; one GEMM over the 4e rows.
  const auto e = uint16_t(std::max(1, std::min<int>({S, A / 4, Acc / 4, fit / 4})));
  std::vector<Instr> q;
  for (int t = 0; t < 4; ++t) {
    q.push_back(Tr(Ld(isa::kBufAct, uint16_t(t * e), uint16_t(std::max(1, R - t / 2)), e, {},
                      kDataAddr + 1024 * uint64_t(t), stride(e))));
  }
  q.push_back(Ld(isa::kBufAct, e, 1, R, {}, kDataAddr + 8192, 0));
  q.push_back(Ld(isa::kBufWgt, 0, kv, C, kPushNext, kDataAddr + 12288, 32));
  q.push_back(G(uint16_t(4 * e), kv, C, true, D(true, false, false, true)));
  q.push_back(St(0, uint16_t(4 * e), C, kPopPrev, kOutAddr));
  add("transposing LOADs back to back", Program(c, q));
}

// Legal programs at the edges of the rules (LegalEdgePrograms), with the data their LOADs read:
// `data` at kDataAddr and `topdata` at the top of HBM (top - kTopBytes). Each program writes every
// buffer row it reads (buffers are not assumed to survive between programs), ordered by tokens;
// rewriting a row with the same bytes is the only race.
struct EdgeCases {
  std::vector<Case> cases;
  std::vector<uint8_t> data, topdata;
};
inline EdgeCases LegalEdgeCases(const MachineConfig& c, uint64_t seed) {
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const auto A = uint16_t(c.act_depth), W = uint16_t(c.wgt_depth), Acc = uint16_t(c.acc_depth);
  const uint64_t top = c.hbm_bytes;
  // Everything the cases read near the top of HBM is written first, into both machines (the
  // device models' never-written storage is a pseudo-random background, the golden model's is
  // zero): 8 KB covers the weight rows of a 128x128 array (32 * 127 + 256 bytes).
  // Data: random small finite bf16 values in the LOADs' region and at the top of HBM, written
  // into both the accelerator and every golden model. The transposing LOADs on 128x128 read 127
  // rows of 256 bytes from kDataAddr + 4096 (36 KB); every case's golden run checks that its
  // LOADs read only bytes written (a 16 KB region here made the 128x128 case compare the device
  // model's background with the golden model's zeros).
  std::vector<uint8_t> data, topdata;
  {
    tb::Rng drng(seed);
    data = SmallBf16(kDataBytes, drng);
    topdata = SmallBf16(kTopBytes, drng);
  }
  const Instr ld_act = Ld(isa::kBufAct, 0, 1, R);             // act row 0
  const Instr ld_wgt = Ld(isa::kBufWgt, 0, R, C, kPushNext);  // weight rows 0 .. R-1, token

  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<Bytes> prog) {
    cases.push_back({std::move(name), ErrorCode::kOk, std::move(prog)});
  };
  // Every buffer's last rows, HBM's last bytes (a LOAD and a STORE ending at HbmBytes), a bias
  // broadcast (stride 0), accumulate, relu and bf16 stores.
  add("last rows and last bytes",
      Program(c, {Ld(isa::kBufAct, uint16_t(A - 2), 2, R, {}, kDataAddr, 64),
                  Ld(isa::kBufWgt, uint16_t(W - R), R, C, kPushNext,
                     top - 32 * (R - 1) - RowBytes(C, 2), 32),
                  Ld(isa::kBufAcc, uint16_t(Acc - 2), 2, C, {}, kDataAddr + 512, 0),
                  G(2, R, C, true, D(true, false, false, true), uint16_t(A - 2), uint16_t(W - R),
                    uint16_t(Acc - 2), true),
                  St(uint16_t(Acc - 2), 2, C, kPopPrev, kOutAddr, kRowStride, isa::kFmtFp32,
                     isa::kActRelu),
                  St(uint16_t(Acc - 2), 2, C, {}, kOutAddr + std::max(256u, 2 * RowBytes(C, 4)),
                     RowBytes(C, 2), isa::kFmtBf16),
                  St(uint16_t(Acc - 1), 1, C, {}, top - RowBytes(C, 4))}));
  // Rows shorter than the buffers' (elems = 1): the rest of each activation, weight and
  // accumulator row becomes +0 although the HBM bytes after the first element are not zero, and
  // a GEMM over the full kv = R, nv = C reads those zeros.
  add("short rows become +0",
      Program(c, {Ld(isa::kBufAct, 0, 2, 1, {}, kDataAddr, 64),
                  Ld(isa::kBufWgt, 0, R, 1, kPushNext, kDataAddr + 1024, 32),
                  Ld(isa::kBufAcc, 0, 2, 1, {}, kDataAddr + 2048, 64),
                  G(2, R, C, true, D(true, false, false, true), 0, 0, 0, true),
                  St(0, 2, C, kPopPrev, kOutAddr)}));
  // Residual adds (ISA 1.5): a LOAD with hold over a row a LOAD wrote leaves that row as it was
  // (the held row is not the accumulators'); rows loaded with add are the rows read plus the
  // held row (one FMA per element as the beats arrive, rows of several beats).
  {
    isa::Load hold = Ld(isa::kBufAcc, 0, 1, C, {}, kDataAddr + 4096, 0);
    hold.hold = true;
    isa::Load sum = Ld(isa::kBufAcc, 1, 2, C, kPushNext, kDataAddr + 1024, 96);
    sum.add = true;
    add("a held row is not written; add adds it",
        Program(c, {Ld(isa::kBufAcc, 0, 3, C, {}, kDataAddr, 64), hold, sum,
                    St(0, 3, C, kPopPrev, kOutAddr)}));
  }
  // STORE's col (ISA 1.6): the last beats of each row, fp32 and bf16 (relu), col + elems = C,
  // rows one after another (a row's first beat is not its accumulator row's).
  if (C > 8) {
    const auto c32 = uint16_t((C - 1) / 8 * 8), c16 = uint16_t((C - 1) / 16 * 16);
    isa::Store f = St(0, 3, uint16_t(C - c32), kPopPrev, kOutAddr);
    f.col = c32;
    isa::Store b =
        St(0, 3, uint16_t(C - c16), {}, kOutAddr + 1024, 32, isa::kFmtBf16, isa::kActRelu);
    b.hbm_stride = std::max<uint32_t>(32, RowBytes(uint16_t(C - c16), 2));
    b.col = c16;
    add("STORE from column col",
        Program(c, {Ld(isa::kBufAcc, 0, 3, C, kPushNext, kDataAddr, 512), f, b}));
  }
  // Rows of three beats back to back (stride 96): every burst holds several rows and cuts some
  // in two, so a DMA moving several beats a cycle must stop each row at its end (LOAD to the
  // weight buffer and the accumulators, STORE).
  {
    const auto we = uint16_t(std::min<int>(C, 40)), ae = uint16_t(std::min<int>(C, 20));
    add("rows of three beats back to back",
        Program(c, {Ld(isa::kBufAct, 0, 3, R, {}, kDataAddr, 64),
                    Ld(isa::kBufWgt, 0, R, we, kPushNext, kDataAddr + 256, 96),
                    Ld(isa::kBufAcc, 0, 3, ae, {}, kDataAddr + 512, 96),
                    G(3, R, C, true, D(true, false, false, true), 0, 0, 0, true),
                    St(0, 3, ae, kPopPrev, kOutAddr, 96)}));
  }
  // An accumulator LOAD right behind a GEMM in the compute module: its beats arrive while the
  // GEMM's results are written (the results have the write port first, the LOAD waits), and the
  // GEMM's nv < C leaves the loaded values in the columns beyond nv (compared in the stored rows
  // and in the accumulators after the run).
  {
    const auto nv = uint16_t(std::max(1, C - 1));
    add("an accumulator LOAD waiting while a GEMM writes",
        Program(c, {Ld(isa::kBufAcc, 0, 4, C, {}, kDataAddr + 2048, RowBytes(C, 4)),
                    Ld(isa::kBufAct, 0, 4, R, {}, kDataAddr, 64), ld_wgt,
                    G(4, R, nv, true, kPopPrev, 0, 0, 0),
                    Ld(isa::kBufAcc, 4, 4, C, {}, kDataAddr + 8192, RowBytes(C, 4)),
                    G(2, R, nv, false, kPushNext, 0, 0, 4, true), St(0, 8, C, kPopPrev)}));
  }
  // The largest stride a STORE and an accumulator LOAD can take towards the top of HBM: two rows
  // S apart, the second ending at HbmBytes, with S the largest multiple of 32 below 2^32 (the
  // field's limit) where HBM is larger than that, else as far as HBM reaches above 4 MB. The
  // STORE writes acc rows 0 and 1 there; the LOAD reads them back (only bytes the STORE wrote)
  // into acc rows 4 and 5 once the STORE's token says they are written, and a STORE of those
  // rows to kOutAddr shows them.
  {
    const uint64_t row = RowBytes(C, 4);
    const uint64_t reach = (top - row - 0x400000) / 32 * 32;
    const auto S = uint32_t(std::min<uint64_t>(0xFFFFFFE0u, reach));
    const uint64_t base = top - row - S;
    add("the largest stride up to the top of HBM",
        Program(c, {Ld(isa::kBufAct, 0, 1, R), ld_wgt,
                    Ld(isa::kBufAcc, 1, 1, C, {}, kDataAddr + 2048, RowBytes(C, 4)),
                    G(1, R, C, true, D(true, false, false, true)),
                    St(0, 2, C, D(true, false, true, false), base, S),
                    Ld(isa::kBufAcc, 4, 2, C, D(false, true, false, true), base, S),
                    St(4, 2, C, kPopPrev, kOutAddr)}));
  }
  // Windows (version 1.1): a 3x3-pixel band at the end of the activation buffer read with
  // stride 2 and 1, negative and positive tap offsets (zero padding on every side), output rows
  // that start mid-row (out_col > 0) and wrap, the second GEMM reusing the weights and
  // accumulating.
  {
    const auto band = uint16_t(A - 9);
    const auto rows = uint16_t(std::min<int>(Acc, 13));
    add("windows with padding on every side",
        Program(c,
                {Ld(isa::kBufAct, band, 9, R, {}, kDataAddr, 32), ld_wgt,
                 Win(G(rows, R, C, true, kPopPrev, band), 2, -1, -1, 4, 3, 3, 4, 2, 1),
                 Win(G(rows, R, C, false, kPushNext, band, 0, 0, true), 1, -1, 1, 1, 3, 3, 5, 1, 3),
                 St(0, rows, C, kPopPrev)}));
  }
  // Broadcast (version 1.2): rows start from a bias row just past them (the last accumulator
  // row when AccDepth <= 6); a second GEMM (reusing the weights) starts from row 0, which the
  // first one is still writing (the read waits for that write: a hazard), into row 1, just past
  // its init_row.
  if (Acc >= 3) {
    const auto rows = uint16_t(std::min<int>(Acc - 1, 5));
    isa::Gemm g1 = G(rows, R, C, true, kPopPrev), g2 = G(1, R, C, false, kPushNext, 0, 0, 1);
    g1.broadcast = true, g1.init_row = rows;
    g2.broadcast = true, g2.init_row = 0;
    add("broadcast from the row past its rows and from a row in flight",
        Program(c, {Ld(isa::kBufAct, 0, rows, R, {}, kDataAddr, 64), ld_wgt,
                    Ld(isa::kBufAcc, rows, 1, C, {}, kDataAddr + 2048, 0), g1, g2,
                    St(0, rows, C, kPopPrev)}));
    isa::Gemm g3 = G(rows, R, C, true, D(true, false, false, true));
    g3.broadcast = true, g3.init_row = uint16_t(Acc - 1);
    add("broadcast from the last accumulator row",
        Program(c, {Ld(isa::kBufAct, 0, rows, R, {}, kDataAddr, 64), ld_wgt,
                    Ld(isa::kBufAcc, uint16_t(Acc - 1), 1, C, {}, kDataAddr + 2048, 0), g3,
                    St(0, rows, C, kPopPrev)}));
  }
  AddTransposeEdgeCases(c, cases);
  AddStreamEdgeCases(c, cases);

  return {std::move(cases), std::move(data), std::move(topdata)};
}

// Legal programs at the edges of the rules: they run, and their stored bytes equal the golden
// model's (every case's golden run reads only bytes written: LegalEdgeCasesReadWrittenData).
TYPED_TEST_P(AccelTest, LegalEdgePrograms) {
  const MachineConfig c = this->mc();
  const auto R = uint16_t(c.r), C = uint16_t(c.c);
  const uint64_t top = c.hbm_bytes;
  ASSERT_LE(32 * (R - 1) + RowBytes(C, 2), kTopBytes) << "the top data does not cover the LOADs";
  const auto [cases, data, topdata] = LegalEdgeCases(c, test::TestSeed());
  tb::Rng rng(test::TestSeed());
  for (const Case& cs : cases) {
    SCOPED_TRACE(cs.name);
    auto& s = this->bench_.Sim(num::Mode::kIeee);
    const std::vector<uint8_t> zeros(kOutBytes, 0);
    s.WriteHbm(kOutAddr, zeros.data(), zeros.size());
    s.WriteHbm(kDataAddr, data.data(), data.size());
    s.WriteHbm(top - kTopBytes, topdata.data(), topdata.size());
    isa::Machine golden(c);
    golden.WriteHbm(kDataAddr, data.data(), data.size());
    golden.WriteHbm(top - kTopBytes, topdata.data(), topdata.size());
    std::vector<uint8_t> bytes;
    for (const auto& b : cs.prog) bytes.insert(bytes.end(), b.begin(), b.end());
    golden.WriteHbm(cs.write_addr, bytes.data(), bytes.size());
    s.WriteHbm(cs.write_addr, bytes.data(), bytes.size());
    const isa::RunResult g = golden.Run(cs.run_addr, cs.Count());
    ASSERT_TRUE(g.ok()) << "the case is wrong: " << g.message;
    ASSERT_EQ(g.unwritten_bytes_read, 0u) << fmt::format(
        "the case is wrong: its LOADs read HBM never written, first at 0x{:X}", g.first_unwritten);
    accel::Result r;
    try {
      accel::RunOptions opt;
      opt.max_cycles = 200'000 + 4'000 * uint64_t(cs.prog.size());
      r = s.Run(cs.run_addr, cs.Count(), opt);
    } catch (const std::exception& e) {
      this->bench_.Drop(num::Mode::kIeee);
      FAIL() << "the machine hung: " << e.what();
    }
    ExpectSameRun(s, golden, r, g, cs.prog);
    EXPECT_EQ(r.perf.instructions, uint64_t(g.pc) + 1);
    ExpectSameHbm(s, golden, kOutAddr, kOutBytes);
    if (this->HasFatalFailure()) return;
    ExpectSameHbm(s, golden, top - kTopBytes, kTopBytes);
    if (this->HasFatalFailure()) return;
    this->ExpectRecovers(cs.name, rng);
    if (this->HasFatalFailure()) return;
  }
}

// Random legal programs (tpu/tb/random_program.h): every instruction kind and field class, the
// dependency flags at random on every kind, rows of one beat, several and a partial last beat in
// every LOAD kind and STORE, stride classes. The machine's code, pc, end state and every byte of
// the output region must be the golden model's. Each program's classes are counted in the
// functional coverage group `accel.random_program`.
TYPED_TEST_P(AccelTest, RandomPrograms) {
  const MachineConfig c = this->mc();
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(tb::DeriveSeed(seed, "random programs"));
  const auto& classes = tb::RandomProgramClasses();
  const tb::fcov::Group& cov =
      tb::fcov::Declare("accel.random_program", "classes reached by the random programs", classes);
  tb::RandomProgramSpec spec;
  spec.in_addr = kDataAddr, spec.in_bytes = 0x100000;
  spec.out_addr = kDataAddr + 0x100000, spec.out_bytes = 0x40000;
  const bool big = c.r * c.c >= 64 * 64;
  const int programs = big ? 4 : 12;
  spec.instructions = big ? 24 : 48;
  std::set<std::string> reached;
  for (int n = 0; n < programs; ++n) {
    SCOPED_TRACE(fmt::format("random program {} of seed {}", n, seed));
    const tb::RandomProgram rp = tb::MakeRandomProgram(c, spec, rng);
    auto& s = this->bench_.Sim(num::Mode::kIeee);
    isa::Machine golden(c);
    const std::vector<uint8_t> zeros(spec.out_bytes, 0);
    s.WriteHbm(spec.out_addr, zeros.data(), zeros.size());
    golden.WriteHbm(spec.out_addr, zeros.data(), zeros.size());
    for (const auto& in : rp.inputs) {
      const std::vector<uint8_t> d = SmallBf16(in.bytes, rng);
      s.WriteHbm(in.addr, d.data(), d.size());
      golden.WriteHbm(in.addr, d.data(), d.size());
    }
    std::vector<Bytes> prog;
    for (const auto& in : rp.instrs) prog.push_back(isa::Encode(in));
    std::vector<uint8_t> bytes;
    for (const auto& b : prog) bytes.insert(bytes.end(), b.begin(), b.end());
    s.WriteHbm(kProgAddr, bytes.data(), bytes.size());
    golden.WriteHbm(kProgAddr, bytes.data(), bytes.size());
    const isa::RunResult g = golden.Run(kProgAddr, uint32_t(prog.size()));
    ASSERT_TRUE(g.ok()) << "the generator made an illegal program: " << g.message;
    ASSERT_EQ(g.unwritten_bytes_read, 0u) << "the generator's LOADs read HBM never written";
    accel::Result r;
    try {
      accel::RunOptions opt;
      opt.max_cycles = 200'000 + 20'000 * uint64_t(prog.size());
      r = s.Run(kProgAddr, uint32_t(prog.size()), opt);
    } catch (const std::exception& e) {
      this->bench_.Drop(num::Mode::kIeee);
      FAIL() << "the machine hung: " << e.what();
    }
    ExpectSameRun(s, golden, r, g, prog);
    ExpectSameHbm(s, golden, spec.out_addr, spec.out_bytes);
    if (this->HasFailure()) {
      ADD_FAILURE() << "the program:\n" << ProgramText(prog);
      return;
    }
    for (const std::string& cl : rp.classes) {
      reached.insert(cl);
      cov.Hit(size_t(std::find(classes.begin(), classes.end(), cl) - classes.begin()));
    }
  }
  std::string missed;
  for (const std::string& cl : classes) {
    if (!reached.count(cl)) missed += " " + cl;
  }
  std::cout << fmt::format(
      "[ CLASSES  ] {} of {} reached; not reached:{}\n",
      classes.size() - std::count_if(classes.begin(), classes.end(),
                                     [&](const auto& x) { return !reached.count(x); }),
      classes.size(), missed.empty() ? " none" : missed);
}

// The on-chip comparison after every program reads what this build lets it read: the parts of
// accel::OnChip found (activation buffer, weight buffer, accumulators, array weights) are the
// configuration's kOnChipParts (4 on a flat build, 3 on a hierarchical one, whose PEs lie inside
// separately Verilated tiles, 0 on a netlist). A renamed instance would otherwise switch the
// comparison off without a word.
TYPED_TEST_P(AccelTest, OnChipStateRead) {
  const accel::OnChip st = this->bench_.Sim(num::Mode::kIeee).ReadOnChip();
  const int parts =
      int(!st.act.empty()) + int(!st.wgt.empty()) + int(!st.acc.empty()) + int(!st.w.empty());
  EXPECT_EQ(parts, TypeParam::kOnChipParts) << "not read: " << st.missing;
  if (parts == 3) EXPECT_TRUE(st.w.empty()) << "a hierarchical build reads all but the weights";
}

REGISTER_TYPED_TEST_SUITE_P(AccelTest, RandomWorkloads, IllegalProgramsDecode,
                            IllegalProgramsHeader, IllegalProgramsField, IllegalProgramsWindow,
                            IllegalProgramsHbm, IllegalProgramsTokens, LegalEdgePrograms,
                            RandomPrograms, OnChipStateRead);

struct ConfigNames {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace accel_suite
}  // namespace tpu
