// SPDX-License-Identifier: Apache-2.0
// Drivers for the MAC and converter models, a bit-exact scoreboard, and an in-order checker for
// pipelined MACs. Templates over the Verilated model class (all MAC configurations share ports).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "tpu/numerics.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/sim_ctrl.h"

namespace tpu::tb {

// Combinational evaluation of a MAC model (PipeRegs = 0), without a clock or a trace: for the
// tight loops. Callers check sim.AssertionFailed() when a loop ends. Both evaluators count
// functional coverage (tpu/tb/fcov.h: mac.*, cvt.*).
template <class M>
inline uint32_t EvalMac(SimCtrl<M>& sim, uint16_t a, uint16_t b, uint32_t c, num::Mode mode) {
  fcov::Mac(a, b, c, mode);
  sim.Select();
  M& m = sim.dut();
  m.a_i = a;
  m.b_i = b;
  m.c_i = c;
  m.ftz_i = mode == num::Mode::kFtz;
  m.eval();
  return m.res_o;
}

// The same for an fp32 FMA model (tpu_mac with InManBits = 23): counts fma32.* coverage.
template <class M>
inline uint32_t EvalFma32(SimCtrl<M>& sim, uint32_t a, uint32_t b, uint32_t c, num::Mode mode) {
  fcov::Fma32(a, b, c, mode);
  sim.Select();
  M& m = sim.dut();
  m.a_i = a;
  m.b_i = b;
  m.c_i = c;
  m.ftz_i = mode == num::Mode::kFtz;
  m.eval();
  return m.res_o;
}

// What MacPipeChecker needs of a vector kind: its golden result, its report line, its coverage,
// and a random vector for idle cycles.
inline uint32_t GoldenOf(const MacVector& v, num::Mode mode) {
  return num::Mac(v.a, v.b, v.c, mode);
}
inline uint32_t GoldenOf(const Fma32Vector& v, num::Mode mode) {
  return num::Fma32(v.a, v.b, v.c, mode);
}
inline std::string Describe(const MacVector& v, num::Mode mode) {
  return DescribeMac(v, mode);
}
inline std::string Describe(const Fma32Vector& v, num::Mode mode) {
  return DescribeFma32(v, mode);
}
inline void Cover(const MacVector& v, num::Mode mode) {
  fcov::Mac(v.a, v.b, v.c, mode);
}
inline void Cover(const Fma32Vector& v, num::Mode mode) {
  fcov::Fma32(v.a, v.b, v.c, mode);
}
inline void RandomVector(Rng& rng, MacVector* v) {
  *v = {rng.U16(), rng.U16(), rng.U32()};
}
inline void RandomVector(Rng& rng, Fma32Vector* v) {
  *v = {rng.U32(), rng.U32(), rng.U32()};
}

template <class M>
inline uint16_t EvalCvt(SimCtrl<M>& sim, uint32_t x, bool relu, num::Mode mode) {
  fcov::Cvt(x, relu, mode);
  sim.Select();
  M& m = sim.dut();
  m.data_i = x;
  m.relu_i = relu;
  m.ftz_i = mode == num::Mode::kFtz;
  m.eval();
  return m.data_o;
}

// Counts bit mismatches and keeps the first few reports (expected/actual bits with decimals).
class Scoreboard {
 public:
  explicit Scoreboard(std::string what, size_t keep = 8) : what_(std::move(what)), keep_(keep) {}
  // Returns true when equal.
  bool Check(uint64_t index, const std::string& input, uint32_t expected, uint32_t actual,
             bool fp32 = true) {
    ++checked_;
    if (expected == actual) return true;
    if (++mismatches_ <= keep_) {
      const auto fmt_val = [fp32](uint32_t v) {
        return fp32 ? num::FormatFp32(v) : num::FormatBf16(static_cast<uint16_t>(v));
      };
      reports_ += fmt::format("  #{} {}: expected {} got {}\n", index, input, fmt_val(expected),
                              fmt_val(actual));
    }
    return false;
  }
  uint64_t checked() const { return checked_; }
  uint64_t mismatches() const { return mismatches_; }
  std::string Summary() const {
    return fmt::format("{}: {} checked, {} mismatches{}{}", what_, checked_, mismatches_,
                       mismatches_ ? "; first ones:\n" : "", reports_);
  }

 private:
  std::string what_;
  size_t keep_;
  uint64_t checked_ = 0;
  uint64_t mismatches_ = 0;
  std::string reports_;
};

// Streams vectors through a pipelined MAC with random valid gaps and checks every result, in
// order and at the configured latency, against the golden model. A result that never comes (or
// comes early) is a failure that names the vector.
// V: MacVector (a bf16 MAC) or Fma32Vector (an fp32 FMA).
template <class M, class V = MacVector>
class MacPipeChecker {
 public:
  MacPipeChecker(SimCtrl<M>& sim, unsigned latency, uint64_t seed, Scoreboard& sb)
      : sim_(sim), latency_(latency), rng_(seed), sb_(sb) {
    sim_.Reset();
  }

  void Push(const V& v, num::Mode mode) {
    while (rng_.Range(0, 7) == 0) Step(nullptr, mode);  // a gap: valid low for a cycle
    Step(&v, mode);
  }

  // Drains the pipeline; reports vectors still outstanding after the latency has passed.
  void Finish() {
    for (unsigned i = 0; i <= latency_ && !inflight_.empty(); ++i) Step(nullptr, num::Mode::kIeee);
    if (!inflight_.empty()) {
      errors_ += fmt::format("{} results never came out; oldest: vector #{} ({})\n",
                             inflight_.size(), inflight_.front().index,
                             Describe(inflight_.front().v, inflight_.front().mode));
    }
  }
  const std::string& errors() const { return errors_; }

 private:
  struct InFlight {
    uint64_t index;
    uint64_t issue_cycle;
    V v;
    num::Mode mode;
  };

  // One clock cycle: drive (after the previous falling edge), sample on the rising edge, check.
  // Latency counts rising edges from the one that samples a vector to the one after which its
  // result shows; a combinational MAC (latency 0) is checked before the edge.
  void Step(const V* v, num::Mode mode) {
    M& m = sim_.dut();
    m.in_valid_i = v != nullptr;
    if (v != nullptr) {
      m.a_i = v->a;
      m.b_i = v->b;
      m.c_i = v->c;
      m.ftz_i = mode == num::Mode::kFtz;
      inflight_.push_back({next_index_++, sim_.cycle(), *v, mode});
      Cover(*v, mode);
    } else {
      // Garbage on idle inputs must not matter.
      V g;
      RandomVector(rng_, &g);
      m.a_i = g.a;
      m.b_i = g.b;
      m.c_i = g.c;
      m.ftz_i = rng_.Bit();
    }
    if (latency_ == 0) {
      sim_.Eval();
      Collect();
    }
    sim_.RisingEdge();
    if (latency_ > 0) Collect();
    sim_.FallingEdge();
  }

  void Collect() {
    M& m = sim_.dut();
    if (!m.out_valid_o) return;
    if (inflight_.empty()) {
      errors_ += fmt::format("cycle {}: a result came out with nothing in flight\n", sim_.cycle());
      return;
    }
    const InFlight f = inflight_.front();
    inflight_.pop_front();
    if (sim_.cycle() - f.issue_cycle != latency_) {
      errors_ += fmt::format("vector #{}: latency {} cycles, expected {}\n", f.index,
                             sim_.cycle() - f.issue_cycle, latency_);
    }
    sb_.Check(f.index, Describe(f.v, f.mode), GoldenOf(f.v, f.mode), m.res_o);
  }

  SimCtrl<M>& sim_;
  unsigned latency_;
  Rng rng_;
  Scoreboard& sb_;
  std::deque<InFlight> inflight_;
  uint64_t next_index_ = 0;
  std::string errors_;
};

}  // namespace tpu::tb
