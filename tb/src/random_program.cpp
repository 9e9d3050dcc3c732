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

// Rows [lo, hi) of buffer `buf` (0 act, 1 weights, 2 accumulators), read or written.
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
        acc_writer_(size_t(cfg.acc_depth), -1) {
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
    // Each slot draws a kind (4 LOAD : 4 GEMM : 2 STORE) and tries it with new fields up to 50
    // times (a GEMM or STORE needs rows written and tokens to order it), then any kind.
    for (int n = 0; n < spec_.instructions; ++n) {
      const int kind = rng_.Range(0, 9);
      bool done = false;
      for (int attempt = 0; attempt < 50 && !done; ++attempt) done = Try(&p, kind);
      for (int attempt = 0; attempt < 200 && !done; ++attempt) done = Try(&p, rng_.Range(0, 9));
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
    const int span = l.transpose ? l.elems : l.rows;
    const int dst = PickRow(depth, span);
    if (dst < 0) return false;
    l.dst = uint16_t(dst);
    if (!PickRead(l.rows, uint64_t(l.elems) * size, &l, c)) return false;
    c->mod = l.buffer == isa::kBufAcc ? kComputeMod : kLoadMod;
    c->acc.push_back({l.buffer, dst, dst + span, true});
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

  bool MakeStore(Candidate* c) {
    isa::Store s;
    s.format = uint8_t(Chance(50) ? isa::kFmtFp32 : isa::kFmtBf16);
    s.activation = uint8_t(Chance(40) ? isa::kActRelu : isa::kActNone);
    const auto [a, run] = PickRun(Usable(acc_writer_, Reach(kStoreMod)[kComputeMod]));
    if (a < 0) return false;
    s.rows = uint16_t(std::min(run, Chance(70) ? Pick(1, 8) : Pick(1, 40)));
    s.acc = uint16_t(a);
    int cols = cfg_.c;
    for (int m = 0; m < s.rows; ++m) cols = std::min(cols, acc_cols_[size_t(a + m)]);
    if (cols < 1) return false;
    std::string beats;
    s.elems = uint16_t(PickElems(cols, s.format == isa::kFmtFp32 ? 4 : 2, &beats));
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
    c->acc.push_back({isa::kBufAcc, a, a + s.rows, false});
    c->mod = kStoreMod;
    c->classes.push_back("store");
    c->classes.push_back(std::string("store.") + (s.format == isa::kFmtFp32 ? "fp32" : "bf16"));
    c->classes.push_back("store." + beats);
    c->classes.push_back("store." + cls);
    if (s.activation == isa::kActRelu) c->classes.push_back("store.relu");
    c->in = s;
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
    if (!(kind < 4 ? MakeLoad(&c) : kind < 8 ? MakeGemm(&c) : MakeStore(&c))) return false;
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
      const int span = l->transpose ? l->elems : l->rows;
      const int index = count_[size_t(c.mod)] - 1;
      for (int r = l->dst; r < l->dst + span; ++r) {
        if (l->buffer == isa::kBufAct) act_ok_[size_t(r)] = true, act_writer_[size_t(r)] = index;
        if (l->buffer == isa::kBufWgt) wgt_ok_[size_t(r)] = true, wgt_writer_[size_t(r)] = index;
        if (l->buffer == isa::kBufAcc)
          acc_cols_[size_t(r)] = cfg_.c, acc_writer_[size_t(r)] = index;
      }
      p->inputs.insert(p->inputs.end(), c.reads.begin(), c.reads.end());
    } else if (const auto* g = std::get_if<isa::Gemm>(&c.in)) {
      for (int r = g->acc; r < g->acc + g->rows; ++r) {
        acc_cols_[size_t(r)] = std::max<int>(acc_cols_[size_t(r)], g->nv);
        acc_writer_[size_t(r)] = count_[size_t(c.mod)] - 1;
      }
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
    for (const char* g :
         {"gemm", "gemm.load_weights", "gemm.reuse_weights", "gemm.accumulate", "gemm.broadcast",
          "gemm.overwrite", "gemm.window", "gemm.full_tile", "gemm.partial_nv"}) {
      v.push_back(g);
    }
    for (const char* s : {"store", "store.fp32", "store.bf16", "store.relu", "store.stride_packed",
                          "store.stride_gap", "store.stride_far"}) {
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
