// SPDX-License-Identifier: Apache-2.0
// Random legal programs (random_program.h). How the tokens are chosen: every instruction carries
// a vector clock, for each module the number of that module's instructions known to be complete
// when it starts (modules run in order, so completing instruction i of a module completes its
// first i). A push carries the pusher's clock, its own module's entry counting itself; a pop takes
// the oldest token of its queue and merges that clock. An instruction whose accesses conflict
// with an earlier one of another module (one writes what the other reads or writes) is kept only
// when its clock after its pops covers that instruction; otherwise another is drawn. Pops only
// take tokens already pushed in program order, so the program runs at every QueueDepth, and a
// queue never gets more than 200 pushes, so it cannot overflow.
//
// On a machine with the vector unit (version 1.4) the store module also takes LOADs into the vector
// memory, VOPs and STOREs from it. They read only vector-memory rows an earlier instruction
// wrote, and the lanes of a row that hold defined values are tracked (an accumulator row's first
// columns, through each VOP element in order), so no STORE writes a value the golden model and
// the machine may hold differently.
#include "tpu/tb/random_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <set>
#include <stdexcept>
#include <variant>

namespace tpu::tb {
namespace {

using Clock = std::array<int, 3>;  // load, compute, store

constexpr int kLoadMod = 0, kComputeMod = 1, kStoreMod = 2;
// Token queues: load->compute, compute->load, compute->store, store->compute.
constexpr int kMaxPushes = 200;

Clock Merge(Clock a, const Clock& b) {
  for (size_t i = 0; i < 3; ++i) a[i] = std::max(a[i], b[i]);
  return a;
}

// Rows [lo, hi) of buffer `buf` (0 act, 1 weights, 2 accumulators, 3 vector memory), read or
// written.
struct Access {
  int buf = 0;
  int lo = 0, hi = 0;
  bool write = false;
};

bool Conflict(const std::vector<Access>& a, const std::vector<Access>& b) {
  for (const Access& x : a) {
    for (const Access& y : b) {
      if (x.buf == y.buf && (x.write || y.write) && x.lo < y.hi && y.lo < x.hi) return true;
    }
  }
  return false;
}

uint64_t Round32(uint64_t b) {
  return (b + isa::kHbmAlign - 1) / isa::kHbmAlign * isa::kHbmAlign;
}

class Generator {
 public:
  Generator(const isa::MachineConfig& cfg, const RandomProgramSpec& spec, Rng& rng)
      : cfg_(cfg),
        spec_(spec),
        rng_(rng),
        act_ok_(size_t(cfg.act_depth), false),
        wgt_ok_(size_t(cfg.wgt_depth), false),
        acc_cols_(size_t(cfg.acc_depth), 0),
        act_writer_(size_t(cfg.act_depth), -1),
        wgt_writer_(size_t(cfg.wgt_depth), -1),
        acc_writer_(size_t(cfg.acc_depth), -1),
        vmem_cols_(size_t(cfg.vmem_depth), 0) {
    const uint64_t row = Round32(uint64_t(std::max(cfg.r, cfg.c)) * 4);
    if (spec.in_bytes < 4 * row || spec.out_bytes < 4 * row) {
      throw std::invalid_argument(fmt::format(
          "MakeRandomProgram: input region {} B and output region {} B: each needs at least {} B",
          spec.in_bytes, spec.out_bytes, 4 * row));
    }
  }

  RandomProgram Make() {
    RandomProgram p;
    p.instrs.push_back(isa::Header{});
    // Each slot draws a kind (4 LOAD : 4 GEMM : 2 STORE, and with the vector unit 1 LOAD to the
    // vector memory : 3 VOP : 1 STORE from it) and tries it with new fields up to 50 times (a GEMM
    // or STORE needs rows written and tokens to order it), then any kind.
    const int kinds = cfg_.vector_unit() ? 15 : 10;
    for (int n = 0; n < spec_.instructions; ++n) {
      const int kind = rng_.Range(0, kinds - 1);
      bool done = false;
      for (int attempt = 0; attempt < 50 && !done; ++attempt) done = Try(&p, kind);
      for (int attempt = 0; attempt < 200 && !done; ++attempt) {
        done = Try(&p, rng_.Range(0, kinds - 1));
      }
    }
    p.instrs.push_back(isa::End{});
    auto& h = std::get<isa::Header>(p.instrs[0]);
    h.r = uint16_t(cfg_.r), h.c = uint16_t(cfg_.c), h.count = uint32_t(p.instrs.size());
    p.classes.assign(classes_.begin(), classes_.end());
    return p;
  }

 private:
  struct Candidate {
    isa::Instr in;
    int mod = 0;
    std::vector<Access> acc;
    std::vector<RandomProgram::Range> reads;
    std::vector<std::string> classes;
  };

  int Pick(int lo, int hi) { return lo > hi ? lo : rng_.Range(lo, hi); }
  bool Chance(int percent) { return rng_.Range(0, 99) < percent; }

  // A row index for `span` rows in a buffer of `depth`: mostly among the first 24 (so that
  // instructions meet), sometimes ending at the buffer's last row.
  int PickRow(int depth, int span) {
    if (span > depth) return -1;
    if (Chance(10)) return depth - span;
    return Pick(0, std::min(depth - span, 24));
  }

  // Elements of a row of at most `max` elements of `size` bytes, by beat class: one element,
  // one full beat, one partial beat, several whole beats, several beats with a partial last one.
  int PickElems(int max, int size, std::string* cls) {
    const int per = int(isa::kHbmAlign) / size;
    for (;;) {
      switch (rng_.Range(0, 4)) {
        case 0:
          *cls = "beats_one_partial";
          return Pick(1, std::min(max, per - 1 > 0 ? per - 1 : 1));
        case 1:
          if (max >= per) {
            *cls = "beats_one_full";
            return per;
          }
          break;
        case 2:
          if (max >= 2 * per) {
            *cls = "beats_several";
            return per * Pick(2, max / per);
          }
          break;
        case 3:
          if (max > per) {
            const int e = per * Pick(1, (max - 1) / per) + Pick(1, per - 1);
            if (e <= max) {
              *cls = "beats_several_partial";
              return e;
            }
          }
          break;
        default: {
          const int e = Pick(1, max);
          *cls = e <= per ? (e == per ? "beats_one_full" : "beats_one_partial")
                          : (e % per == 0 ? "beats_several" : "beats_several_partial");
          return e;
        }
      }
    }
  }

  // HBM rows for a LOAD: addresses in the input region, a stride class; false if they do not fit.
  bool PickRead(int rows, uint64_t row_bytes, isa::Load* l, Candidate* c) {
    uint32_t stride = 0;
    std::string cls;
    switch (rng_.Range(0, 3)) {
      case 0: stride = 0, cls = "stride_zero"; break;
      case 1: stride = uint32_t(Round32(row_bytes)), cls = "stride_packed"; break;
      case 2: stride = uint32_t(Round32(row_bytes) + 32 * Pick(1, 3)), cls = "stride_gap"; break;
      default: stride = uint32_t(32 * Pick(64, 512)), cls = "stride_far"; break;
    }
    const uint64_t span = uint64_t(rows - 1) * stride + row_bytes;
    if (span > spec_.in_bytes) return false;
    const uint64_t slots = (spec_.in_bytes - span) / isa::kHbmAlign;
    l->hbm_addr =
        spec_.in_addr + isa::kHbmAlign * uint64_t(Pick(0, int(std::min<uint64_t>(slots, 1 << 20))));
    l->hbm_stride = stride;
    for (int i = 0; i < (stride == 0 ? 1 : rows); ++i) {
      c->reads.push_back({l->hbm_addr + uint64_t(i) * stride, row_bytes});
    }
    c->classes.push_back(cls);
    return true;
  }

  bool MakeLoad(Candidate* c) {
    isa::Load l;
    const int kind = rng_.Range(0, 4);  // act, wgt, acc, act transposed, wgt transposed
    l.buffer = uint8_t(kind == 2 ? isa::kBufAcc : kind % 2 == 0 ? isa::kBufAct : isa::kBufWgt);
    l.transpose = kind >= 3;
    const int width = l.buffer == isa::kBufAct ? cfg_.r : cfg_.c;
    const int depth = l.buffer == isa::kBufAct   ? cfg_.act_depth
                      : l.buffer == isa::kBufWgt ? cfg_.wgt_depth
                                                 : cfg_.acc_depth;
    const int size = l.buffer == isa::kBufAcc ? 4 : 2;
    const std::string name = std::string("load.") +
                             (l.buffer == isa::kBufAct   ? "act"
                              : l.buffer == isa::kBufWgt ? "wgt"
                                                         : "acc") +
                             (l.transpose ? ".transpose" : "");
    c->classes.push_back(name);
    std::string beats;
    if (l.transpose) {
      l.rows = uint16_t(Pick(1, width));
      l.elems = uint16_t(PickElems(std::min(std::max(cfg_.r, cfg_.c), depth), size, &beats));
    } else {
      l.elems = uint16_t(PickElems(width, size, &beats));
      l.rows = uint16_t(Chance(70) ? Pick(1, std::min(depth, 8)) : Pick(1, std::min(depth, 64)));
    }
    // Residual adds (version 1.5): a held row, or rows added to it.
    if (l.buffer == isa::kBufAcc && Chance(40)) {
      l.hold = Chance(40);
      l.add = !l.hold;
      if (l.hold) l.rows = 1;
      c->classes.push_back(l.hold ? "load.acc.hold" : "load.acc.add");
    }
    const int span = l.transpose ? l.elems : l.rows;
    const int dst = PickRow(depth, span);
    if (dst < 0) return false;
    l.dst = uint16_t(dst);
    if (!PickRead(l.rows, uint64_t(l.elems) * size, &l, c)) return false;
    c->mod = l.buffer == isa::kBufAcc ? kComputeMod : kLoadMod;
    if (!l.hold) c->acc.push_back({l.buffer, dst, dst + span, true});
    c->classes.push_back(name + "." + beats);
    if (dst + span == depth) c->classes.push_back(name + ".last_row");
    c->in = l;
    return true;
  }

  // A row that starts a run of rows this program wrote (ok[row]), and the run's length; -1 when
  // there is none.
  std::pair<int, int> PickRun(const std::vector<bool>& ok) {
    std::vector<int> starts;
    for (size_t r = 0; r < ok.size(); ++r) {
      if (ok[r]) starts.push_back(int(r));
    }
    if (!starts.empty() && Chance(70)) {  // mostly the start of a run
      std::vector<int> heads;
      for (const int r : starts) {
        if (r == 0 || !ok[size_t(r - 1)]) heads.push_back(r);
      }
      starts = heads;
    }
    if (starts.empty()) return {-1, 0};
    const int r0 = starts[size_t(Pick(0, int(starts.size()) - 1))];
    int n = 0;
    while (size_t(r0 + n) < ok.size() && ok[size_t(r0 + n)]) ++n;
    return {r0, n};
  }

  // The clock module `mod` can reach with its next pops (each queue's oldest token).
  Clock Reach(int mod) const {
    Clock k = clock_[size_t(mod)];
    for (const Port& port : Pops(mod)) {
      if (!queues_[size_t(port.queue)].empty()) k = Merge(k, queues_[size_t(port.queue)].front());
    }
    return k;
  }
  // Rows written whose last writer (of module `mod`) a clock `k` covers.
  static std::vector<bool> Usable(const std::vector<int>& writer, int known) {
    std::vector<bool> v(writer.size());
    for (size_t r = 0; r < writer.size(); ++r) v[r] = writer[r] >= 0 && writer[r] < known;
    return v;
  }

  bool MakeGemm(Candidate* c) {
    isa::Gemm g;
    const Clock reach = Reach(kComputeMod);
    g.load_weights = !ctx_.weights_loaded || Chance(60);
    if (g.load_weights) {
      const auto [w, run] = PickRun(Usable(wgt_writer_, reach[kLoadMod]));
      if (w < 0) return false;
      g.kv = uint16_t(std::min(run, Chance(50) ? cfg_.r : Pick(1, cfg_.r)));
      g.nv = uint16_t(Chance(50) ? cfg_.c : Pick(1, cfg_.c));
      g.wgt = uint16_t(w);
    } else {
      g.kv = ctx_.weights_kv, g.nv = ctx_.weights_nv;
    }
    g.rows = uint16_t(Chance(70) ? Pick(1, 8) : Pick(1, 40));
    const int a = PickRow(cfg_.acc_depth, g.rows);
    if (a < 0) return false;
    g.acc = uint16_t(a);
    const int mode = rng_.Range(0, 2);  // overwrite, accumulate, broadcast
    g.accumulate = mode == 1;
    if (mode == 2) {
      g.broadcast = true;
      g.init_row = uint16_t(Pick(0, cfg_.acc_depth - 1));
      if (g.init_row >= g.acc && g.init_row < g.acc + g.rows) return false;
    }
    std::vector<int> act_rows;
    if (Chance(25)) {
      g.window = true;
      isa::Window& w = g.win;
      w.stride = uint8_t(Pick(1, 2));
      w.dh = int8_t(Pick(-1, 1)), w.dw = int8_t(Pick(-1, 1));
      w.width = uint16_t(Pick(1, 4)), w.band_rows = uint16_t(Pick(1, 3));
      w.band_row = uint16_t(Pick(0, 1)), w.out_width = uint16_t(Pick(1, 4));
      w.out_row = uint16_t(Pick(0, 2)), w.out_col = uint16_t(Pick(0, w.out_width - 1));
      const int band = w.band_rows * w.width;
      const int act = PickRow(cfg_.act_depth, band);
      if (act < 0) return false;
      g.act = uint16_t(act);
      for (int m = 0; m < g.rows; ++m) {
        const int64_t r = w.RowOf(m);
        if (r >= 0) act_rows.push_back(act + int(r));
      }
    } else {
      const auto [act, run] = PickRun(Usable(act_writer_, reach[kLoadMod]));
      if (act < 0) return false;
      g.rows = uint16_t(std::min<int>(g.rows, run));
      if (g.acc + g.rows > cfg_.acc_depth) return false;
      if (g.broadcast && g.init_row >= g.acc && g.init_row < g.acc + g.rows) return false;
      g.act = uint16_t(act);
      for (int m = 0; m < g.rows; ++m) act_rows.push_back(act + m);
    }
    // Everything it reads was written by this program.
    for (const int r : act_rows) {
      if (!act_ok_[size_t(r)]) return false;
      c->acc.push_back({isa::kBufAct, r, r + 1, false});
    }
    if (g.load_weights) {
      for (int k = 0; k < g.kv; ++k) {
        if (!wgt_ok_[size_t(g.wgt + k)]) return false;
      }
      c->acc.push_back({isa::kBufWgt, g.wgt, g.wgt + g.kv, false});
    }
    if (g.accumulate) {
      for (int m = 0; m < g.rows; ++m) {
        if (acc_cols_[size_t(g.acc + m)] < g.nv) return false;
      }
    }
    if (g.broadcast) {
      if (acc_cols_[g.init_row] < g.nv) return false;
      c->acc.push_back({isa::kBufAcc, g.init_row, g.init_row + 1, false});
    }
    c->acc.push_back({isa::kBufAcc, g.acc, g.acc + g.rows, true});
    c->mod = kComputeMod;
    c->classes.push_back("gemm");
    c->classes.push_back(g.load_weights ? "gemm.load_weights" : "gemm.reuse_weights");
    c->classes.push_back(g.accumulate  ? "gemm.accumulate"
                         : g.broadcast ? "gemm.broadcast"
                                       : "gemm.overwrite");
    if (g.window) c->classes.push_back("gemm.window");
    if (g.kv == cfg_.r && g.nv == cfg_.c) c->classes.push_back("gemm.full_tile");
    if (g.nv < cfg_.c) c->classes.push_back("gemm.partial_nv");
    c->in = g;
    return true;
  }

  bool MakeStore(Candidate* c, bool vmem) {
    isa::Store s;
    s.format = uint8_t(Chance(50) ? isa::kFmtFp32 : isa::kFmtBf16);
    s.activation = uint8_t(Chance(40) ? isa::kActRelu : isa::kActNone);
    s.source = uint8_t(vmem ? isa::kSrcVmem : isa::kSrcAcc);
    std::vector<bool> written(vmem_cols_.size());
    for (size_t r = 0; r < written.size(); ++r) written[r] = vmem_cols_[r] > 0;
    const auto [a, run] =
        vmem ? PickRun(written) : PickRun(Usable(acc_writer_, Reach(kStoreMod)[kComputeMod]));
    if (a < 0) return false;
    s.rows = uint16_t(std::min(run, Chance(70) ? Pick(1, 8) : Pick(1, 40)));
    s.acc = uint16_t(a);
    const std::vector<int>& defined = vmem ? vmem_cols_ : acc_cols_;
    int cols = cfg_.c;
    for (int m = 0; m < s.rows; ++m) cols = std::min(cols, defined[size_t(a + m)]);
    if (cols < 1) return false;
    // Version 1.6: from column col, a multiple of 32 bytes (rows of more than one beat only).
    const int size = s.format == isa::kFmtFp32 ? 4 : 2, step = 32 / size;
    if (cols > step && Chance(30)) s.col = uint16_t(step * Pick(1, (cols - 1) / step));
    std::string beats;
    s.elems = uint16_t(PickElems(cols - s.col, size, &beats));
    const uint64_t row_bytes = uint64_t(s.elems) * (s.format == isa::kFmtFp32 ? 4 : 2);
    std::string cls;
    switch (rng_.Range(0, 2)) {
      case 0: s.hbm_stride = uint32_t(Round32(row_bytes)), cls = "stride_packed"; break;
      case 1:
        s.hbm_stride = uint32_t(Round32(row_bytes) + 32 * Pick(1, 3)), cls = "stride_gap";
        break;
      default: s.hbm_stride = uint32_t(32 * Pick(64, 256)), cls = "stride_far"; break;
    }
    const uint64_t span = uint64_t(s.rows - 1) * s.hbm_stride + row_bytes;
    if (span > spec_.out_bytes) return false;
    const uint64_t slots = (spec_.out_bytes - span) / isa::kHbmAlign;
    s.hbm_addr = spec_.out_addr +
                 isa::kHbmAlign * uint64_t(Pick(0, int(std::min<uint64_t>(slots, 1 << 20))));
    c->acc.push_back({vmem ? isa::kBufVmem : isa::kBufAcc, a, a + s.rows, false});
    c->mod = kStoreMod;
    c->classes.push_back("store");
    if (vmem) c->classes.push_back("store.vmem");
    c->classes.push_back(std::string("store.") + (s.format == isa::kFmtFp32 ? "fp32" : "bf16"));
    c->classes.push_back("store." + beats);
    c->classes.push_back("store." + cls);
    if (s.activation == isa::kActRelu) c->classes.push_back("store.relu");
    if (s.col > 0) c->classes.push_back("store.col");
    c->in = s;
    return true;
  }

  // A LOAD into the vector memory: fp32 or bf16 rows, elements by beat class.
  bool MakeVmemLoad(Candidate* c) {
    isa::Load l;
    l.buffer = isa::kBufVmem;
    l.format = uint8_t(Chance(50) ? isa::kFmtFp32 : isa::kFmtBf16);
    const int size = l.format == isa::kFmtBf16 ? 2 : 4;
    std::string beats;
    l.elems = uint16_t(PickElems(cfg_.c, size, &beats));
    l.rows = uint16_t(Pick(1, std::min(cfg_.vmem_depth, Chance(70) ? 6 : 24)));
    const int dst = PickRow(cfg_.vmem_depth, l.rows);
    if (dst < 0) return false;
    l.dst = uint16_t(dst);
    if (!PickRead(l.rows, uint64_t(l.elems) * size, &l, c)) return false;
    c->mod = kStoreMod;
    c->acc.push_back({isa::kBufVmem, dst, dst + l.rows, true});
    const std::string name = std::string("load.vmem.") + (size == 2 ? "bf16" : "fp32");
    c->classes.insert(c->classes.begin(), "load.vmem");
    c->classes.push_back(name);
    c->classes.push_back("load.vmem." + beats);
    c->in = l;
    return true;
  }

  // A VOP: a random op on 2-D strided operands (A from the accumulators or the vector memory, B a
  // row of either or the scalar), or an accumulation (stride 0 on the destination, B the
  // destination: a row read as the element before wrote it). Every row it reads holds defined
  // lanes; the destination's defined lanes are those of what it read, element by element.
  bool MakeVop(Candidate* c) {
    isa::Vop v;
    v.op = uint8_t(Pick(0, isa::kNumVectorOps - 1));
    const isa::VectorOpInfo& info = isa::kVectorOps[v.op];
    const Clock reach = Reach(kStoreMod);
    const std::vector<bool> acc_ok = Usable(acc_writer_, reach[kComputeMod]);
    std::vector<int> acc_cols(acc_cols_.size(), 0);
    for (size_t r = 0; r < acc_cols.size(); ++r) acc_cols[r] = acc_ok[r] ? acc_cols_[r] : 0;
    const bool accumulate = Chance(20) && info.reads_b;
    v.n = uint16_t(Chance(70) ? Pick(1, 4) : Pick(1, 9));
    v.m = uint16_t(Pick(1, 3));
    const auto stride = [&] { return uint16_t(Chance(30) ? 0 : Pick(1, 3)); };
    v.asi = stride(), v.aso = stride(), v.bsi = stride(), v.bso = stride();
    v.dsi = stride(), v.dso = stride();
    v.a_vmem = Chance(50);
    if (accumulate) {
      v.b_vmem = true, v.dsi = v.dso = v.bsi = v.bso = 0;
    } else if (info.reads_b) {
      const int b = rng_.Range(0, 2);  // vmem, acc, the scalar
      v.b_vmem = b == 0, v.b_scalar = b == 2;
    } else {
      v.b_scalar = Chance(30);  // ignored by the op, but legal
    }
    if (v.b_scalar) {
      static const uint32_t kScalars[] = {0x00000000, 0x80000000, 0x3F800000, 0xBF800000,
                                          0x3DCCCCCD, 0x40C00000, 0x7F800000, 0x7FC00000,
                                          0x00000001, 0xC2F00000};
      v.scalar = Chance(50) ? kScalars[rng_.Range(0, 9)] : uint32_t(rng_.Next());
    }
    const auto last = [&](int base, int inner, int outer) {
      return base + (v.m - 1) * outer + (v.n - 1) * inner;
    };
    const auto pick_base = [&](int depth, int inner, int outer) {
      const int span = last(0, inner, outer) + 1;
      return PickRow(depth, span);
    };
    const int ab = pick_base(v.a_vmem ? cfg_.vmem_depth : cfg_.acc_depth, v.asi, v.aso);
    const int db = pick_base(cfg_.vmem_depth, v.dsi, v.dso);
    if (ab < 0 || db < 0) return false;
    v.a = uint16_t(ab), v.d = uint16_t(db);
    const bool reads_b_row = info.reads_b && !v.b_scalar;
    bool b_unused = false;
    if (accumulate) {
      v.b = v.d;
    } else if (reads_b_row) {
      const int bb = pick_base(v.b_vmem ? cfg_.vmem_depth : cfg_.acc_depth, v.bsi, v.bso);
      if (bb < 0) return false;
      v.b = uint16_t(bb);
    } else if (Chance(50)) {
      // B's row fields mean nothing here (the scalar, or an op without B): any value is legal.
      v.b = uint16_t(rng_.Range(0, 65535));
      v.bsi = uint16_t(rng_.Range(0, 65535)), v.bso = uint16_t(rng_.Range(0, 65535));
      b_unused = true;
    }
    // Walk the elements in order: every row read holds defined lanes (the vector memory's as the
    // elements before left it).
    std::vector<int> vm = vmem_cols_;
    for (int i = 0; i < v.m; ++i) {
      for (int j = 0; j < v.n; ++j) {
        const int ra = v.a + i * v.aso + j * v.asi, rb = v.b + i * v.bso + j * v.bsi;
        const int rd = v.d + i * v.dso + j * v.dsi;
        int cols = v.a_vmem ? vm[size_t(ra)] : acc_cols[size_t(ra)];
        if (reads_b_row) cols = std::min(cols, v.b_vmem ? vm[size_t(rb)] : acc_cols[size_t(rb)]);
        if (info.reads_d) cols = std::min(cols, vm[size_t(rd)]);
        if (cols < 1) return false;
        vm[size_t(rd)] = cols;
        c->acc.push_back({v.a_vmem ? isa::kBufVmem : isa::kBufAcc, ra, ra + 1, false});
        if (reads_b_row) {
          c->acc.push_back({v.b_vmem ? isa::kBufVmem : isa::kBufAcc, rb, rb + 1, false});
        }
        c->acc.push_back({isa::kBufVmem, rd, rd + 1, true});
      }
    }
    vop_cols_ = std::move(vm);
    c->mod = kStoreMod;
    c->classes.push_back("vop");
    c->classes.push_back(std::string("vop.") + info.name);
    c->classes.push_back(v.a_vmem ? "vop.a_vmem" : "vop.a_acc");
    if (reads_b_row) c->classes.push_back(v.b_vmem ? "vop.b_vmem" : "vop.b_acc");
    if (v.b_scalar) c->classes.push_back("vop.b_scalar");
    if (accumulate) c->classes.push_back("vop.accumulate");
    if (v.n * v.m > 4) c->classes.push_back("vop.batches_several");
    if (b_unused) c->classes.push_back("vop.b_unused_fields");
    c->in = v;
    return true;
  }

  // The incoming queues of a module, as (flag, queue) pairs, and the outgoing ones.
  struct Port {
    bool isa::Deps::*flag;
    int queue;
  };
  static std::vector<Port> Pops(int mod) {
    if (mod == kLoadMod) return {{&isa::Deps::pop_next, 1}};
    if (mod == kComputeMod) return {{&isa::Deps::pop_prev, 0}, {&isa::Deps::pop_next, 3}};
    return {{&isa::Deps::pop_prev, 2}};
  }
  static std::vector<Port> Pushes(int mod) {
    if (mod == kLoadMod) return {{&isa::Deps::push_next, 0}};
    if (mod == kComputeMod) return {{&isa::Deps::push_prev, 1}, {&isa::Deps::push_next, 2}};
    return {{&isa::Deps::push_prev, 3}};
  }
  static const char* FlagName(bool isa::Deps::*f) {
    if (f == &isa::Deps::pop_prev) return "pop_prev";
    if (f == &isa::Deps::pop_next) return "pop_next";
    if (f == &isa::Deps::push_prev) return "push_prev";
    return "push_next";
  }

  bool Try(RandomProgram* p, int kind) {
    Candidate c;
    const bool made = kind < 4    ? MakeLoad(&c)
                      : kind < 8  ? MakeGemm(&c)
                      : kind < 10 ? MakeStore(&c, false)
                      : kind < 11 ? MakeVmemLoad(&c)
                      : kind < 14 ? MakeVop(&c)
                                  : MakeStore(&c, true);
    if (!made) return false;
    isa::CheckContext ctx = ctx_;
    ctx.pc = uint32_t(p->instrs.size());
    if (!isa::Check(c.in, cfg_, ctx).ok()) return false;
    // What it must wait for: the last earlier instruction of each other module it conflicts with.
    Clock need{};
    for (const auto& [mod, index, acc] : past_) {
      if (mod != c.mod && index + 1 > need[size_t(mod)] && Conflict(acc, c.acc)) {
        need[size_t(mod)] = index + 1;
      }
    }
    const auto covered = [&](const Clock& k) {
      for (size_t m = 0; m < 3; ++m) {
        if (int(m) != c.mod && k[m] < need[m]) return false;
      }
      return true;
    };
    isa::Deps d;
    Clock k = clock_[size_t(c.mod)];
    for (const Port& port : Pops(c.mod)) {
      const auto& q = queues_[size_t(port.queue)];
      if (q.empty()) continue;
      const bool helps = !covered(k) && Merge(k, q.front()) != k;
      if (helps || Chance(60)) {
        d.*port.flag = true;
        k = Merge(k, q.front());
      }
    }
    if (!covered(k)) return false;
    // Accepted.
    for (const Port& port : Pops(c.mod)) {
      if (d.*port.flag) queues_[size_t(port.queue)].pop_front();
    }
    k[size_t(c.mod)] = ++count_[size_t(c.mod)];
    clock_[size_t(c.mod)] = k;
    for (const Port& port : Pushes(c.mod)) {
      if (pushes_[size_t(port.queue)] < kMaxPushes && Chance(40)) {
        d.*port.flag = true;
        queues_[size_t(port.queue)].push_back(k);
        ++pushes_[size_t(port.queue)];
      }
    }
    const std::string kind_name = c.classes.front();
    for (const Port& port : Pops(c.mod)) {
      if (d.*port.flag) classes_.insert("flags." + kind_name + "." + FlagName(port.flag));
    }
    for (const Port& port : Pushes(c.mod)) {
      if (d.*port.flag) classes_.insert("flags." + kind_name + "." + FlagName(port.flag));
    }
    isa::DepsOf(c.in) = d;
    // The buffers' rows it defines.
    if (const auto* l = std::get_if<isa::Load>(&c.in)) {
      const int span = l->hold ? 0 : l->transpose ? l->elems : l->rows;  // hold: the held row
      const int index = count_[size_t(c.mod)] - 1;
      for (int r = l->dst; r < l->dst + span; ++r) {
        if (l->buffer == isa::kBufAct) act_ok_[size_t(r)] = true, act_writer_[size_t(r)] = index;
        if (l->buffer == isa::kBufWgt) wgt_ok_[size_t(r)] = true, wgt_writer_[size_t(r)] = index;
        if (l->buffer == isa::kBufAcc)
          acc_cols_[size_t(r)] = cfg_.c, acc_writer_[size_t(r)] = index;
        if (l->buffer == isa::kBufVmem) vmem_cols_[size_t(r)] = cfg_.c;
      }
      p->inputs.insert(p->inputs.end(), c.reads.begin(), c.reads.end());
    } else if (const auto* g = std::get_if<isa::Gemm>(&c.in)) {
      for (int r = g->acc; r < g->acc + g->rows; ++r) {
        acc_cols_[size_t(r)] = std::max<int>(acc_cols_[size_t(r)], g->nv);
        acc_writer_[size_t(r)] = count_[size_t(c.mod)] - 1;
      }
    } else if (std::holds_alternative<isa::Vop>(c.in)) {
      vmem_cols_ = vop_cols_;
    }
    ctx_.Advance(c.in);
    past_.push_back({c.mod, count_[size_t(c.mod)] - 1, std::move(c.acc)});
    classes_.insert(c.classes.begin(), c.classes.end());
    p->instrs.push_back(std::move(c.in));
    return true;
  }

  struct Past {
    int mod = 0;
    int index = 0;  // among its module's instructions
    std::vector<Access> acc;
  };

  const isa::MachineConfig& cfg_;
  const RandomProgramSpec& spec_;
  Rng& rng_;
  std::vector<bool> act_ok_, wgt_ok_;  // rows a LOAD of this program wrote
  std::vector<int> acc_cols_;          // per accumulator row: its first columns written
  // The last writer of each row (its index among its module's instructions; -1: none).
  std::vector<int> act_writer_, wgt_writer_, acc_writer_;
  // Per vector-memory row: its first lanes holding defined values (0: never written); a VOP
  // candidate's result until it is accepted.
  std::vector<int> vmem_cols_, vop_cols_;
  isa::CheckContext ctx_;
  std::vector<Past> past_;
  std::array<int, 3> count_{};
  std::array<Clock, 3> clock_{};
  std::array<std::deque<Clock>, 4> queues_;
  std::array<int, 4> pushes_{};
  std::set<std::string> classes_;
};

}  // namespace

const std::vector<std::string>& RandomProgramClasses() {
  static const std::vector<std::string> kClasses = [] {
    std::vector<std::string> v;
    const char* const beats[] = {"beats_one_partial", "beats_one_full", "beats_several",
                                 "beats_several_partial"};
    for (const char* l :
         {"load.act", "load.wgt", "load.acc", "load.act.transpose", "load.wgt.transpose"}) {
      v.push_back(l);
      for (const char* b : beats) v.push_back(fmt::format("{}.{}", l, b));
      v.push_back(fmt::format("{}.last_row", l));
    }
    for (const char* s : {"stride_zero", "stride_packed", "stride_gap", "stride_far"})
      v.push_back(s);
    v.push_back("load.acc.hold");
    v.push_back("load.acc.add");
    for (const char* f : {"pop_next", "push_next"}) {
      for (const char* l : {"load.act", "load.wgt", "load.act.transpose", "load.wgt.transpose"}) {
        v.push_back(fmt::format("flags.{}.{}", l, f));
      }
    }
    for (const char* f : {"pop_prev", "pop_next", "push_prev", "push_next"}) {
      v.push_back(fmt::format("flags.load.acc.{}", f));
      v.push_back(fmt::format("flags.gemm.{}", f));
    }
    v.push_back("flags.store.pop_prev");
    v.push_back("flags.store.push_prev");
    // The vector unit (machines with VmemDepth > 0 only).
    for (const char* l : {"load.vmem", "load.vmem.fp32", "load.vmem.bf16"}) v.push_back(l);
    for (const char* b : beats) v.push_back(fmt::format("load.vmem.{}", b));
    for (const char* f : {"pop_prev", "push_prev"}) {
      v.push_back(fmt::format("flags.load.vmem.{}", f));
      v.push_back(fmt::format("flags.vop.{}", f));
    }
    for (const char* x :
         {"vop", "vop.a_vmem", "vop.a_acc", "vop.b_vmem", "vop.b_acc", "vop.b_scalar",
          "vop.accumulate", "vop.batches_several", "store.vmem", "vop.b_unused_fields"}) {
      v.push_back(x);
    }
    for (const auto& op : isa::kVectorOps) v.push_back(fmt::format("vop.{}", op.name));
    for (const char* g :
         {"gemm", "gemm.load_weights", "gemm.reuse_weights", "gemm.accumulate", "gemm.broadcast",
          "gemm.overwrite", "gemm.window", "gemm.full_tile", "gemm.partial_nv"}) {
      v.push_back(g);
    }
    for (const char* s : {"store", "store.fp32", "store.bf16", "store.relu", "store.stride_packed",
                          "store.stride_gap", "store.stride_far", "store.col"}) {
      v.push_back(s);
    }
    for (const char* b : beats) v.push_back(fmt::format("store.{}", b));
    return v;
  }();
  return kClasses;
}

RandomProgram MakeRandomProgram(const isa::MachineConfig& cfg, const RandomProgramSpec& spec,
                                Rng& rng) {
  return Generator(cfg, spec, rng).Make();
}

}  // namespace tpu::tb
