// SPDX-License-Identifier: Apache-2.0
// Runs a tiled GEMM (tpu/tb/mxu_plan.h) on a Verilated tpu_mxu, cycle by cycle: drivers for the
// command, weight, activation and accumulator-load ports (valid/ready, with optional random
// gaps), the store-port reader that collects the results, and the performance counters.
// Functional coverage (tpu/tb/fcov.h): the class of every element the unit takes (mxu.a / .b /
// .c0) and the handshakes of its valid/ready inputs (mxu.handshake).
// Templated over the model class: every tpu_mxu configuration has the same ports.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpu/gemm.h"
#include "tpu/numerics.h"
#include "tpu/tb/channels.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/mxu_plan.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/sim_ctrl.h"
#include "tpu/tb/vl_bits.h"

namespace tpu::tb {

// Random gaps: the probability that a driver leaves its valid low in a cycle where it could
// present a beat (0 = full rate). Back-pressure comes from the RTL's ready.
struct Stimulus {
  double cmd_gap = 0, w_gap = 0, a_gap = 0, ld_gap = 0, st_gap = 0;
  uint64_t seed = 1;
  static Stimulus Random(double p, uint64_t seed) { return {p, p, p, p, p, seed}; }
};

// The matrix unit's performance counters (tpu_mxu_ctrl) after a run.
struct MxuPerf {
  uint64_t cycles = 0, busy = 0, macs = 0, wstall = 0, starve = 0, hazard = 0, drain = 0;
};

struct MxuResult {
  std::vector<uint32_t> c;  // M×N fp32 bits, row-major
  MxuPerf perf;
  uint64_t sim_cycles = 0;  // clock cycles of the whole run, stores included
};

// Thrown when the unit stops making progress: names what each port was waiting for.
class MxuStuckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The widths of the command's fields (tpu_mxu's CntW, KvW, NvW, AddrW) for an array.
inline MxuCmd::Widths CmdWidths(const ArrayConfig& a) {
  const auto clog2 = [](int v) {
    int b = 0;
    while ((1 << b) < v) ++b;
    return b;
  };
  return {clog2(a.acc_depth + 1), clog2(a.rows + 1), clog2(a.cols + 1),
          a.acc_depth > 1 ? clog2(a.acc_depth) : 1};
}

// Puts a tile operation on the command port (cmd_valid_i is the caller's); throws
// std::invalid_argument when a field does not fit (tpu/tb/channels.h).
template <class V>
void SetCommand(V& m, const ArrayConfig& a, const TileOp& op) {
  const auto u = [](int v) { return static_cast<uint64_t>(v); };  // a negative value: too wide
  const MxuCmd c{u(op.rows), u(op.kv), u(op.nv),  u(op.addr),
                 op.acc,     op.bcast, u(op.src), op.load_w};
  PackChannel(c, CmdWidths(a), m.cmd_i);
}

template <class V>
class MxuRunner {
 public:
  static constexpr int kInW = 16, kAccW = 32;

  MxuRunner(SimCtrl<V>& sim, const ArrayConfig& cfg) : sim_(sim), cfg_(cfg) {}

  // Runs plan p on A (M×K bf16), B (K×N bf16) and, for Init::kPreload, C0 (M×N fp32), for
  // Init::kBias the bias (1×N fp32).
  MxuResult Run(const Plan& p, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                const std::vector<uint32_t>& c0, num::Mode mode, const Stimulus& st = {}) {
    CheckInputs(p, a, b, c0);
    p_ = &p;
    mode_ = mode;
    a_ = &a;
    b_ = &b;
    c0_ = &c0;
    rng_ = Rng(st.seed);
    st_ = st;
    ops_.clear();
    block_end_.clear();
    for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
      for (const TileOp& op : p.blocks[bi].ops) ops_.push_back({&op, static_cast<int>(bi)});
      block_end_.push_back(ops_.size());
    }
    loaded_.assign(p.blocks.size(), !Loads(p));
    stored_.assign(p.blocks.size(), false);
    result_.assign(size_t(p.shape.m) * p.shape.n, 0xDEADBEEFu);
    cmd_i_ = w_op_ = w_row_ = a_op_ = a_row_ = 0;
    ld_blk_ = ld_row_ = st_blk_ = st_row_ = 0;
    done_count_ = 0;
    st_pending_.clear();
    SkipNoLoad();

    V& m = sim_.dut();
    m.ftz_i = mode == num::Mode::kFtz;
    m.cmd_valid_i = m.w_valid_i = m.a_valid_i = m.ld_valid_i = m.st_valid_i = 0;
    m.perf_clear_i = 1;
    sim_.FallingEdge();
    sim_.RisingEdge();
    m.perf_clear_i = 0;

    const uint64_t start = sim_.cycle();
    uint64_t last_progress = start;
    const uint64_t patience = 10000 + 4ull * cfg_.rows * cfg_.pipe * cfg_.cols;
    while (st_blk_ < p.blocks.size()) {
      Drive();
      sim_.FallingEdge();
      const Fired fired = Handshakes();
      CoverHandshakes();
      sim_.RisingEdge();
      const bool progress = Advance(fired);
      if (Observe() || progress) last_progress = sim_.cycle();
      if (sim_.cycle() - last_progress > patience) throw MxuStuckError(Stuck(patience));
    }
    MxuResult r;
    r.sim_cycles = sim_.cycle() - start;
    if (m.err_o != 0) {
      throw std::runtime_error(fmt::format("{}: the matrix unit flagged error code {:#x}",
                                           sim_.name(), static_cast<unsigned>(m.err_o)));
    }
    r.perf = {m.perf_cycles_o, m.perf_busy_o,   m.perf_macs_o, m.perf_wstall_o,
              m.perf_starve_o, m.perf_hazard_o, m.perf_drain_o};
    r.c = std::move(result_);
    return r;
  }

 private:
  struct OpRef {
    const TileOp* op;
    int block;
  };

  void CheckInputs(const Plan& p, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                   const std::vector<uint32_t>& c0) const {
    const ArrayConfig& c = p.array;
    if (c.rows != cfg_.rows || c.cols != cfg_.cols || c.pipe != cfg_.pipe ||
        c.acc_depth != cfg_.acc_depth) {
      throw std::invalid_argument(fmt::format("{}: plan is for {} but the model is {}", sim_.name(),
                                              c.Name(), cfg_.Name()));
    }
    const size_t mk = size_t(p.shape.m) * p.shape.k, kn = size_t(p.shape.k) * p.shape.n;
    const size_t mn = p.init == Init::kPreload ? size_t(p.shape.m) * p.shape.n
                      : p.init == Init::kBias  ? size_t(p.shape.n)
                                               : 0;
    if (a.size() != mk || b.size() != kn || c0.size() != mn) {
      throw std::invalid_argument(
          fmt::format("{}: matrix sizes A={} B={} C0={} do not match the plan (want {}, {}, {})",
                      sim_.name(), a.size(), b.size(), c0.size(), mk, kn, mn));
    }
  }

  // Whether the plan writes initial values through the load port (C0's rows or bias rows).
  static bool Loads(const Plan& p) { return p.init == Init::kPreload || p.init == Init::kBias; }
  // The rows block `blk` loads: C0's rows where it stores, or one bias row per N-tile after them.
  int LoadRows(size_t blk) const {
    const Block& b = p_->blocks[blk];
    return p_->init == Init::kBias ? (b.cols + cfg_.cols - 1) / cfg_.cols : StoreRows(blk);
  }
  // Load row `row` of block `blk`: its accumulator row and the C0 row (m) and first column.
  struct LdRow {
    int addr, m, n0;
  };
  LdRow LoadRow(size_t blk, int row) const {
    const Block& b = p_->blocks[blk];
    if (p_->init == Init::kBias) return {b.base + StoreRows(blk) + row, 0, b.n0 + row * cfg_.cols};
    return {b.base + row, b.m0 + row % b.rows, b.n0 + row / b.rows * cfg_.cols};
  }

  bool Gap(double p) { return p > 0 && static_cast<double>(rng_.Next() >> 11) * 0x1p-53 < p; }

  // Blocks b may fill their accumulator half once block b-2's results have been stored.
  bool HalfFree(int block) const { return block < 2 || stored_[block - 2]; }

  void SkipNoLoad() {
    while (w_op_ < ops_.size() && !ops_[w_op_].op->load_w) ++w_op_;
  }

  // Presents the next beat on every port that is free (random gaps permitting).
  void Drive() {
    V& m = sim_.dut();
    const gemm::Shape& s = p_->shape;
    if (!m.cmd_valid_i && cmd_i_ < ops_.size() && HalfFree(ops_[cmd_i_].block) &&
        loaded_[ops_[cmd_i_].block] && !Gap(st_.cmd_gap)) {
      const TileOp& op = *ops_[cmd_i_].op;
      m.cmd_valid_i = 1;
      SetCommand(m, cfg_, op);
    }
    if (!m.w_valid_i && w_op_ < ops_.size() && !Gap(st_.w_gap)) {
      const TileOp& op = *ops_[w_op_].op;
      const int k = op.k0 + w_row_;
      for (int c = 0; c < cfg_.cols; ++c) {
        const int n = op.n0 + c;
        // Columns beyond N carry garbage: the RTL must mask them.
        const uint16_t v = n < s.n ? (*b_)[size_t(k) * s.n + n] : 0x7FC1;
        SetLane(m.w_data_i, c * kInW, kInW, v);
      }
      m.w_valid_i = 1;
    }
    if (!m.a_valid_i && a_op_ < ops_.size() && !Gap(st_.a_gap)) {
      const TileOp& op = *ops_[a_op_].op;
      const int mm = op.m0 + a_row_;
      for (int r = 0; r < cfg_.rows; ++r) {
        const int k = op.k0 + r;
        // Rows beyond K carry garbage (an infinity): the RTL must replace them with −0.
        const uint16_t v = k < s.k ? (*a_)[size_t(mm) * s.k + k] : 0x7F80;
        SetLane(m.a_data_i, r * kInW, kInW, v);
      }
      m.a_valid_i = 1;
    }
    if (!m.ld_valid_i && Loads(*p_) && ld_blk_ < p_->blocks.size() &&
        HalfFree(static_cast<int>(ld_blk_)) && !Gap(st_.ld_gap)) {
      const Block& blk = p_->blocks[ld_blk_];
      const LdRow lr = LoadRow(ld_blk_, ld_row_);
      for (int c = 0; c < cfg_.cols; ++c) {
        const int n = lr.n0 + c;
        const uint32_t v = n < blk.n0 + blk.cols ? (*c0_)[size_t(lr.m) * s.n + n] : 0;
        SetLane(m.ld_data_i, c * kAccW, kAccW, v);
      }
      m.ld_addr_i = lr.addr;
      m.ld_valid_i = 1;
    }
    m.st_valid_i = 0;
    if (st_blk_ < p_->blocks.size() && done_count_ >= block_end_[st_blk_] &&
        st_row_ < StoreRows(st_blk_) && !Gap(st_.st_gap)) {
      const Block& blk = p_->blocks[st_blk_];
      m.st_valid_i = 1;
      m.st_addr_i = blk.base + st_row_;
      const int nt = st_row_ / blk.rows;
      st_pending_.push_back({blk.m0 + st_row_ % blk.rows, blk.n0 + nt * cfg_.cols,
                             std::min(cfg_.cols, blk.n0 + blk.cols - (blk.n0 + nt * cfg_.cols))});
      ++st_row_;
    }
  }

  int StoreRows(size_t blk) const {
    const Block& b = p_->blocks[blk];
    return b.rows * ((b.cols + cfg_.cols - 1) / cfg_.cols);
  }

  // After the falling-edge settle: the transfers that happen at the coming rising edge.
  struct Fired {
    bool cmd, w, a, ld;
  };
  Fired Handshakes() const {
    const V& m = sim_.dut();
    return {m.cmd_valid_i && m.cmd_ready_o, m.w_valid_i && m.w_ready_o, m.a_valid_i && m.a_ready_o,
            m.ld_valid_i && m.ld_ready_o};
  }

  // Functional coverage of the inputs' handshakes, as the coming rising edge samples them.
  void CoverHandshakes() const {
    const V& m = sim_.dut();
    const fcov::Group& g = *fcov::Groups().mxu_ports;
    fcov::Handshake(g, fcov::kMxuCmd, m.cmd_valid_i, m.cmd_ready_o);
    fcov::Handshake(g, fcov::kMxuW, m.w_valid_i, m.w_ready_o);
    fcov::Handshake(g, fcov::kMxuA, m.a_valid_i, m.a_ready_o);
    fcov::Handshake(g, fcov::kMxuLd, m.ld_valid_i, m.ld_ready_o);
  }

  // Functional coverage of the elements of the beats that were taken (before Advance moves past
  // them): real elements only, not the padding lanes beyond K or N.
  void CoverBeats(const Fired& f) const {
    const gemm::Shape& s = p_->shape;
    if (f.w) {
      const TileOp& op = *ops_[w_op_].op;
      const int k = op.k0 + w_row_;
      for (int c = 0; c < cfg_.cols && op.n0 + c < s.n; ++c) {
        fcov::MxuOperand(1, num::Bf16ToFp32((*b_)[size_t(k) * s.n + op.n0 + c]), mode_);
      }
    }
    if (f.a) {
      const TileOp& op = *ops_[a_op_].op;
      const int mm = op.m0 + a_row_;
      for (int r = 0; r < cfg_.rows && op.k0 + r < s.k; ++r) {
        fcov::MxuOperand(0, num::Bf16ToFp32((*a_)[size_t(mm) * s.k + op.k0 + r]), mode_);
      }
    }
    if (f.ld) {
      const Block& blk = p_->blocks[ld_blk_];
      const LdRow lr = LoadRow(ld_blk_, ld_row_);
      for (int c = 0; c < cfg_.cols && lr.n0 + c < blk.n0 + blk.cols; ++c) {
        fcov::MxuOperand(2, (*c0_)[size_t(lr.m) * s.n + lr.n0 + c], mode_);
      }
    }
  }

  // After the rising edge: retire the beats that were taken.
  bool Advance(const Fired& f) {
    V& m = sim_.dut();
    CoverBeats(f);
    if (f.cmd) {
      m.cmd_valid_i = 0;
      ++cmd_i_;
    }
    if (f.w) {
      m.w_valid_i = 0;
      if (++w_row_ == ops_[w_op_].op->kv) {
        w_row_ = 0;
        ++w_op_;
        SkipNoLoad();
      }
    }
    if (f.a) {
      m.a_valid_i = 0;
      if (++a_row_ == ops_[a_op_].op->rows) {
        a_row_ = 0;
        ++a_op_;
      }
    }
    if (f.ld) {
      m.ld_valid_i = 0;
      if (++ld_row_ == LoadRows(ld_blk_)) {
        loaded_[ld_blk_] = true;
        ld_row_ = 0;
        ++ld_blk_;
      }
    }
    return f.cmd || f.w || f.a || f.ld;
  }

  // After the rising edge: done pulses and store data.
  bool Observe() {
    V& m = sim_.dut();
    bool progress = false;
    if (m.done_o) {
      ++done_count_;
      progress = true;
    }
    if (m.st_valid_o) {
      if (st_pending_.empty()) throw std::logic_error("store data without a request");
      const StoreReq q = st_pending_.front();
      st_pending_.pop_front();
      for (int c = 0; c < q.nv; ++c) {
        result_[size_t(q.m) * p_->shape.n + q.n0 + c] = GetLane(m.st_data_o, c * kAccW, kAccW);
      }
      if (st_pending_.empty() && st_row_ == StoreRows(st_blk_)) {
        stored_[st_blk_] = true;
        ++st_blk_;
        st_row_ = 0;
      }
      progress = true;
    }
    return progress;
  }

  std::string Stuck(uint64_t patience) const {
    const V& m = sim_.dut();
    return fmt::format(
        "{}: no progress for {} cycles (cycle {}): commands sent {}/{} (valid {}, ready {}), "
        "weight beats for op {} row {} (valid {}, ready {}), activation beats for op {} row {} "
        "(valid {}, ready {}), done pulses {}, blocks stored {}/{}, idle {}, error {:#x}",
        sim_.name(), patience, sim_.cycle(), cmd_i_, ops_.size(), m.cmd_valid_i, m.cmd_ready_o,
        w_op_, w_row_, m.w_valid_i, m.w_ready_o, a_op_, a_row_, m.a_valid_i, m.a_ready_o,
        done_count_, st_blk_, p_->blocks.size(), m.idle_o, static_cast<unsigned>(m.err_o));
  }

  struct StoreReq {
    int m, n0, nv;
  };

  SimCtrl<V>& sim_;
  ArrayConfig cfg_;
  const Plan* p_ = nullptr;
  num::Mode mode_ = num::Mode::kIeee;
  const std::vector<uint16_t>* a_ = nullptr;
  const std::vector<uint16_t>* b_ = nullptr;
  const std::vector<uint32_t>* c0_ = nullptr;
  Rng rng_{1};
  Stimulus st_;
  std::vector<OpRef> ops_;
  std::vector<size_t> block_end_;
  std::vector<bool> loaded_, stored_;
  std::vector<uint32_t> result_;
  size_t cmd_i_ = 0, w_op_ = 0, a_op_ = 0, ld_blk_ = 0, st_blk_ = 0;
  int w_row_ = 0, a_row_ = 0, ld_row_ = 0, st_row_ = 0;
  size_t done_count_ = 0;
  std::deque<StoreReq> st_pending_;
};

}  // namespace tpu::tb
