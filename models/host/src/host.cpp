// SPDX-License-Identifier: Apache-2.0
// The host library (tpu/host.h): layouts, the program builder and the workload compilers.
#include "tpu/host.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <stdexcept>

#include "tpu/vpu.h"

namespace tpu::host {
namespace {

[[noreturn]] void Bad(const std::string& msg) {
  throw std::invalid_argument(msg);
}

void CheckConfig(const isa::MachineConfig& cfg, const char* who) {
  auto bad = [](int v) { return v < 1 || v > 65535; };
  if (bad(cfg.r) || bad(cfg.c) || bad(cfg.act_depth) || bad(cfg.wgt_depth) || bad(cfg.acc_depth) ||
      bad(cfg.queue_depth) || cfg.hbm_bytes == 0) {
    Bad(fmt::format(
        "{}: machine R={} C={} ActDepth={} WgtDepth={} AccDepth={} QueueDepth={} must be in "
        "1..65535 and HbmBytes={} at least 1",
        who, cfg.r, cfg.c, cfg.act_depth, cfg.wgt_depth, cfg.acc_depth, cfg.queue_depth,
        cfg.hbm_bytes));
  }
}

void CheckDim(const char* who, const char* name, int v) {
  if (v < 1) Bad(fmt::format("{}: {} = {} must be at least 1", who, name, v));
}

void CheckLayoutSize(const TiledMatrix& l, size_t size, int elem_bytes, const char* what) {
  if (l.elem_bytes != elem_bytes) {
    Bad(fmt::format("{}: the layout holds {}-byte elements, the host tensor {}-byte ones", what,
                    l.elem_bytes, elem_bytes));
  }
  if (size != size_t(l.rows) * l.cols) {
    Bad(fmt::format("{}: host tensor has {} elements, the layout {}×{} = {}", what, size, l.rows,
                    l.cols, size_t(l.rows) * l.cols));
  }
}

template <typename T>
void WriteTiled(isa::Machine& m, const TiledMatrix& l, const std::vector<T>& v) {
  for (int t = 0; t < l.Tiles(); ++t) {
    const int c0 = t * l.tile, cols = l.TileCols(t);
    for (int r = 0; r < l.rows; ++r) {
      m.WriteHbm(l.RowAddr(t, r), &v[size_t(r) * l.cols + c0], uint64_t(cols) * sizeof(T));
    }
  }
}

template <typename T>
std::vector<T> ReadTiled(const isa::Machine& m, const TiledMatrix& l) {
  std::vector<T> v(size_t(l.rows) * l.cols);
  for (int t = 0; t < l.Tiles(); ++t) {
    const int c0 = t * l.tile, cols = l.TileCols(t);
    for (int r = 0; r < l.rows; ++r) {
      m.ReadHbm(l.RowAddr(t, r), &v[size_t(r) * l.cols + c0], uint64_t(cols) * sizeof(T));
    }
  }
  return v;
}

// A convolution read through GEMM windows (version 1.1): the input stays NHWC in HBM (pixel rows
// of Cin channels, cut into chunks of kc channels: a TiledMatrix of N·H·W rows), the weights are
// K-tiles per (tap, chunk) (WeightTiles with kseg = Cin).
struct ConvWin {
  ConvShape s;
  int kc = 0, chunks = 0;
  TiledMatrix x;
};

// One image's part of an output block: pixels p0 .. p0 + rows - 1 of image b (p = oh·OW + ow),
// and the input rows its taps read (band_rows = 0: every tap is in the padding), `width` pixels
// each (W, or a phase's PW).
struct Segment {
  int b = 0, p0 = 0, rows = 0, band_row = 0, band_rows = 0, width = 0;
};

// With a stride s > 1, tap (i, j) reads only input rows ≡ a and columns ≡ c (mod s), with
// dh = i − pad = qh·s + a and dw = j − pad = qw·s + c (0 ≤ a, c < s): the phase image of PH =
// ⌈(H − a) / s⌉ rows × PW = ⌈(W − c) / s⌉ pixels, which output (oh, ow) reads at phase pixel
// (oh + qh, ow + qw), a window of stride 1 (LayerPlan::phases).
struct Phase {
  int a = 0, c = 0, qh = 0, qw = 0, ph = 0, pw = 0;
};
Phase TapPhase(const ConvShape& s, int tap) {
  const auto floor_div = [](int x, int y) { return x >= 0 ? x / y : -((-x + y - 1) / y); };
  const int dh = tap / s.kw - s.pad, dw = tap % s.kw - s.pad;
  Phase p;
  p.qh = floor_div(dh, s.stride), p.qw = floor_div(dw, s.stride);
  p.a = dh - p.qh * s.stride, p.c = dw - p.qw * s.stride;
  p.ph = s.h > p.a ? (s.h - p.a + s.stride - 1) / s.stride : 0;
  p.pw = s.w > p.c ? (s.w - p.c + s.stride - 1) / s.stride : 0;
  return p;
}

// `krow` >= 0: the input rows of kernel row krow's taps only (a block's K-tiles split by kernel
// row: LayerPlan::k_groups); -1: of every tap.
std::vector<Segment> Segments(const ConvShape& s, int m0, int rows, int krow = -1) {
  const int per_image = s.OutH() * s.OutW(), ow = s.OutW();
  const int k0 = krow < 0 ? 0 : krow, k1 = krow < 0 ? s.kh - 1 : krow;
  std::vector<Segment> v;
  for (int m = m0; m < m0 + rows;) {
    Segment g;
    g.b = m / per_image;
    g.p0 = m % per_image;
    g.rows = std::min(m0 + rows - m, per_image - g.p0);
    const int oh_a = g.p0 / ow, oh_b = (g.p0 + g.rows - 1) / ow;
    const int lo = std::max(0, oh_a * s.stride - s.pad + k0);
    const int hi = std::min(s.h - 1, oh_b * s.stride - s.pad + k1);
    if (lo <= hi) g.band_row = lo, g.band_rows = hi - lo + 1;
    g.width = s.w;
    v.push_back(g);
    m += g.rows;
  }
  return v;
}

// The segments of K-group kg of a block split into k_groups (LayerPlan::k_groups): every tap's
// input rows (1 group), kernel row kg's, or (phases) tap kg's phase rows, PW pixels wide.
std::vector<Segment> GroupSegments(const ConvShape& s, int m0, int rows, int k_groups, bool phases,
                                   int kg) {
  if (!phases) return Segments(s, m0, rows, k_groups > 1 ? kg : -1);
  const Phase ph = TapPhase(s, kg);
  std::vector<Segment> v = Segments(s, m0, rows);
  for (auto& g : v) {
    const int oh_a = g.p0 / s.OutW(), oh_b = (g.p0 + g.rows - 1) / s.OutW();
    const int lo = std::max(0, oh_a + ph.qh), hi = std::min(ph.ph - 1, oh_b + ph.qh);
    g.band_row = g.band_rows = 0;
    g.width = ph.pw;
    if (lo <= hi && ph.pw > 0) g.band_row = lo, g.band_rows = hi - lo + 1;
  }
  return v;
}

// Activation-buffer rows the bands of a block of `rows` pixels from m0 take (all chunks; the
// split as GroupSegments').
int64_t BandRows(const ConvShape& s, int chunks, int m0, int rows, int k_groups = 1,
                 bool phases = false, int kg = 0) {
  int64_t n = 0;
  for (const auto& g : GroupSegments(s, m0, rows, k_groups, phases, kg)) {
    n += int64_t(g.band_rows) * g.width * chunks;
  }
  return n;
}

bool BoundaryTokens(const LayerPlan& lp, int wgt_slots, std::vector<char>* push,
                    std::vector<char>* pop);

// One GEMM of a workload: out = act(init + op(a)·op(b)), every tensor already allocated.
struct GemmOp {
  int m = 0, k = 0, n = 0;
  TiledMatrix a;
  WeightTiles b;
  // Transposes in hardware (ISA 1.3, transposing LOADs). a_t: `a` holds Aᵀ, K rows × M columns
  // in column tiles of a.tile (≤ max(R, C)); a block's K-tile comes in by one transposing LOAD
  // per column tile, so blocks start on a tile boundary (PlanLayer's m_align). kt_w then gives
  // the K-tile width.
  bool a_t = false;
  int kt_w = 0;
  // b_t: `b` holds Bᵀ (N × K in tiles of nt_w × kt_w); the weight tile (kt, nt) is Bᵀ's tile
  // (nt, kt), loaded transposed.
  bool b_t = false;
  // kResidual (version 1.5): C0 = res ⊕ bias, a hold LOAD of the tile's bias row and an add LOAD
  // of res's rows (without a bias, res's rows as they are).
  enum class InitKind { kNone, kC0, kBias, kResidual } init = InitKind::kNone;
  TiledMatrix c0;   // C0 (kC0) or the 1-row bias (kBias, kResidual; rows = 0 without)
  TiledMatrix res;  // kResidual: M × N fp32
  TiledMatrix out;
  TiledMatrix out2;  // rows > 0: a second copy of the output, bf16 (the STOREs twice)
  bool relu = false;
  const ConvWin* win = nullptr;  // a convolution through windows (a is unused)
  // A 1×1 convolution with a stride > 1 and no padding (CompileConv's pointwise): `a` holds the
  // NHWC input (N·H·W pixel rows), and A's row m, output pixel (n, oh, ow), is input pixel
  // (n, oh·stride, ow·stride): a block's K-tile comes in by one LOAD per output row it spans, with
  // hbm_stride = stride · pitch.
  const ConvShape* sub = nullptr;
};

// How many load steps a layer's LOADs come ahead of its other instructions in program order
// (Emitter::Later; at most D - 1).
constexpr int kLoadLead = 2;

// About how long one accumulator LOAD holds the compute queue besides its rows (its HBM latency
// on a busy channel): the planner spaces a block's initial-value LOADs by it (Emitter).
constexpr double kAccLoadCycles = 300;

// PlanBlocks' estimate adds this share of its HBM bytes' time to every plan: a compute-bound plan's
// traffic still costs (the channel is half-duplex, a block's stores compete with the next block's
// loads), so among plans the estimate ties, the one that moves fewer bytes wins, however the fill
// term leans (16x16_1ch: 1024^3 97.2% -> 99.1%, 4096x256x64 278,641 -> 267,893 cycles).
constexpr double kBytesWeight = 0.02;

// A block's N tiles are stored in groups of StoreGroup(nts) (at most 64 groups, so at most 128
// compute->store tokens wait over two blocks): the last K tile's GEMM of a group's last tile
// pushes, the group's first STORE pops.
int StoreGroup(int nts) {
  return (nts + 63) / 64;
}
bool StoreGroupEnd(int j, int nts) {
  return (j + 1) % StoreGroup(nts) == 0 || j == nts - 1;
}

// The op's K-tile width.
int KtW(const GemmOp& op) {
  return op.win ? op.win->kc : op.a_t ? op.kt_w : op.a.tile;
}

// Emits GEMMs (one per layer) with the tiling and token scheme of the header comment.
class Emitter {
 public:
  Emitter(Program* p, Stats* st) : p_(p), st_(st), t_(PlanTiling(p->config())) {}

  // `barrier_after`: another layer reads this one's output, so a barrier follows.
  // `plan`: the windowed convolution's (PlanConvWindow); else PlanLayer's.
  void EmitGemm(const GemmOp& op, bool barrier_after, const LayerPlan* plan = nullptr) {
    const auto& cfg = p_->config();
    const int kt_w = KtW(op), nt_w = op.out.tile;
    const bool b_ok = op.b_t ? op.b.ktile == nt_w && op.b.ntile == kt_w
                             : op.b.ktile == kt_w && op.b.ntile == nt_w;
    if (kt_w > cfg.r || kt_w * t_.wgt_slots > cfg.wgt_depth || nt_w > cfg.c || !b_ok ||
        (op.a_t &&
         (op.a.tile > std::max(cfg.r, cfg.c) || op.a.rows != op.k || op.a.cols != op.m))) {
      Bad(fmt::format("host: internal tiling error (kt_w={} nt_w={})", kt_w, nt_w));
    }
    Layer ly{
        op,   plan ? *plan : PlanLayer(cfg, op.m, op.k, op.n, kt_w, nt_w, op.a_t ? op.a.tile : 1),
        kt_w, barrier_after,
        0,    0,
        {},   {}};
    const LayerPlan& lp = ly.plan;
    if (lp.boundary_wait && !BoundaryTokens(lp, t_.wgt_slots, &ly.push, &ly.pop)) {
      Bad("host: internal error: block-boundary tokens");
    }
    lead_ = lp.boundary_wait ? 0 : uint64_t(std::clamp(lp.depth - 1, 0, kLoadLead));
    std::vector<Block> blocks;
    for (int mi = 0; mi < lp.m_blocks; ++mi) {
      for (int ni = 0; ni < lp.n_blocks; ++ni) {
        const int b = int(blocks.size());
        Block blk;
        blk.index = b;
        blk.m0 = mi * lp.mb;
        blk.rows = std::min(lp.mb, op.m - blk.m0);
        blk.nt0 = ni * lp.nb;
        blk.nts = std::min(lp.nb, lp.n_tiles - blk.nt0);
        blk.acc_base = (b % t_.acc_halves) * t_.acc_half_rows;
        blk.acc_wait = b >= t_.acc_halves;  // the STOREs of block b - halves must be done
        // A bias row per tile after the block's rows, when they fit its half: the first K-tile's
        // GEMMs start from it (broadcast) instead of a bias LOAD to every row.
        blk.bias_rows =
            op.init == GemmOp::InitKind::kBias && blk.nts * (blk.rows + 1) <= t_.acc_half_rows;
        blocks.push_back(blk);
      }
    }
    // The next block's initial value (its accumulator LOADs) is loaded in the middle of this
    // block's K-tiles, into the other half of the accumulators: the machine writes it beside this
    // block's GEMMs (the accumulators' two banks, docs/accel.md), where at the block's start it
    // would hold the array for the whole LOAD. Halfway, the STOREs of the block two before, which
    // free that half (its first LOAD pops their token), are done in all but the shortest blocks;
    // the GEMMs of the last K-tile push to the store module, so they wait for the LOAD in any
    // case. Where a block has one K-tile (or runs N-tile by N-tile) its LOADs come at its start.
    // The LOADs (one per N-tile, a hold and an add for a residual) are spread over the GEMM groups
    // of K-tiles mid_kt .. KT - 2 (mid_kt's alone when that is the last), one unit every
    // groups / units GEMM groups: a LOAD that cannot start holds the GEMMs behind it in the
    // compute queue, and when the machine ran one accumulator LOAD at a time a row of them left
    // the array idle for each one's HBM latency (a C0 of 32 N-tiles in 49-row blocks: 23% of the
    // cycles). The machine now runs up to four at once; the spread stays (a residual 1x1 layer
    // bound by HBM bandwidth: 323,396 cycles as planned, 326,259 with the spread from mid-block).
    const bool init = op.init != GemmOp::InitKind::kNone;
    const int mid_kt = lp.k_tiles / 2;
    const bool early = init && t_.acc_halves == 2 && !lp.n_outer && mid_kt > 0;
    for (size_t b = 0; b < blocks.size(); ++b) {
      Block& blk = blocks[b];
      ++st_->blocks;
      if (init && !(early && b > 0)) {
        for (const auto& unit : InitLoads(ly, &blk)) {
          for (const auto& l : unit) Later(l);
          st_->acc_loads += unit.size();
        }
      }
      if (lp.n_outer) {
        for (int j = 0; j < blk.nts; ++j) {
          for (int kt = 0; kt < lp.k_tiles; ++kt) EmitNStep(&ly, &blk, j, kt);
        }
      }
      for (int kt = 0; kt < lp.k_tiles && !lp.n_outer; ++kt) {
        if (early && kt == SpreadStart(ly, blk, blocks, b, mid_kt)) {
          const auto units = InitLoads(ly, &blocks[b + 1]);
          init_units_.assign(units.begin(), units.end());
          const uint64_t groups = uint64_t(std::max(1, lp.k_tiles - 1 - kt)) * blk.nts;
          init_every_ = std::max<uint64_t>(1, groups / units.size());
          init_count_ = 0;
        }
        if (op.win) {
          EmitWindowKStep(&ly, &blk, kt);
        } else {
          EmitKStep(&ly, &blk, kt);
        }
      }
      InitUnitsBeforeGroup(true);  // any left (none expected): before the block's STOREs
      EmitStores(ly, blk);
    }
    ReleaseAll();
    lead_ = 0;
    after_barrier_ = false;
    if (barrier_after) EmitBarrier();
  }

 private:
  // The layer being emitted, with its running GEMM and activation-group counts.
  struct Layer {
    const GemmOp& op;
    LayerPlan plan;
    int kt_w;            // the weight tile's rows
    bool barrier_after;  // another layer reads this one's output
    uint64_t g = 0;      // GEMMs emitted so far
    uint64_t a_group = 0;
    std::vector<char> push, pop;  // boundary_wait: per group / load step (BoundaryTokens)
    bool Push(uint64_t grp) const {
      return plan.boundary_wait ? push[grp] != 0 : grp + plan.depth < plan.gemms;
    }
    bool Pop(uint64_t step) const {
      return plan.boundary_wait ? pop[step] != 0 : step >= uint64_t(plan.depth);
    }
  };
  // One output block: rows [m0, m0 + rows) of tiles [nt0, nt0 + nts), in the accumulator from
  // acc_base; acc_wait: its first accumulator write must wait for an earlier block's STOREs.
  struct Block {
    int index = 0, m0 = 0, rows = 0, nt0 = 0, nts = 0, acc_base = 0;
    bool acc_wait = false;
    bool bias_rows = false;  // tile j's bias in row BiasRow(j), read by broadcast GEMMs
    int BiasRow(int j) const { return acc_base + nts * rows + j; }
  };

  // The GEMM's initial value at K-tile kt (the contract: +0, C0 or the bias, then the sum so far).
  static void SetInit(const GemmOp& op, const Block& blk, int kt, int j, isa::Gemm* gm) {
    const bool init = op.init != GemmOp::InitKind::kNone;
    gm->accumulate = kt > 0 || (init && !blk.bias_rows);
    gm->broadcast = kt == 0 && blk.bias_rows;
    gm->init_row = gm->broadcast ? uint16_t(blk.BiasRow(j)) : uint16_t(0);
  }

  // The accumulator's initial value of each tile of the block: C0's rows or the bias row, on
  // every row, or (bias_rows) once per tile: one LOAD of the block's full-width tiles' bias rows
  // (consecutive in HBM, pitch apart) and one for a ragged last tile. In units (a LOAD, or a
  // residual's hold and add), in program order; the first pops the block's acc_wait token.
  static std::vector<std::vector<isa::Load>> InitLoads(const Layer& ly, Block* blk) {
    std::vector<std::vector<isa::Load>> units;
    const GemmOp& op = ly.op;
    if (blk->bias_rows) {
      int j = 0;
      while (j < blk->nts) {
        const int w = op.out.TileCols(blk->nt0 + j);
        int n = 1;
        while (j + n < blk->nts && op.out.TileCols(blk->nt0 + j + n) == w) ++n;
        isa::Load l;
        l.buffer = isa::kBufAcc;
        l.hbm_addr = op.c0.RowAddr(blk->nt0 + j, 0);
        l.hbm_stride = uint32_t(op.c0.Pitch());
        l.dst = uint16_t(blk->BiasRow(j));
        l.rows = uint16_t(n);
        l.elems = uint16_t(w);
        l.deps.pop_next = blk->acc_wait;
        blk->acc_wait = false;
        units.push_back({l});
        j += n;
      }
      return units;
    }
    for (int j = 0; j < blk->nts; ++j) {
      const int nt = blk->nt0 + j;
      isa::Load l;
      l.buffer = isa::kBufAcc;
      units.emplace_back();
      if (op.init == GemmOp::InitKind::kResidual) {
        if (op.c0.rows > 0) {  // the tile's bias into the held row
          isa::Load h;
          h.buffer = isa::kBufAcc;
          h.hold = true;
          h.hbm_addr = op.c0.RowAddr(nt, 0);
          h.rows = 1;
          h.elems = uint16_t(op.out.TileCols(nt));
          h.deps.pop_next = blk->acc_wait;
          blk->acc_wait = false;
          units.back().push_back(h);
          l.add = true;
        }
        l.hbm_addr = op.res.RowAddr(nt, blk->m0);
        l.hbm_stride = uint32_t(op.res.Pitch());
      } else if (op.init == GemmOp::InitKind::kC0) {
        l.hbm_addr = op.c0.RowAddr(nt, blk->m0);
        l.hbm_stride = uint32_t(op.c0.Pitch());
      } else {
        l.hbm_addr = op.c0.RowAddr(nt, 0);
        l.hbm_stride = 0;  // the bias on every row
      }
      l.dst = uint16_t(blk->acc_base + j * blk->rows);
      l.rows = uint16_t(blk->rows);
      l.elems = uint16_t(op.out.TileCols(nt));
      l.deps.pop_next = blk->acc_wait;
      blk->acc_wait = false;
      units.back().push_back(l);
    }
    return units;
  }

  // The K-tile of block b from which the next block's initial-value LOADs are spread: mid_kt, or
  // earlier (not before K-tile 1) when the LOADs, each holding the compute queue about
  // kAccLoadCycles plus its rows, need more of the block's GEMM groups (about `rows` cycles each)
  // than K-tiles mid_kt .. KT - 2 hold. -1: no next block.
  int SpreadStart(const Layer& ly, const Block& blk, const std::vector<Block>& blocks, size_t b,
                  int mid_kt) const {
    if (b + 1 >= blocks.size()) return -1;
    const Block& next = blocks[b + 1];
    const bool pairs = ly.op.init == GemmOp::InitKind::kResidual && ly.op.c0.rows > 0;
    const int loads = next.bias_rows ? 1 + (next.nts > 1) : next.nts * (pairs ? 2 : 1);
    const double rows = next.bias_rows ? next.nts : double(next.nts) * next.rows;  // written
    const double cycles = double(loads) * kAccLoadCycles + rows;
    const int ktiles = int(std::ceil(cycles / (double(blk.rows) * blk.nts)));
    return std::clamp(ly.plan.k_tiles - 1 - ktiles, 1, mid_kt);
  }

  // Before a GEMM group (its first GEMM): the next pending unit of the next block's initial-value
  // LOADs when this is its place (every init_every_-th group), or all of them (`all`).
  void InitUnitsBeforeGroup(bool all = false) {
    while (!init_units_.empty() && (all || init_count_ % init_every_ == 0)) {
      for (const auto& l : init_units_.front()) Later(l);
      st_->acc_loads += init_units_.front().size();
      init_units_.pop_front();
      if (!all) break;
    }
    if (!all) ++init_count_;
  }

  // The K-tile's width: A's tile's, or (a_t) the rest of K.
  static int KTileCols(const Layer& ly, int kt) {
    return ly.op.a_t ? std::min(ly.kt_w, ly.op.k - kt * ly.kt_w) : ly.op.a.TileCols(kt);
  }

  // The LOADs of the block's A rows of K-tile kt into activation-buffer row act_row: one, or
  // (a_t) one transposing LOAD per column tile of Aᵀ the block's rows span.
  static void ActLoads(const Layer& ly, const Block& blk, int kt, int act_row,
                       std::vector<isa::Load>* loads) {
    const GemmOp& op = ly.op;
    isa::Load x;
    x.buffer = isa::kBufAct;
    if (op.sub) {
      const ConvShape& cs = *op.sub;
      const int oh_n = cs.OutH(), ow_n = cs.OutW(), end = blk.m0 + blk.rows;
      x.hbm_stride = uint32_t(uint64_t(cs.stride) * op.a.Pitch());
      x.elems = uint16_t(op.a.TileCols(kt));
      for (int m = blk.m0; m < end;) {
        const int img = m / (oh_n * ow_n), oh = m / ow_n % oh_n, ow = m % ow_n;
        const int n = std::min(ow_n - ow, end - m);
        const int64_t pixel = (int64_t(img) * cs.h + int64_t(oh) * cs.stride) * cs.w +
                              int64_t(ow) * cs.stride;  // < N·H·W (CompileConv checks it fits)
        x.hbm_addr = op.a.RowAddr(kt, int(pixel));
        x.dst = uint16_t(act_row + m - blk.m0);
        x.rows = uint16_t(n);
        loads->push_back(x);
        m += n;
      }
      return;
    }
    if (!op.a_t) {
      x.hbm_addr = op.a.RowAddr(kt, blk.m0);
      x.hbm_stride = uint32_t(op.a.Pitch());
      x.dst = uint16_t(act_row);
      x.rows = uint16_t(blk.rows);
      x.elems = uint16_t(op.a.TileCols(kt));
      loads->push_back(x);
      return;
    }
    if (blk.m0 % op.a.tile != 0) Bad("host: internal error: a transposed A block off its tiles");
    x.transpose = true;
    for (int c = blk.m0 / op.a.tile; c * op.a.tile < blk.m0 + blk.rows; ++c) {
      x.hbm_addr = op.a.RowAddr(c, kt * ly.kt_w);
      x.hbm_stride = uint32_t(op.a.Pitch());
      x.dst = uint16_t(act_row + c * op.a.tile - blk.m0);
      x.rows = uint16_t(KTileCols(ly, kt));
      x.elems = uint16_t(op.a.TileCols(c));
      loads->push_back(x);
    }
  }

  // GEMM g of a plain block: tile j at K-tile kt, A at act_row, after its load step (`loads`, the
  // activation LOAD if this GEMM brings it, and the weight tile).
  void EmitTileGemm(Layer* ly, Block* blk, int j, int kt, int act_row,
                    std::vector<isa::Load>* loads) {
    const GemmOp& op = ly->op;
    const LayerPlan& lp = ly->plan;
    const uint64_t g = ly->g++;
    const int kv = KTileCols(*ly, kt), nt = blk->nt0 + j, nv = op.out.TileCols(nt);
    const isa::Load w =
        EmitLoadStep(op, kt, nt, int(g % t_.wgt_slots) * ly->kt_w, kv, nv, g, ly->Pop(g), loads);
    isa::Gemm gm;
    gm.act = uint16_t(act_row);
    gm.wgt = w.dst;
    gm.acc = uint16_t(blk->acc_base + j * blk->rows);
    gm.rows = uint16_t(blk->rows);
    gm.kv = uint16_t(kv);
    gm.nv = uint16_t(nv);
    SetInit(op, *blk, kt, j, &gm);
    gm.load_weights = true;
    gm.deps.pop_prev = true;
    gm.deps.pop_next = blk->acc_wait;
    blk->acc_wait = false;
    gm.deps.push_prev = ly->Push(g);
    gm.deps.push_next = kt == lp.k_tiles - 1 && StoreGroupEnd(j, blk->nts);
    InitUnitsBeforeGroup();
    Later(gm);
    ++st_->gemms;
    st_->macs += uint64_t(blk->rows) * kv * nv;
  }

  // One K tile of the block: its activation LOAD (once, into the K-group's slot), then per N tile
  // a weight LOAD and the GEMM into that tile's accumulator rows.
  void EmitKStep(Layer* ly, Block* blk, int kt) {
    const LayerPlan& lp = ly->plan;
    const int act_row = int(ly->a_group++ % uint64_t(lp.act_slots)) * lp.act_slot_rows;
    for (int j = 0; j < blk->nts; ++j) {
      std::vector<isa::Load> loads;
      if (j == 0) ActLoads(*ly, *blk, kt, act_row, &loads);
      EmitTileGemm(ly, blk, j, kt, act_row, &loads);
    }
  }

  // GEMM (tile j, K-tile kt) of an N-tile-major block: the block's K-tile kt of A sits at row
  // kt·rows of the block's slot, loaded with the first tile's GEMM on it.
  void EmitNStep(Layer* ly, Block* blk, int j, int kt) {
    const LayerPlan& lp = ly->plan;
    const int act_row = (blk->index % lp.act_slots) * lp.act_slot_rows + kt * blk->rows;
    std::vector<isa::Load> loads;
    if (j == 0) ActLoads(*ly, *blk, kt, act_row, &loads);
    EmitTileGemm(ly, blk, j, kt, act_row, &loads);
  }

  // The input bands of K-group kg of a windowed convolution's block: its image segments and, for
  // segment i and chunk c, the band's buffer row off[i·chunks + c] in the group's activation slot,
  // chunk by chunk (a chunk's bands of consecutive segments follow each other in the buffer as in
  // HBM where the segments' input rows do: whole images, which one LOAD brings).
  struct Bands {
    std::vector<Segment> segs;
    int slot = 0;
    std::vector<int> off;
    bool phases = false;  // LayerPlan::phases: the bands are tap kg's phase rows
    Phase ph;
  };
  static Bands WindowBands(const Layer& ly, const Block& blk, int kg) {
    const ConvWin& cw = *ly.op.win;
    const LayerPlan& lp = ly.plan;
    Bands bd;
    bd.segs = GroupSegments(cw.s, blk.m0, blk.rows, lp.k_groups, lp.phases, kg);
    bd.phases = lp.phases;
    if (bd.phases) bd.ph = TapPhase(cw.s, kg);
    bd.slot = int((int64_t(blk.index) * lp.k_groups + kg) % lp.act_slots) * lp.act_slot_rows;
    bd.off.resize(bd.segs.size() * size_t(cw.chunks));
    int next = bd.slot;
    for (int c = 0; c < cw.chunks; ++c) {
      for (size_t i = 0; i < bd.segs.size(); ++i) {
        bd.off[i * size_t(cw.chunks) + size_t(c)] = next;
        next += bd.segs[i].band_rows * bd.segs[i].width;
      }
    }
    return bd;
  }

  // The LOADs of a K-group's bands: per chunk, one per run of segments whose input rows follow
  // each other (a run of whole images is one LOAD).
  static void BandLoads(const Layer& ly, const Bands& bd, std::vector<isa::Load>* loads) {
    const ConvWin& cw = *ly.op.win;
    const ConvShape& s = cw.s;
    const auto& segs = bd.segs;
    if (bd.phases) {  // per phase row, its PW pixels: every s-th pixel of an input row
      isa::Load x;
      x.buffer = isa::kBufAct;
      x.hbm_stride = uint32_t(uint64_t(s.stride) * cw.x.Pitch());
      for (int c = 0; c < cw.chunks; ++c) {
        x.elems = uint16_t(cw.x.TileCols(c));
        for (size_t i = 0; i < segs.size(); ++i) {
          for (int r = 0; r < segs[i].band_rows; ++r) {
            const int64_t ih = bd.ph.a + int64_t(s.stride) * (segs[i].band_row + r);
            x.hbm_addr = cw.x.RowAddr(c, int((segs[i].b * int64_t(s.h) + ih) * s.w + bd.ph.c));
            x.dst = uint16_t(bd.off[i * size_t(cw.chunks) + size_t(c)] + r * segs[i].width);
            x.rows = uint16_t(segs[i].width);
            loads->push_back(x);
          }
        }
      }
      return;
    }
    for (int c = 0; c < cw.chunks; ++c) {
      for (size_t i = 0; i < segs.size();) {
        if (segs[i].band_rows == 0) {
          ++i;
          continue;
        }
        const int first = segs[i].b * s.h + segs[i].band_row;
        int end = first + segs[i].band_rows;
        size_t e = i + 1;
        while (e < segs.size() && segs[e].band_rows > 0 &&
               segs[e].b * s.h + segs[e].band_row == end &&
               int64_t(end + segs[e].band_rows - first) * s.w <= 0xffff) {
          end += segs[e].band_rows;
          ++e;
        }
        isa::Load x;
        x.buffer = isa::kBufAct;
        x.hbm_addr = cw.x.RowAddr(c, first * s.w);
        x.hbm_stride = uint32_t(cw.x.Pitch());
        x.dst = uint16_t(bd.off[i * size_t(cw.chunks) + size_t(c)]);
        x.rows = uint16_t((end - first) * s.w);
        x.elems = uint16_t(cw.x.TileCols(c));
        loads->push_back(x);
        i = e;
      }
    }
  }

  // One K tile (tap, chunk) of a windowed convolution's block: at the K-group's first K tile its
  // bands are loaded into its activation slot; per N tile a weight LOAD and one GEMM per segment
  // (the first loads the weights, the others reuse them), each reading its band through the tap's
  // window.
  void EmitWindowKStep(Layer* ly, Block* blk, int kt) {
    const GemmOp& op = ly->op;
    const ConvWin& cw = *op.win;
    const ConvShape& s = cw.s;
    const LayerPlan& lp = ly->plan;
    const int tap = kt / cw.chunks, chunk = kt % cw.chunks;
    const int kv = op.b.KTileRows(kt);
    // The block's K-tiles run in k_groups runs (one per kernel row when split), each with its
    // bands in the next activation slot.
    const int kpg = lp.k_tiles / lp.k_groups, kg = kt / kpg;
    const Bands bd = WindowBands(*ly, *blk, kg);
    const auto& segs = bd.segs;
    for (int j = 0; j < blk->nts; ++j, ++ly->g) {
      const uint64_t g = ly->g;
      const int nt = blk->nt0 + j, nv = op.out.TileCols(nt);
      std::vector<isa::Load> loads;
      if (kt % kpg == 0 && j == 0) BandLoads(*ly, bd, &loads);
      const isa::Load w =
          EmitLoadStep(op, kt, nt, int(g % t_.wgt_slots) * ly->kt_w, kv, nv, g, ly->Pop(g), &loads);

      int acc_row = blk->acc_base + j * blk->rows;
      for (size_t i = 0; i < segs.size(); ++i) {
        const Segment& sg = segs[i];
        isa::Gemm gm;
        gm.act = uint16_t(sg.band_rows ? bd.off[i * size_t(cw.chunks) + size_t(chunk)] : bd.slot);
        gm.wgt = w.dst;
        gm.acc = uint16_t(acc_row);
        gm.rows = uint16_t(sg.rows);
        gm.kv = uint16_t(kv);
        gm.nv = uint16_t(nv);
        SetInit(op, *blk, kt, j, &gm);
        gm.load_weights = i == 0;
        gm.window = true;
        gm.win.stride = uint8_t(bd.phases ? 1 : s.stride);
        gm.win.dh = int8_t(bd.phases ? bd.ph.qh : tap / s.kw - s.pad);
        gm.win.dw = int8_t(bd.phases ? bd.ph.qw : tap % s.kw - s.pad);
        gm.win.band_row = uint16_t(sg.band_row);
        gm.win.band_rows = uint16_t(std::max(1, sg.band_rows));
        gm.win.width = uint16_t(sg.band_rows ? sg.width : 1);  // an empty band is never read
        if (bd.phases && sg.band_rows == 0) {
          // No phase row is read (or the phase is empty): a band row past every row the window
          // reaches (oh + qh < OH + max(qh, 0)), so every row is +0.
          gm.win.band_row = uint16_t(std::min(0xffff, s.OutH() + std::max(0, bd.ph.qh)));
        }
        gm.win.out_width = uint16_t(s.OutW());
        gm.win.out_row = uint16_t(sg.p0 / s.OutW());
        gm.win.out_col = uint16_t(sg.p0 % s.OutW());
        const bool first = i == 0, last = i + 1 == segs.size();
        gm.deps.pop_prev = first;
        gm.deps.pop_next = first && blk->acc_wait;
        if (first) blk->acc_wait = false;
        gm.deps.push_prev = last && ly->Push(g);
        gm.deps.push_next = last && kt == lp.k_tiles - 1 && StoreGroupEnd(j, blk->nts);
        if (first) InitUnitsBeforeGroup();
        Later(gm);
        ++st_->gemms;
        st_->macs += uint64_t(sg.rows) * kv * nv;
        acc_row += sg.rows;
      }
    }
  }

  // Load step g (header comment): `loads` (a K-tile's activation LOADs, if any) and the weight
  // tile (kt, nt) into weight-buffer row `wgt_row`; the step's first LOAD pops a compute->load
  // token for g >= D (or after a barrier), its last pushes load->compute. Returns the weight LOAD.
  isa::Load EmitLoadStep(const GemmOp& op, int kt, int nt, int wgt_row, int kv, int nv, uint64_t g,
                         bool pop, std::vector<isa::Load>* loads) {
    isa::Load w;
    w.buffer = isa::kBufWgt;
    w.dst = uint16_t(wgt_row);
    w.rows = uint16_t(kv);
    w.elems = uint16_t(nv);
    w.hbm_stride = uint32_t(op.b.Pitch());
    if (op.b_t) {  // Bᵀ's tile (nt, kt): nv rows of kv elements
      w.hbm_addr = op.b.RowAddr(nt, kt, 0);
      w.rows = uint16_t(nv);
      w.elems = uint16_t(kv);
      w.transpose = true;
    } else {
      w.hbm_addr = op.b.RowAddr(kt, nt, 0);
    }
    loads->push_back(w);
    loads->front().deps.pop_next = pop || (g == 0 && after_barrier_);
    loads->back().deps.push_next = true;
    for (const auto& l : *loads) p_->Emit(l);
    st_->loads += loads->size();
    Release(g);
    return w;
  }

  // The block's output, one STORE per N tile (two with a second, bf16 copy: the second pushes).
  void EmitStores(const Layer& ly, const Block& blk) {
    const GemmOp& op = ly.op;
    const int blocks = ly.plan.m_blocks * ly.plan.n_blocks;
    const bool two = op.out2.rows > 0;
    for (int j = 0; j < blk.nts; ++j) {
      const int nt = blk.nt0 + j, nv = op.out.TileCols(nt);
      for (int copy = 0; copy < (two ? 2 : 1); ++copy) {
        const TiledMatrix& o = copy == 0 ? op.out : op.out2;
        const int osize = o.elem_bytes;
        isa::Store s;
        s.format = osize == 2 ? isa::kFmtBf16 : isa::kFmtFp32;
        s.activation = op.relu ? isa::kActRelu : isa::kActNone;
        s.hbm_addr = o.RowAddr(nt, blk.m0);
        s.hbm_stride = uint32_t(o.Pitch());
        s.acc = uint16_t(blk.acc_base + j * blk.rows);
        s.rows = uint16_t(blk.rows);
        s.elems = uint16_t(nv);
        s.deps.pop_prev = copy == 0 && j % StoreGroup(blk.nts) == 0;  // the group's last GEMM
        s.deps.push_prev =
            copy + 1 == (two ? 2 : 1) && j == blk.nts - 1 &&
            (blk.index + t_.acc_halves < blocks || (blk.index == blocks - 1 && ly.barrier_after));
        Later(s);
        ++st_->stores;
        st_->bytes_written += uint64_t(blk.rows) * nv * osize;
      }
    }
  }

  // Compute: wait for the last STORE (all of this layer's output is in HBM), then release the
  // load module. A 1-row accumulator LOAD: every accumulator row is free at this point, and the
  // next layer writes row 0 before it reads it. It reads 4 bytes of the program's HEADER (the
  // layer's output may not have 4 bytes written in a row: one bf16 column).
  void EmitBarrier() {
    isa::Load l;
    l.buffer = isa::kBufAcc;
    l.hbm_stride = 0;
    l.dst = 0;
    l.rows = 1;
    l.elems = 1;
    l.deps.pop_next = true;
    l.deps.push_prev = true;
    p_->EmitDataless(l);
    ++st_->acc_loads;
    ++st_->barriers;
    after_barrier_ = true;
  }

  // Program order: a layer's load steps come `lead_` steps ahead of its other instructions (load
  // step g, then GEMM g - lead_'s and what followed it: its block's STOREs, the next block's
  // accumulator LOADs). The dispatcher puts instructions into the modules' queues in program
  // order, so where a step has many GEMMs (a windowed convolution's, one per image) that fill the
  // compute queue, the LOADs behind them reached the load module only as the array finished the
  // step before: the next block's bands came after the array had run dry. Each pop still takes a
  // token pushed earlier in program order (load step g pops GEMM g - D's, released after load
  // step g - D + lead_ < g), so no queue depth deadlocks (header comment).
  void Later(const isa::Instr& in) {
    if (lead_ == 0 || !stepped_) {
      p_->Emit(in);
    } else {
      later_.emplace_back(step_, in);
    }
  }
  // Load step g was emitted: the instructions after GEMM g - lead_'s follow it.
  void Release(uint64_t g) {
    stepped_ = true;
    step_ = g;
    while (!later_.empty() && later_.front().first + lead_ <= g) {
      p_->Emit(later_.front().second);
      later_.pop_front();
    }
  }
  void ReleaseAll() {
    for (const auto& [g, in] : later_) p_->Emit(in);
    later_.clear();
    stepped_ = false;
  }

  Program* p_;
  Stats* st_;
  Tiling t_;
  bool after_barrier_ = false;
  uint64_t lead_ = 0, step_ = 0;
  bool stepped_ = false;
  std::deque<std::pair<uint64_t, isa::Instr>> later_;
  // The next block's initial-value LOADs still to place among this block's GEMM groups
  // (InitUnitsBeforeGroup): one unit before every init_every_-th group from SpreadStart's K-tile.
  std::deque<std::vector<isa::Load>> init_units_;
  uint64_t init_every_ = 1, init_count_ = 0;
};

Compiled Finish(const Program& p, const Stats& st) {
  Compiled c;
  auto built = p.Finish();
  c.cfg = p.config();
  c.instrs = std::move(built.instrs);
  c.addr = built.addr;
  c.hbm_end = built.hbm_end;
  c.stats = st;
  return c;
}

int OutBytes(OutFormat f) {
  return f == OutFormat::kBf16 ? 2 : 4;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Layouts

void WriteMatrix(isa::Machine& m, const TiledMatrix& l, const std::vector<uint16_t>& bf16) {
  CheckLayoutSize(l, bf16.size(), 2, "WriteMatrix");
  WriteTiled(m, l, bf16);
}

void WriteMatrix(isa::Machine& m, const TiledMatrix& l, const std::vector<uint32_t>& fp32) {
  CheckLayoutSize(l, fp32.size(), 4, "WriteMatrix");
  WriteTiled(m, l, fp32);
}

void WriteWeights(isa::Machine& m, const WeightTiles& l, const std::vector<uint16_t>& kxn) {
  if (kxn.size() != size_t(l.k) * l.n) {
    Bad(fmt::format("WriteWeights: host tensor has {} elements, the layout {}×{} = {}", kxn.size(),
                    l.k, l.n, size_t(l.k) * l.n));
  }
  for (int kt = 0; kt < l.KTiles(); ++kt) {
    const int k0 = l.KTileStart(kt), kv = l.KTileRows(kt);
    for (int nt = 0; nt < l.NTiles(); ++nt) {
      const int n0 = nt * l.ntile, nv = std::min(l.ntile, l.n - n0);
      for (int i = 0; i < kv; ++i) {
        m.WriteHbm(l.RowAddr(kt, nt, i), &kxn[size_t(k0 + i) * l.n + n0], uint64_t(nv) * 2);
      }
    }
  }
}

std::vector<uint16_t> ReadMatrixBf16(const isa::Machine& m, const TiledMatrix& l) {
  if (l.elem_bytes != 2) Bad("ReadMatrixBf16: the layout does not hold bf16 elements");
  return ReadTiled<uint16_t>(m, l);
}

std::vector<uint32_t> ReadMatrixFp32(const isa::Machine& m, const TiledMatrix& l) {
  if (l.elem_bytes != 4) Bad("ReadMatrixFp32: the layout does not hold fp32 elements");
  return ReadTiled<uint32_t>(m, l);
}

// ---------------------------------------------------------------------------------------------
// Program

Program::Program(const isa::MachineConfig& cfg, uint64_t data_base)
    : cfg_(cfg), next_(RoundUp32(data_base)) {
  CheckConfig(cfg, "Program");
  if (data_base >= cfg.hbm_bytes) {
    Bad(fmt::format("Program: data base {:#x} is not below HbmBytes = {:#x}", data_base,
                    cfg.hbm_bytes));
  }
}

uint64_t Program::Alloc(uint64_t bytes, const std::string& what) {
  const uint64_t addr = next_;
  if (bytes > cfg_.hbm_bytes || addr + bytes > cfg_.hbm_bytes) {
    Bad(fmt::format("{} needs {} bytes at {:#x}: beyond HbmBytes = {:#x}", what, bytes, addr,
                    cfg_.hbm_bytes));
  }
  next_ = RoundUp32(addr + bytes);
  return addr;
}

TiledMatrix Program::AllocMatrix(int rows, int cols, int tile, int elem_bytes,
                                 const std::string& what) {
  TiledMatrix l;
  l.rows = rows, l.cols = cols, l.tile = tile, l.elem_bytes = elem_bytes;
  l.base = Alloc(l.Bytes(), what);
  return l;
}

WeightTiles Program::AllocWeights(int k, int n, int ktile, int ntile, const std::string& what) {
  WeightTiles l;
  l.k = k, l.n = n, l.ktile = ktile, l.ntile = ntile;
  l.base = Alloc(l.Bytes(), what);
  return l;
}

Program::Built Program::Finish() const {
  Built b;
  const uint64_t count = body_.size() + 2;
  if (count > std::numeric_limits<uint32_t>::max()) {
    Bad(fmt::format("Program: {} instructions exceed the 32-bit count", count));
  }
  isa::Header h;
  h.r = uint16_t(cfg_.r);
  h.c = uint16_t(cfg_.c);
  h.count = uint32_t(count);
  b.instrs.reserve(count);
  b.instrs.push_back(h);
  b.instrs.insert(b.instrs.end(), body_.begin(), body_.end());
  b.instrs.push_back(isa::End{});
  b.addr = next_;
  b.hbm_end = b.addr + count * isa::kInstrBytes;
  for (const size_t i : dataless_) std::get<isa::Load>(b.instrs[i + 1]).hbm_addr = b.addr;
  if (b.hbm_end > cfg_.hbm_bytes) {
    Bad(
        fmt::format("Program: the program ({} instructions at {:#x}) reaches {:#x}, beyond "
                    "HbmBytes = {:#x}",
                    count, b.addr, b.hbm_end, cfg_.hbm_bytes));
  }
  return b;
}

isa::RunResult Run(isa::Machine& m, const Compiled& p) {
  m.WriteProgram(p.addr, p.instrs);
  return m.Run(p.addr, p.count());
}

// ---------------------------------------------------------------------------------------------
// Tiling

Tiling PlanTiling(const isa::MachineConfig& cfg) {
  CheckConfig(cfg, "PlanTiling");
  Tiling t;
  t.kt_w = std::min(cfg.r, std::max(1, cfg.wgt_depth / 2));
  t.wgt_slots = std::max(1, std::min(cfg.wgt_depth / t.kt_w, kMaxWeightSlots));
  t.nt_w = cfg.c;
  t.max_act_slots = std::min(cfg.act_depth, kMaxActSlots);
  t.acc_halves = cfg.acc_depth >= 2 ? 2 : 1;
  t.acc_half_rows = cfg.acc_depth / t.acc_halves;
  t.depth = std::min({t.wgt_slots, cfg.queue_depth, int(isa::kMaxTokens)});
  return t;
}

namespace {

// The blocks of one layer for `sa` activation slots (header comment): mb, nb, the block counts,
// the slots and the activation bound on D (max() when there is none).
// HBM bytes of one layer cut into blocks of mb rows × nb N-tiles: A once per N-group, B once per
// M-block, the output once.
double LayerBytes(int m, int k, int n, int mb, int nb, int n_tiles) {
  const double m_blocks = (m + mb - 1) / mb, n_blocks = (n_tiles + nb - 1) / nb;
  return 2.0 * m * k * n_blocks + 2.0 * k * n * m_blocks + 4.0 * m * n;
}

LayerPlan PlanBlocks(const Tiling& t, const isa::MachineConfig& cfg, int m, LayerPlan lp, int sa,
                     int k, int n, int m_align) {
  lp.act_slots = sa;
  lp.act_slot_rows = cfg.act_depth / sa;
  // With more than two slots, blocks of a multiple of 16 rows when a slot holds at least 16 (two
  // slots keep the whole half, so a 2-slot plan never has more blocks than it needs).
  const int slot_cap =
      sa > 2 && lp.act_slot_rows >= 16 ? lp.act_slot_rows / 16 * 16 : lp.act_slot_rows;
  lp.mb = std::min({m, slot_cap, t.acc_half_rows});
  // With the DMA's bandwidth known, a layer whose HBM traffic would outlast its compute takes
  // shorter blocks of more N-tiles (A is read once per N-group): halving mb (not below 2R rows,
  // which hide the next weight tile's loading) while the estimate max(compute, bytes / (0.75 ×
  // bandwidth)) + fill + kBytesWeight × bytes / bandwidth drops; 0.75: a planning margin for
  // mixed read/write traffic; fill: the pipeline's fill and drain, which nothing overlaps (the
  // first block's first A rows load before its first GEMM, its last N-tile stores after its last
  // one, fp32 assumed), both ∝ mb; the bytes' share: among compute-bound plans, fewer bytes.
  if (cfg.dma_bytes_per_cycle > 0 && k > 0 && n > 0) {
    const double compute = double(m) * lp.k_tiles * lp.n_tiles;
    auto nb_for = [&](int mb) { return std::max(1, std::min(lp.n_tiles, t.acc_half_rows / mb)); };
    auto cost = [&](int mb) {
      const double fill = double(mb) * (2.0 * lp.kt_w + 4.0 * lp.nt_w) / cfg.dma_bytes_per_cycle;
      const double bytes = LayerBytes(m, k, n, mb, nb_for(mb), lp.n_tiles);
      return std::max(compute, bytes / (0.75 * cfg.dma_bytes_per_cycle)) + fill +
             kBytesWeight * bytes / cfg.dma_bytes_per_cycle;
    };
    const int floor = std::min(lp.mb, 2 * cfg.r);
    int best = lp.mb;
    for (int mb = lp.mb / 2; mb >= floor; mb /= 2) {
      if (cost(mb) < cost(best)) best = mb;
    }
    lp.mb = best;
  }
  // Blocks of a multiple of m_align rows (a transposed A's column tiles), unless one block; mb
  // = 0 when not even one fits (the caller tries another plan or gives up).
  if (lp.mb < m) lp.mb = lp.mb / m_align * m_align;
  if (lp.mb < 1) return lp;
  // At most nb_max N-tiles fit an accumulator half; the N-groups are then balanced (same count,
  // sizes differing by at most one), so no N-group is needlessly small (it bounds D).
  const int nb_max = std::max(1, std::min(lp.n_tiles, t.acc_half_rows / lp.mb));
  const int groups_per_m = (lp.n_tiles + nb_max - 1) / nb_max;
  lp.nb = (lp.n_tiles + groups_per_m - 1) / groups_per_m;
  lp.m_blocks = (m + lp.mb - 1) / lp.mb;
  lp.n_blocks = (lp.n_tiles + lp.nb - 1) / lp.nb;
  lp.gemms = uint64_t(lp.m_blocks) * lp.k_tiles * lp.n_tiles;
  // The activation slots' bound on D. K-group a (one per block and K-tile, in program order) has
  // size(a) GEMMs and uses slot a mod Sa; its activation LOAD, in the first load step of the group
  // (GEMM g_a), may run once GEMM g_a - D is done, so GEMMs g_a - D + 1 .. g_a - 1 may still be
  // reading. K-group a - Sa (same slot) ends at GEMM g_a - W(a) - 1 with W(a) = size(a-Sa+1) + ..
  // + size(a-1), so D <= W(a) + 1 for every a in Sa .. groups - 1, and D + 1 races at the a with
  // the smallest W(a). (One slot: W = 0, D <= 1 once there are two K-groups.)
  const uint64_t groups = uint64_t(lp.m_blocks) * lp.n_blocks * lp.k_tiles;
  const int last = lp.n_tiles - (lp.n_blocks - 1) * lp.nb;
  const uint64_t period = uint64_t(lp.n_blocks) * lp.k_tiles;  // size(a) repeats per M-block
  auto size = [&](uint64_t a) {
    return int((a / uint64_t(lp.k_tiles)) % uint64_t(lp.n_blocks)) == lp.n_blocks - 1 ? last
                                                                                      : lp.nb;
  };
  lp.act_bound = std::numeric_limits<int>::max();
  // Windows a-Sa+1 .. a-1 start at s = 1 .. groups - Sa; W depends only on s mod period.
  for (uint64_t s = 1; s + uint64_t(sa) <= groups && s <= period; ++s) {
    int w = 0;
    for (int i = 0; i < sa - 1; ++i) w += size(s + uint64_t(i));
    lp.act_bound = std::min(lp.act_bound, w + 1);
  }
  lp.depth = std::max(1, std::min(t.depth, lp.act_bound));
  return lp;
}

}  // namespace

LayerPlan PlanLayer(const isa::MachineConfig& cfg, int m, int k, int n, int kt_w, int nt_w,
                    int m_align) {
  const Tiling t = PlanTiling(cfg);
  if (m < 1 || k < 1 || n < 1 || kt_w < 1 || kt_w > t.kt_w || nt_w < 1 || nt_w > cfg.c ||
      m_align < 1) {
    Bad(fmt::format("PlanLayer: M={} K={} N={} K-tile width {} (1..{}) N-tile width {} (1..{})", m,
                    k, n, kt_w, t.kt_w, nt_w, cfg.c));
  }
  LayerPlan base;
  base.kt_w = kt_w, base.nt_w = nt_w;
  base.k_tiles = (k + kt_w - 1) / kt_w;
  base.n_tiles = (n + nt_w - 1) / nt_w;
  // Two activation slots (one when ActDepth = 1). Three only when M exceeds a 2-slot slot, i.e.
  // when the activation buffer, not M, sets the block height, and only when that raises D (ties
  // go to the taller 2-slot blocks). Four slots were measured worse on the RTL: 512-row blocks of
  // 4 N-tiles made a biased 56×56 convolution's accumulator LOADs stall (92.6% vs 94.6%).
  LayerPlan best = PlanBlocks(t, cfg, m, base, std::min(2, t.max_act_slots), k, n, m_align);
  if (m > cfg.act_depth / 2) {
    for (int sa = 3; sa <= t.max_act_slots; ++sa) {
      const LayerPlan lp = PlanBlocks(t, cfg, m, base, sa, k, n, m_align);
      if (lp.mb > 0 &&
          (best.mb == 0 || lp.depth > best.depth || (lp.depth == best.depth && lp.mb > best.mb))) {
        best = lp;
      }
    }
  }
  if (best.mb == 0) {
    Bad(
        fmt::format("PlanLayer: blocks of {} rows (a transposed A's column tile) do not fit "
                    "{} activation rows and {} accumulator rows",
                    m_align, cfg.act_depth / std::min(2, t.max_act_slots), t.acc_half_rows));
  }
  // N-tile-major blocks when the DMA's bandwidth is known and a block's whole A fits its slot:
  // K-tile-major, every tile of a block becomes final in its last K pass, and their STOREs (an
  // fp32 tile row is 4·C bytes, twice what the array produces per cycle at the stack's 256
  // B/cycle) then crowd out the next block's LOADs: a pass lost per block, 1/K-tiles of the time.
  // Block b's K-tile kt overwrites block b - Sa's, which that block's last tile read KT - kt
  // GEMMs before its end; the blocks between hold KT·nts GEMMs each and block b reaches the load
  // at its GEMM kt: D <= KT·(Sa - 1)·(the fewest N-tiles of a block) + KT.
  // Only with weight tiles of at least 4 KB: the weights (laid out K-tile-major) are then read
  // tile by tile out of HBM order, which small tiles pay for: a GEMV 1×8192² on the 16×16
  // one-channel machine (512-byte tiles) took 13.6 M cycles N-tile-major, 5.0 M K-tile-major.
  const uint64_t wtile_bytes = uint64_t(best.kt_w) * RoundUp32(uint64_t(best.nt_w) * 2);
  if (cfg.dma_bytes_per_cycle > 0 && best.k_tiles > 1 && best.nb > 1 && best.act_slots >= 2 &&
      wtile_bytes >= kMinNOuterWeightTile &&
      int64_t(best.mb) * best.k_tiles <= best.act_slot_rows) {
    best.n_outer = true;
    const int blocks = best.m_blocks * best.n_blocks;
    const int last = best.n_tiles - (best.n_blocks - 1) * best.nb;
    best.act_bound = std::numeric_limits<int>::max();
    if (blocks > best.act_slots) {
      best.act_bound = best.k_tiles * ((best.act_slots - 1) * std::min(best.nb, last) + 1);
    }
    best.depth = std::max(1, std::min(t.depth, best.act_bound));
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Compilers

GemmProgram CompileGemm(const isa::MachineConfig& cfg, int m, int k, int n, Init init,
                        OutFormat out, bool relu, uint64_t data_base) {
  return CompileGemm(cfg, m, k, n, GemmTranspose{}, init, out, relu, data_base);
}

GemmProgram CompileGemm(const isa::MachineConfig& cfg, int m, int k, int n, GemmTranspose trans,
                        Init init, OutFormat out, bool relu, uint64_t data_base) {
  CheckConfig(cfg, "CompileGemm");
  CheckDim("CompileGemm", "M", m);
  CheckDim("CompileGemm", "K", k);
  CheckDim("CompileGemm", "N", n);
  if (init == Init::kAccumulate && out != OutFormat::kFp32) {
    Bad("CompileGemm: accumulate (C += A·B in place) needs an fp32 output");
  }
  const Tiling t = PlanTiling(cfg);
  Program p(cfg, data_base);
  GemmProgram r;
  // Aᵀ's column tiles (a block's rows come in whole tiles): the K-tile width, or less when a
  // two-slot activation slot or an accumulator half holds fewer rows.
  const int at_w = std::max(
      1, std::min({t.kt_w, cfg.act_depth / std::min(2, t.max_act_slots), t.acc_half_rows}));
  r.a = trans.a ? p.AllocMatrix(k, m, at_w, 2, fmt::format("Aᵀ ({}×{} bf16)", k, m))
                : p.AllocMatrix(m, k, t.kt_w, 2, fmt::format("A ({}×{} bf16)", m, k));
  r.b = trans.b ? p.AllocWeights(n, k, t.nt_w, t.kt_w, fmt::format("Bᵀ ({}×{} bf16)", n, k))
                : p.AllocWeights(k, n, t.kt_w, t.nt_w, fmt::format("B ({}×{} bf16)", k, n));
  if (init != Init::kOverwrite) {
    r.c0 = p.AllocMatrix(m, n, t.nt_w, 4, fmt::format("C0 ({}×{} fp32)", m, n));
  } else {
    r.c0.tile = t.nt_w, r.c0.elem_bytes = 4;
  }
  r.out = init == Init::kAccumulate
              ? r.c0
              : p.AllocMatrix(m, n, t.nt_w, OutBytes(out), fmt::format("C ({}×{})", m, n));
  GemmOp op;
  op.m = m, op.k = k, op.n = n;
  op.a = r.a, op.b = r.b, op.c0 = r.c0, op.out = r.out, op.relu = relu;
  op.a_t = trans.a, op.kt_w = t.kt_w;
  op.b_t = trans.b;
  op.init = init == Init::kOverwrite ? GemmOp::InitKind::kNone : GemmOp::InitKind::kC0;
  Stats st;
  Emitter e(&p, &st);
  e.EmitGemm(op, false);
  r.prog = Finish(p, st);
  return r;
}

namespace {

// CompileDense, or (sub) a strided 1×1 convolution's GEMM: A is then sub's NHWC input, N·H·W
// pixel rows (GemmOp::sub).
DenseProgram DenseOrSubsampled(const isa::MachineConfig& cfg, int m, int k, int n, bool bias,
                               bool relu, OutFormat out, uint64_t data_base, bool also_bf16,
                               bool residual, const ConvShape* sub) {
  const Tiling t = PlanTiling(cfg);
  Program p(cfg, data_base);
  DenseProgram r;
  if (sub) {
    r.a = p.AllocMatrix(sub->n * sub->h * sub->w, k, t.kt_w, 2,
                        fmt::format("X ({}x{}x{}x{} bf16)", sub->n, sub->h, sub->w, k));
  } else {
    r.a = p.AllocMatrix(m, k, t.kt_w, 2, fmt::format("A ({}×{} bf16)", m, k));
  }
  r.b = p.AllocWeights(k, n, t.kt_w, t.nt_w, fmt::format("B ({}×{} bf16)", k, n));
  if (bias) {
    r.bias = p.AllocMatrix(1, n, t.nt_w, 4, fmt::format("bias ({} fp32)", n));
  } else {
    r.bias.tile = t.nt_w, r.bias.elem_bytes = 4;
  }
  if (residual) {
    r.residual = p.AllocMatrix(m, n, t.nt_w, 4, fmt::format("residual ({}×{} fp32)", m, n));
  }
  r.out = p.AllocMatrix(m, n, t.nt_w, OutBytes(out), fmt::format("output ({}×{})", m, n));
  if (also_bf16 && out == OutFormat::kFp32) {
    r.out_bf16 = p.AllocMatrix(m, n, t.nt_w, 2, fmt::format("output ({}×{} bf16)", m, n));
  }
  GemmOp op;
  op.m = m, op.k = k, op.n = n;
  op.a = r.a, op.b = r.b, op.c0 = r.bias, op.out = r.out, op.relu = relu;
  op.out2 = r.out_bf16;
  op.init = residual ? GemmOp::InitKind::kResidual
            : bias   ? GemmOp::InitKind::kBias
                     : GemmOp::InitKind::kNone;
  op.res = r.residual;
  op.sub = sub;
  Stats st;
  Emitter e(&p, &st);
  e.EmitGemm(op, false);
  r.prog = Finish(p, st);
  return r;
}

}  // namespace

DenseProgram CompileDense(const isa::MachineConfig& cfg, int m, int k, int n, bool bias, bool relu,
                          OutFormat out, uint64_t data_base, bool also_bf16, bool residual) {
  CheckConfig(cfg, "CompileDense");
  CheckDim("CompileDense", "M", m);
  CheckDim("CompileDense", "K", k);
  CheckDim("CompileDense", "N", n);
  return DenseOrSubsampled(cfg, m, k, n, bias, relu, out, data_base, also_bf16, residual, nullptr);
}

MlpProgram CompileMlp(const isa::MachineConfig& cfg, int m, const std::vector<int>& sizes,
                      bool bias, bool relu, OutFormat out, uint64_t data_base) {
  CheckConfig(cfg, "CompileMlp");
  CheckDim("CompileMlp", "M", m);
  if (sizes.size() < 2) {
    Bad(fmt::format("CompileMlp: {} layer sizes given, at least 2 (input, output) needed",
                    sizes.size()));
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1)
      Bad(fmt::format("CompileMlp: sizes[{}] = {} must be at least 1", i, sizes[i]));
  }
  const Tiling t = PlanTiling(cfg);
  const int T = std::min(t.kt_w, cfg.c);  // the tile width at hidden boundaries
  const int L = int(sizes.size()) - 1;
  Program p(cfg, data_base);
  MlpProgram r;
  r.input = p.AllocMatrix(m, sizes[0], t.kt_w, 2, fmt::format("input ({}×{} bf16)", m, sizes[0]));
  std::vector<GemmOp> ops;
  TiledMatrix a = r.input;
  for (int i = 0; i < L; ++i) {
    const bool last = i == L - 1;
    const int k = sizes[i], n = sizes[i + 1], nt_w = last ? t.nt_w : T;
    GemmOp op;
    op.m = m, op.k = k, op.n = n, op.a = a;
    op.b = p.AllocWeights(k, n, a.tile, nt_w, fmt::format("layer {} weights ({}×{})", i, k, n));
    if (bias) {
      op.c0 = p.AllocMatrix(1, n, nt_w, 4, fmt::format("layer {} bias ({})", i, n));
      op.init = GemmOp::InitKind::kBias;
    } else {
      op.c0.tile = nt_w, op.c0.elem_bytes = 4;
    }
    op.out = p.AllocMatrix(m, n, nt_w, last ? OutBytes(out) : 2,
                           fmt::format("layer {} output ({}×{})", i, m, n));
    op.relu = relu && !last;
    r.w.push_back(op.b);
    r.bias.push_back(op.c0);
    r.output.push_back(op.out);
    ops.push_back(op);
    a = op.out;  // same bytes as the next layer's K-tile-major A (tile T, bf16)
  }
  Stats st;
  Emitter e(&p, &st);
  for (int i = 0; i < L; ++i) e.EmitGemm(ops[size_t(i)], i < L - 1);
  r.prog = Finish(p, st);
  return r;
}

std::vector<uint16_t> Im2col(const ConvShape& s, const std::vector<uint16_t>& nhwc) {
  if (nhwc.size() != size_t(s.n) * s.h * s.w * s.cin) {
    Bad(fmt::format("Im2col: input has {} elements, N×H×W×Cin = {}", nhwc.size(),
                    size_t(s.n) * s.h * s.w * s.cin));
  }
  const int OH = s.OutH(), OW = s.OutW(), K = s.K();
  std::vector<uint16_t> a(size_t(s.M()) * K, 0);  // +0 in the padding
  for (int b = 0; b < s.n; ++b) {
    for (int oh = 0; oh < OH; ++oh) {
      for (int ow = 0; ow < OW; ++ow) {
        const size_t row = (size_t(b) * OH + oh) * OW + ow;
        for (int i = 0; i < s.kh; ++i) {
          const int ih = oh * s.stride - s.pad + i;
          for (int j = 0; j < s.kw; ++j) {
            const int iw = ow * s.stride - s.pad + j;
            if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
            for (int c = 0; c < s.cin; ++c) {
              a[row * K + (size_t(i) * s.kw + j) * s.cin + c] =
                  nhwc[((size_t(b) * s.h + ih) * s.w + iw) * s.cin + c];
            }
          }
        }
      }
    }
  }
  return a;
}

namespace {

// Why a convolution cannot go through windows on this machine ("" when it can).
std::string WindowLimit(const ConvShape& s) {
  if (s.stride > 255) return fmt::format("stride {} > 255", s.stride);
  if (s.pad > 128 || s.kh - 1 - s.pad > 127 || s.kw - 1 - s.pad > 127) {
    return fmt::format("tap offsets beyond -128..127 (kernel {}x{}, pad {})", s.kh, s.kw, s.pad);
  }
  if (s.h > 65535 || s.w > 65535 || s.OutW() > 65535 || s.OutH() > 65535) {
    return "an image dimension beyond 65535";
  }
  return "";
}

// The block-boundary tokens of a one-slot windowed convolution (header comment): per GEMM group
// whether it pushes a compute->load token, per load step whether its first LOAD pops one. Checks
// the scheme by matching pops to pushes in order: as many of each, every pop takes a token of an
// earlier group, a block's first step the previous group's (the slot is free), and every step
// knows group g - S done before it overwrites weight slot g mod S. False if any check fails.
bool BoundaryTokens(const LayerPlan& lp, int wgt_slots, std::vector<char>* push,
                    std::vector<char>* pop) {
  const int64_t G = int64_t(lp.gemms), D = lp.depth;
  push->assign(size_t(G), 0);
  pop->assign(size_t(G), 0);
  for (int64_t g = 0; g < G; ++g) {
    (*push)[size_t(g)] = g + D < G;
    (*pop)[size_t(g)] = g >= D;
  }
  // Groups per band load in emission order (M-block-major, then N-groups, then the block's
  // k_groups runs of K-tiles): the run's K-tiles x the block's tiles.
  std::vector<int64_t> starts;
  int64_t g0 = 0;
  const int kpg = lp.k_tiles / lp.k_groups;
  for (int mi = 0; mi < lp.m_blocks; ++mi) {
    for (int ni = 0; ni < lp.n_blocks; ++ni) {
      for (int kg = 0; kg < lp.k_groups; ++kg) {
        if (g0 > 0) starts.push_back(g0);
        g0 += int64_t(kpg) * std::min(lp.nb, lp.n_tiles - ni * lp.nb);
      }
    }
  }
  if (g0 != G) return false;
  for (int64_t b : starts) {
    for (int64_t h = std::max<int64_t>(0, b - D); h <= b - 2; ++h) (*push)[size_t(h)] = 0;
    (*push)[size_t(b - 1)] = 1;
    for (int64_t g = b + 1; g <= std::min(G - 1, b + D - 1); ++g) (*pop)[size_t(g)] = 0;
    (*pop)[size_t(b)] = 1;
  }
  std::vector<int64_t> pushes;
  for (int64_t h = 0; h < G; ++h) {
    if ((*push)[size_t(h)]) pushes.push_back(h);
  }
  size_t k = 0;
  int64_t done = -1;  // the newest group known done at this step
  size_t next_start = 0;
  for (int64_t g = 0; g < G; ++g) {
    if ((*pop)[size_t(g)]) {
      if (k >= pushes.size() || pushes[k] >= g) return false;
      done = std::max(done, pushes[k++]);
    }
    const bool start = next_start < starts.size() && starts[next_start] == g;
    if (start) ++next_start;
    if (start && done != g - 1) return false;
    if (g >= wgt_slots && done < g - wgt_slots) return false;
  }
  return k == pushes.size();
}

// The blocks of a windowed convolution (header comment): for N-groups of nb tiles (balanced) and
// Sa = 2 activation slots (1 if no block fits half the buffer), the tallest block of mb output
// pixels whose bands fit a slot and whose mb·nb rows fit an accumulator half, preferring whole
// output rows; among the nb, the fewest HBM bytes (bands once per N-group, weights once per
// M-block), then the fewest blocks. Returns false when not even one pixel's bands fit.
bool PlanConvWindow(const isa::MachineConfig& cfg, const ConvShape& s, int kc, int chunks, int nt_w,
                    LayerPlan* out) {
  const Tiling t = PlanTiling(cfg);
  const int M = s.M(), OW = s.OutW();
  LayerPlan base;
  base.kt_w = kc, base.nt_w = nt_w;
  base.k_tiles = s.kh * s.kw * chunks;
  base.n_tiles = (s.cout + nt_w - 1) / nt_w;
  const uint64_t pitch = RoundUp32(uint64_t(kc) * 2);
  const uint64_t wbytes = uint64_t(s.K()) * s.cout * 2;
  bool found = false;
  double best_cost = 0, best_bytes = 0;
  // k_groups = kh: each kernel row's K-tiles (taps, all chunks) with their own, shorter bands in
  // the next slot, so taller blocks fit (fewer weight passes) at the price of reading input rows
  // up to kh times; the same K order per output, so the same bits. With the DMA's bandwidth known
  // (timed) the plans are weighed by an estimate of their cycles, as PlanLayer's: max(compute,
  // HBM bytes / (0.75 × bandwidth)), plus, with one slot, the bands' loads, which wait for the
  // GEMMs before them; so one slot wins only where fewer weight passes save more than that.
  // Without it, two slots whenever a plan fits them, the plans weighed by their HBM bytes.
  const bool timed = cfg.dma_bytes_per_cycle > 0;
  const double compute = double(M) * base.k_tiles * base.n_tiles;
  for (int sa = std::min(2, t.max_act_slots); sa >= 1 && !(found && !timed); --sa) {
    const int slot_rows = cfg.act_depth / sa;
    // split 0: one group; 1: per kernel row; 2: per tap, each its phase (stride > 1).
    for (int split = 0; split < 3; ++split) {
      if ((split == 1 && s.kh == 1) || (split == 2 && (s.stride == 1 || s.kh * s.kw == 1))) {
        continue;
      }
      const bool phases = split == 2;
      const int kgroups = split == 0 ? 1 : split == 1 ? s.kh : s.kh * s.kw;
      for (int groups = 1; groups <= base.n_tiles; ++groups) {
        const int nb = (base.n_tiles + groups - 1) / groups;
        if (groups > 1 && (base.n_tiles + groups - 2) / (groups - 1) == nb) continue;  // same nb
        const int cap = std::min(M, t.acc_half_rows / nb);
        if (cap < 1) continue;
        // Largest bands of blocks of mb pixels (0 when a block's bands do not fit).
        uint64_t band_total = 0;
        auto fits = [&](int mb) {
          band_total = 0;
          for (int m0 = 0; m0 < M; m0 += mb) {
            for (int kr = 0; kr < kgroups; ++kr) {
              const int64_t rows =
                  BandRows(s, chunks, m0, std::min(mb, M - m0), kgroups, phases, kr);
              if (rows > slot_rows) return false;
              band_total += uint64_t(rows);
            }
          }
          return true;
        };
        int mb = 0;
        if (fits(cap)) mb = cap;
        for (int q = cap / OW; mb == 0 && q >= 1; --q) {
          if (fits(q * OW)) mb = q * OW;
        }
        for (int c = std::min(cap, OW - 1); mb == 0 && c >= 1; c = c > 8 ? c * 3 / 4 : c - 1) {
          if (fits(c)) mb = c;
        }
        if (mb == 0) continue;
        fits(mb);  // band_total for mb
        LayerPlan lp = base;
        lp.act_slots = sa;
        lp.act_slot_rows = slot_rows;
        lp.mb = mb;
        lp.nb = nb;
        lp.m_blocks = (M + mb - 1) / mb;
        lp.n_blocks = (lp.n_tiles + nb - 1) / nb;
        lp.k_groups = kgroups;
        lp.phases = phases;
        lp.gemms = uint64_t(lp.m_blocks) * lp.k_tiles * lp.n_tiles;
        const double bands = double(band_total) * double(pitch) * lp.n_blocks;
        const double bytes = bands + double(wbytes) * lp.m_blocks;
        const double cost = timed ? std::max(compute, bytes / (0.75 * cfg.dma_bytes_per_cycle)) +
                                        (sa == 1 ? bands / cfg.dma_bytes_per_cycle : 0.0)
                                  : bytes;
        // On a tie (compute-bound plans) the fewest bytes, then the fewest blocks.
        if (!found || cost < best_cost ||
            (cost == best_cost &&
             (bytes < best_bytes ||
              (bytes == best_bytes &&
               uint64_t(lp.m_blocks) * lp.n_blocks < uint64_t(out->m_blocks) * out->n_blocks)))) {
          *out = lp;
          best_cost = cost;
          best_bytes = bytes;
          found = true;
        }
      }
    }
  }
  if (!found) return false;
  // D (header comment): block b's bands overwrite the slot block b - Sa read; the blocks between
  // hold k_tiles GEMM groups per N tile.
  LayerPlan& lp = *out;
  const int blocks = lp.m_blocks * lp.n_blocks * lp.k_groups;  // band loads
  const int last = lp.n_tiles - (lp.n_blocks - 1) * lp.nb;
  const int kpg = lp.k_tiles / lp.k_groups;
  lp.act_bound = std::numeric_limits<int>::max();
  if (blocks > lp.act_slots) {
    // One slot: the block-boundary tokens (header comment) need D <= the fewest groups between
    // two band loads.
    lp.act_bound =
        lp.act_slots == 1 ? kpg * std::min(lp.nb, last) : 1 + kpg * std::min(lp.nb, last);
  }
  lp.depth = std::max(1, std::min(t.depth, lp.act_bound));
  lp.boundary_wait = lp.act_slots == 1 && blocks > 1 && lp.depth > 1;
  if (lp.boundary_wait) {
    std::vector<char> push, pop;
    if (!BoundaryTokens(lp, t.wgt_slots, &push, &pop)) {  // never expected: the safe fallback
      lp.boundary_wait = false;
      lp.depth = 1;
    }
  }
  return true;
}

}  // namespace

ConvProgram CompileConv(const isa::MachineConfig& cfg, const ConvShape& s, bool bias, bool relu,
                        OutFormat out, uint64_t data_base, bool also_bf16, bool windows,
                        bool residual) {
  CheckConfig(cfg, "CompileConv");
  CheckDim("CompileConv", "N", s.n);
  CheckDim("CompileConv", "H", s.h);
  CheckDim("CompileConv", "W", s.w);
  CheckDim("CompileConv", "Cin", s.cin);
  CheckDim("CompileConv", "Cout", s.cout);
  CheckDim("CompileConv", "kh", s.kh);
  CheckDim("CompileConv", "kw", s.kw);
  CheckDim("CompileConv", "stride", s.stride);
  if (s.pad < 0) Bad(fmt::format("CompileConv: pad = {} must not be negative", s.pad));
  if (s.kh > s.h + 2 * s.pad) {
    Bad(fmt::format("CompileConv: kh = {} exceeds H + 2·pad = {}", s.kh, s.h + 2 * s.pad));
  }
  if (s.kw > s.w + 2 * s.pad) {
    Bad(fmt::format("CompileConv: kw = {} exceeds W + 2·pad = {}", s.kw, s.w + 2 * s.pad));
  }
  const uint64_t M = uint64_t(s.n) * s.OutH() * s.OutW(), K = uint64_t(s.kh) * s.kw * s.cin;
  if (M > uint64_t(std::numeric_limits<int>::max()) ||
      K > uint64_t(std::numeric_limits<int>::max())) {
    Bad(fmt::format("CompileConv: im2col matrix {}×{} too large", M, K));
  }
  const uint64_t pixels = uint64_t(s.n) * s.h * s.w;
  if (pixels > uint64_t(std::numeric_limits<int>::max())) {
    Bad(fmt::format("CompileConv: input of {} pixels (N×H×W) too large", pixels));
  }
  ConvProgram r;
  r.shape = s;
  // A 1×1 convolution without padding is a GEMM on the NHWC input itself (pixel rows × Cin): the
  // GEMM emitter loads its A per K-tile, so blocks are not limited by a whole band. With a stride,
  // A's rows are every stride-th pixel of every stride-th image row, one LOAD per output row
  // (GemmOp::sub), where a window's bands would bring every pixel of the rows (stride² times the
  // bytes) and one output row's bands for each K-group.
  if (s.kh == 1 && s.kw == 1 && s.pad == 0) {
    const DenseProgram d = DenseOrSubsampled(cfg, int(M), s.cin, s.cout, bias, relu, out, data_base,
                                             also_bf16, residual, s.stride > 1 ? &s : nullptr);
    r.pointwise = true;
    r.prog = d.prog;
    r.a = d.a;
    r.b = d.b;
    r.bias = d.bias;
    r.residual = d.residual;
    r.out = d.out;
    r.out_bf16 = d.out_bf16;
    return r;
  }
  // Through windows when the machine can express them (version 1.1), else the host's im2col.
  const Tiling t = PlanTiling(cfg);
  const int kc = std::min(t.kt_w, s.cin), chunks = (s.cin + kc - 1) / kc;
  r.host_im2col_reason = WindowLimit(s);
  // A window K-tile holds one tap's channels (kv <= Cin): with few channels the array's rows go
  // unused, and im2col, whose K-tiles hold several taps, needs far fewer passes over the array.
  const int64_t window_tiles = int64_t(s.kh) * s.kw * chunks;
  const int64_t im2col_tiles = (int64_t(K) + t.kt_w - 1) / t.kt_w;
  if (r.host_im2col_reason.empty() && window_tiles > 2 * im2col_tiles && !windows) {
    r.host_im2col_reason = fmt::format(
        "windows take {} K-tiles (one tap of {} channels each), im2col {} of up to {} rows",
        window_tiles, s.cin, im2col_tiles, t.kt_w);
  }
  LayerPlan plan;
  if (r.host_im2col_reason.empty() && !PlanConvWindow(cfg, s, kc, chunks, t.nt_w, &plan)) {
    r.host_im2col_reason = fmt::format(
        "the bands of one output pixel ({} rows) exceed the activation buffer (ActDepth {})",
        BandRows(s, chunks, 0, 1), cfg.act_depth);
  }
  if (!r.host_im2col_reason.empty()) {
    const DenseProgram d =
        CompileDense(cfg, int(M), int(K), s.cout, bias, relu, out, data_base, also_bf16, residual);
    r.prog = d.prog;
    r.a = d.a;
    r.b = d.b;
    r.bias = d.bias;
    r.residual = d.residual;
    r.out = d.out;
    r.out_bf16 = d.out_bf16;
    return r;
  }
  r.window = true;
  r.plan = plan;
  Program p(cfg, data_base);
  ConvWin cw;
  cw.s = s;
  cw.kc = kc;
  cw.chunks = chunks;
  cw.x = p.AllocMatrix(s.n * s.h * s.w, s.cin, kc, 2,
                       fmt::format("X ({}x{}x{}x{} bf16)", s.n, s.h, s.w, s.cin));
  r.a = cw.x;
  r.b.k = int(K), r.b.n = s.cout, r.b.ktile = kc, r.b.ntile = t.nt_w, r.b.kseg = s.cin;
  r.b.base = p.Alloc(r.b.Bytes(), fmt::format("W ({}x{}x{}x{} bf16)", s.kh, s.kw, s.cin, s.cout));
  if (bias) {
    r.bias = p.AllocMatrix(1, s.cout, t.nt_w, 4, fmt::format("bias ({} fp32)", s.cout));
  } else {
    r.bias.tile = t.nt_w, r.bias.elem_bytes = 4;
  }
  if (residual) {
    r.residual =
        p.AllocMatrix(int(M), s.cout, t.nt_w, 4,
                      fmt::format("residual ({}x{}x{}x{} fp32)", s.n, s.OutH(), s.OutW(), s.cout));
  }
  r.out = p.AllocMatrix(int(M), s.cout, t.nt_w, OutBytes(out),
                        fmt::format("Y ({}x{}x{}x{})", s.n, s.OutH(), s.OutW(), s.cout));
  if (also_bf16 && out == OutFormat::kFp32) {
    r.out_bf16 =
        p.AllocMatrix(int(M), s.cout, t.nt_w, 2,
                      fmt::format("Y ({}x{}x{}x{} bf16)", s.n, s.OutH(), s.OutW(), s.cout));
  }
  GemmOp op;
  op.m = int(M), op.k = int(K), op.n = s.cout;
  op.b = r.b, op.c0 = r.bias, op.out = r.out, op.relu = relu;
  op.out2 = r.out_bf16;
  op.init = residual ? GemmOp::InitKind::kResidual
            : bias   ? GemmOp::InitKind::kBias
                     : GemmOp::InitKind::kNone;
  op.res = r.residual;
  op.win = &cw;
  Stats st;
  Emitter e(&p, &st);
  e.EmitGemm(op, false, &plan);
  r.prog = Finish(p, st);
  return r;
}

void WriteConvInput(isa::Machine& m, const ConvProgram& p, const std::vector<uint16_t>& nhwc) {
  WriteMatrix(m, p.a, p.window || p.pointwise ? nhwc : Im2col(p.shape, nhwc));
}

namespace {

// A LOAD of `rows` rows of tile t of `l` from row `row` into the vector memory from row `dst`
// (`format`: what HBM holds).
void EmitVmemLoad(Program& p, Stats& st, const TiledMatrix& l, int t, int row, int rows, int dst,
                  uint8_t format) {
  isa::Load ld;
  ld.buffer = isa::kBufVmem;
  ld.format = format;
  ld.hbm_addr = l.RowAddr(t, row);
  ld.hbm_stride = uint32_t(l.Pitch());
  ld.dst = uint16_t(dst);
  ld.rows = uint16_t(rows);
  ld.elems = uint16_t(l.TileCols(t));
  p.Emit(ld);
  ++st.vector_loads;
}

}  // namespace

VectorProgram CompileVector(const isa::MachineConfig& cfg, int m, int n,
                            const std::vector<VectorStage>& stages, uint64_t data_base,
                            bool also_bf16) {
  CheckConfig(cfg, "CompileVector");
  CheckDim("CompileVector", "M", m);
  CheckDim("CompileVector", "N", n);
  if (!cfg.vector_unit()) {
    Bad("CompileVector: the machine has no vector unit (VmemDepth = 0)");
  }
  if (stages.empty()) Bad("CompileVector: no stage");
  VectorB b_kind = VectorB::kNone;
  for (size_t i = 0; i < stages.size(); ++i) {
    const VectorStage& s = stages[i];
    const auto op = size_t(s.op);
    if (op >= isa::kVectorOps.size()) {
      Bad(fmt::format("CompileVector: stage {} has vector op {}, not 0..{}", i, op,
                      isa::kVectorOps.size() - 1));
    }
    if (isa::kVectorOps[op].reads_d) {
      Bad(fmt::format("CompileVector: stage {} is {}, which reads its destination", i,
                      isa::kVectorOps[op].name));
    }
    if (s.b == VectorB::kTensor || s.b == VectorB::kRow) {
      if (b_kind != VectorB::kNone && b_kind != s.b) {
        Bad(fmt::format("CompileVector: stage {} reads B as {}, an earlier stage as {}", i,
                        s.b == VectorB::kRow ? "a row" : "a tensor",
                        b_kind == VectorB::kRow ? "a row" : "a tensor"));
      }
      b_kind = s.b;
    }
  }
  // The vector memory: blocks of `rows` rows of A at row 0, B's block (a tensor) or row (a row)
  // after them.
  const int depth = cfg.vmem_depth;
  const int rows = b_kind == VectorB::kTensor ? depth / 2
                   : b_kind == VectorB::kRow  ? depth - 1
                                              : depth;
  if (rows < 1) {
    Bad(fmt::format("CompileVector: VmemDepth = {} holds no block with its B", depth));
  }
  Program p(cfg, data_base);
  VectorProgram r;
  r.a = p.AllocMatrix(m, n, cfg.c, 4, fmt::format("A ({}×{} fp32)", m, n));
  if (b_kind == VectorB::kNone) {
    r.b.tile = cfg.c, r.b.elem_bytes = 4, r.b.cols = n;
  } else {
    const int b_rows = b_kind == VectorB::kRow ? 1 : m;
    r.b = p.AllocMatrix(b_rows, n, cfg.c, 4, fmt::format("B ({}×{} fp32)", b_rows, n));
  }
  r.out = p.AllocMatrix(m, n, cfg.c, 4, fmt::format("output ({}×{} fp32)", m, n));
  if (also_bf16)
    r.out_bf16 = p.AllocMatrix(m, n, cfg.c, 2, fmt::format("output ({}×{} bf16)", m, n));
  Stats st;
  const auto load = [&](const TiledMatrix& l, int t, int r0, int count, int dst) {
    EmitVmemLoad(p, st, l, t, r0, count, dst, isa::kFmtFp32);
  };
  // A last relu stage is the STORE's relu in IEEE mode (the same bits: max(x, +0) with NaN as
  // 0x7FC00000; in FTZ mode the vector unit's relu also flushes a subnormal, the store's does
  // not).
  std::vector<VectorStage> run = stages;
  const bool store_relu = cfg.mode == num::Mode::kIeee && run.back().op == isa::VectorOp::kRelu;
  if (store_relu) run.pop_back();
  for (int t = 0; t < r.a.Tiles(); ++t) {
    if (b_kind == VectorB::kRow) load(r.b, t, 0, 1, rows);
    for (int r0 = 0; r0 < m; r0 += rows) {
      const int count = std::min(rows, m - r0);
      load(r.a, t, r0, count, 0);
      if (b_kind == VectorB::kTensor) load(r.b, t, r0, count, rows);
      for (const VectorStage& s : run) {
        isa::Vop v;
        v.op = uint8_t(s.op);
        v.a_vmem = true;
        v.a = 0, v.asi = 1;
        v.d = 0, v.dsi = 1;
        v.n = uint16_t(count), v.m = 1;
        if (s.b == VectorB::kScalar) {
          v.b_scalar = true;
          v.scalar = s.scalar;
        } else if (s.b != VectorB::kNone) {
          v.b_vmem = true;
          v.b = uint16_t(rows);
          v.bsi = s.b == VectorB::kTensor ? 1 : 0;
        }
        p.Emit(v);
        ++st.vops;
      }
      isa::Store so;
      so.source = isa::kSrcVmem;
      so.format = isa::kFmtFp32;
      so.activation = store_relu ? isa::kActRelu : isa::kActNone;
      so.hbm_addr = r.out.RowAddr(t, r0);
      so.hbm_stride = uint32_t(r.out.Pitch());
      so.acc = 0;
      so.rows = uint16_t(count);
      so.elems = uint16_t(r.out.TileCols(t));
      p.Emit(so);
      ++st.stores;
      st.bytes_written += uint64_t(count) * so.elems * 4;
      if (also_bf16) {
        so.format = isa::kFmtBf16;
        so.hbm_addr = r.out_bf16.RowAddr(t, r0);
        so.hbm_stride = uint32_t(r.out_bf16.Pitch());
        p.Emit(so);
        ++st.stores;
        st.bytes_written += uint64_t(count) * so.elems * 2;
      }
    }
  }
  r.prog = Finish(p, st);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Pooling (version 1.4)

namespace {

// The outputs o (stride s, leading pad p, dilation d) whose tap t lands inside [0, size), as
// [lo, hi) within [o0, o1).
std::pair<int, int> TapRange(int t, int s, int p, int d, int size, int o0, int o1) {
  const int64_t off = int64_t(t) * d - p;  // input position of output 0's tap t
  // o·s + off >= 0  <=>  o >= ceil(-off / s); o·s + off < size  <=>  o <= floor((size-1-off)/s)
  const auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t lo = -floor_div(off, s), hi = floor_div(size - 1 - off, s) + 1;
  return {int(std::clamp<int64_t>(lo, o0, o1)), int(std::clamp<int64_t>(hi, o0, o1))};
}

// Per output position along one axis: the taps inside the input and inside the padded input.
int AxisTaps(int o, int k, int s, int d, int p, int size, bool padded, int pe) {
  int count = 0;
  for (int t = 0; t < k; ++t) {
    const int64_t i = int64_t(o) * s - p + int64_t(t) * d;
    count += padded ? (i >= -p && i < size + pe) : (i >= 0 && i < size);
  }
  return count;
}

}  // namespace

int PoolShape::Taps(int o_h, int o_w) const {
  return AxisTaps(o_h, kh, sh, dh, pt, h, false, pb) * AxisTaps(o_w, kw, sw, dw, pl, w, false, pr);
}

int PoolShape::Divisor(int o_h, int o_w) const {
  if (!count_include_pad) return Taps(o_h, o_w);
  return AxisTaps(o_h, kh, sh, dh, pt, h, true, pb) * AxisTaps(o_w, kw, sw, dw, pl, w, true, pr);
}

namespace {

// Pooling, or a depthwise convolution (`dw`), on the vector unit: the tiles of CompilePool.
PoolProgram CompileWindowed(const isa::MachineConfig& cfg, const PoolShape& s,
                            const DepthwiseOptions* dw, uint64_t data_base, bool also_bf16) {
  const char* who = dw != nullptr ? "CompileDepthwise" : "CompilePool";
  CheckConfig(cfg, who);
  if (!cfg.vector_unit()) {
    Bad(fmt::format("{}: the machine has no vector unit (VmemDepth = 0)", who));
  }
  for (const auto& [name, v] : {std::pair<const char*, int>{"N", s.n},
                                {"H", s.h},
                                {"W", s.w},
                                {"C", s.c},
                                {"kh", s.kh},
                                {"kw", s.kw},
                                {"stride h", s.sh},
                                {"stride w", s.sw},
                                {"dilation h", s.dh},
                                {"dilation w", s.dw},
                                {"OH", s.oh},
                                {"OW", s.ow}}) {
    CheckDim(who, name, v);
  }
  if (s.pt < 0 || s.pl < 0 || s.pb < 0 || s.pr < 0) {
    Bad(fmt::format("{}: negative pads {}, {}, {}, {}", who, s.pt, s.pl, s.pb, s.pr));
  }
  // (A convolution's window may lie in the padding alone; a pooling window may not.)
  if (dw == nullptr && (int64_t(s.oh - 1) * s.sh >= int64_t(s.h) + s.pt ||
                        int64_t(s.ow - 1) * s.sw >= int64_t(s.w) + s.pl)) {
    Bad(fmt::format("{}: {}x{} outputs: the last window starts past the padded input", who, s.oh,
                    s.ow));
  }
  // Images stacked into one tall image where no window crosses an image's edge (no vertical
  // pads, windows within their stride's rows, H = OH·sh: a global pool, 2x2 stride 2 on even
  // sizes), so a tile and each VOP span many images.
  // A pool's full channel tiles lie one after another in HBM (TiledMatrix is tile-major), so
  // where images stack, N images of C = k·c channels are N·k images of c channels, image
  // t·N + n being tile t of image n: a global pool's tile then spans many channel tiles. (Not a
  // depthwise convolution: its weights differ per tile.) LOADs and STOREs are still cut at the
  // tiles' boundaries, so Link sees only accesses within a tile.
  const int64_t ext_h = int64_t(s.kh - 1) * s.dh + 1;
  const bool stackable = s.pt == 0 && s.pb == 0 && ext_h <= s.sh && int64_t(s.oh) * s.sh == s.h;
  const int ctiles = (s.c + cfg.c - 1) / cfg.c;
  const bool tile_stack = stackable && dw == nullptr && ctiles > 1 && s.c % cfg.c == 0 &&
                          int64_t(s.n) * ctiles * s.h <= std::numeric_limits<int>::max();
  const int images = tile_stack ? s.n * ctiles : s.n;
  PoolShape g = s;
  if (images > 1 && stackable && int64_t(images) * s.h <= std::numeric_limits<int>::max()) {
    g.h = images * s.h, g.oh = images * s.oh, g.n = 1;
  }
  const int depth = cfg.vmem_depth;
  const bool avg = dw == nullptr && !s.max;
  const int kout = avg ? 3 : 1;  // vector-memory rows per output pixel: S (Q and C: average)
  // The last rows: the constant (-inf, -0; +0 for a depthwise convolution), and for a depthwise
  // convolution the kh·kw weight rows and the bias row.
  const int64_t taps = int64_t(s.kh) * s.kw;
  const int64_t reserved = dw != nullptr ? 1 + taps + (dw->bias ? 1 : 0) : 1;
  if (reserved + kout + 1 > depth) {
    Bad(fmt::format("{}: VmemDepth = {} is too small (at least {} rows)", who, depth,
                    reserved + kout + 1));
  }
  const int avail = depth - int(reserved);
  const auto seg_of = [&](int64_t tw, int64_t jc) { return (tw - 1) * s.sw + (jc - 1) * s.dw + 1; };
  const auto band_of = [&](int64_t th) { return ((th - 1) * s.sh + ext_h) * s.w; };
  // The tile: whole output rows with the band of whole input rows they read (one LOAD a tile)
  // if one output row fits so; else per kernel row its segments: whole output rows if they fit,
  // else fewer output pixels of one row, else one pixel and the taps of a kernel row in chunks.
  int64_t th = 0, tw = s.ow, jc = s.kw;
  const bool band = kout * tw + band_of(1) <= avail;
  if (band) {
    th = 1;
    while (th < g.oh && kout * (th + 1) * tw + band_of(th + 1) <= avail) ++th;
  } else {
    th = avail / (kout * tw + seg_of(tw, jc));
    if (th < 1) {
      th = 1;
      while (tw > 1 && kout * tw + seg_of(tw, jc) > avail) --tw;
      if (kout * tw + seg_of(tw, jc) > avail) {
        while (jc > 1 && kout + seg_of(1, jc) > avail) --jc;
      }
    }
    th = std::min<int64_t>(th, g.oh);
    if (kout * th * tw + th * seg_of(tw, jc) > avail) {
      Bad(fmt::format("{}: VmemDepth = {} is too small (at least {} rows)", who, depth,
                      reserved + kout + 1));
    }
  }
  const int T = int(th * tw), seg = int(seg_of(tw, jc));
  const int row_s = 0, row_q = T, row_c = 2 * T, row_in = kout * T, row_k = depth - 1;
  const int row_w = depth - 1 - int(taps), row_b = row_w - 1;  // depthwise: weights, bias
  // A depthwise convolution's operands are bf16 (fp32 with dw->fp32: a per-channel affine map).
  const bool bf16_in = dw != nullptr && !dw->fp32;
  const uint8_t in_fmt = bf16_in ? isa::kFmtBf16 : isa::kFmtFp32;
  const char* in_name = bf16_in ? "bf16" : "fp32";
  const bool out_bf16 = dw != nullptr && dw->out == OutFormat::kBf16;
  Program p(cfg, data_base);
  PoolProgram r;
  r.shape = s;
  r.tile_h = int(th), r.tile_w = int(tw), r.tap_chunk = int(jc), r.band = band;
  r.in = p.AllocMatrix(s.n * s.h * s.w, s.c, cfg.c, bf16_in ? 2 : 4,
                       fmt::format("input ({}x{}x{}x{} {} NHWC)", s.n, s.h, s.w, s.c, in_name));
  if (dw != nullptr) {
    r.w = p.AllocMatrix(
        int(taps), s.c, cfg.c, bf16_in ? 2 : 4,
        fmt::format("weights ({}x{} taps x {} channels {})", s.kh, s.kw, s.c, in_name));
    if (dw->bias) r.bias = p.AllocMatrix(1, s.c, cfg.c, 4, fmt::format("bias ({} fp32)", s.c));
  }
  r.out = p.AllocMatrix(s.n * s.oh * s.ow, s.c, cfg.c, out_bf16 ? 2 : 4,
                        fmt::format("output ({}x{}x{}x{} {} NHWC)", s.n, s.oh, s.ow, s.c,
                                    out_bf16 ? "bf16" : "fp32"));
  if (also_bf16 && !out_bf16) {
    r.out_bf16 = p.AllocMatrix(s.n * s.oh * s.ow, s.c, cfg.c, 2,
                               fmt::format("output ({}x{}x{}x{} bf16 NHWC)", s.n, s.oh, s.ow, s.c));
  }
  Stats st;
  const auto vop = [&](isa::VectorOp op, int a, int b, int d, int m, int n) {
    isa::Vop v;
    v.op = uint8_t(op);
    v.a_vmem = true;
    v.a = uint16_t(a), v.b = uint16_t(b), v.d = uint16_t(d);
    v.m = uint16_t(m), v.n = uint16_t(n);
    return v;
  };
  const auto emit = [&](const isa::Vop& v) {
    p.Emit(v);
    ++st.vops;
  };
  const auto vload = [&](const TiledMatrix& l, int t, int row, int rows, int dst, uint8_t fmt) {
    EmitVmemLoad(p, st, l, t, row, rows, dst, fmt);
  };
  // Input rows [row, row + rows) of tile t, or of the stacked tiles (t = 0): cut at the tiles.
  const int64_t in_rows = int64_t(s.n) * s.h * s.w, out_rows = int64_t(s.n) * s.oh * s.ow;
  const auto in_load = [&](int t, int64_t row, int64_t rows, int dst) {
    while (rows > 0) {
      const int tt = tile_stack ? int(row / in_rows) : t;
      const int64_t r0 = tile_stack ? row % in_rows : row, n = std::min(rows, in_rows - r0);
      vload(r.in, tt, int(r0), int(n), dst, in_fmt);
      row += n, rows -= n, dst += int(n);
    }
  };
  // The constant row: input row 0 loaded, compared with itself (+0 in every lane), then -inf
  // (+0 - +inf) for max or -0 (+0 · -1) for the average (+0 stays for a depthwise convolution).
  {
    vload(r.in, 0, 0, 1, row_k, in_fmt);
    isa::Vop gt = vop(isa::VectorOp::kGt, row_k, row_k, row_k, 1, 1);
    gt.b_vmem = true;
    emit(gt);
    if (dw == nullptr) {
      isa::Vop k = vop(s.max ? isa::VectorOp::kSub : isa::VectorOp::kMul, row_k, 0, row_k, 1, 1);
      k.b_scalar = true;
      k.scalar = s.max ? vpu::kPlusInf : vpu::kMinusOne;
      emit(k);
    }
  }
  const auto f32 = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  for (int t = 0; t < (tile_stack ? 1 : r.in.Tiles()); ++t) {
    const int elems = tile_stack ? cfg.c : r.in.TileCols(t);
    if (dw != nullptr) {  // the channel tile's weights (bf16) and bias
      vload(r.w, t, 0, int(taps), row_w, in_fmt);
      if (dw->bias) vload(r.bias, t, 0, 1, row_b, isa::kFmtFp32);
    }
    for (int img = 0; img < g.n; ++img) {
      for (int oh0 = 0; oh0 < g.oh; oh0 += int(th)) {
        const int toh = std::min(int(th), g.oh - oh0);
        for (int ow0 = 0; ow0 < s.ow; ow0 += int(tw)) {
          const int tow = std::min(int(tw), s.ow - ow0);
          // A max pool's first tap (row-major) that lies inside the input for every output of a
          // band tile: S starts as max(x, x) over it, which is max(-inf, x) bit for bit (a NaN
          // gives the canonical NaN, a subnormal is read as the mode reads it), in place of the
          // constant and that tap's own VOP. The maximum is the same in any tap order (IEEE
          // maximum with -0 below +0 and every NaN canonical), so the bits are the contract's.
          int first_i = -1, first_j = -1;
          for (int i = 0; band && s.max && dw == nullptr && first_i < 0 && i < s.kh; ++i) {
            const auto rh = TapRange(i, s.sh, s.pt, s.dh, g.h, oh0, oh0 + toh);
            for (int j = 0; rh.first == oh0 && rh.second == oh0 + toh && j < s.kw; ++j) {
              const auto rw = TapRange(j, s.sw, s.pl, s.dw, s.w, ow0, ow0 + tow);
              if (rw.first == ow0 && rw.second == ow0 + tow) {
                first_i = i, first_j = j;
                break;
              }
            }
          }
          // S = the constant, on every output pixel of the tile (row (oh - oh0)·tw + ow - ow0).
          if (first_i < 0) {
            isa::Vop init = vop(isa::VectorOp::kCopy, dw != nullptr && dw->bias ? row_b : row_k, 0,
                                row_s, toh, tow);
            init.dsi = 1, init.dso = uint16_t(tw);
            emit(init);
          }
          // Band: input rows ih_lo .. ih_hi - 1 (those the tile's windows reach), one LOAD.
          const int64_t ih_lo = std::max<int64_t>(0, int64_t(oh0) * s.sh - s.pt);
          const int64_t ih_hi =
              std::min<int64_t>(g.h, int64_t(oh0 + toh - 1) * s.sh - s.pt + ext_h);
          if (band && ih_lo < ih_hi) {
            in_load(t, (int64_t(img) * g.h + ih_lo) * s.w, (ih_hi - ih_lo) * s.w, row_in);
          }
          // Tap (i, j) of band outputs [oh_lo, oh_hi) x [ow_lo, ow_hi): its first input row.
          const auto band_a = [&](int i, int j, int oh_lo, int ow_lo) {
            const int64_t col = int64_t(ow_lo) * s.sw - s.pl + int64_t(j) * s.dw;
            return row_in + (int64_t(oh_lo) * s.sh - s.pt + int64_t(i) * s.dh - ih_lo) * s.w + col;
          };
          if (first_i >= 0) {
            isa::Vop v = vop(isa::VectorOp::kMax, int(band_a(first_i, first_j, oh0, ow0)), 0, row_s,
                             toh, tow);
            v.b = v.a;
            v.b_vmem = true;
            v.asi = v.bsi = uint16_t(tow > 1 ? s.sw : 0);
            v.aso = v.bso = uint16_t(toh > 1 ? int64_t(s.sh) * s.w : 0);
            v.dsi = 1, v.dso = uint16_t(tw);
            emit(v);
          }
          // A depthwise convolution's tap (i, j) on the outputs whose input lies in the padding:
          // mac with the +0 row (the MXU's +0 operand), rectangles around [oh_lo, oh_hi) x
          // [ow_lo, ow_hi) (empty: the whole tile).
          const auto padding = [&](int i, int j, int oh_lo, int oh_hi, int ow_lo, int ow_hi) {
            if (oh_lo >= oh_hi || ow_lo >= ow_hi) oh_lo = oh_hi = oh0, ow_lo = ow_hi = ow0;
            const std::array<std::array<int, 4>, 4> rects = {
                std::array<int, 4>{oh0, oh_lo, ow0, ow0 + tow},
                {oh_hi, oh0 + toh, ow0, ow0 + tow},
                {oh_lo, oh_hi, ow0, ow_lo},
                {oh_lo, oh_hi, ow_hi, ow0 + tow}};
            for (const auto& q : rects) {
              if (q[0] >= q[1] || q[2] >= q[3]) continue;
              const int d = row_s + (q[0] - oh0) * int(tw) + (q[2] - ow0);
              isa::Vop v = vop(isa::VectorOp::kMac, row_k, row_w + i * s.kw + j, d, q[1] - q[0],
                               q[3] - q[2]);
              v.b_vmem = true;
              v.dsi = 1, v.dso = uint16_t(tw);
              emit(v);
            }
          };
          for (int i = 0; i < s.kh; ++i) {
            const auto [oh_lo, oh_hi] = TapRange(i, s.sh, s.pt, s.dh, g.h, oh0, oh0 + toh);
            if (oh_lo >= oh_hi) {
              for (int j = 0; dw != nullptr && j < s.kw; ++j) padding(i, j, 0, 0, 0, 0);
              continue;
            }
            for (int j0 = 0; j0 < s.kw; j0 += int(jc)) {
              const int j1 = std::min(s.kw, j0 + int(jc));
              // Segment u holds input row ih(oh0 + u) from column iw0 on.
              const int64_t iw0 = int64_t(ow0) * s.sw - s.pl + int64_t(j0) * s.dw;
              const int64_t iw_lo = std::max<int64_t>(0, iw0);
              const int64_t iw_hi = std::min<int64_t>(
                  s.w, iw0 + (tow - 1) * int64_t(s.sw) + int64_t(j1 - 1 - j0) * s.dw + 1);
              if (iw_lo >= iw_hi) {
                for (int j = j0; dw != nullptr && j < j1; ++j) padding(i, j, 0, 0, 0, 0);
                continue;
              }
              for (int oh = oh_lo; oh < oh_hi && !band; ++oh) {
                const int64_t ih = int64_t(oh) * s.sh - s.pt + int64_t(i) * s.dh;
                in_load(t, (int64_t(img) * g.h + ih) * s.w + iw_lo, iw_hi - iw_lo,
                        int(row_in + (oh - oh0) * seg + (iw_lo - iw0)));
              }
              for (int j = j0; j < j1; ++j) {
                const auto [ow_lo, ow_hi] = TapRange(j, s.sw, s.pl, s.dw, s.w, ow0, ow0 + tow);
                if (dw != nullptr) padding(i, j, oh_lo, oh_hi, ow_lo, ow_hi);
                if (ow_lo >= ow_hi || (i == first_i && j == first_j)) continue;
                const int m = oh_hi - oh_lo, n = ow_hi - ow_lo;
                const int64_t col = int64_t(ow_lo) * s.sw - s.pl + int64_t(j) * s.dw;
                const int d = row_s + (oh_lo - oh0) * int(tw) + (ow_lo - ow0);
                // A: band row (ih - ih_lo)·W + iw, or segment row (oh - oh0)·seg + iw - iw0.
                const int64_t a = band ? band_a(i, j, oh_lo, ow_lo)
                                       : row_in + int64_t(oh_lo - oh0) * seg + col - iw0;
                isa::Vop v = vop(dw != nullptr ? isa::VectorOp::kMac
                                 : s.max       ? isa::VectorOp::kMax
                                               : isa::VectorOp::kAdd,
                                 int(a), d, d, m, n);
                v.b_vmem = true;
                v.asi = uint16_t(n > 1 ? s.sw : 0);
                v.aso = uint16_t(m > 1 ? (band ? int64_t(s.sh) * s.w : seg) : 0);
                v.bsi = v.dsi = 1;
                v.bso = v.dso = uint16_t(tw);
                if (dw != nullptr) {  // B: the tap's weight row, D = S accumulates
                  v.b = uint16_t(row_w + i * s.kw + j);
                  v.bsi = v.bso = 0;
                }
                emit(v);
              }
            }
          }
          if (avg) {
            // The division, per rectangle of equal divisors (runs along each axis): 6 VOPs.
            const auto runs = [](int o0, int o1, const std::function<std::pair<int, int>(int)>& f) {
              std::vector<std::array<int, 4>> r;  // lo, hi, taps, divisor
              for (int o = o0; o < o1; ++o) {
                const auto v = f(o);
                if (r.empty() || r.back()[2] != v.first || r.back()[3] != v.second) {
                  r.push_back({o, o + 1, v.first, v.second});
                } else {
                  r.back()[1] = o + 1;
                }
              }
              return r;
            };
            const bool inc = s.count_include_pad;
            const auto hr = runs(oh0, oh0 + toh, [&](int o) {
              return std::pair{AxisTaps(o, s.kh, s.sh, s.dh, s.pt, g.h, false, s.pb),
                               inc ? AxisTaps(o, s.kh, s.sh, s.dh, s.pt, g.h, true, s.pb) : 0};
            });
            const auto wr = runs(ow0, ow0 + tow, [&](int o) {
              return std::pair{AxisTaps(o, s.kw, s.sw, s.dw, s.pl, s.w, false, s.pr),
                               inc ? AxisTaps(o, s.kw, s.sw, s.dw, s.pl, s.w, true, s.pr) : 0};
            });
            for (const auto& a : hr) {
              for (const auto& b : wr) {
                const int m = a[1] - a[0], n = b[1] - b[0];
                const int off = (a[0] - oh0) * int(tw) + (b[0] - ow0);
                const int taps = a[2] * b[2], div = inc ? a[3] * b[3] : taps;
                const auto rect = [&](isa::VectorOp op, int a_row, int b_row, int d_row) {
                  isa::Vop v = vop(op, a_row + off, b_row + off, d_row + off, m, n);
                  v.asi = v.bsi = v.dsi = 1;
                  v.aso = v.bso = v.dso = uint16_t(tw);
                  return v;
                };
                if (taps == 0) {  // no tap inside the input: +0 (the constant compared)
                  isa::Vop v = rect(isa::VectorOp::kGt, 0, 0, row_q);
                  v.a = v.b = uint16_t(row_k);
                  v.asi = v.aso = v.bsi = v.bso = 0;
                  v.b_vmem = true;
                  emit(v);
                  continue;
                }
                const uint32_t y = f32(1.0f / float(div)), minus_n = f32(-float(div));
                isa::Vop q0 = rect(isa::VectorOp::kMul, row_s, 0, row_q);
                q0.b_scalar = true, q0.scalar = y, q0.bsi = q0.bso = 0;
                emit(q0);
                isa::Vop rem = rect(isa::VectorOp::kMac, row_q, 0, row_s);
                rem.b_scalar = true, rem.scalar = minus_n, rem.bsi = rem.bso = 0;
                emit(rem);
                // r' = r where r is neither a zero nor a NaN (|r| > 0), else -0: then q = q0
                // exactly, the sign of a zero quotient included.
                isa::Vop mag = rect(isa::VectorOp::kLeakyRelu, row_s, 0, row_c);
                mag.b_scalar = true, mag.scalar = vpu::kMinusOne, mag.bsi = mag.bso = 0;
                emit(mag);
                isa::Vop nonzero = rect(isa::VectorOp::kGt, row_c, 0, row_c);
                nonzero.b_scalar = true, nonzero.scalar = 0, nonzero.bsi = nonzero.bso = 0;
                emit(nonzero);
                isa::Vop sel = rect(isa::VectorOp::kSelect, row_s, 0, row_c);
                sel.b_scalar = true, sel.scalar = vpu::kMinusZero, sel.bsi = sel.bso = 0;
                emit(sel);
                isa::Vop q = rect(isa::VectorOp::kMac, row_c, 0, row_q);
                q.b_scalar = true, q.scalar = y, q.bsi = q.bso = 0;
                emit(q);
              }
            }
          }
          // STOREs: the tile's rows, one per output row (one for the tile when it is whole rows).
          const int src = avg ? row_q : row_s;
          const bool whole = tow == s.ow;
          for (int u = 0; u < (whole ? 1 : toh); ++u) {
            // Output rows [row, row + rows) of tile t or of the stacked tiles, cut at the tiles.
            int64_t row = (int64_t(img) * g.oh + oh0 + u) * s.ow + ow0;
            int64_t rows = whole ? int64_t(toh) * tow : tow;
            int acc = src + u * int(tw);
            while (rows > 0) {
              const int tt = tile_stack ? int(row / out_rows) : t;
              const int64_t r0 = tile_stack ? row % out_rows : row;
              const int n = int(std::min(rows, out_rows - r0));
              isa::Store so;
              so.source = isa::kSrcVmem;
              so.format = out_bf16 ? isa::kFmtBf16 : isa::kFmtFp32;
              so.activation = dw != nullptr && dw->relu ? isa::kActRelu : isa::kActNone;
              so.hbm_addr = r.out.RowAddr(tt, int(r0));
              so.hbm_stride = uint32_t(r.out.Pitch());
              so.acc = uint16_t(acc);
              so.rows = uint16_t(n);
              so.elems = uint16_t(elems);
              p.Emit(so);
              ++st.stores;
              st.bytes_written += uint64_t(so.rows) * so.elems * (out_bf16 ? 2 : 4);
              if (r.out_bf16.rows > 0) {
                so.format = isa::kFmtBf16;
                so.hbm_addr = r.out_bf16.RowAddr(tt, int(r0));
                so.hbm_stride = uint32_t(r.out_bf16.Pitch());
                p.Emit(so);
                ++st.stores;
                st.bytes_written += uint64_t(so.rows) * so.elems * 2;
              }
              row += n, rows -= n, acc += n;
            }
          }
        }
      }
    }
  }
  r.prog = Finish(p, st);
  return r;
}

}  // namespace

PoolProgram CompilePool(const isa::MachineConfig& cfg, const PoolShape& s, uint64_t data_base,
                        bool also_bf16) {
  return CompileWindowed(cfg, s, nullptr, data_base, also_bf16);
}

PoolProgram CompileDepthwise(const isa::MachineConfig& cfg, const PoolShape& s,
                             const DepthwiseOptions& o, uint64_t data_base) {
  return CompileWindowed(cfg, s, &o, data_base, o.also_bf16);
}

std::vector<uint32_t> VectorOnHost(int m, int n, const std::vector<VectorStage>& stages,
                                   std::vector<uint32_t> a, const std::vector<uint32_t>& b,
                                   num::Mode mode) {
  const size_t size = size_t(std::max(m, 0)) * size_t(std::max(n, 0));
  if (m < 1 || n < 1 || a.size() != size) {
    Bad(fmt::format("VectorOnHost: {} values of A for {} x {}", a.size(), m, n));
  }
  for (size_t k = 0; k < stages.size(); ++k) {
    const VectorStage& s = stages[k];
    const bool tensor = s.b == VectorB::kTensor, row = s.b == VectorB::kRow;
    if ((tensor && b.size() != size) || (row && b.size() != size_t(n))) {
      Bad(fmt::format("VectorOnHost: stage {} reads {} values of B, not {}", k, b.size(),
                      tensor ? size : size_t(n)));
    }
    for (size_t i = 0; i < size; ++i) {
      const uint32_t bv = tensor ? b[i] : row ? b[i % size_t(n)] : s.scalar;
      a[i] = isa::ApplyVectorOp(s.op, a[i], s.b == VectorB::kNone ? 0u : bv, 0, mode);
    }
  }
  return a;
}

SoftmaxProgram CompileSoftmax(const isa::MachineConfig& cfg, int len, int slices, bool log,
                              uint64_t data_base) {
  CheckConfig(cfg, "CompileSoftmax");
  if (!cfg.vector_unit()) Bad("CompileSoftmax: the machine has no vector unit (VmemDepth = 0)");
  CheckDim("CompileSoftmax", "L", len);
  CheckDim("CompileSoftmax", "slices", slices);
  const int depth = cfg.vmem_depth;
  if (depth < SoftmaxRows(len)) {
    Bad(fmt::format("CompileSoftmax: VmemDepth = {} holds no slice of {} (at least {} rows)", depth,
                    len, SoftmaxRows(len)));
  }
  // Rows: X (the slices) 0..L-1, then M (max), S (sum), NS (-s), R (1/s or log s), K (a
  // constant), then a Q chunk of `chunk` rows.
  const int row_m = len, row_s = len + 1, row_ns = len + 2, row_r = len + 3, row_k = len + 4;
  const int row_q = len + 5, chunk = std::min(len, depth - row_q);
  Program p(cfg, data_base);
  SoftmaxProgram r;
  r.chunk = chunk;
  r.in = p.AllocMatrix(len, slices, cfg.c, 4, fmt::format("input ({}x{} fp32)", len, slices));
  r.out = p.AllocMatrix(len, slices, cfg.c, 4, fmt::format("output ({}x{} fp32)", len, slices));
  Stats st;
  // A VOP over `n` rows from a, b, d with unit strides (0 where the operand is one row).
  const auto vop = [&](isa::VectorOp op, int a, int a_si, int b, int b_si, int d, int d_si, int n,
                       bool b_scalar = false, uint32_t scalar = 0) {
    isa::Vop v;
    v.op = uint8_t(op);
    v.a_vmem = true;
    v.a = uint16_t(a), v.asi = uint16_t(a_si);
    if (b_scalar) {
      v.b_scalar = true, v.scalar = scalar;
    } else if (isa::kVectorOps[size_t(op)].reads_b) {
      v.b_vmem = true, v.b = uint16_t(b), v.bsi = uint16_t(b_si);
    }
    v.d = uint16_t(d), v.dsi = uint16_t(d_si);
    v.n = uint16_t(n);
    p.Emit(v);
    ++st.vops;
  };
  using Op = isa::VectorOp;
  const auto store = [&](int t, int src, int r0, int n) {
    isa::Store so;
    so.source = isa::kSrcVmem;
    so.format = isa::kFmtFp32;
    so.hbm_addr = r.out.RowAddr(t, r0);
    so.hbm_stride = uint32_t(r.out.Pitch());
    so.acc = uint16_t(src);
    so.rows = uint16_t(n);
    so.elems = uint16_t(r.out.TileCols(t));
    p.Emit(so);
    ++st.stores;
    st.bytes_written += uint64_t(n) * so.elems * 4;
  };
  for (int t = 0; t < r.in.Tiles(); ++t) {
    EmitVmemLoad(p, st, r.in, t, 0, len, 0, isa::kFmtFp32);
    // K = +0 (row 0 compared with itself), M = -inf, S = -0.
    vop(Op::kGt, 0, 0, 0, 0, row_k, 0, 1);
    vop(Op::kSub, row_k, 0, 0, 0, row_m, 0, 1, true, vpu::kPlusInf);
    vop(Op::kMul, row_k, 0, 0, 0, row_s, 0, 1, true, vpu::kMinusOne);
    vop(Op::kMax, 0, 1, row_m, 0, row_m, 0, len);  // m = max(m, x_i), i = 0 .. L-1
    vop(Op::kSub, 0, 1, row_m, 0, 0, 1, len);      // d_i = x_i - m
    if (log) {
      // s = s + exp(d_i) through the Q chunk (the d_i stay), then y_i = d_i - log(s).
      for (int r0 = 0; r0 < len; r0 += chunk) {
        const int n = std::min(chunk, len - r0);
        vop(Op::kExp, r0, 1, 0, 0, row_q, 1, n);
        vop(Op::kAdd, row_q, 1, row_s, 0, row_s, 0, n);
      }
      vop(Op::kLog, row_s, 0, 0, 0, row_r, 0, 1);
      vop(Op::kSub, 0, 1, row_r, 0, 0, 1, len);
      store(t, 0, 0, len);
    } else {
      vop(Op::kExp, 0, 1, 0, 0, 0, 1, len);                               // e_i
      vop(Op::kAdd, 0, 1, row_s, 0, row_s, 0, len);                       // s = s + e_i
      vop(Op::kMul, row_s, 0, 0, 0, row_ns, 0, 1, true, vpu::kMinusOne);  // -s
      vop(Op::kRecip, row_s, 0, 0, 0, row_r, 0, 1);                       // r = 1/s
      for (int r0 = 0; r0 < len; r0 += chunk) {
        const int n = std::min(chunk, len - r0);
        vop(Op::kMul, r0, 1, row_r, 0, row_q, 1, n);   // q0 = e·r
        vop(Op::kMac, row_q, 1, row_ns, 0, r0, 1, n);  // t = fma(q0, -s, e)
        vop(Op::kMac, r0, 1, row_r, 0, row_q, 1, n);   // y = fma(t, r, q0)
        store(t, row_q, r0, n);
      }
    }
  }
  r.prog = Finish(p, st);
  return r;
}

std::vector<uint32_t> SoftmaxOnHost(int len, int slices, bool log, const std::vector<uint32_t>& x,
                                    num::Mode mode) {
  if (len < 1 || slices < 1 || x.size() != size_t(len) * size_t(slices)) {
    Bad(fmt::format("SoftmaxOnHost: {} values for {} slices of {}", x.size(), slices, len));
  }
  using isa::VectorOp;
  const auto op = [mode](VectorOp o, uint32_t a, uint32_t b, uint32_t d = 0) {
    return isa::ApplyVectorOp(o, a, b, d, mode);
  };
  std::vector<uint32_t> y(x.size()), d(size_t(len), 0), e(size_t(len), 0);
  for (int c = 0; c < slices; ++c) {
    const auto at = [&](int i) { return size_t(i) * size_t(slices) + size_t(c); };
    uint32_t m = 0xFF800000u, sum = 0x80000000u;  // -inf, -0
    for (int i = 0; i < len; ++i) m = op(VectorOp::kMax, x[at(i)], m);
    for (int i = 0; i < len; ++i) {
      d[size_t(i)] = op(VectorOp::kSub, x[at(i)], m);
      e[size_t(i)] = op(VectorOp::kExp, d[size_t(i)], 0);
      sum = op(VectorOp::kAdd, e[size_t(i)], sum);
    }
    if (log) {
      const uint32_t ls = op(VectorOp::kLog, sum, 0);
      for (int i = 0; i < len; ++i) y[at(i)] = op(VectorOp::kSub, d[size_t(i)], ls);
      continue;
    }
    const uint32_t r = op(VectorOp::kRecip, sum, 0), ns = op(VectorOp::kMul, sum, 0xBF800000u);
    for (int i = 0; i < len; ++i) {
      const uint32_t q0 = op(VectorOp::kMul, e[size_t(i)], r);
      const uint32_t t = op(VectorOp::kMac, q0, ns, e[size_t(i)]);
      y[at(i)] = op(VectorOp::kMac, t, r, q0);
    }
  }
  return y;
}

}  // namespace tpu::host
