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
#include <verilated_syms.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>
#include <type_traits>
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
  p.vector_busy = counter(reg::kVectorBusy);
  return p;
}

inline tpu::hbm::Timing TimingOfPreset(int preset) {
  return tpu::hbm::Timing::Preset(preset);  // throws for a preset the table does not have
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
    const bool sample = opt.on_modules && opt.modules_every > 0;
    uint64_t next_sample = start;
    auto& d = sim_.dut();
    while (!d.irq_o) {
      Step();
      if (opt.on_cycle) opt.on_cycle(t_ - start);
      if (sample && t_ >= next_sample) {
        const std::array<uint64_t, 3> taken = {Counter(reg::kLoadInstructions),
                                               Counter(reg::kComputeInstructions),
                                               Counter(reg::kStoreInstructions)};
        opt.on_modules(t_ - start, taken);  // (the reads take cycles: the time after them)
        next_sample = t_ + opt.modules_every;
      }
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
    fcov::AccelRun(prog, r.code, r.pc, cfg_.machine.vector_unit());
    return r;
  }

  // The on-chip state through Verilator's public access (rtl/sim.vlt marks the memories, the
  // PEs' weight registers and the controller's bank bit public_flat_rd): no port is added to the
  // design and no simulated time passes. The array's weights are read from every PE's bank
  // `cur_bank_q` names; in a hierarchical build the PEs lie inside separately Verilated blocks
  // whose signals are not visible, and `w` stays empty (named in `missing`).
  OnChip ReadOnChip() override {
    const OnChipScopes& sc = Scopes();
    const isa::MachineConfig& m = cfg_.machine;
    OnChip s;
    std::vector<std::string> missing;
    // A memory of `depth` rows kept as one array per column: row-major rows x columns.
    auto gather = [](const auto& cols, int depth, bool ok) {
      std::vector<std::remove_const_t<
          std::remove_pointer_t<typename std::remove_reference_t<decltype(cols)>::value_type>>>
          v;
      if (!ok) return v;
      const size_t w = cols.size();
      v.resize(size_t(depth) * w);
      for (size_t e = 0; e < w; ++e) {
        for (int r = 0; r < depth; ++r) v[size_t(r) * w + e] = cols[e][r];
      }
      return v;
    };
    s.act = gather(sc.act, m.act_depth, sc.act_ok);
    s.wgt = gather(sc.wgt, m.wgt_depth, sc.wgt_ok);
    if (sc.acc_ok) {
      const size_t banks = sc.acc.size() / size_t(m.c);
      s.acc.resize(size_t(m.acc_depth) * size_t(m.c));
      for (size_t c = 0; c < size_t(m.c); ++c) {
        for (int r = 0; r < m.acc_depth; ++r) {
          const bool hi = banks == 2 && r >= sc.acc_bank0;
          s.acc[size_t(r) * size_t(m.c) + c] = sc.acc[c * banks + hi][hi ? r - sc.acc_bank0 : r];
        }
      }
    }
    if (!sc.act_ok) missing.push_back("the activation buffer (u_act.gen_el[*].mem_q)");
    if (!sc.wgt_ok) missing.push_back("the weight buffer (u_wgt.gen_el[*].mem_q)");
    if (!sc.acc_ok)
      missing.push_back("the accumulators (u_acc.gen_col[*].gen_bank[*].u_mem.mem_q)");
    if (sc.w_ok) {
      const bool bank = *sc.bank != 0;
      s.w.resize(size_t(m.r) * m.c);
      for (size_t i = 0; i < s.w.size(); ++i) s.w[i] = bank ? *sc.w1[i] : *sc.w0[i];
    } else {
      missing.push_back(sc.w_why);
    }
    for (size_t i = 0; i < missing.size(); ++i) s.missing += (i ? "; " : "") + missing[i];
    return s;
  }

  // A variable rtl/sim.vlt makes public (public_flat_rd), in the one scope whose name ends with
  // `scope_suffix` (".u_mxu.u_ctrl"): its storage, valid for the model's lifetime, and the bytes
  // of each entry (`*bytes`). Throws std::runtime_error when there is no such scope or variable.
  const void* PublicVarBytes(const std::string& scope_suffix, const char* name, uint32_t* bytes) {
    sim_.Select();
    const VerilatedScope* found = nullptr;
    if (const VerilatedScopeNameMap* names = sim_.context().scopeNameMap()) {
      for (const auto& [scope_name, scope] : *names) {
        const std::string n = scope_name;
        if (n.size() >= scope_suffix.size() &&
            n.compare(n.size() - scope_suffix.size(), scope_suffix.size(), scope_suffix) == 0) {
          if (found) {
            throw std::runtime_error(
                fmt::format("{}: several scopes end with {}", sim_.name(), scope_suffix));
          }
          found = scope;
        }
      }
    }
    const VerilatedVar* v = found ? found->varFind(name) : nullptr;
    if (!v) {
      throw std::runtime_error(
          fmt::format("{}: no public variable {} in a scope ending with {} (rtl/sim.vlt)",
                      sim_.name(), name, scope_suffix));
    }
    *bytes = v->entSize();
    return v->datap();
  }
  // The same with entries of sizeof(T) bytes (throws if they are not).
  template <class T>
  const T* PublicVar(const std::string& scope_suffix, const char* name) {
    uint32_t bytes = 0;
    const void* p = PublicVarBytes(scope_suffix, name, &bytes);
    if (bytes != sizeof(T)) {
      throw std::runtime_error(fmt::format("{}: public variable {} has {}-byte entries, not {}",
                                           sim_.name(), name, bytes, sizeof(T)));
    }
    return static_cast<const T*>(p);
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

  // Where the on-chip state lives in the model (found once, by scope name).
  struct OnChipScopes {
    bool act_ok = false, wgt_ok = false, acc_ok = false, w_ok = false;
    std::vector<const uint16_t*> act, wgt;  // element e's column of rows
    // Column c's rows in its two banks (tpu_accumulators: rows below acc_bank0 in bank 0, the
    // rest in bank 1; one bank at depth 1): acc[2 * c + bank].
    std::vector<const uint32_t*> acc;
    int acc_bank0 = 0;
    std::vector<const uint16_t*> w0, w1;  // PE (k, n) at k * C + n
    const uint8_t* bank = nullptr;        // tpu_mxu_ctrl.cur_bank_q
    std::string w_why;
  };
  const OnChipScopes& Scopes() {
    if (scopes_) return *scopes_;
    scopes_ = std::make_unique<OnChipScopes>();
    OnChipScopes& sc = *scopes_;
    const isa::MachineConfig& m = cfg_.machine;
    // A public variable's storage, if `scope` has it with `bytes`-byte entries and `depth` of
    // them (depth 0: a scalar).
    auto var = [](const VerilatedScope* scope, const char* name, uint32_t bytes,
                  int depth) -> const void* {
      const VerilatedVar* v = scope->varFind(name);
      if (!v || v->entSize() != bytes) return nullptr;
      if (depth == 0 ? v->udims() != 0 : (v->udims() != 1 || v->unpacked().elements() != depth)) {
        return nullptr;
      }
      return v->datap();
    };
    sc.act.assign(size_t(m.r), nullptr);
    sc.wgt.assign(size_t(m.c), nullptr);
    const int banks = m.acc_depth >= 2 ? 2 : 1;
    sc.acc_bank0 = m.acc_depth >= 2 ? m.acc_depth / 2 : m.acc_depth;  // tpu_pkg::acc_bank_rows
    sc.acc.assign(size_t(m.c) * size_t(banks), nullptr);
    struct Pe {
      int tr, tc, r, c;
      const uint16_t *w0, *w1;
    };
    std::vector<Pe> pes;
    const std::regex buf_re(R"(\.u_(act|wgt)\.gen_el\[(\d+)\]$)");
    const std::regex acc_re(R"(\.u_acc\.gen_col\[(\d+)\]\.gen_bank\[(\d)\]\.u_mem$)");
    const std::regex pe_re(
        R"(\.u_array\.gen_tile_row\[(\d+)\]\.gen_tile_col\[(\d+)\]\.u_tile\.gen_row\[(\d+)\])"
        R"(\.gen_col\[(\d+)\]\.u_pe$)");
    const std::regex ctrl_re(R"(\.u_mxu\.u_ctrl$)");
    sim_.Select();
    if (const VerilatedScopeNameMap* names = sim_.context().scopeNameMap()) {
      std::cmatch mt;
      for (const auto& [name, scope] : *names) {
        if (std::regex_search(name, mt, buf_re)) {
          const bool act = mt.str(1) == "act";
          const size_t e = std::stoul(mt.str(2));
          auto& cols = act ? sc.act : sc.wgt;
          if (e < cols.size()) {
            cols[e] = static_cast<const uint16_t*>(
                var(scope, "mem_q", 2, act ? m.act_depth : m.wgt_depth));
          }
        } else if (std::regex_search(name, mt, acc_re)) {
          const size_t c = std::stoul(mt.str(1)), k = std::stoul(mt.str(2));
          if (c < size_t(m.c) && int(k) < banks) {
            sc.acc[c * size_t(banks) + k] = static_cast<const uint32_t*>(
                var(scope, "mem_q", 4, k == 0 ? sc.acc_bank0 : m.acc_depth - sc.acc_bank0));
          }
        } else if (std::regex_search(name, mt, pe_re)) {
          pes.push_back({std::stoi(mt.str(1)), std::stoi(mt.str(2)), std::stoi(mt.str(3)),
                         std::stoi(mt.str(4)),
                         static_cast<const uint16_t*>(var(scope, "w0_q", 2, 0)),
                         static_cast<const uint16_t*>(var(scope, "w1_q", 2, 0))});
        } else if (std::regex_search(name, mt, ctrl_re)) {
          sc.bank = static_cast<const uint8_t*>(var(scope, "cur_bank_q", 1, 0));
        }
      }
    }
    auto all = [](const auto& v) {
      return std::all_of(v.begin(), v.end(), [](const auto* p) { return p != nullptr; });
    };
    sc.act_ok = all(sc.act);
    sc.wgt_ok = all(sc.wgt);
    sc.acc_ok = all(sc.acc);
    // The PEs' places: tile (tr, tc) starts at row tr * TileRows, column tc * TileCols, where
    // TileRows and TileCols are the first tile's extent (every tile but the last is full).
    int tile_rows = 0, tile_cols = 0;
    for (const Pe& p : pes) {
      if (p.tr == 0 && p.tc == 0) tile_rows = std::max(tile_rows, p.r + 1);
      if (p.tr == 0 && p.tc == 0) tile_cols = std::max(tile_cols, p.c + 1);
    }
    sc.w0.assign(size_t(m.r) * m.c, nullptr);
    sc.w1.assign(size_t(m.r) * m.c, nullptr);
    for (const Pe& p : pes) {
      const int k = p.tr * tile_rows + p.r, n = p.tc * tile_cols + p.c;
      if (k < m.r && n < m.c && p.w0 && p.w1) {
        sc.w0[size_t(k) * m.c + n] = p.w0;
        sc.w1[size_t(k) * m.c + n] = p.w1;
      }
    }
    sc.w_ok = sc.bank && all(sc.w0) && all(sc.w1);
    if (!sc.w_ok) {
      sc.w_why = pes.empty() ? "the array's weights (no PE visible: a hierarchical or gate-level "
                               "build)"
                             : fmt::format("the array's weights ({} PEs of {} found, bank bit {})",
                                           pes.size(), m.r * m.c, sc.bank ? "found" : "missing");
    }
    return sc;
  }

  Config cfg_;
  hbm::AddressMap map_;
  hbm::HbmMemory mem_;
  SimCtrl<V> sim_;
  std::string trace_path_;
  uint64_t t_ = 0;
  bool host_stress_ = false;
  Rng host_rng_{1};
  std::unique_ptr<OnChipScopes> scopes_;
};

// `trace`: FST waves of the whole run (a model built with tracing: TPU_TRACE, build-trace/).
template <class V>
std::unique_ptr<Sim> MakeAccelSim(const Config& cfg, const TraceOptions& trace = {}) {
  return std::make_unique<AccelSim<V>>(cfg, trace);
}

}  // namespace tpu::tb::accel
