// SPDX-License-Identifier: Apache-2.0
// The accelerator's cycle-level back end: a Verilated tpu_accel with the C++ HBM2 device models
// (tpu::hbm::Channel, which check every command against the JEDEC rules and hold the data) on its
// memory side, and an AXI4-Lite host that writes the control registers, starts the program and
// reads the status and performance counters. Templated over the model class: every tpu_accel
// configuration has the same ports. MakeAccelSim<V>(cfg) gives it as an accel::Sim.
//
// Cycle discipline (as tpu/tb/hbm_harness.h): after the falling edge the memory-side outputs
// depend only on state; the harness feeds the device models, drives the read data and the host
// port, evaluates, and clocks.
//
// Functional coverage (tpu/tb/fcov.h): the handshakes of the host port (accel.host), and after
// each run the error code it reported (accel.error) and the instructions it executed
// (accel.instr), besides the HBM commands (hbm.cmd, through HbmMemory).
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpu/hbm/hbm_device.h"
#include "tpu/tb/accel_sim.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/hbm_harness.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/sim_ctrl.h"

namespace tpu::tb::accel {

// The register map and the performance counters (rtl/accel/isa.json, tpu/isa_defs.h).
namespace reg = isa::reg;

// The performance counters, read through `counter(i)` (counter i's 64-bit value).
template <class F>
Perf ReadPerf(F&& counter) {
  Perf p;
  p.cycles = counter(reg::kCycles);
  p.busy = counter(reg::kBusy);
  p.weight_stall = counter(reg::kWeightStall);
  p.input_stall = counter(reg::kInputStall);
  p.acc_hazard = counter(reg::kAccHazard);
  p.store_stall = counter(reg::kStoreStall);
  p.idle = counter(reg::kIdle);
  p.macs = counter(reg::kMacs);
  p.hbm_read_bytes = counter(reg::kReadBytes);
  p.hbm_write_bytes = counter(reg::kWriteBytes);
  p.instructions = counter(reg::kInstructions);
  p.module_instructions = {counter(reg::kLoadInstructions), counter(reg::kComputeInstructions),
                           counter(reg::kStoreInstructions)};
  return p;
}

inline tpu::hbm::Timing TimingOfPreset(int preset) {
  switch (preset) {
    case 0: return tpu::hbm::Timing::Hbm2_2000();
    case 1: return tpu::hbm::Timing::Hbm2_2400();
    case 2: return tpu::hbm::Timing::CheckerTest();
    default: throw std::invalid_argument(fmt::format("HBM preset {} is not 0, 1 or 2", preset));
  }
}

template <class V>
class AccelSim : public Sim {
 public:
  AccelSim(const Config& cfg, const TraceOptions& trace = {})
      : cfg_(cfg),
        map_{cfg.channels, 16, 5, 0},
        mem_(map_, TimingOfPreset(cfg.preset)),
        sim_(fmt::format("tpu_accel {}", cfg.name), UINT64_MAX, trace),
        trace_path_(trace.path) {
    if (cfg.machine.hbm_bytes != map_.total_bytes()) {
      throw std::invalid_argument(
          fmt::format("accelerator config {}: HbmBytes=0x{:X}, but {} channel(s) hold 0x{:X}",
                      cfg.name, cfg.machine.hbm_bytes, cfg.channels, map_.total_bytes()));
    }
    auto& d = sim_.dut();
    d.s_aw_valid_i = 0;
    d.s_w_valid_i = 0;
    d.s_b_ready_i = 0;
    d.s_ar_valid_i = 0;
    d.s_r_ready_i = 0;
    d.rdata_valid_i = 0;
    sim_.Reset();
    const uint32_t magic = ReadReg(reg::kMagic), shape = ReadReg(reg::kShape);
    if (magic != 0x31555054u || int(shape & 0xFFFF) != cfg.machine.r ||
        int(shape >> 16) != cfg.machine.c) {
      throw std::runtime_error(fmt::format(
          "accelerator config {}: the model reports magic 0x{:08X}, shape {}x{} (want {}x{})",
          cfg.name, magic, shape & 0xFFFF, shape >> 16, cfg.machine.r, cfg.machine.c));
    }
  }

  const Config& config() const override { return cfg_; }
  V& dut() { return sim_.dut(); }
  SimCtrl<V>& sim() { return sim_; }
  uint64_t cycle() const { return t_; }
  const hbm::HbmMemory& memory() const { return mem_; }

  // Backdoor access to the device models' storage (no timing), any alignment.
  void WriteHbm(uint64_t addr, const void* data, uint64_t n) override {
    CheckRange(addr, n, "WriteHbm");
    const auto* src = static_cast<const uint8_t*>(data);
    while (n > 0) {
      const uint64_t base = addr & ~uint64_t{31}, off = addr - base;
      const uint64_t len = std::min<uint64_t>(n, 32 - off);
      uint8_t beat[32];
      if (len != 32) Peek(base, beat);
      std::memcpy(beat + off, src, len);
      Poke(base, beat);
      addr += len, src += len, n -= len;
    }
  }
  void ReadHbm(uint64_t addr, void* data, uint64_t n) override {
    CheckRange(addr, n, "ReadHbm");
    auto* dst = static_cast<uint8_t*>(data);
    while (n > 0) {
      const uint64_t base = addr & ~uint64_t{31}, off = addr - base;
      const uint64_t len = std::min<uint64_t>(n, 32 - off);
      uint8_t beat[32];
      Peek(base, beat);
      std::memcpy(dst, beat + off, len);
      addr += len, dst += len, n -= len;
    }
  }

  Result Run(uint64_t prog_addr, uint32_t count, const RunOptions& opt) override {
    if (!opt.trace_file.empty() && opt.trace_file != trace_path_) {
      throw std::invalid_argument(fmt::format(
          "{}: waves go to the file named when the simulator is made (MakeAccelSim(cfg, "
          "trace)), not {}",
          sim_.name(), opt.trace_file));
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<uint8_t> prog =
        fcov::Enabled() ? ProgramBytes(prog_addr, count) : std::vector<uint8_t>();
    WriteReg(reg::kProgLo, uint32_t(prog_addr));
    WriteReg(reg::kProgHi, uint32_t(prog_addr >> 32));
    WriteReg(reg::kProgLen, count);
    const uint32_t ftz = cfg_.machine.mode == num::Mode::kFtz ? 2u : 0u;
    WriteReg(reg::kCtrl, ftz);  // the mode a cycle before the start (tpu_mxu registers it)
    WriteReg(reg::kCtrl, ftz | 1u);
    const uint64_t start = t_;
    uint64_t next_progress = start + opt.progress_every;
    auto& d = sim_.dut();
    while (!d.irq_o) {
      Step();
      if (t_ - start > opt.max_cycles) {
        throw WatchdogError(fmt::format(
            "{}: the program did not finish in {} cycles (status 0x{:X}, {} instructions "
            "consumed)",
            sim_.name(), opt.max_cycles, ReadReg(reg::kStatus), Counter(reg::kInstructions)));
      }
      if (opt.progress && t_ >= next_progress) {
        next_progress += opt.progress_every;
        opt.progress(t_ - start, Counter(reg::kInstructions));
      }
    }
    // Writes are posted (B when queued): let the controllers put the last data into memory.
    const uint64_t q0 = t_;
    while (d.hbm_busy_o) {
      Step();
      if (t_ - q0 > 1'000'000) {
        throw WatchdogError(
            fmt::format("{}: HBM queues not empty 1M cycles after done", sim_.name()));
      }
    }
    for (int i = 0; i < 64; ++i) Step();

    Result r;
    r.code = isa::ErrorCode(ReadReg(reg::kErrCode));
    r.pc = ReadReg(reg::kErrPc);
    r.status = ReadReg(reg::kStatus);
    const uint32_t tokens = ReadReg(reg::kTokens);
    for (int q = 0; q < 4; ++q) r.tokens[size_t(q)] = (tokens >> (8 * q)) & 0xFF;
    r.perf = ReadPerf([this](int i) { return Counter(i); });
    r.hbm_violations = mem_.ViolationCount();
    r.violations = mem_.Violations();
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fcov::AccelRun(prog, r.code, r.pc);
    return r;
  }

  // One clock cycle.
  void Step() {
    sim_.FallingEdge();
    mem_.Step(sim_.dut(), t_);
    sim_.RisingEdge();
    ++t_;
  }

  // Host-port stress, off by default: with a non-zero seed every register access raises AW and W
  // up to two cycles apart (either first), and takes B and R up to two cycles after they come, so
  // that every AXI4-Lite channel sees back-pressure as well as transfers. Seed 0 turns it off.
  void SetHostStress(uint64_t seed) {
    host_stress_ = seed != 0;
    host_rng_ = Rng(seed != 0 ? seed : 1);
  }

  // AXI4-Lite host accesses: a few cycles each.
  void WriteReg(uint32_t addr, uint32_t value) {
    auto& d = sim_.dut();
    const int aw_wait = HostWait(), w_wait = HostWait(), b_wait = HostWait();
    d.s_aw_addr_i = addr;
    d.s_w_data_i = value;
    bool aw_done = false, w_done = false, b_done = false;
    int b_seen = 0;  // cycles B has been valid
    for (int i = 0; i < 100 && !b_done; ++i) {
      d.s_aw_valid_i = !aw_done && i >= aw_wait;
      d.s_w_valid_i = !w_done && i >= w_wait;
      if (d.s_b_valid_o) ++b_seen;
      d.s_b_ready_i = !host_stress_ || b_seen > b_wait;
      sim_.FallingEdge();
      mem_.Step(d, t_);
      sim_.Eval();
      const bool aw_fire = d.s_aw_valid_i && d.s_aw_ready_o;
      const bool w_fire = d.s_w_valid_i && d.s_w_ready_o;
      const bool b_fire = d.s_b_valid_o && d.s_b_ready_i;
      const fcov::Group& g = *fcov::Groups().accel_host;
      fcov::Handshake(g, fcov::kAxiAw, d.s_aw_valid_i, d.s_aw_ready_o);
      fcov::Handshake(g, fcov::kAxiW, d.s_w_valid_i, d.s_w_ready_o);
      fcov::Handshake(g, fcov::kAxiB, d.s_b_valid_o, d.s_b_ready_i);
      sim_.RisingEdge();
      ++t_;
      aw_done = aw_done || aw_fire;
      w_done = w_done || w_fire;
      b_done = b_done || b_fire;
    }
    d.s_aw_valid_i = 0;
    d.s_w_valid_i = 0;
    d.s_b_ready_i = 0;
    if (!aw_done || !w_done || !b_done) {
      throw std::runtime_error(
          fmt::format("{}: AXI4-Lite write to 0x{:03X} not answered (AW {}, W {}, B {})",
                      sim_.name(), addr, aw_done ? "taken" : "waiting",
                      w_done ? "taken" : "waiting", b_done ? "taken" : "waiting"));
    }
  }
  uint32_t ReadReg(uint32_t addr) { return ReadRegs({addr}).front(); }
  // Reads in a row: each AR goes out as soon as the one before it was taken (so it waits while
  // that read's R is pending: the slave takes one read at a time). Returns the values in order.
  std::vector<uint32_t> ReadRegs(const std::vector<uint32_t>& addrs) {
    auto& d = sim_.dut();
    std::vector<uint32_t> out;
    size_t next_ar = 0;
    int ar_wait = HostWait(), r_wait = HostWait();
    int ar_cycles = 0, r_seen = 0;  // cycles the next AR waited to go up; cycles R was valid
    const size_t budget = 100 * (addrs.size() + 1);
    for (size_t i = 0; out.size() < addrs.size(); ++i) {
      if (i == budget) {
        throw std::runtime_error(
            fmt::format("{}: AXI4-Lite read of 0x{:03X} not answered ({} of {} reads done)",
                        sim_.name(), addrs[out.size()], out.size(), addrs.size()));
      }
      const bool ar_up = next_ar < addrs.size() && ar_cycles++ >= ar_wait;
      d.s_ar_valid_i = ar_up;
      if (ar_up) d.s_ar_addr_i = addrs[next_ar];
      if (d.s_r_valid_o) ++r_seen;
      d.s_r_ready_i = !host_stress_ || r_seen > r_wait;
      sim_.FallingEdge();
      mem_.Step(d, t_);
      sim_.Eval();
      const bool ar_fire = d.s_ar_valid_i && d.s_ar_ready_o;
      const bool r_fire = d.s_r_valid_o && d.s_r_ready_i;
      const uint32_t data = d.s_r_data_o;
      const fcov::Group& g = *fcov::Groups().accel_host;
      fcov::Handshake(g, fcov::kAxiAr, d.s_ar_valid_i, d.s_ar_ready_o);
      fcov::Handshake(g, fcov::kAxiR, d.s_r_valid_o, d.s_r_ready_i);
      sim_.RisingEdge();
      ++t_;
      if (ar_fire) {
        ++next_ar;
        ar_cycles = 0;
        ar_wait = HostWait();
      }
      if (r_fire) {
        out.push_back(data);
        r_seen = 0;
        r_wait = HostWait();
      }
    }
    d.s_ar_valid_i = 0;
    d.s_r_ready_i = 0;
    return out;
  }
  uint64_t Counter(int i) {
    const uint32_t lo = ReadReg(reg::kCounters + 8 * i);
    const uint32_t hi = ReadReg(reg::kCounters + 8 * i + 4);
    return (uint64_t(hi) << 32) | lo;
  }

 private:
  void CheckRange(uint64_t addr, uint64_t n, const char* what) const {
    if (addr > map_.total_bytes() || n > map_.total_bytes() - addr) {
      throw std::out_of_range(fmt::format("{}: bytes 0x{:X} + {} exceed HbmBytes=0x{:X}", what,
                                          addr, n, map_.total_bytes()));
    }
  }
  // Cycles a stressed host waits before a step (0 .. 2), 0 without stress.
  int HostWait() { return host_stress_ ? host_rng_.Range(0, 2) : 0; }
  // The program's instructions as they are in HBM before the run, as far as they lie in HBM
  // (for functional coverage).
  std::vector<uint8_t> ProgramBytes(uint64_t prog_addr, uint32_t count) {
    const uint64_t total = map_.total_bytes();
    if (prog_addr % 32 != 0 || prog_addr >= total) return {};
    const uint64_t n = std::min<uint64_t>(count, (total - prog_addr) / 32);
    std::vector<uint8_t> bytes(n * 32);
    ReadHbm(prog_addr, bytes.data(), bytes.size());
    return bytes;
  }
  // The 32-byte burst holding global address `base` (32-byte aligned).
  tpu::hbm::Command Where(uint64_t base, int* channel, int* pc) const {
    const int port = map_.Port(base);
    *channel = port / 2;
    *pc = port % 2;
    return map_.Decode(map_.Local(base));
  }
  void Peek(uint64_t base, uint8_t* out) const {
    int ch, pc;
    const auto c = Where(base, &ch, &pc);
    mem_.device(ch).Peek(pc, c.bank, c.row, c.col, out);
  }
  void Poke(uint64_t base, const uint8_t* in) {
    int ch, pc;
    const auto c = Where(base, &ch, &pc);
    mem_.device(ch).Poke(pc, c.bank, c.row, c.col, in);
  }

  Config cfg_;
  hbm::AddressMap map_;
  hbm::HbmMemory mem_;
  SimCtrl<V> sim_;
  std::string trace_path_;
  uint64_t t_ = 0;
  bool host_stress_ = false;
  Rng host_rng_{1};
};

// `trace`: FST waves of the whole run (a model built with tracing: TPU_TRACE, build-trace/).
template <class V>
std::unique_ptr<Sim> MakeAccelSim(const Config& cfg, const TraceOptions& trace = {}) {
  return std::make_unique<AccelSim<V>>(cfg, trace);
}

}  // namespace tpu::tb::accel
