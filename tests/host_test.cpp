// SPDX-License-Identifier: Apache-2.0
// The host library (models/host/src/host.cpp): compiled GEMM, dense, MLP and convolution programs
// run on the instruction-level model (tpu::isa::Machine) and match the golden numerics bit for bit
// on several array shapes and tight buffer depths; the counters match the work; bad input throws.
#include "tpu/host.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpu/gemm.h"
#include "tpu/isa_model.h"
#include "tpu/tb/gemm_data.h"

namespace tpu {
namespace {

using host::OutFormat;
using isa::Machine;
using isa::MachineConfig;

MachineConfig Cfg(int r, int c, int act, int wgt, int acc, num::Mode mode = num::Mode::kIeee,
                  int queue_depth = 32) {
  MachineConfig m;
  m.r = r, m.c = c, m.act_depth = act, m.wgt_depth = wgt, m.acc_depth = acc;
  m.hbm_bytes = uint64_t(1) << 28;
  m.mode = mode;
  m.queue_depth = queue_depth;
  return m;
}

std::string CfgName(const MachineConfig& c) {
  return fmt::format("R={} C={} ActDepth={} WgtDepth={} AccDepth={} QueueDepth={} mode={}", c.r,
                     c.c, c.act_depth, c.wgt_depth, c.acc_depth, c.queue_depth,
                     num::ModeName(c.mode));
}

// Array shapes 4×4, 8×8, 16×16, 4×8, 3×5 with tight depths (several blocks, slot reuse, K-tiles
// narrower than R), single-slot buffers, and roomy ones; many weight slots with a short dispatch
// queue (D = QueueDepth = 4), 3 weight slots with 1-row activation slots and QueueDepth = 1; a
// 16-row activation buffer with 64 weight slots, where M > 8 may use 3 activation slots.
std::vector<MachineConfig> Configs() {
  return {Cfg(4, 4, 6, 8, 12),
          Cfg(8, 8, 16, 16, 32, num::Mode::kFtz),
          Cfg(16, 16, 64, 32, 64),
          Cfg(4, 8, 10, 6, 20),
          Cfg(3, 5, 7, 3, 9, num::Mode::kFtz),
          Cfg(3, 5, 1, 1, 1),
          Cfg(4, 8, 2, 5, 3),
          Cfg(4, 4, 1, 8, 5),
          Cfg(8, 8, 2048, 2048, 4096),
          Cfg(4, 4, 64, 64, 64, num::Mode::kIeee, 4),
          Cfg(4, 4, 3, 12, 24, num::Mode::kFtz, 1),
          Cfg(4, 4, 16, 256, 64)};
}

tb::GemmData Kind(tb::Rng& rng) {
  switch (rng.Range(0, 3)) {
    case 0: return tb::GemmData::kModerate;
    case 1: return tb::GemmData::kTiny;
    default: return tb::GemmData::kSpecials;
  }
}

std::vector<uint16_t> RandomBf16(tb::Rng& rng, int rows, int cols, tb::GemmData kind) {
  return tb::RandomGemm(rng, {rows, cols, 1}, kind, false).a;
}
std::vector<uint32_t> RandomFp32(tb::Rng& rng, int rows, int cols, tb::GemmData kind) {
  return tb::RandomGemm(rng, {rows, 1, cols}, kind, true).c0;
}

// Applies the store path (relu, bf16 rounding) to golden fp32 results.
std::vector<uint16_t> ToBf16(const std::vector<uint32_t>& v, bool relu, num::Mode mode) {
  std::vector<uint16_t> o(v.size());
  for (size_t i = 0; i < v.size(); ++i) o[i] = num::StoreBf16(v[i], relu, mode);
  return o;
}
std::vector<uint32_t> Relu(std::vector<uint32_t> v, bool relu) {
  if (relu) {
    for (auto& x : v) x = num::Relu(x);
  }
  return v;
}
// A rows × cols row-major matrix, transposed.
template <class T>
std::vector<T> Transposed(const std::vector<T>& v, int rows, int cols) {
  std::vector<T> t(v.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) t[size_t(c) * rows + r] = v[size_t(r) * cols + c];
  }
  return t;
}

std::vector<uint32_t> Broadcast(const std::vector<uint32_t>& bias, int m) {
  std::vector<uint32_t> c0;
  for (int i = 0; i < m; ++i) c0.insert(c0.end(), bias.begin(), bias.end());
  return c0;
}

// Bitwise comparison of row-major matrices; reports the first mismatches with coordinates.
template <typename T>
void ExpectSame(const std::vector<T>& want, const std::vector<T>& got, int cols,
                const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i]) continue;
    if (bad++ < 5) {
      const std::string e =
          sizeof(T) == 2 ? num::FormatBf16(uint16_t(want[i])) : num::FormatFp32(uint32_t(want[i]));
      const std::string g =
          sizeof(T) == 2 ? num::FormatBf16(uint16_t(got[i])) : num::FormatFp32(uint32_t(got[i]));
      ADD_FAILURE() << fmt::format("{}[{}][{}]: expected {}, got {}", what, i / cols, i % cols, e,
                                   g);
    }
  }
  EXPECT_EQ(bad, 0) << what << ": mismatching elements";
}

// ---------------------------------------------------------------------------------------------
// Race check: the tokens must order every conflicting pair of instructions of different modules
// the way program order does (docs/isa.md: otherwise the program is racy). Happens-before comes
// from vector clocks over the three in-order module streams and the four token queues (the k-th
// pop of a queue takes the k-th push).

struct Access {
  int space = 0;  // 0 HBM (bytes), 1 activation rows, 2 weight rows, 3 accumulator rows
  bool write = false;
  uint64_t base = 0, stride = 0, rows = 0, len = 0;  // rows of len units at base + i*stride
};

std::vector<Access> Accesses(const isa::Instr& in) {
  std::vector<Access> v;
  if (const auto* l = std::get_if<isa::Load>(&in)) {
    const uint64_t size = l->buffer == isa::kBufAcc ? 4 : 2;
    v.push_back({0, false, l->hbm_addr, l->hbm_stride, l->rows, l->elems * size});
    // Transposed (ISA 1.3), HBM row i becomes buffer column i: elems buffer rows. A held row
    // (ISA 1.5) is the compute module's own, which only its LOADs, in order, read and write.
    if (!l->hold) {
      v.push_back({1 + l->buffer, true, l->dst, 1, l->transpose ? l->elems : l->rows, 1});
    }
  } else if (const auto* g = std::get_if<isa::Gemm>(&in)) {
    // A window reads (at most) its band.
    v.push_back(
        {1, false, g->act, 1, g->window ? uint64_t(g->win.band_rows) * g->win.width : g->rows, 1});
    if (g->load_weights) v.push_back({2, false, g->wgt, 1, g->kv, 1});
    v.push_back({3, true, g->acc, 1, g->rows, 1});
  } else if (const auto* s = std::get_if<isa::Store>(&in)) {
    v.push_back({3, false, s->acc, 1, s->rows, 1});
    v.push_back({0, true, s->hbm_addr, s->hbm_stride, s->rows,
                 uint64_t(s->elems) * (s->format == isa::kFmtBf16 ? 2 : 4)});
  }
  return v;
}

bool Overlap(const Access& a, const Access& b) {
  if (a.space != b.space || (!a.write && !b.write)) return false;
  auto hi = [](const Access& x) { return x.base + (x.rows - 1) * x.stride + x.len; };
  if (hi(a) <= b.base || hi(b) <= a.base) return false;
  for (uint64_t i = 0; i < a.rows; ++i) {
    const uint64_t lo = a.base + i * a.stride, h = lo + a.len;
    for (uint64_t j = 0; j < b.rows; ++j) {
      const uint64_t lo2 = b.base + j * b.stride;
      if (lo < lo2 + b.len && lo2 < h) return true;
    }
  }
  return false;
}

// Returns "" when race-free, else the first racy pair.
// Tokens pushed minus popped per queue (0 load->compute, 1 compute->load, 2 compute->store,
// 3 store->compute) over a whole program: all 0 when every token pushed is popped.
std::array<int64_t, 4> TokenBalance(const std::vector<isa::Instr>& prog) {
  std::array<int64_t, 4> q{};
  for (const auto& in : prog) {
    const isa::Module m = isa::ModuleOf(in);
    if (m != isa::Module::kLoad && m != isa::Module::kCompute && m != isa::Module::kStore) continue;
    const isa::Deps& d = isa::DepsOf(in);
    if (m == isa::Module::kLoad) {
      q[0] += d.push_next, q[1] -= d.pop_next;
    } else if (m == isa::Module::kCompute) {
      q[0] -= d.pop_prev, q[1] += d.push_prev, q[2] += d.push_next, q[3] -= d.pop_next;
    } else {
      q[2] -= d.pop_prev, q[3] += d.push_prev;
    }
  }
  return q;
}

std::string FindRace(const std::vector<isa::Instr>& prog) {
  using VC = std::array<uint64_t, 3>;
  struct Node {
    int mod;
    size_t pc;
  };
  std::array<std::vector<size_t>, 3> stream;
  for (size_t pc = 1; pc + 1 < prog.size(); ++pc) {
    stream[size_t(isa::ModuleOf(prog[pc]))].push_back(pc);
  }
  // Queues: [from][to] for neighbours (0 load, 1 compute, 2 store).
  std::map<std::pair<int, int>, std::vector<VC>> pushed;
  std::map<std::pair<int, int>, size_t> popped;
  std::vector<VC> vc(prog.size());
  std::array<size_t, 3> next{};
  std::array<VC, 3> clock{};
  bool progress = true;
  while (progress) {
    progress = false;
    for (int m = 0; m < 3; ++m) {
      while (next[size_t(m)] < stream[size_t(m)].size()) {
        const size_t pc = stream[size_t(m)][next[size_t(m)]];
        const isa::Deps& d = isa::DepsOf(prog[pc]);
        const std::pair<int, int> qp{m - 1, m}, qn{m + 1, m};
        const bool ok_p = !d.pop_prev || popped[qp] < pushed[qp].size();
        const bool ok_n = !d.pop_next || popped[qn] < pushed[qn].size();
        if (!ok_p || !ok_n) break;
        VC c = clock[size_t(m)];
        auto join = [&](const VC& o) {
          for (int i = 0; i < 3; ++i) c[size_t(i)] = std::max(c[size_t(i)], o[size_t(i)]);
        };
        if (d.pop_prev) join(pushed[qp][popped[qp]++]);
        if (d.pop_next) join(pushed[qn][popped[qn]++]);
        ++c[size_t(m)];
        vc[pc] = clock[size_t(m)] = c;
        if (d.push_prev) pushed[{m, m - 1}].push_back(c);
        if (d.push_next) pushed[{m, m + 1}].push_back(c);
        ++next[size_t(m)];
        progress = true;
      }
    }
  }
  for (int m = 0; m < 3; ++m) {
    if (next[size_t(m)] != stream[size_t(m)].size()) return "deadlock";
  }
  std::vector<std::vector<Access>> acc(prog.size());
  for (size_t pc = 1; pc + 1 < prog.size(); ++pc) acc[pc] = Accesses(prog[pc]);
  for (size_t b = 1; b + 1 < prog.size(); ++b) {
    const int mb = int(isa::ModuleOf(prog[b]));
    for (size_t a = 1; a < b; ++a) {
      const int ma = int(isa::ModuleOf(prog[a]));
      if (ma == mb) continue;
      if (vc[a][size_t(ma)] <= vc[b][size_t(ma)]) continue;  // a happens before b
      for (const auto& x : acc[a]) {
        for (const auto& y : acc[b]) {
          if (Overlap(x, y)) {
            return fmt::format("pc {} ({}) and pc {} ({}) conflict but are not ordered", a,
                               isa::Disassemble(prog[a]), b, isa::Disassemble(prog[b]));
          }
        }
      }
    }
  }
  return "";
}

// How far the load module of a one-layer program may run ahead: the load steps (each ends with a
// push to compute) before the first LOAD that waits on compute; all of them when none waits.
int MeasuredDepth(const std::vector<isa::Instr>& prog) {
  int steps = 0;
  for (const auto& in : prog) {
    if (isa::ModuleOf(in) != isa::Module::kLoad) continue;
    if (isa::DepsOf(in).pop_next) break;
    steps += isa::DepsOf(in).push_next ? 1 : 0;
  }
  return steps;
}

// The same one-layer program with the load steps' tokens for another D (the compute→load pops
// and pushes of the header comment's scheme), for checking that D is the largest race-free one.
std::vector<isa::Instr> WithDepth(std::vector<isa::Instr> prog, uint64_t d) {
  uint64_t gemms = 0;
  for (const auto& in : prog) gemms += std::holds_alternative<isa::Gemm>(in) ? 1 : 0;
  uint64_t step = 0, g = 0;
  bool step_start = true;
  for (auto& in : prog) {
    if (isa::ModuleOf(in) == isa::Module::kLoad) {
      isa::Deps& deps = isa::DepsOf(in);
      deps.pop_next = step_start && step >= d;
      step_start = deps.push_next;
      step += deps.push_next ? 1 : 0;
    } else if (auto* gm = std::get_if<isa::Gemm>(&in)) {
      gm->deps.push_prev = g++ + d < gemms;
    }
  }
  return prog;
}

// The run succeeded and its counters match what the program does; `macs` and `written` are
// computed by the test from the workload.
void ExpectRun(const isa::RunResult& r, const host::Compiled& p, uint64_t macs, uint64_t written) {
  ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
  EXPECT_EQ(r.pc, p.count() - 1);
  EXPECT_EQ(r.counters.instructions, p.count());
  EXPECT_EQ(r.counters.macs, macs);
  EXPECT_EQ(p.stats.macs, macs);
  EXPECT_EQ(r.counters.hbm_bytes_written, written);
  EXPECT_EQ(p.stats.bytes_written, written);
  EXPECT_EQ(r.counters.per_module[0], p.stats.loads);
  EXPECT_EQ(r.counters.per_module[1], p.stats.gemms + p.stats.acc_loads);
  EXPECT_EQ(r.counters.per_module[2], p.stats.stores);
  EXPECT_EQ(p.count(), 2 + p.stats.loads + p.stats.gemms + p.stats.acc_loads + p.stats.stores);
  if (p.count() <= 3000) {
    EXPECT_EQ(FindRace(p.instrs), "");
  }
}

// Expected GEMMs of one M×K×N GEMM with the plan's block height: one per (M-block, K-tile, N-tile).
// Also checks the plan's buffer bounds: mb rows fit a slot, Sa slots the buffer, a block a half.
uint64_t ExpectedGemms(const MachineConfig& cfg, int m, int k, int n, int kt_w, int nt_w,
                       int m_align = 1) {
  const auto t = host::PlanTiling(cfg);
  const auto lp = host::PlanLayer(cfg, m, k, n, kt_w, nt_w, m_align);
  EXPECT_TRUE(lp.mb % m_align == 0 || lp.mb == m) << "mb=" << lp.mb << " m_align=" << m_align;
  EXPECT_GE(lp.act_slots, 1);
  EXPECT_LE(lp.act_slots, std::min(cfg.act_depth, host::kMaxActSlots));
  EXPECT_LE(lp.act_slots * lp.act_slot_rows, cfg.act_depth);
  EXPECT_LE(lp.mb, lp.act_slot_rows);
  EXPECT_LE(lp.mb * lp.nb, t.acc_half_rows);
  const int mb = lp.mb;
  return uint64_t((m + mb - 1) / mb) * ((k + kt_w - 1) / kt_w) * ((n + nt_w - 1) / nt_w);
}

class HostTest : public ::testing::Test {
 protected:
  static void RunGemm(const MachineConfig& cfg, int m, int k, int n, host::Init init, OutFormat out,
                      bool relu, tb::Rng& rng, host::GemmTranspose trans = {}) {
    const tb::GemmData kind = Kind(rng);
    SCOPED_TRACE(fmt::format("GEMM {}x{}x{} init={} {} {}{}{} data={} on {}", m, k, n, int(init),
                             out == OutFormat::kBf16 ? "bf16" : "fp32", relu ? "relu" : "",
                             trans.a ? " Aᵀ stored" : "", trans.b ? " Bᵀ stored" : "",
                             tb::GemmDataName(kind), CfgName(cfg)));
    const auto ops = tb::RandomGemm(rng, {m, k, n}, kind, init != host::Init::kOverwrite);
    const auto p = host::CompileGemm(cfg, m, k, n, trans, init, out, relu, 0x1000);
    Machine mach(cfg);
    // The transposed operands are stored transposed: the machine transposes them back.
    host::WriteMatrix(mach, p.a, trans.a ? Transposed(ops.a, m, k) : ops.a);
    host::WriteWeights(mach, p.b, trans.b ? Transposed(ops.b, k, n) : ops.b);
    if (init != host::Init::kOverwrite) host::WriteMatrix(mach, p.c0, ops.c0);
    const auto r = host::Run(mach, p.prog);
    const int osize = out == OutFormat::kBf16 ? 2 : 4;
    ExpectRun(r, p.prog, uint64_t(m) * k * n, uint64_t(m) * n * osize);
    const int kt_w = trans.a ? host::PlanTiling(cfg).kt_w : p.a.tile;
    EXPECT_EQ(p.prog.stats.gemms,
              ExpectedGemms(cfg, m, k, n, kt_w, p.out.tile, trans.a ? p.a.tile : 1));
    // Every LOAD of a stored-transposed operand transposes, and no other LOAD does.
    uint64_t transposing = 0;
    for (const auto& in : p.prog.instrs) {
      if (const auto* l = std::get_if<isa::Load>(&in)) {
        transposing += l->transpose;
        if (l->transpose) {
          EXPECT_TRUE(l->buffer == isa::kBufAct ? trans.a : trans.b) << isa::Disassemble(in);
        }
      }
    }
    EXPECT_EQ(transposing > 0, trans.a || trans.b);
    EXPECT_EQ(p.prog.stats.acc_loads, init == host::Init::kOverwrite ? 0 : p.prog.stats.stores);
    const auto want = gemm::Gemm({m, k, n}, ops.a, ops.b, ops.c0, cfg.mode);
    if (out == OutFormat::kBf16) {
      ExpectSame(ToBf16(want, relu, cfg.mode), host::ReadMatrixBf16(mach, p.out), n, "C");
    } else {
      ExpectSame(Relu(want, relu), host::ReadMatrixFp32(mach, p.out), n, "C");
    }
  }

  static void RunDense(const MachineConfig& cfg, int m, int k, int n, bool bias, bool relu,
                       OutFormat out, tb::Rng& rng) {
    const tb::GemmData kind = Kind(rng);
    SCOPED_TRACE(fmt::format("dense {}x{}x{} {} {} {} data={} on {}", m, k, n,
                             bias ? "bias" : "no-bias", relu ? "relu" : "",
                             out == OutFormat::kBf16 ? "bf16" : "fp32", tb::GemmDataName(kind),
                             CfgName(cfg)));
    const auto ops = tb::RandomGemm(rng, {m, k, n}, kind, false);
    const auto b = bias ? RandomFp32(rng, 1, n, kind) : std::vector<uint32_t>{};
    const auto p = host::CompileDense(cfg, m, k, n, bias, relu, out);
    Machine mach(cfg);
    host::WriteMatrix(mach, p.a, ops.a);
    host::WriteWeights(mach, p.b, ops.b);
    if (bias) host::WriteMatrix(mach, p.bias, b);
    const auto r = host::Run(mach, p.prog);
    const int osize = out == OutFormat::kBf16 ? 2 : 4;
    ExpectRun(r, p.prog, uint64_t(m) * k * n, uint64_t(m) * n * osize);
    const auto want = gemm::Gemm({m, k, n}, ops.a, ops.b, bias ? Broadcast(b, m) : b, cfg.mode);
    if (out == OutFormat::kBf16) {
      ExpectSame(ToBf16(want, relu, cfg.mode), host::ReadMatrixBf16(mach, p.out), n, "out");
    } else {
      ExpectSame(Relu(want, relu), host::ReadMatrixFp32(mach, p.out), n, "out");
    }
  }

  static void RunMlp(const MachineConfig& cfg, int m, const std::vector<int>& sizes, bool bias,
                     bool relu, OutFormat out, tb::Rng& rng) {
    const tb::GemmData kind = Kind(rng);
    SCOPED_TRACE(fmt::format("MLP M={} sizes={} {} {} {} data={} on {}", m, fmt::join(sizes, "-"),
                             bias ? "bias" : "no-bias", relu ? "relu" : "",
                             out == OutFormat::kBf16 ? "bf16" : "fp32", tb::GemmDataName(kind),
                             CfgName(cfg)));
    const auto p = host::CompileMlp(cfg, m, sizes, bias, relu, out);
    const int L = int(sizes.size()) - 1;
    ASSERT_EQ(int(p.w.size()), L);
    Machine mach(cfg);
    auto x = RandomBf16(rng, m, sizes[0], kind);
    host::WriteMatrix(mach, p.input, x);
    std::vector<std::vector<uint16_t>> w;
    std::vector<std::vector<uint32_t>> bs;
    uint64_t macs = 0;
    for (int i = 0; i < L; ++i) {
      w.push_back(RandomBf16(rng, sizes[i], sizes[i + 1], kind));
      bs.push_back(bias ? RandomFp32(rng, 1, sizes[i + 1], kind) : std::vector<uint32_t>{});
      host::WriteWeights(mach, p.w[size_t(i)], w.back());
      if (bias) host::WriteMatrix(mach, p.bias[size_t(i)], bs.back());
      macs += uint64_t(m) * sizes[i] * sizes[i + 1];
      if (i > 0) {
        // The chaining: layer i-1's output layout is layer i's A layout.
        EXPECT_EQ(p.output[size_t(i - 1)].tile, p.w[size_t(i)].ktile);
      }
    }
    const auto r = host::Run(mach, p.prog);
    const int osize = out == OutFormat::kBf16 ? 2 : 4;
    uint64_t written = 0;
    for (int i = 0; i < L; ++i) {
      written += uint64_t(m) * sizes[i + 1] * (i == L - 1 ? osize : 2);
    }
    ExpectRun(r, p.prog, macs, written);
    EXPECT_EQ(p.prog.stats.barriers, uint64_t(L - 1)) << "one barrier between layers";
    // A bias, read from the program: every stored tile starts from it once, through the one
    // broadcast GEMM of its first K-tile or a LOAD of the bias to every row (hbm_stride 0, as
    // the barriers' 1-row LOADs are too); without a bias neither appears.
    uint64_t broadcasts = 0, stride0 = 0;
    for (const auto& in : p.prog.instrs) {
      if (const auto* g = std::get_if<isa::Gemm>(&in)) broadcasts += g->broadcast;
      if (const auto* l = std::get_if<isa::Load>(&in)) {
        stride0 += l->buffer == isa::kBufAcc && l->hbm_stride == 0;
      }
    }
    const uint64_t every_row = stride0 - p.prog.stats.barriers;
    EXPECT_EQ(broadcasts + every_row, bias ? p.prog.stats.stores : 0u)
        << broadcasts << " broadcast GEMMs, " << every_row << " LOADs of a bias to every row";
    // Golden: layer by layer with the store path's roundings.
    for (int i = 0; i < L; ++i) {
      const int k = sizes[i], n = sizes[i + 1];
      const auto acc = gemm::Gemm({m, k, n}, x, w[size_t(i)],
                                  bias ? Broadcast(bs[size_t(i)], m) : bs[0], cfg.mode);
      const std::string name = fmt::format("layer {} output", i);
      if (i < L - 1) {
        x = ToBf16(acc, relu, cfg.mode);
        ExpectSame(x, host::ReadMatrixBf16(mach, p.output[size_t(i)]), n, name);
      } else if (out == OutFormat::kBf16) {
        ExpectSame(ToBf16(acc, false, cfg.mode), host::ReadMatrixBf16(mach, p.output.back()), n,
                   name);
      } else {
        ExpectSame(acc, host::ReadMatrixFp32(mach, p.output.back()), n, name);
      }
    }
  }

  // The contract's convolution, written directly: for each output, c starts at +0 (or the bias)
  // and takes mac(x, w, c) over (i, j, cin) in increasing order, padded taps with x = +0.
  // With a residual R (M × Cout, the output's layout), c starts at fma32(R, 1, bias) (the vector
  // unit's add), or R without a bias (docs/numerics.md "Residual adds in the accumulators").
  static std::vector<uint32_t> DirectConv(const host::ConvShape& s, const std::vector<uint16_t>& x,
                                          const std::vector<uint16_t>& w,
                                          const std::vector<uint32_t>& bias, num::Mode mode,
                                          const std::vector<uint32_t>& res = {}) {
    const int OH = s.OutH(), OW = s.OutW();
    std::vector<uint32_t> y;
    for (int b = 0; b < s.n; ++b) {
      for (int oh = 0; oh < OH; ++oh) {
        for (int ow = 0; ow < OW; ++ow) {
          for (int co = 0; co < s.cout; ++co) {
            uint32_t c = bias.empty() ? 0 : bias[size_t(co)];
            if (!res.empty()) {
              const uint32_t rv = res[y.size()];
              c = bias.empty() ? rv : isa::ApplyVectorOp(isa::VectorOp::kAdd, rv, c, 0, mode);
            }
            for (int i = 0; i < s.kh; ++i) {
              for (int j = 0; j < s.kw; ++j) {
                const int ih = oh * s.stride - s.pad + i, iw = ow * s.stride - s.pad + j;
                const bool in = ih >= 0 && ih < s.h && iw >= 0 && iw < s.w;
                for (int ci = 0; ci < s.cin; ++ci) {
                  const uint16_t a = in ? x[((size_t(b) * s.h + ih) * s.w + iw) * s.cin + ci] : 0;
                  c = num::Mac(a, w[((size_t(i) * s.kw + j) * s.cin + ci) * s.cout + co], c, mode);
                }
              }
            }
            y.push_back(c);
          }
        }
      }
    }
    return y;
  }

  // How the program lowered the convolution.
  enum class Lowering { kIm2col, kWindow, kPointwise };
  static Lowering RunConv(const MachineConfig& cfg, const host::ConvShape& s, bool bias, bool relu,
                          OutFormat out, tb::Rng& rng, bool residual = false) {
    const tb::GemmData kind = Kind(rng);
    SCOPED_TRACE(fmt::format(
        "conv N={} H={} W={} Cin={} Cout={} k={}x{} stride={} pad={} {} {} "
        "{}{} data={} on {}",
        s.n, s.h, s.w, s.cin, s.cout, s.kh, s.kw, s.stride, s.pad, bias ? "bias" : "no-bias",
        relu ? "relu" : "", out == OutFormat::kBf16 ? "bf16" : "fp32", residual ? " residual" : "",
        tb::GemmDataName(kind), CfgName(cfg)));
    const auto p = host::CompileConv(cfg, s, bias, relu, out, 0, false, false, residual);
    EXPECT_EQ(p.residual.rows, residual ? s.M() : 0);
    EXPECT_EQ(p.window || p.pointwise, p.host_im2col_reason.empty()) << p.host_im2col_reason;
    EXPECT_FALSE(p.window && p.pointwise);
    EXPECT_EQ(p.pointwise, s.kh == 1 && s.kw == 1 && s.pad == 0);
    const auto x = RandomBf16(rng, s.n * s.h * s.w, s.cin, kind);
    const auto w = RandomBf16(rng, s.K(), s.cout, kind);
    const auto b = bias ? RandomFp32(rng, 1, s.cout, kind) : std::vector<uint32_t>{};
    const auto res = residual ? RandomFp32(rng, s.M(), s.cout, kind) : std::vector<uint32_t>{};
    Machine mach(cfg);
    host::WriteConvInput(mach, p, x);
    host::WriteWeights(mach, p.b, w);
    if (bias) host::WriteMatrix(mach, p.bias, b);
    if (residual) host::WriteMatrix(mach, p.residual, res);
    const auto r = host::Run(mach, p.prog);
    const int osize = out == OutFormat::kBf16 ? 2 : 4;
    ExpectRun(r, p.prog, uint64_t(s.M()) * s.K() * s.cout, uint64_t(s.M()) * s.cout * osize);
    const auto want = DirectConv(s, x, w, b, cfg.mode, res);
    // The contract: the same GEMM on the same im2col matrix.
    std::vector<uint32_t> c0 = bias ? Broadcast(b, s.M()) : b;
    if (residual && !bias) c0 = res;
    for (size_t i = 0; bias && i < res.size(); ++i) {
      c0[i] = isa::ApplyVectorOp(isa::VectorOp::kAdd, res[i], c0[i], 0, cfg.mode);
    }
    ExpectSame(want, gemm::Gemm({s.M(), s.K(), s.cout}, host::Im2col(s, x), w, c0, cfg.mode),
               s.cout, "im2col GEMM vs direct conv");
    if (out == OutFormat::kBf16) {
      ExpectSame(ToBf16(want, relu, cfg.mode), host::ReadMatrixBf16(mach, p.out), s.cout, "y");
    } else {
      ExpectSame(Relu(want, relu), host::ReadMatrixFp32(mach, p.out), s.cout, "y");
    }
    return p.pointwise ? Lowering::kPointwise : p.window ? Lowering::kWindow : Lowering::kIm2col;
  }
};

TEST_F(HostTest, LayoutsRoundTrip) {
  tb::Rng rng(test::TestSeed());
  Machine mach(Cfg(3, 5, 4, 4, 4));
  host::Program p(mach.config(), 64);
  const auto a = p.AllocMatrix(7, 11, 3, 2, "a");
  const auto c = p.AllocMatrix(5, 13, 5, 4, "c");
  EXPECT_EQ(a.base, 64u);
  EXPECT_EQ(a.Pitch(), 32u);
  EXPECT_EQ(a.Bytes(), 4u * 7 * 32);
  EXPECT_EQ(c.base % 32, 0u);
  EXPECT_GE(c.base, a.base + a.Bytes());
  const auto va = RandomBf16(rng, 7, 11, tb::GemmData::kSpecials);
  const auto vc = RandomFp32(rng, 5, 13, tb::GemmData::kSpecials);
  host::WriteMatrix(mach, a, va);
  host::WriteMatrix(mach, c, vc);
  EXPECT_EQ(host::ReadMatrixBf16(mach, a), va);
  EXPECT_EQ(host::ReadMatrixFp32(mach, c), vc);
  // Row 2 of K-tile 1 holds A[2][3..5].
  const auto row = mach.ReadHbm(a.RowAddr(1, 2), 6);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(uint16_t(row[2 * i] | row[2 * i + 1] << 8), va[2 * 11 + 3 + i]);
  }
  const auto prog = p.Finish();
  EXPECT_GE(prog.addr, c.base + c.Bytes());
  EXPECT_EQ(prog.addr % 32, 0u);
  EXPECT_EQ(prog.instrs.size(), 2u);
}

TEST_F(HostTest, GemmAllInitModes) {
  tb::Rng rng(test::TestSeed());
  for (const auto& cfg : Configs()) {
    for (const auto init :
         {host::Init::kOverwrite, host::Init::kPreload, host::Init::kAccumulate}) {
      for (const auto out : {OutFormat::kFp32, OutFormat::kBf16}) {
        if (init == host::Init::kAccumulate && out == OutFormat::kBf16) continue;
        for (const bool relu : {false, true}) {
          RunGemm(cfg, 13, 9, 7, init, out, relu, rng);
          RunGemm(cfg, 1, 1, 1, init, out, relu, rng);
          if (HasFatalFailure()) return;
        }
      }
    }
    RunGemm(cfg, 40, 33, 35, host::Init::kPreload, OutFormat::kFp32, false, rng);
    if (HasFatalFailure()) return;
  }
}

TEST_F(HostTest, RandomGemms) {
  tb::Rng rng(test::TestSeed());
  const auto cfgs = Configs();
  const uint64_t n = test::Scaled(80);
  for (uint64_t i = 0; i < n; ++i) {
    const auto& cfg = cfgs[size_t(rng.Range(0, int(cfgs.size()) - 1))];
    const auto init = host::Init(rng.Range(0, 2));
    const auto out =
        init == host::Init::kAccumulate || rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16;
    SCOPED_TRACE(fmt::format("random case {}", i));
    RunGemm(cfg, rng.Range(1, 70), rng.Range(1, 60), rng.Range(1, 60), init, out, rng.Bit(), rng);
    if (HasFatalFailure()) return;
  }
}

// Transposes in hardware (ISA 1.3): A and/or B stored transposed, every init mode, shapes that
// make several blocks (a transposed A's blocks on its column tiles), ragged tiles.
TEST_F(HostTest, GemmWithTransposedOperands) {
  tb::Rng rng(test::TestSeed());
  const host::GemmTranspose kinds[] = {{true, false}, {false, true}, {true, true}};
  for (const auto& cfg : Configs()) {
    for (const auto& tr : kinds) {
      RunGemm(cfg, 13, 9, 7, host::Init::kOverwrite, OutFormat::kFp32, false, rng, tr);
      RunGemm(cfg, 1, 1, 1, host::Init::kPreload, OutFormat::kBf16, true, rng, tr);
      RunGemm(cfg, 40, 33, 35, host::Init::kAccumulate, OutFormat::kFp32, false, rng, tr);
      if (HasFatalFailure()) return;
    }
  }
  const auto cfgs = Configs();
  for (uint64_t i = 0; i < test::Scaled(40); ++i) {
    const auto& cfg = cfgs[size_t(rng.Range(0, int(cfgs.size()) - 1))];
    SCOPED_TRACE(fmt::format("random case {}", i));
    RunGemm(cfg, rng.Range(1, 70), rng.Range(1, 60), rng.Range(1, 60), host::Init::kOverwrite,
            rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16, false, rng,
            kinds[size_t(rng.Range(0, 2))]);
    if (HasFatalFailure()) return;
  }
}

TEST_F(HostTest, DenseWithBiasReluAndFormats) {
  tb::Rng rng(test::TestSeed());
  for (const auto& cfg : Configs()) {
    for (const bool bias : {false, true}) {
      for (const bool relu : {false, true}) {
        for (const auto out : {OutFormat::kFp32, OutFormat::kBf16}) {
          RunDense(cfg, rng.Range(1, 50), rng.Range(1, 40), rng.Range(1, 40), bias, relu, out, rng);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_F(HostTest, MlpChainedThroughHbm) {
  tb::Rng rng(test::TestSeed());
  for (const auto& cfg : Configs()) {
    RunMlp(cfg, 9, {7, 11, 5}, true, true, OutFormat::kFp32, rng);
    RunMlp(cfg, 1, {1, 1}, false, false, OutFormat::kBf16, rng);
    if (HasFatalFailure()) return;
    for (int i = 0; i < 3; ++i) {
      std::vector<int> sizes(size_t(rng.Range(2, 5)));
      for (auto& s : sizes) s = rng.Range(1, 40);
      RunMlp(cfg, rng.Range(1, 40), sizes, rng.Bit(), rng.Bit(),
             rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16, rng);
      if (HasFatalFailure()) return;
    }
  }
}

// Through windows where the machine's buffers hold a block's bands, through the host's im2col on
// the machines with tiny activation buffers: both must be the contract's convolution.
TEST_F(HostTest, ConvNhwcThroughWindowsOrIm2col) {
  tb::Rng rng(test::TestSeed());
  int windows = 0, im2col = 0, pointwise = 0;
  auto run = [&](const MachineConfig& cfg, const host::ConvShape& s, bool bias, bool relu,
                 OutFormat out) {
    const Lowering l = RunConv(cfg, s, bias, relu, out, rng);
    (l == Lowering::kWindow ? windows : l == Lowering::kIm2col ? im2col : pointwise)++;
  };
  for (const auto& cfg : Configs()) {
    run(cfg, {1, 5, 5, 3, 4, 3, 3, 1, 1}, false, false, OutFormat::kFp32);
    run(cfg, {2, 7, 6, 2, 5, 3, 2, 2, 1}, true, true, OutFormat::kBf16);
    run(cfg, {1, 1, 1, 1, 1, 3, 3, 1, 1}, false, false, OutFormat::kFp32);
    run(cfg, {2, 4, 5, 9, 10, 1, 1, 1, 2}, true, false, OutFormat::kFp32);  // rows all padding
    run(cfg, {1, 6, 6, 8, 5, 3, 3, 1, 1}, true, true, OutFormat::kBf16);
    run(cfg, {2, 7, 5, 12, 6, 3, 2, 2, 2}, false, false, OutFormat::kFp32);
    run(cfg, {2, 5, 4, 20, 9, 1, 1, 1, 0}, true, true, OutFormat::kBf16);  // pointwise
    if (HasFatalFailure()) return;
    for (int i = 0; i < 3; ++i) {
      host::ConvShape s;
      s.n = rng.Range(1, 3), s.h = rng.Range(1, 8), s.w = rng.Range(1, 8);
      s.cin = rng.Range(1, 20), s.cout = rng.Range(1, 20);
      s.pad = rng.Range(0, 2), s.stride = rng.Range(1, 3);
      s.kh = rng.Range(1, s.h + 2 * s.pad), s.kw = rng.Range(1, s.w + 2 * s.pad);
      run(cfg, s, rng.Bit(), rng.Bit(), rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GE(windows, 20);
  EXPECT_GE(im2col, 4);
  EXPECT_GE(pointwise, int(Configs().size()));
  std::printf("%d convolutions through windows, %d pointwise, %d through the host's im2col\n",
              windows, pointwise, im2col);
}

// Version 1.5: a residual add in the accumulators (CompileConv's residual): the MACs start from
// R ⊕ bias (a hold LOAD of the bias row, an add LOAD of R's rows per block and N-tile), through
// windows, the host's im2col and pointwise, with and without a bias, every output format.
TEST_F(HostTest, ConvWithAResidualInTheAccumulators) {
  tb::Rng rng(test::TestSeed());
  int lowered[3] = {0, 0, 0};
  for (const auto& cfg : Configs()) {
    const host::ConvShape shapes[] = {
        {1, 6, 6, 8, 5, 3, 3, 1, 1},    // windows (or im2col on tiny buffers)
        {2, 5, 4, 20, 9, 1, 1, 1, 0},   // pointwise
        {2, 7, 5, 12, 6, 3, 2, 2, 2},   // strided
        {1, 9, 9, 3, 40, 3, 3, 1, 1}};  // several N-tiles
    for (const auto& s : shapes) {
      for (const bool bias : {false, true}) {
        const Lowering l =
            RunConv(cfg, s, bias, rng.Bit(), rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16, rng,
                    /*residual=*/true);
        ++lowered[int(l)];
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(lowered[int(Lowering::kWindow)], 0);
  EXPECT_GT(lowered[int(Lowering::kIm2col)], 0);
  EXPECT_GT(lowered[int(Lowering::kPointwise)], 0);
  // The program's accumulator LOADs: with a bias, a hold and an add per block and N-tile.
  const MachineConfig cfg = Configs().front();
  const host::ConvShape s{1, 6, 6, 8, 5, 3, 3, 1, 1};
  for (const bool bias : {false, true}) {
    const auto p = host::CompileConv(cfg, s, bias, false, OutFormat::kFp32, 0, false, false, true);
    int holds = 0, adds = 0, plain = 0;
    for (const auto& in : p.prog.instrs) {
      if (const auto* l = std::get_if<isa::Load>(&in); l && l->buffer == isa::kBufAcc) {
        holds += l->hold, adds += l->add, plain += !l->hold && !l->add;
      }
    }
    EXPECT_EQ(holds, adds);
    EXPECT_EQ(bias ? plain : adds, 0);
    EXPECT_GT(bias ? adds : plain, 0);
    EXPECT_EQ(uint64_t(holds + adds + plain), p.prog.stats.acc_loads);
  }
}

// A block's initial values (here C0's rows) are loaded in the middle of the previous block's
// K-tiles, into the other accumulator half, where the machine writes them beside that block's
// GEMMs: with K-tiles KT = 3, every block's LOAD but the first comes after a GEMM of the block
// before and before its last; none follows a STORE. With KT = 1 there is no middle: each block's
// LOAD follows the STOREs of the block before. The programs run race-free as the contract says.
TEST_F(HostTest, InitialValuesLoadBesideThePreviousBlock) {
  tb::Rng rng(test::TestSeed());
  const MachineConfig cfg = Cfg(4, 4, 64, 64, 64);
  for (const int k : {12, 4}) {
    SCOPED_TRACE(fmt::format("K = {}", k));
    RunGemm(cfg, 100, k, 4, host::Init::kPreload, OutFormat::kFp32, false, rng);
    const auto p =
        host::CompileGemm(cfg, 100, k, 4, {}, host::Init::kPreload, OutFormat::kFp32, false, 0);
    const int blocks = int(p.prog.stats.blocks);
    ASSERT_GE(blocks, 3);
    int acc_loads = 0, after_store = 0, gemms = 0, within = 0;
    std::vector<int> gemm_at_load;  // GEMMs before each accumulator LOAD
    const isa::Instr* prev = nullptr;
    for (const auto& in : p.prog.instrs) {
      if (const auto* l = std::get_if<isa::Load>(&in); l && l->buffer == isa::kBufAcc) {
        ++acc_loads;
        after_store += prev && std::holds_alternative<isa::Store>(*prev);
        gemm_at_load.push_back(gemms);
      }
      gemms += std::holds_alternative<isa::Gemm>(in);
      prev = &in;
    }
    // The GEMMs per block: K-tiles x N-tiles (one N-tile).
    const int per_block = (k + 3) / 4;
    for (size_t i = 1; i < gemm_at_load.size(); ++i) {
      within += gemm_at_load[i] % per_block != 0;
    }
    EXPECT_EQ(acc_loads, blocks);
    EXPECT_EQ(gemm_at_load.front(), 0);
    if (k > 4) {
      EXPECT_EQ(within, blocks - 1) << "a block's C0 LOAD not inside the block before";
      EXPECT_EQ(after_store, 0);
    } else {
      EXPECT_EQ(within, 0);
      EXPECT_EQ(after_store, blocks - 1);
    }
  }
}

// The next block's initial-value LOADs (one per N-tile; a hold and an add per N-tile for a
// residual) are spread over the block's GEMM groups, not issued in a row: the machine runs one
// accumulator LOAD at a time, and one waiting for the LOAD before it holds the GEMMs behind it in
// the compute queue, so a row of them idled the array for each one's HBM latency (C0 of 32
// N-tiles in 49-row blocks on 16x16_1ch: 535,131 -> 418,426 cycles). Here 4 N-tiles of 5 rows
// and 6 K-tiles: the units need more room than K-tiles 3 .. 4, so they start at K-tile 1 and come
// every (6 - 2) x 4 / 4 = 4 GEMMs, a residual's hold right before its add; bit-exact, race-free.
TEST_F(HostTest, InitialValueLoadsSpreadOverTheBlock) {
  tb::Rng rng(test::TestSeed());
  const MachineConfig cfg = Cfg(4, 4, 16, 64, 128);
  for (const bool residual : {false, true}) {
    SCOPED_TRACE(residual ? "residual and bias" : "C0");
    host::Compiled prog;
    if (residual) {
      const auto d =
          host::CompileDense(cfg, 100, 24, 16, true, false, OutFormat::kFp32, 0, false, true);
      prog = d.prog;
    } else {
      prog =
          host::CompileGemm(cfg, 100, 24, 16, {}, host::Init::kPreload, OutFormat::kFp32, false, 0)
              .prog;
      RunGemm(cfg, 100, 24, 16, host::Init::kPreload, OutFormat::kFp32, false, rng);
    }
    const auto t = host::PlanTiling(cfg);
    const auto lp = host::PlanLayer(cfg, 100, 24, 16, t.kt_w, t.nt_w);
    ASSERT_EQ(lp.k_tiles, 6);
    ASSERT_EQ(lp.nb, 4);
    ASSERT_EQ(lp.mb, 5);  // three activation slots of 5 rows
    // GEMMs between consecutive LOAD units (a unit: a LOAD, or a hold and its add), per block.
    std::vector<int> gaps;
    int gemms = 0, last = -1, unpaired = 0;
    const isa::Load* held = nullptr;
    for (const auto& in : prog.instrs) {
      if (const auto* l = std::get_if<isa::Load>(&in); l && l->buffer == isa::kBufAcc) {
        if (l->hold) {
          held = l;
          continue;
        }
        unpaired += residual != (held != nullptr) || (l->add != residual);
        held = nullptr;
        if (gemms == 0) continue;  // the first block's own, at its start
        if (last >= 0 && gemms / (lp.k_tiles * lp.nb) == last / (lp.k_tiles * lp.nb)) {
          gaps.push_back(gemms - last);
        }
        last = gemms;
      } else if (std::holds_alternative<isa::Gemm>(in)) {
        unpaired += held != nullptr;
        ++gemms;
      }
    }
    EXPECT_EQ(unpaired, 0) << "a hold LOAD not right before its add";
    // Within a block: 3 gaps of 4 GEMMs per block but the last (whose next has no block).
    ASSERT_EQ(gaps.size(), size_t(3 * (lp.m_blocks - 1)));
    for (const int g : gaps) EXPECT_EQ(g, 4);
  }
  // The residual case's GEMM (100 x 24 x 16) as a 1x1 convolution, run against the contract.
  const host::ConvShape s{1, 10, 10, 24, 16, 1, 1, 1, 0};
  EXPECT_EQ(RunConv(cfg, s, true, true, OutFormat::kFp32, rng, /*residual=*/true),
            Lowering::kPointwise);
}

// With the DMA's bandwidth known, PlanLayer weighs a share of each plan's HBM bytes too, so among
// compute-bound plans the one that moves fewer wins: the fill term alone (∝ the block height)
// drove them to 2R-row blocks that re-read the weights once per block. On a 16x16 array with
// 2048-row buffers, 1024^3 takes 128-row blocks of 16 N-tiles (A read 4 times, the weights 8:
// 25.2 MB; 32-row blocks read the weights 32 times, 69 MB; measured 97.2% -> 99.1% of the array),
// and 784x256x512 98-row blocks (2.9 MB, not 4.6).
TEST_F(HostTest, ComputeBoundPlansReadFewerBytes) {
  MachineConfig big = Cfg(16, 16, 2048, 2048, 4096);
  big.dma_bytes_per_cycle = 32;  // as the workloads plan
  struct Case {
    int m, k, n;
    double max_mb;  // activation and weight bytes the program may read, in MB
  };
  for (const Case& c : {Case{1024, 1024, 1024, 26.0}, Case{784, 256, 512, 3.0}}) {
    SCOPED_TRACE(fmt::format("{}x{}x{}", c.m, c.k, c.n));
    const auto p = host::CompileGemm(big, c.m, c.k, c.n, {}, host::Init::kOverwrite,
                                     OutFormat::kFp32, false, 0);
    uint64_t bytes = 0;
    for (const auto& in : p.prog.instrs) {
      if (const auto* l = std::get_if<isa::Load>(&in);
          l && (l->buffer == isa::kBufAct || l->buffer == isa::kBufWgt)) {
        bytes += uint64_t(l->rows) * l->elems * 2;
      }
    }
    EXPECT_LE(double(bytes), c.max_mb * 1e6);
    const auto lp = host::PlanLayer(big, c.m, c.k, c.n, 16, 16);
    EXPECT_GT(lp.mb, 2 * big.r) << "the shortest blocks the estimate allows";
    std::printf("%dx%dx%d: blocks of %d rows x %d N-tiles, %.1f MB of A and weights\n", c.m, c.k,
                c.n, lp.mb, lp.nb, double(bytes) / 1e6);
  }
}

// Program order (Emitter::Later): a layer's load steps come min(D - 1, 2) steps ahead of its
// GEMMs, so the dispatcher hands the load module the next steps' LOADs (a windowed convolution's
// next block's bands) while the compute queue is full of a step's GEMMs, one per image; and a
// K-group's bands of whole images are one LOAD per channel chunk. Each program runs race-free
// (ExpectRun) and bit-exact against the contract.
TEST_F(HostTest, LoadsComeAheadOfTheirGemms) {
  tb::Rng rng(test::TestSeed());
  // The load steps (LOADs that push load->compute) before each GEMM that pops one.
  const auto check_lead = [](const std::vector<isa::Instr>& prog, const host::LayerPlan& lp) {
    const int lead = lp.boundary_wait ? 0 : std::clamp(lp.depth - 1, 0, 2);
    int steps = 0, total = 0, g = 0, wrong = 0;
    for (const auto& in : prog) {
      total += isa::ModuleOf(in) == isa::Module::kLoad && isa::DepsOf(in).push_next;
    }
    for (const auto& in : prog) {
      if (isa::ModuleOf(in) == isa::Module::kLoad && isa::DepsOf(in).push_next) ++steps;
      if (std::holds_alternative<isa::Gemm>(in) && isa::DepsOf(in).pop_prev) {
        wrong += steps != std::min(g + 1 + lead, total);
        ++g;
      }
    }
    EXPECT_EQ(wrong, 0) << "GEMMs whose load step and the next " << lead
                        << " are not just before them (" << g << " GEMMs, D = " << lp.depth << ")";
    return lead;
  };
  {
    const MachineConfig cfg = Cfg(4, 4, 256, 64, 256);
    const host::ConvShape s{16, 4, 4, 8, 8, 3, 3, 1, 1};
    const auto p = host::CompileConv(cfg, s, true, true, OutFormat::kBf16);
    ASSERT_TRUE(p.window) << p.host_im2col_reason;
    const int groups = p.plan.m_blocks * p.plan.n_blocks * p.plan.k_groups;
    ASSERT_GT(groups, 2);
    EXPECT_GT(check_lead(p.prog.instrs, p.plan), 0);
    int act_loads = 0;
    for (const auto& in : p.prog.instrs) {
      const auto* l = std::get_if<isa::Load>(&in);
      act_loads += l && l->buffer == isa::kBufAct;
    }
    // Chunks of kc = min(Cin, K-tile width) channels.
    EXPECT_EQ(act_loads, groups * ((s.cin + 3) / 4)) << "the bands of whole images, LOAD by LOAD";
    EXPECT_EQ(RunConv(cfg, s, true, true, OutFormat::kBf16, rng), Lowering::kWindow);
    std::printf("conv: %d K-groups of %d pixels, D = %d, %d activation LOADs\n", groups, p.plan.mb,
                p.plan.depth, act_loads);
  }
  for (const int k : {12, 40}) {
    const MachineConfig cfg = Cfg(4, 4, 64, 64, 64);
    const auto p =
        host::CompileGemm(cfg, 100, k, 12, {}, host::Init::kPreload, OutFormat::kFp32, false, 0);
    SCOPED_TRACE(fmt::format("GEMM 100 x {} x 12", k));
    const auto t = host::PlanTiling(cfg);
    EXPECT_GT(check_lead(p.prog.instrs, host::PlanLayer(cfg, 100, k, 12, t.kt_w, t.nt_w)), 0);
    RunGemm(cfg, 100, k, 12, host::Init::kPreload, OutFormat::kFp32, false, rng);
  }
}

// A 1×1 convolution with a stride and no padding (ResNet's downsampling shortcuts) is a GEMM on
// the NHWC input whose A rows are every stride-th pixel of every stride-th image row: per block
// and K-tile one activation LOAD per output row it spans (hbm_stride = stride · the pixel pitch),
// so the program reads the pixels it uses, each once per block, and no other (a window's bands
// hold whole image rows: stride² times the bytes). Bit-exact and race-free (RunConv) on every
// machine, with rows split across blocks and images.
TEST_F(HostTest, StridedPointwiseReadsOnlyItsPixels) {
  tb::Rng rng(test::TestSeed());
  for (const auto& cfg : Configs()) {
    for (const host::ConvShape& s : {host::ConvShape{2, 7, 6, 20, 9, 1, 1, 2, 0},
                                     host::ConvShape{1, 8, 8, 5, 40, 1, 1, 3, 0}}) {
      SCOPED_TRACE(fmt::format("H {} W {} stride {} on {}", s.h, s.w, s.stride, CfgName(cfg)));
      EXPECT_EQ(RunConv(cfg, s, true, false, OutFormat::kFp32, rng), Lowering::kPointwise);
      const auto p = host::CompileConv(cfg, s, true, false, OutFormat::kFp32);
      const auto t = host::PlanTiling(cfg);
      const auto lp = host::PlanLayer(cfg, s.M(), s.cin, s.cout, t.kt_w, t.nt_w);
      uint64_t rows = 0, loads = 0, wrong = 0;
      for (const auto& in : p.prog.instrs) {
        const auto* l = std::get_if<isa::Load>(&in);
        if (!l || l->buffer != isa::kBufAct) continue;
        ++loads;
        rows += l->rows;
        wrong += l->rows > s.OutW() || l->hbm_stride != s.stride * p.a.Pitch();
        for (int i = 0; i < l->rows; ++i) {  // the pixel each row reads: (y, x) multiples of s
          const uint64_t pixel =
              (l->hbm_addr + uint64_t(i) * l->hbm_stride - p.a.base) / p.a.Pitch() % p.a.rows;
          wrong += pixel % s.w % s.stride != 0 || pixel / s.w % s.h % s.stride != 0;
        }
      }
      EXPECT_EQ(wrong, 0u);
      EXPECT_EQ(rows, uint64_t(s.M()) * lp.k_tiles * lp.n_blocks);
      // A LOAD per output row of each block's K-tile (and one more where a block starts mid-row).
      EXPECT_LE(loads, uint64_t(lp.k_tiles) * lp.n_blocks * (s.n * s.OutH() + lp.m_blocks));
      if (HasFatalFailure()) return;
    }
  }
}

// One activation slot (a block's bands fill more than half the buffer, even one kernel row's or,
// strided, one tap's) with several blocks: the block-boundary tokens keep D > 1 (the load module
// runs ahead inside a block, and with bands per kernel row or tap inside each run) and the program
// is race-free (FindRace in ExpectRun) and the contract's convolution; the load module's measured
// lead is D. Before, such layers ran with D = 1.
TEST_F(HostTest, OneSlotWindowsKeepPrefetch) {
  tb::Rng rng(test::TestSeed());
  struct Case {
    MachineConfig cfg;
    host::ConvShape s;
    int k_groups;
  };
  const Case cases[] = {
      {Cfg(4, 4, 48, 64, 64), {1, 8, 8, 16, 8, 3, 3, 1, 1}, 3},
      {Cfg(4, 4, 48, 64, 64, num::Mode::kFtz, 8), {2, 6, 7, 16, 12, 3, 3, 1, 1}, 3},
      // Stride 2: bands per tap, each its phase (LayerPlan::phases), still more than half the
      // buffer for one output row.
      {Cfg(4, 8, 64, 32, 64), {1, 8, 9, 32, 8, 3, 3, 2, 1}, 9},
      {Cfg(8, 8, 100, 64, 64), {1, 9, 9, 96, 16, 3, 3, 2, 1}, 9},
      {Cfg(4, 4, 48, 64, 64), {1, 6, 8, 16, 8, 1, 3, 1, 1}, 1},  // 1x3: one run per block
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(CfgName(c.cfg));
    const auto p = host::CompileConv(c.cfg, c.s, true, true, OutFormat::kBf16);
    ASSERT_TRUE(p.window) << p.host_im2col_reason;
    EXPECT_EQ(p.plan.act_slots, 1);
    EXPECT_EQ(p.plan.k_groups, c.k_groups);
    EXPECT_EQ(p.plan.phases, c.s.stride > 1);
    EXPECT_GT(p.plan.m_blocks * p.plan.n_blocks, 1);
    EXPECT_TRUE(p.plan.boundary_wait);
    EXPECT_GT(p.plan.depth, 1);
    EXPECT_EQ(MeasuredDepth(p.prog.instrs), p.plan.depth);
    EXPECT_EQ(RunConv(c.cfg, c.s, true, true, OutFormat::kBf16, rng), Lowering::kWindow);
    if (HasFatalFailure()) return;
    std::printf("%s: %d blocks of %d pixels, D = %d\n", CfgName(c.cfg).c_str(),
                p.plan.m_blocks * p.plan.n_blocks, p.plan.mb, p.plan.depth);
  }
}

// Taller window blocks, fewer weight passes: PlanConvWindow weighs its plans by an estimate of
// their cycles (with the DMA's bandwidth: max(compute, bytes / (0.75 x bandwidth)), one slot's
// band loads added, as they wait for the GEMMs), and bands per kernel row (LayerPlan::k_groups:
// each kernel row's taps with their own, shorter bands) where a block's bands of every kernel row
// would leave room for a few output rows only. ResNet's last 3x3 layers on a 16x16 array with
// 2048-row buffers: on one channel two blocks of bands per kernel row (the weights twice, within
// the bandwidth) instead of four; with a quarter of that bandwidth one slot and one block (the
// weights once). The K order per output is the contract's (taps in order), so the bits are the
// direct convolution's; residual and bias included, race-free.
TEST_F(HostTest, WindowBlocksReadTheWeightsOnce) {
  tb::Rng rng(test::TestSeed());
  const host::ConvShape l4{1, 7, 7, 512, 512, 3, 3, 1, 1};
  for (const double bw : {32.0, 8.0}) {
    MachineConfig big = Cfg(16, 16, 2048, 2048, 4096);
    big.dma_bytes_per_cycle = bw;  // as the workloads plan (their Planned config)
    const auto p = host::CompileConv(big, l4, true, true, OutFormat::kBf16);
    ASSERT_TRUE(p.window) << p.host_im2col_reason;
    uint64_t wbytes = 0;
    for (const auto& in : p.prog.instrs) {
      if (const auto* l = std::get_if<isa::Load>(&in); l && l->buffer == isa::kBufWgt) {
        wbytes += uint64_t(l->rows) * l->elems * 2;
      }
    }
    const uint64_t once = uint64_t(l4.K()) * l4.cout * 2;
    if (bw == 32.0) {
      EXPECT_EQ(p.plan.act_slots, 2);
      EXPECT_EQ(p.plan.k_groups, 3);
      EXPECT_EQ(p.plan.m_blocks * p.plan.n_blocks, 2);  // four without the split
      EXPECT_EQ(wbytes, 2 * once);
    } else {
      EXPECT_EQ(p.plan.act_slots, 1);
      EXPECT_EQ(p.plan.m_blocks * p.plan.n_blocks, 1);
      EXPECT_EQ(wbytes, once);
    }
  }
  // Small machines: the split where it pays, the contract's bits (ExpectRun checks for races).
  struct Case {
    MachineConfig cfg;
    host::ConvShape s;
  };
  const Case cases[] = {
      {Cfg(4, 4, 96, 64, 64), {1, 6, 6, 16, 8, 3, 3, 1, 1}},
      {Cfg(4, 4, 96, 64, 64, num::Mode::kFtz), {2, 5, 6, 16, 8, 3, 3, 1, 1}},
      {Cfg(8, 8, 160, 64, 128), {1, 9, 9, 32, 16, 3, 3, 2, 1}},
      {Cfg(4, 8, 120, 32, 64), {1, 6, 7, 24, 8, 5, 3, 1, 2}},
  };
  int split = 0;
  for (const auto& c : cases) {
    const auto q = host::CompileConv(c.cfg, c.s, true, false, OutFormat::kFp32);
    ASSERT_TRUE(q.window) << q.host_im2col_reason;
    split += q.plan.k_groups > 1;
    EXPECT_EQ(RunConv(c.cfg, c.s, true, rng.Bit(), rng.Bit() ? OutFormat::kBf16 : OutFormat::kFp32,
                      rng, rng.Bit()),
              Lowering::kWindow);
    if (HasFatalFailure()) return;
    std::printf("%s: %d blocks of %d pixels, %d runs each, %d slots, D = %d\n",
                CfgName(c.cfg).c_str(), q.plan.m_blocks * q.plan.n_blocks, q.plan.mb,
                q.plan.k_groups, q.plan.act_slots, q.plan.depth);
  }
  EXPECT_GE(split, 3);
}

// Strided windows per tap (LayerPlan::phases): with a stride s each tap reads one phase of the
// input (rows ≡ a, columns ≡ c mod s), so a run per tap loads only that phase's pixels (one LOAD
// per phase row, hbm_stride = s · pitch) and reads them through windows of stride 1. ResNet-50's
// strided 3x3 layer of conv5_x on a 16x16 array with 2048-row buffers: at most two blocks, the
// weights read once per block (bands of whole rows, even per kernel row, held few output rows: 4
// blocks read them four times). On a machine whose buffer holds no kernel row of a wide input only
// the phases fit: bit-exact with ragged phases, padding, stride 3 and phases without a pixel (H =
// 1), race-free.
TEST_F(HostTest, StridedWindowsReadEachTapsPhase) {
  tb::Rng rng(test::TestSeed());
  {
    MachineConfig big = Cfg(16, 16, 2048, 2048, 4096);
    big.dma_bytes_per_cycle = 32;  // as the workloads plan
    const host::ConvShape s{1, 14, 14, 512, 512, 3, 3, 2, 1};
    const auto p = host::CompileConv(big, s, true, true, OutFormat::kBf16);
    ASSERT_TRUE(p.window) << p.host_im2col_reason;
    EXPECT_TRUE(p.plan.phases);
    EXPECT_EQ(p.plan.k_groups, 9);
    EXPECT_LE(p.plan.m_blocks, 2);
    uint64_t wbytes = 0, pixels = 0, wrong = 0;
    for (const auto& in : p.prog.instrs) {
      const auto* l = std::get_if<isa::Load>(&in);
      if (l && l->buffer == isa::kBufWgt) wbytes += uint64_t(l->rows) * l->elems * 2;
      if (!l || l->buffer != isa::kBufAct) continue;
      pixels += l->rows;
      wrong += l->hbm_stride != 2 * p.a.Pitch() || l->rows > (s.w + 1) / 2;
    }
    EXPECT_EQ(wbytes, uint64_t(s.K()) * s.cout * 2 * p.plan.m_blocks);
    EXPECT_EQ(wrong, 0u);
    // Each tap's phase rows hold at most its block's output rows of PW = OW pixels.
    const int chunks = 512 / 16;
    EXPECT_LE(pixels, uint64_t(9) * s.OutH() * s.OutW() * chunks * p.plan.n_blocks);
    std::printf("conv5_x strided 3x3: %d block(s), %llu pixel rows loaded, D = %d\n",
                p.plan.m_blocks * p.plan.n_blocks, static_cast<unsigned long long>(pixels),
                p.plan.depth);
  }
  const MachineConfig small = Cfg(4, 4, 24, 64, 64);
  const host::ConvShape shapes[] = {
      {1, 1, 30, 4, 5, 3, 3, 2, 1},   // H = 1: the taps of kernel rows 0 and 2 read no pixel
      {2, 3, 29, 4, 6, 3, 3, 2, 1},   // odd width: phases of 15 and 14 pixels
      {1, 4, 31, 3, 4, 3, 3, 3, 2},   // stride 3, pad 2
      {1, 5, 22, 8, 9, 2, 3, 2, 0}};  // 2x3, two chunks, no padding
  for (const auto& sh : shapes) {
    SCOPED_TRACE(fmt::format("N {} H {} W {} Cin {} k {}x{} stride {} pad {}", sh.n, sh.h, sh.w,
                             sh.cin, sh.kh, sh.kw, sh.stride, sh.pad));
    const auto p = host::CompileConv(small, sh, true, false, OutFormat::kFp32);
    ASSERT_TRUE(p.window) << p.host_im2col_reason;
    EXPECT_TRUE(p.plan.phases);
    EXPECT_EQ(RunConv(small, sh, rng.Bit(), rng.Bit(),
                      rng.Bit() ? OutFormat::kBf16 : OutFormat::kFp32, rng, rng.Bit()),
              Lowering::kWindow);
    if (HasFatalFailure()) return;
  }
}

void ExpectThrows(const std::function<void()>& f, const std::string& word) {
  try {
    f();
    ADD_FAILURE() << "no std::invalid_argument (expected one naming '" << word << "')";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos)
        << "message '" << e.what() << "' does not name '" << word << "'";
  }
}

TEST_F(HostTest, PrefetchDepthIsTheLargestRaceFreeOne) {
  // D = max(1, min(S, A, QueueDepth, 255)) (host.h); `bound` says which term decides, and for the
  // slots (S or A), D + 1 must be racy while D is not.
  // Sa activation slots, blocks of mb rows × nb N-tiles (host.h). `run`: also run it on the model
  // (the large one is only compiled and race-checked).
  enum Bound { kWgt, kAct, kQueue, kNone };
  struct Case {
    MachineConfig cfg;
    int m, k, n;
    int slots, depth;
    Bound bound;
    int sa, mb, nb;
    bool run = true;
  };
  const auto big = Cfg(16, 16, 2048, 2048, 4096);
  const Case cases[] = {
      // 16 weight slots, 4 N-tiles per block: A = 5 (M fits a 2-slot slot: two slots).
      {Cfg(4, 4, 64, 64, 64), 8, 16, 64, 16, 5, kAct, 2, 8, 4},
      // 3 weight slots (WgtDepth 12 = 3 tiles of 4 rows).
      {Cfg(4, 4, 64, 12, 64), 8, 16, 64, 3, 3, kWgt, 2, 8, 4},
      // The dispatch queue caps D.
      {Cfg(4, 4, 64, 64, 64, num::Mode::kIeee, 3), 8, 16, 64, 16, 3, kQueue, 2, 8, 4},
      // 1-row activation slots (ActDepth 2): blocks of 1 row × 2 N-tiles, A = 3.
      {Cfg(4, 4, 2, 64, 64), 3, 8, 8, 16, 3, kAct, 2, 1, 2},
      // One activation slot (ActDepth 1): D = 1.
      {Cfg(4, 4, 1, 64, 64), 3, 8, 8, 16, 1, kAct, 1, 1, 2},
      // 1-row slots (ActDepth 3): 3 slots of 1 row (more D, same mb), A = 1 + 2·2 = 5.
      {Cfg(4, 4, 3, 64, 64), 3, 8, 8, 16, 5, kAct, 3, 1, 2},
      // A ragged last N-group: 5 N-tiles in groups of 3 and 2 (balanced: at most 3 fit),
      // K-groups of 3, 3, 2, 2 N-tiles, a 2 in between: A = 3.
      {Cfg(4, 4, 64, 64, 24), 4, 8, 20, 16, 3, kAct, 2, 4, 3},
      // 4 N-tiles with at most 3 per block: balanced groups of 2 and 2, A = 3 (not 3, 1: A = 2).
      {Cfg(4, 4, 64, 64, 24), 4, 8, 16, 16, 3, kAct, 2, 4, 2},
      // Only two K-groups: no activation bound, D = S (more than the 4 GEMMs).
      {Cfg(4, 4, 64, 64, 24), 4, 4, 16, 16, 16, kNone, 2, 4, 2},
      // M = 32 > ActDepth / 2: 2 slots give 8 × 4 blocks (A = 5), 3 slots 5 × 4 (A = 1 + 2·4 = 9).
      {Cfg(4, 4, 16, 256, 64), 32, 16, 32, 64, 9, kAct, 3, 5, 4},
      // ... and with QueueDepth 5 both reach D = 5: the taller blocks (2 slots).
      {Cfg(4, 4, 16, 256, 64, num::Mode::kIeee, 5), 32, 16, 32, 64, 5, kAct, 2, 8, 4},
      // A weight-bound GEMM on a 16×16 array (M = 1): 64 slots, D = QueueDepth = 32.
      {big, 1, 64, 512, 64, 32, kQueue, 2, 1, 32},
      {Cfg(16, 16, 2048, 2048, 4096, num::Mode::kIeee, 100), 1, 64, 512, 64, 33, kAct, 2, 1, 32},
      // The 16×16 default machine, 4096×256×64: 3 slots of 682 rows, blocks of 672 × 2 N-tiles
      // (3 fit; balanced 2 + 2), A = 1 + 2·2 = 5 (two slots: 1024 × 2, A = 3).
      {big, 4096, 256, 64, 64, 5, kAct, 3, 672, 2, false},
  };
  tb::Rng rng(test::TestSeed());
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("GEMM {}x{}x{} on {}", c.m, c.k, c.n, CfgName(c.cfg)));
    const auto t = host::PlanTiling(c.cfg);
    EXPECT_EQ(t.wgt_slots, c.slots);
    const auto lp = host::PlanLayer(c.cfg, c.m, c.k, c.n, t.kt_w, t.nt_w);
    EXPECT_EQ(lp.depth, c.depth);
    EXPECT_EQ(lp.act_slots, c.sa);
    EXPECT_EQ(lp.mb, c.mb);
    EXPECT_EQ(lp.nb, c.nb);
    if (c.bound == kAct) {
      EXPECT_EQ(lp.act_bound, c.depth);
    }
    const auto p = host::CompileGemm(c.cfg, c.m, c.k, c.n, host::Init::kOverwrite);
    EXPECT_EQ(uint64_t(MeasuredDepth(p.prog.instrs)),
              std::min(uint64_t(c.depth), p.prog.stats.gemms));
    ASSERT_EQ(FindRace(p.prog.instrs), "");
    // WithDepth rebuilds the compiler's own tokens for D, and D + 1 races when a slot bounds D.
    ASSERT_TRUE(WithDepth(p.prog.instrs, uint64_t(c.depth)) == p.prog.instrs);
    if (c.bound == kWgt || c.bound == kAct) {
      EXPECT_NE(FindRace(WithDepth(p.prog.instrs, uint64_t(c.depth) + 1)), "")
          << "D + 1 should be racy";
    }
    if (!c.run) continue;
    RunGemm(c.cfg, c.m, c.k, c.n, host::Init::kPreload, OutFormat::kFp32, false, rng);
    if (HasFatalFailure()) return;
  }
}

TEST_F(HostTest, PrefetchDepthOfLargeShapes) {
  // Plans only (the programs are large). 16×16 array, 2048-row buffers: 64 weight slots; a
  // memory-bound GEMM (M = 1) and M = 64 reach D = QueueDepth = 32, while 1024³ (M fits a 2-slot
  // slot: blocks of 1024 rows × 2 N-tiles) is held to D = 3 by the two activation slots. M > 1024
  // may use 3 slots: 4096×256×64 and the 56×56 3×3 convolution (M = 3136, K = 576, N = 64) run
  // blocks of 672 rows × 2 N-tiles (D = 5); M = 4096 with N = 1024 keeps 2 slots (3 slots: groups
  // of 3 N-tiles and a last one of 1, D = 3, no gain). 4×4 array, 64-row buffers, QueueDepth 4:
  // 16 slots; M = 1 reaches D = 4; M > 32 with 2 slots would be 32 × 1 blocks (D = 2), 3 slots of
  // 16 × 2 reach D = QueueDepth = 4.
  struct Case {
    MachineConfig cfg;
    int m, k, n, slots, depth, sa, mb, nb;
  };
  const auto big = Cfg(16, 16, 2048, 2048, 4096);
  const auto small = Cfg(4, 4, 64, 64, 64, num::Mode::kIeee, 4);
  const Case cases[] = {
      {big, 1, 4096, 4096, 64, 32, 2, 1, 256},    {big, 1024, 1024, 1024, 64, 3, 2, 1024, 2},
      {big, 64, 1024, 1024, 64, 32, 2, 64, 32},   {big, 256, 256, 256, 64, 9, 2, 256, 8},
      {big, 4096, 256, 64, 64, 5, 3, 672, 2},     {big, 3136, 576, 64, 64, 5, 3, 672, 2},
      {big, 4096, 1024, 1024, 64, 3, 2, 1024, 2}, {big, 1025, 64, 64, 64, 5, 3, 672, 2},
      {small, 1, 4096, 4096, 16, 4, 2, 1, 32},    {small, 1024, 1024, 1024, 16, 4, 3, 16, 2},
      {small, 64, 1024, 1024, 16, 4, 3, 16, 2}};
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("GEMM {}x{}x{} on {}", c.m, c.k, c.n, CfgName(c.cfg)));
    const auto t = host::PlanTiling(c.cfg);
    EXPECT_EQ(t.wgt_slots, c.slots);
    const auto lp = host::PlanLayer(c.cfg, c.m, c.k, c.n, t.kt_w, t.nt_w);
    EXPECT_EQ(lp.depth, c.depth);
    EXPECT_EQ(lp.act_slots, c.sa);
    EXPECT_EQ(lp.mb, c.mb);
    EXPECT_EQ(lp.nb, c.nb);
  }
}

// With the DMA's bandwidth known, blocks whose whole A fits a slot run N-tile-major when a weight
// tile has at least 4 KB: the same results, race-free at the planned D, and D + 1 racy where the
// activation slots bound it. Smaller tiles keep K-tile-major blocks.
TEST_F(HostTest, NTileMajorBlocksWithKnownBandwidth) {
  tb::Rng rng(test::TestSeed());
  int n_outer = 0, act_bound = 0;
  for (auto cfg : Configs()) {  // tiles of at most 16 rows × 32 bytes
    cfg.dma_bytes_per_cycle = 256;
    const auto t = host::PlanTiling(cfg);
    EXPECT_FALSE(host::PlanLayer(cfg, 2, 4 * t.kt_w, 4 * cfg.c, t.kt_w, t.nt_w).n_outer)
        << CfgName(cfg);
  }
  {
    // Three N-groups of 2 tiles over 2 K-tiles, one M-block: D = 2·(1·2 + 1) = 6 by the slots.
    auto cfg = Cfg(32, 64, 1024, 4096, 64);
    cfg.dma_bytes_per_cycle = 256;
    const auto t = host::PlanTiling(cfg);
    const auto lp = host::PlanLayer(cfg, 16, 64, 384, t.kt_w, t.nt_w);
    ASSERT_TRUE(lp.n_outer);
    EXPECT_EQ(lp.n_blocks, 3);
    EXPECT_EQ(lp.act_bound, 6);
    EXPECT_EQ(lp.depth, 6);
    const auto p = host::CompileGemm(cfg, 16, 64, 384, host::Init::kOverwrite);
    ASSERT_EQ(FindRace(p.prog.instrs), "");
    ASSERT_TRUE(WithDepth(p.prog.instrs, 6) == p.prog.instrs);
    EXPECT_NE(FindRace(WithDepth(p.prog.instrs, 7)), "") << "D + 1 should be racy";
    RunGemm(cfg, 16, 64, 384, host::Init::kPreload, OutFormat::kFp32, true, rng);
  }
  for (auto cfg : {Cfg(32, 64, 1024, 4096, 64), Cfg(64, 64, 256, 128, 256),
                   Cfg(32, 128, 128, 64, 256, num::Mode::kFtz), Cfg(128, 32, 512, 256, 512),
                   Cfg(64, 64, 512, 128, 128, num::Mode::kIeee, 4)}) {
    cfg.dma_bytes_per_cycle = 32.0 * rng.Range(1, 8);
    const auto t = host::PlanTiling(cfg);
    for (int i = 0; i < 4; ++i) {
      // Mostly shapes whose A fits a slot in blocks of 2 or more N-tiles.
      const int kt = rng.Range(2, 4), k = rng.Range((kt - 1) * t.kt_w + 1, kt * t.kt_w);
      const int fit = std::min(cfg.act_depth / 2 / kt, t.acc_half_rows / 2);
      const int m = rng.Range(1, std::max(1, fit) + 2), n = rng.Range(cfg.c + 1, 4 * cfg.c);
      const auto lp = host::PlanLayer(cfg, m, k, n, t.kt_w, t.nt_w);
      SCOPED_TRACE(fmt::format("GEMM {}x{}x{} on {}", m, k, n, CfgName(cfg)));
      if (lp.n_outer) {
        ++n_outer;
        EXPECT_LE(lp.mb * lp.k_tiles, lp.act_slot_rows);
        const auto p = host::CompileGemm(cfg, m, k, n, host::Init::kOverwrite);
        ASSERT_EQ(FindRace(p.prog.instrs), "");
        ASSERT_TRUE(WithDepth(p.prog.instrs, uint64_t(lp.depth)) == p.prog.instrs);
        if (lp.act_bound == lp.depth && uint64_t(lp.depth) < p.prog.stats.gemms) {
          ++act_bound;
          EXPECT_NE(FindRace(WithDepth(p.prog.instrs, uint64_t(lp.depth) + 1)), "")
              << "D + 1 should be racy";
        }
      }
      const auto init = host::Init(rng.Range(0, 2));
      const auto out =
          init == host::Init::kAccumulate || rng.Bit() ? OutFormat::kFp32 : OutFormat::kBf16;
      RunGemm(cfg, m, k, n, init, out, rng.Bit(), rng);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GE(n_outer, 8);
  std::printf("%d random N-tile-major plans, %d bound by the activation slots\n", n_outer,
              act_bound);
}

TEST_F(HostTest, RaceCheckFindsAMissingToken) {
  // The checker the other tests rely on: dropping one wait makes a compiled program racy.
  const auto cfg = Cfg(4, 4, 6, 8, 12);
  const auto p = host::CompileGemm(cfg, 13, 9, 7, host::Init::kPreload);
  ASSERT_EQ(FindRace(p.prog.instrs), "");
  for (const int kind : {0, 1, 2}) {  // a LOAD's, a GEMM's, an accumulator LOAD's pop_next
    auto instrs = p.prog.instrs;
    bool dropped = false;
    for (auto& in : instrs) {
      const auto m = isa::ModuleOf(in);
      const bool is_acc_load = std::holds_alternative<isa::Load>(in) && m == isa::Module::kCompute;
      const bool match = (kind == 0 && m == isa::Module::kLoad) ||
                         (kind == 1 && std::holds_alternative<isa::Gemm>(in)) ||
                         (kind == 2 && is_acc_load);
      if (match && isa::DepsOf(in).pop_next) {
        isa::DepsOf(in).pop_next = false;
        dropped = true;
        break;
      }
    }
    ASSERT_EQ(dropped, kind != 1) << "kind " << kind;  // preload: GEMMs never wait on stores
    if (dropped) {
      EXPECT_NE(FindRace(instrs), "") << "kind " << kind;
    }
  }
}

// Elementwise programs on the vector unit (host::CompileVector): every op that does not read its
// destination, with each kind of B, one and several stages, on shapes with ragged column tiles
// and several row blocks (a small vector memory), the data drawn with specials. The output must
// be the stages of isa::ApplyVectorOp applied element by element in order (the contract's
// operation: what the compiler moves must not change what is computed), as host::VectorOnHost
// computes them too, and the counters the program's: every instruction is the store module's.
TEST_F(HostTest, VectorProgramsApplyTheirStagesElementwise) {
  tb::Rng rng(test::TestSeed());
  for (const int depth : {3, 7, 64}) {
    MachineConfig cfg = Cfg(3, 5, 8, 8, 8);
    cfg.vmem_depth = depth;
    for (int trial = 0; trial < int(test::Scaled(24)); ++trial) {
      const int m = rng.Range(1, 20), n = rng.Range(1, 13);
      const auto kind = host::VectorB(rng.Range(0, 3));
      std::vector<host::VectorStage> stages;
      for (int k = rng.Range(1, 3); k > 0; --k) {
        host::VectorStage st;
        do {
          st.op = isa::VectorOp(rng.Range(0, isa::kNumVectorOps - 1));
        } while (isa::kVectorOps[size_t(st.op)].reads_d);
        st.b = isa::kVectorOps[size_t(st.op)].reads_b ? kind : host::VectorB::kNone;
        if (st.b == host::VectorB::kNone && rng.Bit()) st.b = host::VectorB::kScalar;
        if (st.b == host::VectorB::kScalar)
          st.scalar = RandomFp32(rng, 1, 1, tb::GemmData::kSpecials)[0];
        stages.push_back(st);
      }
      for (const num::Mode mode : {num::Mode::kIeee, num::Mode::kFtz}) {
        cfg.mode = mode;
        SCOPED_TRACE(fmt::format("VmemDepth {}, {}x{}, B kind {}, {} stages, {}", depth, m, n,
                                 int(kind), stages.size(), num::ModeName(mode)));
        const host::VectorProgram p = host::CompileVector(cfg, m, n, stages);
        Machine mach(cfg);
        const auto a = RandomFp32(rng, m, n, tb::GemmData::kSpecials);
        const int b_rows = kind == host::VectorB::kRow ? 1 : m;
        const auto b = RandomFp32(rng, b_rows, n, tb::GemmData::kSpecials);
        host::WriteMatrix(mach, p.a, a);
        if (p.b.rows > 0) host::WriteMatrix(mach, p.b, b);
        const isa::RunResult r = host::Run(mach, p.prog);
        ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
        std::vector<uint32_t> want = a;
        for (const host::VectorStage& st : stages) {
          for (int i = 0; i < m; ++i) {
            for (int j = 0; j < n; ++j) {
              const uint32_t bv = st.b == host::VectorB::kScalar   ? st.scalar
                                  : st.b == host::VectorB::kRow    ? b[size_t(j)]
                                  : st.b == host::VectorB::kTensor ? b[size_t(i) * n + j]
                                                                   : 0u;
              uint32_t& x = want[size_t(i) * n + j];
              x = isa::ApplyVectorOp(st.op, x, bv, 0, mode);
            }
          }
        }
        ExpectSame(want, host::ReadMatrixFp32(mach, p.out), n, "out");
        // The host's computation of the same stages (a machine without the vector unit).
        ExpectSame(want, host::VectorOnHost(m, n, stages, a, b, mode), n, "VectorOnHost");
        EXPECT_EQ(r.counters.per_module[0], 0u);
        EXPECT_EQ(r.counters.per_module[1], 0u);
        EXPECT_EQ(r.counters.per_module[2],
                  p.prog.stats.vector_loads + p.prog.stats.vops + p.prog.stats.stores);
        EXPECT_EQ(r.counters.hbm_bytes_written, p.prog.stats.bytes_written);
        EXPECT_EQ(p.prog.stats.bytes_written, uint64_t(m) * n * 4);
      }
    }
  }
  {
    // A last relu is the STORE's in IEEE mode (no VOP for it), a VOP in FTZ mode.
    MachineConfig cfg = Cfg(3, 5, 8, 8, 8);
    cfg.vmem_depth = 64;
    const std::vector<host::VectorStage> add_relu = {{isa::VectorOp::kAdd, host::VectorB::kRow},
                                                     {isa::VectorOp::kRelu}};
    EXPECT_EQ(host::CompileVector(cfg, 4, 4, add_relu).prog.stats.vops, 1u);
    cfg.mode = num::Mode::kFtz;
    EXPECT_EQ(host::CompileVector(cfg, 4, 4, add_relu).prog.stats.vops, 2u);
  }
  // What it refuses.
  MachineConfig none = Cfg(3, 5, 8, 8, 8);
  const std::vector<host::VectorStage> relu = {{isa::VectorOp::kRelu}};
  EXPECT_THROW(host::CompileVector(none, 4, 4, relu), std::invalid_argument);  // no vector unit
  MachineConfig one = none;
  one.vmem_depth = 1;
  EXPECT_THROW(host::CompileVector(one, 4, 4, {{isa::VectorOp::kAdd, host::VectorB::kRow}}),
               std::invalid_argument);  // no room for a block beside B's row
  EXPECT_NO_THROW(host::CompileVector(one, 4, 4, relu));
  EXPECT_THROW(host::CompileVector(one, 0, 4, relu), std::invalid_argument);
  EXPECT_THROW(host::CompileVector(one, 4, 4, {}), std::invalid_argument);
  EXPECT_THROW(host::CompileVector(one, 4, 4, {{isa::VectorOp::kMac, host::VectorB::kScalar}}),
               std::invalid_argument);  // reads its destination
  MachineConfig two = none;
  two.vmem_depth = 8;
  EXPECT_THROW(host::CompileVector(two, 4, 4,
                                   {{isa::VectorOp::kAdd, host::VectorB::kRow},
                                    {isa::VectorOp::kMul, host::VectorB::kTensor}}),
               std::invalid_argument);  // B a row and a tensor
}

// fp32 values and their bit patterns.
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float value(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The contract's vector pooling (host.h, CompilePool), written out per output pixel: max from
// -inf, the average from -0 in window order and divided by the 5-step sequence.
std::vector<uint32_t> PoolReference(const host::PoolShape& s, const std::vector<uint32_t>& in,
                                    num::Mode mode) {
  using isa::VectorOp;
  const auto op = [&](VectorOp o, uint32_t a, uint32_t b, uint32_t d = 0) {
    return isa::ApplyVectorOp(o, a, b, d, mode);
  };
  std::vector<uint32_t> out(size_t(s.n) * s.oh * s.ow * s.c);
  for (int img = 0; img < s.n; ++img) {
    for (int oh = 0; oh < s.oh; ++oh) {
      for (int ow = 0; ow < s.ow; ++ow) {
        for (int ch = 0; ch < s.c; ++ch) {
          uint32_t acc = s.max ? 0xFF800000u : 0x80000000u;
          int taps = 0, padded = 0;
          for (int i = 0; i < s.kh; ++i) {
            for (int j = 0; j < s.kw; ++j) {
              const int ih = oh * s.sh - s.pt + i * s.dh, iw = ow * s.sw - s.pl + j * s.dw;
              padded += ih >= -s.pt && ih < s.h + s.pb && iw >= -s.pl && iw < s.w + s.pr;
              if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
              ++taps;
              const uint32_t x = in[((size_t(img) * s.h + ih) * s.w + iw) * s.c + ch];
              acc = op(s.max ? VectorOp::kMax : VectorOp::kAdd, x, acc);
            }
          }
          if (!s.max) {
            const int n = s.count_include_pad ? padded : taps;
            if (taps == 0) {
              acc = 0;
            } else {
              const uint32_t y = bits(1.0f / float(n)), minus_n = bits(-float(n));
              const uint32_t q0 = op(VectorOp::kMul, acc, y);
              uint32_t r = op(VectorOp::kMac, q0, minus_n, acc);
              const uint32_t nonzero =
                  op(VectorOp::kGt, op(VectorOp::kLeakyRelu, r, 0xBF800000u), 0);
              r = op(VectorOp::kSelect, r, 0x80000000u, nonzero);
              acc = op(VectorOp::kMac, r, y, q0);
            }
          }
          out[((size_t(img) * s.oh + oh) * s.ow + ow) * s.c + ch] = acc;
        }
      }
    }
  }
  return out;
}

// CompilePool on the golden model against the contract's definition: random shapes (pads on
// each side, strides, dilations, outputs as floor and ceil mode give them), max and average
// (with and without count_include_pad), channels across tiles, vector memories from the
// smallest that holds a pixel (tiles of one pixel, taps in chunks) to ones that hold many rows.
TEST_F(HostTest, PoolProgramsComputeTheContractsPooling) {
  tb::Rng rng(test::TestSeed());
  for (int trial = 0; trial < int(test::Scaled(60)); ++trial) {
    host::PoolShape s;
    s.max = rng.Bit();
    s.count_include_pad = !s.max && rng.Bit();
    s.n = rng.Range(1, 2), s.c = rng.Range(1, 12);
    s.kh = rng.Range(1, 4), s.kw = rng.Range(1, 4);
    s.sh = rng.Range(1, 3), s.sw = rng.Range(1, 3);
    s.dh = rng.Range(1, 2), s.dw = rng.Range(1, 2);
    s.pt = rng.Range(0, s.kh - 1), s.pb = rng.Range(0, s.kh - 1);
    s.pl = rng.Range(0, s.kw - 1), s.pr = rng.Range(0, s.kw - 1);
    const int ext_h = (s.kh - 1) * s.dh + 1, ext_w = (s.kw - 1) * s.dw + 1;
    s.h = rng.Range(std::max(1, ext_h - s.pt - s.pb), 9);
    s.w = rng.Range(std::max(1, ext_w - s.pl - s.pr), 9);
    const bool ceil = rng.Bit();
    const auto outs = [&](int in, int pb, int pe, int ext, int st) {
      const int span = in + pb + pe - ext;
      int o = (ceil ? (span + st - 1) / st : span / st) + 1;
      if (ceil && (o - 1) * st >= in + pb) --o;
      return o;
    };
    s.oh = outs(s.h, s.pt, s.pb, ext_h, s.sh), s.ow = outs(s.w, s.pl, s.pr, ext_w, s.sw);
    if (rng.Range(0, 5) == 0) {  // a global pool: one window over the whole image
      s = host::PoolShape{s.n, rng.Range(1, 8), rng.Range(1, 8), s.c};
      s.kh = s.h, s.kw = s.w, s.max = rng.Bit();
    }
    const int kout = s.max ? 1 : 3;
    const int depth = std::vector<int>{kout + 2, kout + 5, 24, 400}[size_t(rng.Range(0, 3))];
    MachineConfig cfg = Cfg(3, 5, 8, 8, 8, rng.Bit() ? num::Mode::kIeee : num::Mode::kFtz);
    cfg.vmem_depth = depth;
    SCOPED_TRACE(fmt::format(
        "{} pool{}, {}x{}x{}x{} -> {}x{}, kernel {}x{}, strides {},{}, dilations {},{}, pads "
        "{},{},{},{}, VmemDepth {}, {}",
        s.max ? "max" : "average", s.count_include_pad ? " (count_include_pad)" : "", s.n, s.h, s.w,
        s.c, s.oh, s.ow, s.kh, s.kw, s.sh, s.sw, s.dh, s.dw, s.pt, s.pl, s.pb, s.pr, depth,
        num::ModeName(cfg.mode)));
    const host::PoolProgram p = host::CompilePool(cfg, s);
    Machine mach(cfg);
    auto in = RandomFp32(rng, s.n * s.h * s.w, s.c, tb::GemmData::kSpecials);
    // Infinite sums and NaNs (the division's NaN remainder), on every other trial.
    for (int k = trial % 2 ? 3 : 0; k > 0; --k) {
      in[size_t(rng.Range(0, int(in.size()) - 1))] =
          k == 1 ? 0x7FC00001u : 0x7F800000u | (uint32_t(rng.Bit()) << 31);
    }
    host::WriteMatrix(mach, p.in, in);
    const isa::RunResult r = host::Run(mach, p.prog);
    ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
    EXPECT_EQ(r.unwritten_bytes_read, 0u);
    ExpectSame(PoolReference(s, in, cfg.mode), host::ReadMatrixFp32(mach, p.out), s.c, "out");
    EXPECT_EQ(r.counters.per_module[2],
              p.prog.stats.vector_loads + p.prog.stats.vops + p.prog.stats.stores);
    EXPECT_EQ(p.prog.stats.bytes_written, uint64_t(s.n) * s.oh * s.ow * s.c * 4);
    EXPECT_EQ(r.counters.hbm_bytes_written, p.prog.stats.bytes_written);
  }
  {
    // The program's size: 3x3 max pooling, stride 2, pads 1, of one 8x8 image. With 400 rows
    // the whole image is one tile in band mode: the constant row (1 LOAD, 2 VOPs), the tile's
    // input rows in one LOAD, one VOP per tap, one STORE. The centre tap lies inside the input
    // for every output, so it comes first as max(x, x), in place of the initial value (the
    // average keeps its initial value: its sum has an order).
    MachineConfig cfg = Cfg(3, 5, 8, 8, 8);
    cfg.vmem_depth = 400;
    host::PoolShape s{1, 8, 8, 5, 3, 3, 2, 2};
    s.pt = s.pl = s.pb = s.pr = 1;
    s.oh = s.ow = 4;
    const host::PoolProgram p = host::CompilePool(cfg, s);
    EXPECT_TRUE(p.band);
    EXPECT_EQ(p.tile_h, 4);
    EXPECT_EQ(p.prog.stats.vector_loads, 2u);
    EXPECT_EQ(p.prog.stats.vops, 2u + 9);
    EXPECT_EQ(p.prog.stats.stores, 1u);
    // The average: 6 VOPs per rectangle of equal divisors, 2 x 2 of them (the top row and left
    // column have 2 taps a side, the others 3).
    s.max = false;
    const host::PoolProgram a = host::CompilePool(cfg, s);
    EXPECT_EQ(a.tile_h, 4);
    EXPECT_EQ(a.prog.stats.vops, 2u + 1 + 9 + 4 * 6);
    // 20 rows do not hold an output row with its band (4 + 3 x 8): segments, one output row a
    // tile (4 + 9 rows), a LOAD per kernel row inside the image (2 for the top row, else 3).
    cfg.vmem_depth = 20;
    s.max = true;
    const host::PoolProgram seg = host::CompilePool(cfg, s);
    EXPECT_FALSE(seg.band);
    EXPECT_EQ(seg.tile_h, 1);
    EXPECT_EQ(seg.prog.stats.vector_loads, 1u + 2 + 3 * 3);
    EXPECT_EQ(seg.prog.stats.vops, 2u + (1 + 6) + 3 * (1 + 9));
    EXPECT_EQ(seg.prog.stats.stores, 4u);
    // Three images, 2x2 windows with stride 2: stacked into one 12-row image, one tile.
    cfg.vmem_depth = 400;
    host::PoolShape st{3, 4, 4, 5, 2, 2, 2, 2};
    st.oh = st.ow = 2;
    const host::PoolProgram stk = host::CompilePool(cfg, st);
    EXPECT_EQ(stk.tile_h, 6);
    EXPECT_EQ(stk.prog.stats.vector_loads, 2u);
    EXPECT_EQ(stk.prog.stats.vops, 2u + 4);
    // Windows of -0 average to -0 (the sum starts from -0, the additive identity), max to -0.
    for (const host::PoolProgram* prog : {&p, &a}) {
      Machine mach(cfg);
      host::WriteMatrix(mach, prog->in, std::vector<uint32_t>(8 * 8 * 5, 0x80000000u));
      ASSERT_TRUE(host::Run(mach, prog->prog).ok());
      for (const uint32_t v : host::ReadMatrixFp32(mach, prog->out)) ASSERT_EQ(v, 0x80000000u);
    }
  }
  // What it refuses.
  MachineConfig cfg = Cfg(3, 5, 8, 8, 8);
  host::PoolShape s{1, 4, 4, 3, 2, 2, 2, 2};
  s.oh = s.ow = 2;
  ExpectThrows([&] { host::CompilePool(cfg, s); }, "no vector unit");
  cfg.vmem_depth = 2;
  ExpectThrows([&] { host::CompilePool(cfg, s); }, "at least 3 rows");
  cfg.vmem_depth = 4;
  s.max = false;
  ExpectThrows([&] { host::CompilePool(cfg, s); }, "at least 5 rows");
  cfg.vmem_depth = 64;
  s.oh = 3;
  ExpectThrows([&] { host::CompilePool(cfg, s); }, "starts past the padded input");
  s.oh = 2, s.pt = -1;
  ExpectThrows([&] { host::CompilePool(cfg, s); }, "negative pads");
  s.pt = 0, s.kw = 0;
  ExpectThrows([&] { host::CompilePool(cfg, s); }, "kw = 0");
}

// Pools whose images stack (a global pool, 2x2 windows of stride 2) over C = k·c channels are
// pools of N·k images of c channels: one tile and one VOP a tap span many channel tiles. Every
// LOAD and STORE stays within a channel tile (host::Link maps accesses tile by tile), the result
// is the contract's, and channels that are not whole tiles, or a depthwise convolution, do not
// stack.
TEST_F(HostTest, PoolsStackChannelTiles) {
  tb::Rng rng(test::TestSeed());
  MachineConfig cfg = Cfg(3, 5, 8, 8, 8);
  // Every LOAD (STORE) of `m` in the program reads (writes) rows of one tile.
  const auto within_tiles = [](const host::Compiled& prog, const host::TiledMatrix& m) {
    int count = 0;
    for (const auto& in : prog.instrs) {
      uint64_t addr = 0, rows = 0;
      if (const auto* l = std::get_if<isa::Load>(&in)) addr = l->hbm_addr, rows = l->rows;
      if (const auto* st = std::get_if<isa::Store>(&in)) addr = st->hbm_addr, rows = st->rows;
      if (rows == 0 || addr < m.base || addr >= m.base + m.Bytes()) continue;
      const uint64_t row = (addr - m.base) / m.Pitch();
      EXPECT_LE(row % uint64_t(m.rows) + rows, uint64_t(m.rows)) << "at row " << row;
      ++count;
    }
    return count;
  };
  struct Case {
    host::PoolShape s;
    int depth;
    uint64_t vops_avg, vops_max, loads, stores;
  };
  // A global pool as the importer writes it: 2 images of 1x9 pixels, 4 channel tiles.
  host::PoolShape global{2, 1, 9, 20, 1, 9, 1, 1};
  global.oh = global.ow = 1;
  host::PoolShape pool2{1, 4, 6, 10, 2, 2, 2, 2};  // 2 channel tiles
  pool2.oh = 2, pool2.ow = 3;
  host::PoolShape ragged = global;  // 12 channels: 2 tiles and a ragged one, not stacked
  ragged.c = 12;
  const std::vector<Case> cases = {
      // The constant (1 LOAD, 2 VOPs), then one tile of 8 images: 9 taps, the average's
      // initial value and 6 division VOPs (a max starts from its first tap); the band cut into
      // the 4 channel tiles, a STORE for each.
      {global, 400, 2 + 1 + 9 + 6, 2 + 9, 1 + 4, 4},
      // 3 images a tile (3·(3 + 9) rows of 39): bands of images 0-2, 3-5, 6-7 cut into 2, 2, 1
      // channel tiles.
      {global, 40, 2 + 3 * (1 + 9 + 6), 2 + 3 * 9, 1 + 2 + 2 + 1, 2 + 2 + 1},
      // 2x2 windows of stride 2: 2 images of 4 rows, one tile.
      {pool2, 400, 2 + 1 + 4 + 6, 2 + 4, 1 + 2, 2},
      // Not stacked: a tile per channel tile, the two images stacked in it.
      {ragged, 400, 2 + 3 * (1 + 9 + 6), 2 + 3 * 9, 1 + 3, 3},
  };
  for (const Case& c : cases) {
    for (const bool max : {false, true}) {
      host::PoolShape s = c.s;
      s.max = max;
      cfg.vmem_depth = c.depth;
      SCOPED_TRACE(fmt::format("{} pool {}x{}x{}x{}, VmemDepth {}", max ? "max" : "average", s.n,
                               s.h, s.w, s.c, c.depth));
      const host::PoolProgram p = host::CompilePool(cfg, s);
      Machine mach(cfg);
      const auto in = RandomFp32(rng, s.n * s.h * s.w, s.c, tb::GemmData::kSpecials);
      host::WriteMatrix(mach, p.in, in);
      const isa::RunResult r = host::Run(mach, p.prog);
      ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
      ExpectSame(PoolReference(s, in, cfg.mode), host::ReadMatrixFp32(mach, p.out), s.c, "out");
      EXPECT_EQ(within_tiles(p.prog, p.in), int(c.loads));
      EXPECT_EQ(within_tiles(p.prog, p.out), int(c.stores));
      EXPECT_EQ(p.prog.stats.vops, max ? c.vops_max : c.vops_avg);
      EXPECT_EQ(p.prog.stats.vector_loads, c.loads);
      EXPECT_EQ(p.prog.stats.stores, c.stores);
    }
  }
  // A depthwise convolution of the same shape does not stack: a tile per channel tile.
  host::DepthwiseOptions o;
  cfg.vmem_depth = 400;
  const host::PoolProgram d = host::CompileDepthwise(cfg, global, o);
  EXPECT_EQ(d.prog.stats.stores, 4u);
  EXPECT_EQ(d.prog.stats.vector_loads, 1u + 4 * 2);  // per tile its weights and its band
}

// CompileDepthwise on the golden model against the contract's convolution written out: per
// output channel c, from the bias (or +0), mac(x, w) over the taps in (i, j) order with +0 for a
// tap in the padding (the MXU's windows and im2col), then the store path's relu and format.
// Random windows (pads on each side, strides, dilations), channels across tiles, both modes,
// vector memories from band tiles to one pixel with taps in chunks.
TEST_F(HostTest, DepthwiseProgramsComputeTheContractsConvolution) {
  tb::Rng rng(test::TestSeed());
  for (int trial = 0; trial < int(test::Scaled(40)); ++trial) {
    host::PoolShape s;
    s.n = rng.Range(1, 2), s.c = rng.Range(1, 12);
    s.kh = rng.Range(1, 3), s.kw = rng.Range(1, 3);
    s.sh = rng.Range(1, 2), s.sw = rng.Range(1, 2);
    s.dh = rng.Range(1, 2), s.dw = rng.Range(1, 2);
    s.pt = rng.Range(0, 2), s.pb = rng.Range(0, 2), s.pl = rng.Range(0, 2), s.pr = rng.Range(0, 2);
    const int ext_h = (s.kh - 1) * s.dh + 1, ext_w = (s.kw - 1) * s.dw + 1;
    s.h = rng.Range(std::max(1, ext_h - s.pt - s.pb), 8);
    s.w = rng.Range(std::max(1, ext_w - s.pl - s.pr), 8);
    s.oh = (s.h + s.pt + s.pb - ext_h) / s.sh + 1, s.ow = (s.w + s.pl + s.pr - ext_w) / s.sw + 1;
    host::DepthwiseOptions o;
    o.bias = rng.Bit(), o.relu = rng.Bit();
    o.out = rng.Bit() ? host::OutFormat::kBf16 : host::OutFormat::kFp32;
    o.fp32 = rng.Range(0, 3) == 0;  // fp32 operands: fma32 over the taps
    const int taps = s.kh * s.kw, reserved = 1 + taps + (o.bias ? 1 : 0);
    const int depth =
        std::vector<int>{reserved + 2, reserved + 6, 48, 400}[size_t(rng.Range(0, 3))];
    MachineConfig cfg = Cfg(3, 5, 8, 8, 8, rng.Bit() ? num::Mode::kIeee : num::Mode::kFtz);
    cfg.vmem_depth = depth;
    SCOPED_TRACE(fmt::format(
        "{}x{}x{}x{} -> {}x{}, kernel {}x{}, strides {},{}, dilations {},{}, pads {},{},{},{}, "
        "bias {}, relu {}, {} out, fp32 operands {}, VmemDepth {}, {}",
        s.n, s.h, s.w, s.c, s.oh, s.ow, s.kh, s.kw, s.sh, s.sw, s.dh, s.dw, s.pt, s.pl, s.pb, s.pr,
        o.bias, o.relu, o.out == host::OutFormat::kBf16 ? "bf16" : "fp32", o.fp32, depth,
        num::ModeName(cfg.mode)));
    const host::PoolProgram p = host::CompileDepthwise(cfg, s, o);
    Machine mach(cfg);
    const auto x = RandomBf16(rng, s.n * s.h * s.w, s.c, tb::GemmData::kSpecials);
    const auto w = RandomBf16(rng, taps, s.c, tb::GemmData::kSpecials);
    const auto x32 = RandomFp32(rng, s.n * s.h * s.w, s.c, tb::GemmData::kSpecials);
    const auto w32 = RandomFp32(rng, taps, s.c, tb::GemmData::kSpecials);
    const auto b = RandomFp32(rng, 1, s.c, tb::GemmData::kSpecials);
    if (o.fp32) {
      host::WriteMatrix(mach, p.in, x32);
      host::WriteMatrix(mach, p.w, w32);
    } else {
      host::WriteMatrix(mach, p.in, x);
      host::WriteMatrix(mach, p.w, w);
    }
    if (o.bias) host::WriteMatrix(mach, p.bias, b);
    const isa::RunResult r = host::Run(mach, p.prog);
    ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
    EXPECT_EQ(r.unwritten_bytes_read, 0u);
    std::vector<uint32_t> want;
    for (int img = 0; img < s.n; ++img) {
      for (int oh = 0; oh < s.oh; ++oh) {
        for (int ow = 0; ow < s.ow; ++ow) {
          for (int ch = 0; ch < s.c; ++ch) {
            uint32_t acc = o.bias ? b[size_t(ch)] : 0u;
            for (int i = 0; i < s.kh; ++i) {
              for (int j = 0; j < s.kw; ++j) {
                const int ih = oh * s.sh - s.pt + i * s.dh, iw = ow * s.sw - s.pl + j * s.dw;
                const bool in = ih >= 0 && ih < s.h && iw >= 0 && iw < s.w;
                const size_t at = ((size_t(img) * s.h + ih) * s.w + iw) * s.c + ch;
                const size_t wt = size_t(i * s.kw + j) * s.c + ch;
                acc = o.fp32 ? num::Fma32(in ? x32[at] : 0u, w32[wt], acc, cfg.mode)
                             : num::Mac(in ? x[at] : uint16_t(0), w[wt], acc, cfg.mode);
              }
            }
            want.push_back(o.out == host::OutFormat::kBf16 ? num::StoreBf16(acc, o.relu, cfg.mode)
                           : o.relu                        ? num::Relu(acc)
                                                           : acc);
          }
        }
      }
    }
    if (o.out == host::OutFormat::kBf16) {
      const auto got = host::ReadMatrixBf16(mach, p.out);
      ExpectSame(want, std::vector<uint32_t>(got.begin(), got.end()), s.c, "out");
    } else {
      ExpectSame(want, host::ReadMatrixFp32(mach, p.out), s.c, "out");
    }
  }
  MachineConfig cfg = Cfg(3, 5, 8, 8, 8);
  cfg.vmem_depth = 12;
  host::PoolShape s{1, 4, 4, 3, 3, 3};
  s.oh = s.ow = 2;
  ExpectThrows(
      [&] {
        host::CompileDepthwise(cfg, s, {true, false, host::OutFormat::kFp32});
      },
      "at least 13 rows");
}

// CompileSoftmax on the golden model against the contract's vector softmax and log-softmax
// written out per slice (host.h), random lengths and slice counts across column tiles, vector
// memories from the smallest (chunks of one row), both modes, with NaN and infinite slices;
// host::SoftmaxOnHost gives the same bits. Then its error in IEEE mode against the exact softmax
// (long double): every output within (L + 4 + |x_i - m|) ulp of the exact value's binade (x_i - m
// is rounded to fp32, and exp magnifies that), log-softmax within (L + 4)·2^-23·max(1, |y|).
TEST_F(HostTest, SoftmaxProgramsComputeTheContractsSoftmax) {
  using isa::VectorOp;
  tb::Rng rng(test::TestSeed());
  double worst_ulp = 0, worst_log = 0;
  for (int trial = 0; trial < int(test::Scaled(40)); ++trial) {
    const int len = rng.Range(1, 40), slices = rng.Range(1, 12);
    const bool log = rng.Bit();
    MachineConfig cfg =
        Cfg(3, 5, 8, 8, 8, rng.Range(0, 3) == 0 ? num::Mode::kFtz : num::Mode::kIeee);
    cfg.vmem_depth = std::vector<int>{host::SoftmaxRows(len), host::SoftmaxRows(len) + 3,
                                      300}[size_t(rng.Range(0, 2))];
    const num::Mode mode = cfg.mode;
    SCOPED_TRACE(fmt::format("{} of {} slices of {}, VmemDepth {}, {}",
                             log ? "log-softmax" : "softmax", slices, len, cfg.vmem_depth,
                             num::ModeName(mode)));
    const host::SoftmaxProgram p = host::CompileSoftmax(cfg, len, slices, log);
    // Values in [-24, 24]; a NaN or an infinity in a few slices.
    std::vector<uint32_t> x(size_t(len) * slices);
    for (auto& v : x) v = bits(float(rng.Range(-24000, 24000)) / 1000.0f);
    if (rng.Bit()) {
      x[size_t(rng.Range(0, len - 1)) * slices + size_t(rng.Range(0, slices - 1))] =
          rng.Bit() ? 0x7FC00001u : 0x7F800000u | (uint32_t(rng.Bit()) << 31);
    }
    Machine mach(cfg);
    host::WriteMatrix(mach, p.in, x);
    const isa::RunResult r = host::Run(mach, p.prog);
    ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
    const auto got = host::ReadMatrixFp32(mach, p.out);
    const auto op = [&](VectorOp o, uint32_t a, uint32_t b, uint32_t d = 0) {
      return isa::ApplyVectorOp(o, a, b, d, mode);
    };
    std::vector<uint32_t> want(x.size());
    for (int c = 0; c < slices; ++c) {
      const auto at = [&](int i) { return size_t(i) * slices + size_t(c); };
      uint32_t m = 0xFF800000u, sum = 0x80000000u;
      for (int i = 0; i < len; ++i) m = op(VectorOp::kMax, x[at(i)], m);
      std::vector<uint32_t> d(static_cast<size_t>(len)), e(static_cast<size_t>(len));
      for (int i = 0; i < len; ++i) {
        d[size_t(i)] = op(VectorOp::kSub, x[at(i)], m);
        e[size_t(i)] = op(VectorOp::kExp, d[size_t(i)], 0);
        sum = op(VectorOp::kAdd, e[size_t(i)], sum);
      }
      const uint32_t rs = op(VectorOp::kRecip, sum, 0), ns = op(VectorOp::kMul, sum, 0xBF800000u);
      const uint32_t ls = op(VectorOp::kLog, sum, 0);
      for (int i = 0; i < len; ++i) {
        if (log) {
          want[at(i)] = op(VectorOp::kSub, d[size_t(i)], ls);
          continue;
        }
        const uint32_t q0 = op(VectorOp::kMul, e[size_t(i)], rs);
        const uint32_t t = op(VectorOp::kMac, q0, ns, e[size_t(i)]);
        want[at(i)] = op(VectorOp::kMac, t, rs, q0);
      }
      // The error against the exact (long double) softmax, finite slices in IEEE mode.
      bool finite = mode == num::Mode::kIeee;
      for (int i = 0; i < len; ++i) finite = finite && std::isfinite(value(x[at(i)]));
      if (!finite) continue;
      long double mx = -INFINITY, se = 0;
      for (int i = 0; i < len; ++i) mx = std::max<long double>(mx, value(x[at(i)]));
      for (int i = 0; i < len; ++i) se += std::exp((long double)value(x[at(i)]) - mx);
      for (int i = 0; i < len; ++i) {
        const long double xv = value(x[at(i)]);
        const long double exact = log ? xv - mx - std::log(se) : std::exp(xv - mx) / se;
        const double err = double(std::fabs((long double)value(got[at(i)]) - exact));
        if (log) {
          worst_log = std::max(worst_log, err);
          EXPECT_LE(err, (len + 4) * std::ldexp(1.0, -23) * std::max(1.0L, std::fabs(exact)))
              << "slice " << c << " element " << i;
        } else {
          // d_i = x_i - m is rounded to fp32 (half an ulp: |d|·2^-24), which exp turns into
          // as much relative error: |d| ulp more.
          const double ulp = std::ldexp(1.0, std::max(-149, std::ilogb(double(exact)) - 23));
          const double d = double(mx - xv);
          worst_ulp = std::max(worst_ulp, err / ulp);
          EXPECT_LE(err, (len + 4 + d) * ulp) << "slice " << c << " element " << i;
        }
      }
    }
    ExpectSame(want, got, slices, "out");
    ExpectSame(want, host::SoftmaxOnHost(len, slices, log, x, mode), slices, "SoftmaxOnHost");
  }
  std::printf("softmax: largest error %.2f ulp; log-softmax: largest error %.3g\n", worst_ulp,
              worst_log);
  MachineConfig cfg = Cfg(3, 5, 8, 8, 8);
  cfg.vmem_depth = 9;
  ExpectThrows([&] { host::CompileSoftmax(cfg, 4, 3, false); }, "at least 10 rows");
  cfg.vmem_depth = 0;
  ExpectThrows([&] { host::CompileSoftmax(cfg, 4, 3, false); }, "no vector unit");
}

// The average's division (q0 = s·y, r = fma(q0, -n, s), q = fma(r', y, q0), y = fp32(1/n),
// r' = r unless r is a zero or a NaN, then -0) is s / n correctly rounded in IEEE mode wherever
// the quotient is normal (Markstein's theorem: y within half an ulp of 1/n, q0 within an ulp of
// s/n) or zero (its sign included), and ±inf for an infinite sum (r a NaN). Sampled: every
// divisor up to 4096 and every 97th above, random sums, ±0 and ±inf.
TEST_F(HostTest, PoolAverageDivisionIsCorrectlyRounded) {
  using isa::VectorOp;
  tb::Rng rng(test::TestSeed());
  const num::Mode mode = num::Mode::kIeee;
  const auto op = [&](VectorOp o, uint32_t a, uint32_t b, uint32_t d = 0) {
    return isa::ApplyVectorOp(o, a, b, d, mode);
  };
  uint64_t checked = 0, subnormal_diff = 0;
  for (int n = 1; n <= 1 << 16; n += n <= 4096 ? 1 : 97) {
    const uint32_t y = bits(1.0f / float(n)), minus_n = bits(-float(n));
    for (int t = 0; t < 64; ++t) {
      uint32_t s = uint32_t(rng.Next());
      if (t < 2) s = (t == 0 ? 0x7F800000u : 0u) | (uint32_t(rng.Bit()) << 31);  // ±inf, ±0
      if (num::IsNaN32(s)) continue;
      const uint32_t q0 = op(VectorOp::kMul, s, y);
      uint32_t r = op(VectorOp::kMac, q0, minus_n, s);
      const uint32_t nonzero = op(VectorOp::kGt, op(VectorOp::kLeakyRelu, r, 0xBF800000u), 0);
      r = op(VectorOp::kSelect, r, 0x80000000u, nonzero);
      const uint32_t q = op(VectorOp::kMac, r, y, q0);
      const float want = value(s) / float(n);
      if (std::fpclassify(want) == FP_SUBNORMAL) {
        subnormal_diff += q != bits(want);
        continue;
      }
      ASSERT_EQ(q, bits(want)) << fmt::format("{:#010x} / {}", s, n);
      ++checked;
    }
  }
  std::printf("%llu quotients correctly rounded; %llu of the subnormal ones differ\n",
              static_cast<unsigned long long>(checked),
              static_cast<unsigned long long>(subnormal_diff));
  EXPECT_GT(checked, 200000u);
}

// host::Link: a convolution (bf16 out) into a convolution (fp32 out) into a max pool into a
// vector job (add B, relu) into a GEMM that preloads the vector job's output as C0, linked into
// one program with every input bound to its producer's output where the layouts agree (else the
// host writes it, as the parts run alone), on machines whose layouts agree and on ones whose do
// not. The linked program's outputs equal the parts' run one by one, each from the previous
// one's output read back; it is race-free; and a part that leaves a token or a binding of
// another layout is refused.
TEST_F(HostTest, LinkedProgramsRunAsTheirParts) {
  tb::Rng rng(test::TestSeed());
  int bound = 0, written = 0, repitched = 0, subsampled = 0, sub_repitched = 0;
  // (32 columns: a convolution's input of few channels has a narrower pitch than the output
  // of 32-column tiles it is bound to, so the LOADs' strides change too; on 16 rows a pointwise
  // convolution's too.)
  for (MachineConfig cfg :
       {Cfg(4, 4, 64, 32, 64), Cfg(8, 8, 2048, 2048, 4096, num::Mode::kFtz), Cfg(3, 5, 16, 12, 24),
        Cfg(4, 4, 16, 256, 64), Cfg(32, 32, 512, 512, 512), Cfg(16, 32, 512, 512, 512)}) {
    cfg.vmem_depth = 64;
    for (int trial = 0; trial < 6; ++trial) {
      const int n = rng.Range(1, 2), h = rng.Range(3, 7), w = rng.Range(3, 7);
      // (On the 32-column machine c1 takes windows, with a pitch of 32 bytes: 15 or 16 channels.)
      const int c0 = rng.Range(1, 9), c2 = rng.Range(1, 9);
      const int c1 = cfg.c >= 32 ? rng.Range(15, 16) : rng.Range(1, 9);
      const int k4 = rng.Range(1, 12);
      SCOPED_TRACE(fmt::format("{}: N {} H {} W {} channels {} {} {}, K {}", CfgName(cfg), n, h, w,
                               c0, c1, c2, k4));
      host::ConvShape s0{n, h, w, c0, c1, 3, 3, 1, 1};
      // (Every third trial the second convolution is a 1×1 with stride 2: a GEMM whose LOADs
      // read every second pixel of every second row of the bound input, repitched.)
      const bool sub = trial % 3 == 2;
      const int k1 = sub ? 1 : 3, stride1 = sub ? 2 : rng.Range(1, 2);
      host::ConvShape s1{n, h, w, c1, c2, k1, k1, stride1, sub ? 0 : 1};
      // (p0: fp32 and a bf16 copy, which p1 reads.)
      const auto p0 = host::CompileConv(cfg, s0, true, true, OutFormat::kFp32, 0, true);
      const auto p1 = host::CompileConv(cfg, s1, true, false, OutFormat::kFp32, p0.prog.addr);
      host::PoolShape ps;
      ps.n = n, ps.h = s1.OutH(), ps.w = s1.OutW(), ps.c = c2;
      ps.kh = ps.kw = 2, ps.pb = ps.pr = 1, ps.oh = ps.h, ps.ow = ps.w;
      const auto p2 = host::CompilePool(cfg, ps, p1.prog.addr);
      const int m3 = n * ps.oh * ps.ow;
      const std::vector<host::VectorStage> st = {{isa::VectorOp::kAdd, host::VectorB::kTensor},
                                                 {isa::VectorOp::kRelu}};
      const auto p3 = host::CompileVector(cfg, m3, c2, st, p2.prog.addr);
      const auto p4 = host::CompileGemm(cfg, m3, k4, c2, host::Init::kPreload, OutFormat::kFp32,
                                        false, p3.prog.addr);
      // Inputs.
      const auto x0 = RandomBf16(rng, n * h * w, c0, tb::GemmData::kModerate);
      const auto w0 = RandomBf16(rng, 9 * c0, c1, tb::GemmData::kModerate);
      const auto b0 = RandomFp32(rng, 1, c1, tb::GemmData::kModerate);
      const auto w1 = RandomBf16(rng, k1 * k1 * c1, c2, tb::GemmData::kModerate);
      const auto b1 = RandomFp32(rng, 1, c2, tb::GemmData::kModerate);
      const auto vb = RandomFp32(rng, m3, c2, tb::GemmData::kModerate);
      const auto a4 = RandomBf16(rng, m3, k4, tb::GemmData::kModerate);
      const auto w4 = RandomBf16(rng, k4, c2, tb::GemmData::kModerate);
      // One by one.
      auto run = [&](Machine& m, const host::Compiled& c) {
        const auto r = host::Run(m, c);
        EXPECT_TRUE(r.ok()) << r.message;
      };
      Machine m0(cfg);
      host::WriteConvInput(m0, p0, x0);
      host::WriteWeights(m0, p0.b, w0);
      host::WriteMatrix(m0, p0.bias, b0);
      run(m0, p0.prog);
      const auto y0 = host::ReadMatrixBf16(m0, p0.out_bf16);
      const auto y0f = host::ReadMatrixFp32(m0, p0.out);
      ASSERT_EQ(y0.size(), y0f.size());
      for (size_t i = 0; i < y0.size(); ++i) {
        ASSERT_EQ(y0[i], num::Fp32ToBf16(y0f[i], cfg.mode)) << "the bf16 copy, element " << i;
      }
      Machine m1(cfg);
      host::WriteConvInput(m1, p1, y0);
      host::WriteWeights(m1, p1.b, w1);
      host::WriteMatrix(m1, p1.bias, b1);
      run(m1, p1.prog);
      const auto y1 = host::ReadMatrixFp32(m1, p1.out);
      Machine m2(cfg);
      host::WriteMatrix(m2, p2.in, y1);
      run(m2, p2.prog);
      const auto y2 = host::ReadMatrixFp32(m2, p2.out);
      Machine m3m(cfg);
      host::WriteMatrix(m3m, p3.a, y2);
      host::WriteMatrix(m3m, p3.b, vb);
      run(m3m, p3.prog);
      const auto y3 = host::ReadMatrixFp32(m3m, p3.out);
      Machine m4(cfg);
      host::WriteMatrix(m4, p4.a, a4);
      host::WriteWeights(m4, p4.b, w4);
      host::WriteMatrix(m4, p4.c0, y3);
      run(m4, p4.prog);
      const auto y4 = host::ReadMatrixFp32(m4, p4.out);
      if (HasFailure()) return;
      // Linked: an input bound where the layouts agree (and the program reads the tensor
      // itself, not the host's im2col of it), else written by the host.
      Machine ml(cfg);
      std::vector<host::LinkPart> parts(5);
      auto bind = [&](size_t part, const host::TiledMatrix& from, const host::TiledMatrix& to,
                      bool readable, const std::function<void()>& write) {
        if (readable && host::Bindable(from, to)) {
          parts[part].binds.push_back({from, to});
          ++bound;
          repitched += from.Pitch() != to.Pitch();
        } else {
          write();
          ++written;
        }
      };
      parts[0].prog = p0.prog;
      host::WriteConvInput(ml, p0, x0);
      host::WriteWeights(ml, p0.b, w0);
      host::WriteMatrix(ml, p0.bias, b0);
      parts[1].prog = p1.prog;
      bind(1, p1.a, p0.out_bf16, p1.window || p1.pointwise,
           [&] { host::WriteConvInput(ml, p1, y0); });
      if (sub && p1.pointwise && !parts[1].binds.empty()) {
        ++subsampled;
        sub_repitched += p1.a.Pitch() != p0.out_bf16.Pitch();
      }
      host::WriteWeights(ml, p1.b, w1);
      host::WriteMatrix(ml, p1.bias, b1);
      parts[2].prog = p2.prog;
      bind(2, p2.in, p1.out, true, [&] { host::WriteMatrix(ml, p2.in, y1); });
      parts[3].prog = p3.prog;
      bind(3, p3.a, p2.out, true, [&] { host::WriteMatrix(ml, p3.a, y2); });
      host::WriteMatrix(ml, p3.b, vb);
      parts[4].prog = p4.prog;
      bind(4, p4.c0, p3.out, true, [&] { host::WriteMatrix(ml, p4.c0, y3); });
      host::WriteMatrix(ml, p4.a, a4);
      host::WriteWeights(ml, p4.b, w4);
      const host::Compiled linked = host::Link(cfg, parts);
      const auto r = host::Run(ml, linked);
      ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
      EXPECT_EQ(r.counters.macs, linked.stats.macs);
      ExpectSame(y0, host::ReadMatrixBf16(ml, p0.out_bf16), c1, "conv 0");
      ExpectSame(y0f, host::ReadMatrixFp32(ml, p0.out), c1, "conv 0 fp32");
      ExpectSame(y1, host::ReadMatrixFp32(ml, p1.out), c2, "conv 1");
      ExpectSame(y2, host::ReadMatrixFp32(ml, p2.out), c2, "pool");
      ExpectSame(y3, host::ReadMatrixFp32(ml, p3.out), c2, "vector");
      ExpectSame(y4, host::ReadMatrixFp32(ml, p4.out), c2, "gemm");
      if (linked.count() <= 3000) {
        EXPECT_EQ(FindRace(linked.instrs), "");
      }
      if (HasFailure()) return;
      // Refused: a binding of another layout, a part that leaves a token.
      auto bad = parts;
      host::TiledMatrix other = p3.out;
      other.cols += 1;
      bad[4].binds = {{p4.c0, other}};
      ExpectThrows([&] { host::Link(cfg, bad); }, "another layout");
      bad = parts;
      for (auto& in : bad[1].prog.instrs) {
        if (isa::ModuleOf(in) == isa::Module::kLoad && !isa::DepsOf(in).push_next) {
          isa::DepsOf(in).push_next = true;  // one token more than its GEMMs pop
          ExpectThrows([&] { host::Link(cfg, bad); }, "leaves 1 tokens in its load→compute");
          break;
        }
      }
    }
  }
  std::printf(
      "%d inputs bound to their producers' outputs (%d of another pitch, %d read by a strided "
      "1x1 convolution), %d written by the host\n",
      bound, repitched, subsampled, written);
  EXPECT_GE(bound, 20);
  EXPECT_GE(repitched, 3);
  EXPECT_GE(subsampled, 5);
  EXPECT_GE(sub_repitched, 1);  // the 16×32 machine's: 32-byte pixels, 64-byte output rows
}

// host::Link's places (a Concat as address arithmetic): two convolutions of one input store
// their outputs side by side into a 1x1 convolution's input (at a tile boundary, and on a
// 32-column machine in the middle of a tile, the 16 + 48 case's second piece across a tile
// boundary: its first tile stored in two parts, STORE's col), which then reads the concatenation:
// the same bits as the three run one by one with the host concatenating; a place off a 32-byte
// boundary or past the tensor is refused.
TEST_F(HostTest, LinkedOutputsPlacedSideBySide) {
  tb::Rng rng(test::TestSeed());
  struct Case {
    MachineConfig cfg;
    int a, b;  // the two convolutions' channels
  };
  // (On the 32x8 machine the convolutions' 8-column outputs are not the 32-column input's pitch,
  // and the second piece, 16 bytes into a tile, cannot be placed: the host writes it.)
  for (const Case& k :
       {Case{Cfg(8, 8, 2048, 2048, 4096), 8, 5}, Case{Cfg(8, 8, 256, 256, 512), 16, 11},
        Case{Cfg(32, 8, 512, 512, 512), 8, 8}, Case{Cfg(32, 32, 512, 512, 512), 16, 16},
        Case{Cfg(32, 32, 512, 512, 512, num::Mode::kFtz), 48, 9},
        Case{Cfg(32, 32, 512, 512, 512), 16, 48}, Case{Cfg(32, 32, 512, 512, 64), 16, 48}}) {
    const MachineConfig& cfg = k.cfg;
    const int n = rng.Range(1, 2), h = rng.Range(2, 5), w = rng.Range(2, 5), cin = rng.Range(1, 6);
    const int cout = rng.Range(1, 9);
    SCOPED_TRACE(fmt::format("{}: {} + {} channels", CfgName(cfg), k.a, k.b));
    const host::ConvShape sa{n, h, w, cin, k.a, 3, 3, 1, 1}, sb{n, h, w, cin, k.b, 1, 1, 1, 0};
    const host::ConvShape sc{n, h, w, k.a + k.b, cout, 1, 1, 1, 0};
    const auto pa = host::CompileConv(cfg, sa, true, true, OutFormat::kBf16);
    const auto pb = host::CompileConv(cfg, sb, false, false, OutFormat::kBf16, pa.prog.addr);
    const auto pc = host::CompileConv(cfg, sc, true, false, OutFormat::kFp32, pb.prog.addr);
    ASSERT_TRUE(pc.pointwise);
    const auto x = RandomBf16(rng, n * h * w, cin, tb::GemmData::kModerate);
    const auto wa = RandomBf16(rng, 9 * cin, k.a, tb::GemmData::kModerate);
    const auto ba = RandomFp32(rng, 1, k.a, tb::GemmData::kModerate);
    const auto wb = RandomBf16(rng, cin, k.b, tb::GemmData::kModerate);
    const auto wc = RandomBf16(rng, k.a + k.b, cout, tb::GemmData::kModerate);
    const auto bc = RandomFp32(rng, 1, cout, tb::GemmData::kModerate);
    // One by one, the host concatenating.
    Machine m(cfg);
    host::WriteConvInput(m, pa, x);
    host::WriteWeights(m, pa.b, wa);
    host::WriteMatrix(m, pa.bias, ba);
    ASSERT_TRUE(host::Run(m, pa.prog).ok());
    const auto ya = host::ReadMatrixBf16(m, pa.out);
    host::WriteConvInput(m, pb, x);
    host::WriteWeights(m, pb.b, wb);
    ASSERT_TRUE(host::Run(m, pb.prog).ok());
    const auto yb = host::ReadMatrixBf16(m, pb.out);
    std::vector<uint16_t> cat;
    for (int r = 0; r < n * h * w; ++r) {
      cat.insert(cat.end(), ya.begin() + r * k.a, ya.begin() + (r + 1) * k.a);
      cat.insert(cat.end(), yb.begin() + r * k.b, yb.begin() + (r + 1) * k.b);
    }
    Machine m1(cfg);
    host::WriteConvInput(m1, pc, cat);
    host::WriteWeights(m1, pc.b, wc);
    host::WriteMatrix(m1, pc.bias, bc);
    ASSERT_TRUE(host::Run(m1, pc.prog).ok());
    const auto want = host::ReadMatrixFp32(m1, pc.out);
    // Linked: a and b store into c's input.
    ASSERT_TRUE(host::Placeable(pa.out, pc.a, 0));
    const bool both = host::Placeable(pb.out, pc.a, k.a);
    EXPECT_EQ(both, cfg.c != 8 || cfg.r != 32);
    std::vector<host::LinkPart> parts(3);
    parts[0].prog = pa.prog;
    parts[0].places = {{pa.out, pc.a, 0}};
    parts[1].prog = pb.prog;
    if (both) parts[1].places = {{pb.out, pc.a, k.a}};
    parts[2].prog = pc.prog;
    Machine ml(cfg);
    if (!both) {  // b's columns from the host, a's left +0 for the program to fill
      std::vector<uint16_t> part = cat;
      for (int r = 0; r < n * h * w; ++r) {
        std::fill(part.begin() + r * (k.a + k.b), part.begin() + r * (k.a + k.b) + k.a, 0);
      }
      host::WriteMatrix(ml, pc.a, part);
      EXPECT_NE(pa.out.Pitch(), pc.a.Pitch());
    }
    host::WriteConvInput(ml, pa, x);
    host::WriteWeights(ml, pa.b, wa);
    host::WriteMatrix(ml, pa.bias, ba);
    host::WriteConvInput(ml, pb, x);
    host::WriteWeights(ml, pb.b, wb);
    host::WriteWeights(ml, pc.b, wc);
    host::WriteMatrix(ml, pc.bias, bc);
    const host::Compiled linked = host::Link(cfg, parts);
    const auto r = host::Run(ml, linked);
    ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
    ExpectSame(cat, host::ReadMatrixBf16(ml, pc.a), k.a + k.b, "the concatenation");
    ExpectSame(want, host::ReadMatrixFp32(ml, pc.out), cout, "the convolution on it");
    if (linked.count() <= 3000) {
      EXPECT_EQ(FindRace(linked.instrs), "");
    }
    // Every token pushed is popped (a STORE stored in parts pushes its token once).
    EXPECT_EQ(TokenBalance(linked.instrs), (std::array<int64_t, 4>{}));
    // Refused: off a 32-byte boundary (one bf16 column in), past the tensor's columns.
    EXPECT_FALSE(host::Placeable(pb.out, pc.a, k.a - 1));
    EXPECT_FALSE(host::Placeable(pb.out, pc.a, k.a + 1));
    auto bad = parts;
    bad[1].places = {{pb.out, pc.a, k.a + 1}};
    ExpectThrows([&] { host::Link(cfg, bad); }, "cannot be placed");
  }
}

TEST_F(HostTest, BadInputThrows) {
  const auto cfg = Cfg(4, 4, 8, 8, 16);
  ExpectThrows([&] { host::CompileGemm(cfg, 0, 4, 4, host::Init::kOverwrite); }, "M = 0");
  ExpectThrows([&] { host::CompileGemm(cfg, 4, -1, 4, host::Init::kOverwrite); }, "K = -1");
  ExpectThrows([&] { host::CompileDense(cfg, 4, 4, 0, true, false, OutFormat::kFp32); }, "N = 0");
  ExpectThrows([&] { host::CompileGemm(cfg, 4, 4, 4, host::Init::kAccumulate, OutFormat::kBf16); },
               "fp32");
  auto small = cfg;
  small.hbm_bytes = 1 << 16;
  ExpectThrows([&] { host::CompileGemm(small, 1000, 1000, 4, host::Init::kOverwrite); },
               "HbmBytes");
  // The tensors fit but the program does not.
  ExpectThrows(
      [&] {
        host::CompileGemm(small, 16, 16, 16, host::Init::kOverwrite, OutFormat::kFp32, false,
                          small.hbm_bytes - 8192);
      },
      "program");
  ExpectThrows([&] { host::CompileMlp(cfg, 4, {4}, false, false, OutFormat::kFp32); }, "sizes");
  ExpectThrows(
      [&] {
        host::CompileMlp(cfg, 4, {4, 0, 3}, false, false, OutFormat::kFp32);
      },
      "sizes[1] = 0");
  ExpectThrows([&] { host::CompileConv(cfg, {1, 3, 3, 1, 1, 6, 1, 1, 1}); }, "kh = 6");
  ExpectThrows([&] { host::CompileConv(cfg, {1, 3, 3, 1, 1, 1, 4, 1, 0}); }, "kw = 4");
  ExpectThrows([&] { host::CompileConv(cfg, {1, 3, 3, 1, 1, 1, 1, 0, 0}); }, "stride = 0");
  ExpectThrows([&] { host::CompileConv(cfg, {1, 3, 3, 1, 1, 1, 1, 1, -1}); }, "pad = -1");
  auto bad = cfg;
  bad.act_depth = 0;
  ExpectThrows([&] { host::CompileGemm(bad, 4, 4, 4, host::Init::kOverwrite); }, "ActDepth=0");
  bad = cfg;
  bad.queue_depth = 0;
  ExpectThrows([&] { host::CompileGemm(bad, 4, 4, 4, host::Init::kOverwrite); }, "QueueDepth=0");
  const auto p = host::CompileGemm(cfg, 3, 4, 5, host::Init::kOverwrite);
  Machine mach(cfg);
  ExpectThrows([&] { host::WriteMatrix(mach, p.a, std::vector<uint16_t>(11)); }, "12");
  ExpectThrows([&] { host::WriteMatrix(mach, p.a, std::vector<uint32_t>(12)); }, "4-byte");
}

}  // namespace
}  // namespace tpu
