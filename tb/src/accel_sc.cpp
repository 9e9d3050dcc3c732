// SPDX-License-Identifier: Apache-2.0
// The accelerator under the SystemC kernel (see tpu/tb/accel_sc.h): the `verilator --sc` model of
// tpu_accel, the HBM device model (HbmChannelSc), the pin adapters between their buses, and the
// AXI4-Lite host thread.
//
// Compiled with VM_SC=1: the Verilated model's header comes first, so verilated.h is the SystemC
// build's; the C++ harness headers included after it (for the register map and the address map)
// only add declarations and templates that are not instantiated here.
// clang-format off
#include TPU_ACCEL_SC_HEADER
// clang-format on

#include "tpu/tb/accel_sc.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_harness.h"  // reg:: (the register map), TimingOfPreset
#include "tpu/tb/fcov.h"
#include "tpu/tb/hbm_harness.h"  // hbm::AddressMap
#include "tpu/tb/hbm_sc.h"
#include "tpu/tb/sim_ctrl.h"  // WatchdogError, AssertionError

#if !VM_SC
#error "accel_sc.cpp must be compiled with VM_SC=1 (it links the `verilator --sc` model)"
#endif

namespace tpu::tb::accel {

using sc_core::sc_signal;
using sc_core::sc_vector;
using sc_dt::sc_biguint;
using sc_dt::sc_bv;
using sc_dt::sc_uint;
using Model = TPU_ACCEL_SC_CLASS;

namespace {

constexpr int kPorts = 2;  // one channel, two pseudo-channels
constexpr int kBeatBits = 256;

// The flat memory-side vectors of tpu_accel to HbmChannelSc's per-PC ports and back.
class PinAdapter : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(PinAdapter);
  PinAdapter(sc_core::sc_module_name name, sc_signal<sc_uint<kPorts>>& wdata_valid,
             sc_signal<sc_bv<kPorts * kBeatBits>>& wdata, sc_signal<sc_uint<kPorts * 32>>& wstrb,
             sc_signal<sc_uint<kPorts>>& rdata_valid, sc_signal<sc_bv<kPorts * kBeatBits>>& rdata)
      : sc_core::sc_module(name),
        pc_wdata_valid("pc_wdata_valid", kPorts),
        pc_wdata("pc_wdata", kPorts),
        pc_wstrb("pc_wstrb", kPorts),
        pc_rdata_valid("pc_rdata_valid", kPorts),
        pc_rdata("pc_rdata", kPorts),
        wdata_valid_(wdata_valid),
        wdata_(wdata),
        wstrb_(wstrb),
        rdata_valid_(rdata_valid),
        rdata_(rdata) {
    SC_METHOD(Split);
    sensitive << wdata_valid_ << wdata_ << wstrb_;
    SC_METHOD(Merge);
    for (int p = 0; p < kPorts; ++p) sensitive << pc_rdata_valid[p] << pc_rdata[p];
  }

  sc_vector<sc_signal<bool>> pc_wdata_valid;
  sc_vector<sc_signal<sc_biguint<kBeatBits>>> pc_wdata;
  sc_vector<sc_signal<sc_uint<32>>> pc_wstrb;
  sc_vector<sc_signal<bool>> pc_rdata_valid;
  sc_vector<sc_signal<sc_biguint<kBeatBits>>> pc_rdata;

 private:
  // PC p: bit p of the valids, bits [p*256 +: 256] of the data, [p*32 +: 32] of the strobes.
  void Split() {
    const sc_uint<kPorts> v = wdata_valid_.read();
    const sc_bv<kPorts* kBeatBits> d = wdata_.read();
    const sc_uint<kPorts* 32> s = wstrb_.read();
    for (int p = 0; p < kPorts; ++p) {
      pc_wdata_valid[p].write(v[p]);
      sc_biguint<kBeatBits> beat;
      for (int w = 0; w < kBeatBits / 32; ++w) {
        beat.range(32 * w + 31, 32 * w) = d.get_word(p * kBeatBits / 32 + w);
      }
      pc_wdata[p].write(beat);
      pc_wstrb[p].write(s.range(p * 32 + 31, p * 32));
    }
  }
  void Merge() {
    sc_uint<kPorts> v = 0;
    sc_bv<kPorts* kBeatBits> d = 0;
    for (int p = 0; p < kPorts; ++p) {
      v[p] = pc_rdata_valid[p].read();
      const sc_biguint<kBeatBits> beat = pc_rdata[p].read();
      for (int w = 0; w < kBeatBits / 32; ++w) {
        d.set_word(p * kBeatBits / 32 + w,
                   static_cast<uint32_t>(beat.range(32 * w + 31, 32 * w).to_uint()));
      }
    }
    rdata_valid_.write(v);
    rdata_.write(d);
  }

  sc_signal<sc_uint<kPorts>>& wdata_valid_;
  sc_signal<sc_bv<kPorts * kBeatBits>>& wdata_;
  sc_signal<sc_uint<kPorts * 32>>& wstrb_;
  sc_signal<sc_uint<kPorts>>& rdata_valid_;
  sc_signal<sc_bv<kPorts * kBeatBits>>& rdata_;
};

}  // namespace

// Everything owned by the system, constructed in AccelSc's constructor (so the SystemC objects
// are its children) in the order of the members.
struct AccelSc::Impl {
  explicit Impl(const Options& opt, const tpu::hbm::Org& org, const tpu::hbm::Timing& timing)
      : ctx(new VerilatedContext),
        clk("clk", opt.period, 0.5, sc_core::SC_ZERO_TIME, true),
        adapter("pins", wdata_valid, wdata, wstrb, rdata_valid, rdata),
        mem("hbm", org, timing, 0) {
    ctx->fatalOnError(false);  // a failed assertion is reported by CheckAssertions
    // The `--sc` model takes the thread's context; it is this system's own, for its lifetime.
    Verilated::threadContextp(ctx.get());
    dut = std::make_unique<Model>("dut");
  }
  ~Impl() {
    dut.reset();
    Verilated::threadContextp(Verilated::defaultContextp());  // never leave it dangling
  }

  std::unique_ptr<VerilatedContext> ctx;
  sc_core::sc_clock clk;
  sc_signal<bool> rst_n{"rst_n"};
  // Host port (AXI4-Lite), irq and busy.
  sc_signal<bool> aw_valid{"aw_valid"}, aw_ready{"aw_ready"}, w_valid{"w_valid"},
      w_ready{"w_ready"}, b_valid{"b_valid"}, b_ready{"b_ready"}, ar_valid{"ar_valid"},
      ar_ready{"ar_ready"}, r_valid{"r_valid"}, r_ready{"r_ready"}, irq{"irq"},
      hbm_busy{"hbm_busy"};
  sc_signal<sc_uint<12>> aw_addr{"aw_addr"}, ar_addr{"ar_addr"};
  sc_signal<sc_uint<32>> w_data{"w_data"}, r_data{"r_data"};
  // Memory side: the command buses go straight to the device model.
  sc_signal<bool> row_valid{"row_valid"}, row_pc{"row_pc"}, col_valid{"col_valid"},
      col_pc{"col_pc"};
  sc_signal<sc_uint<3>> row_cmd{"row_cmd"};
  sc_signal<sc_uint<4>> row_bank{"row_bank"}, col_bank{"col_bank"};
  sc_signal<sc_uint<16>> row_row{"row_row"};
  sc_signal<sc_uint<2>> col_cmd{"col_cmd"};
  sc_signal<sc_uint<5>> col_col{"col_col"};
  // Memory side: data, flat over the pseudo-channels (split and merged by the adapter).
  sc_signal<sc_uint<kPorts>> wdata_valid{"wdata_valid"}, rdata_valid{"rdata_valid"};
  sc_signal<sc_bv<kPorts * kBeatBits>> wdata{"wdata"}, rdata{"rdata"};
  sc_signal<sc_uint<kPorts * 32>> wstrb{"wstrb"};
  PinAdapter adapter;
  hbm::HbmChannelSc mem;
  std::unique_ptr<Model> dut;
};

Config AccelSc::ModelConfig() {
  // The build's parameters over tpu_accel's defaults, through the one table of parameters
  // (rtl/builds.json's accel_params): a parameter the build leaves out is at its default.
  return ConfigFromBuild("accel_sc_4x4");
}

AccelSc::AccelSc(sc_core::sc_module_name name, const Config& cfg, HostProgram host)
    : AccelSc(name, cfg, std::move(host), Options()) {}

AccelSc::AccelSc(sc_core::sc_module_name name, const Config& cfg, HostProgram host,
                 const Options& opt)
    : sc_core::sc_module(name), cfg_(cfg), host_(std::move(host)), opt_(opt) {
  const std::string params = fmt::format("{}", fmt::join(VerilogParams(cfg), ","));
  const std::string built = fmt::format("{}", fmt::join(VerilogParams(ModelConfig()), ","));
  if (params != built) {
    throw std::invalid_argument(
        fmt::format("AccelSc: configuration {} has the parameters {}, but the SystemC model was "
                    "built with {} (rtl/builds.json, accel_sc_4x4: {})",
                    cfg.name, params, built, TPU_ACCEL_SC_PARAMS));
  }
  if (!host_) throw std::invalid_argument("AccelSc: no host program");
  tpu::hbm::Org org;
  org.row_bits = 16;
  org.columns = 32;
  impl_ = std::make_unique<Impl>(opt_, org, TimingOfPreset(cfg.preset));
  Impl& s = *impl_;
  Model& d = *s.dut;

  d.clk_i(s.clk);
  d.rst_ni(s.rst_n);
  d.s_aw_valid_i(s.aw_valid);
  d.s_aw_ready_o(s.aw_ready);
  d.s_aw_addr_i(s.aw_addr);
  d.s_w_valid_i(s.w_valid);
  d.s_w_ready_o(s.w_ready);
  d.s_w_data_i(s.w_data);
  d.s_b_valid_o(s.b_valid);
  d.s_b_ready_i(s.b_ready);
  d.s_ar_valid_i(s.ar_valid);
  d.s_ar_ready_o(s.ar_ready);
  d.s_ar_addr_i(s.ar_addr);
  d.s_r_valid_o(s.r_valid);
  d.s_r_ready_i(s.r_ready);
  d.s_r_data_o(s.r_data);
  d.irq_o(s.irq);
  d.hbm_busy_o(s.hbm_busy);
  d.row_valid_o(s.row_valid);
  d.row_cmd_o(s.row_cmd);
  d.row_pc_o(s.row_pc);
  d.row_bank_o(s.row_bank);
  d.row_row_o(s.row_row);
  d.col_valid_o(s.col_valid);
  d.col_cmd_o(s.col_cmd);
  d.col_pc_o(s.col_pc);
  d.col_bank_o(s.col_bank);
  d.col_col_o(s.col_col);
  d.wdata_valid_o(s.wdata_valid);
  d.wdata_o(s.wdata);
  d.wstrb_o(s.wstrb);
  d.rdata_valid_i(s.rdata_valid);
  d.rdata_i(s.rdata);

  hbm::HbmChannelSc& m = s.mem;
  m.clk(s.clk);
  m.rst_n(s.rst_n);
  m.row_valid(s.row_valid);
  m.row_cmd(s.row_cmd);
  m.row_pc(s.row_pc);
  m.row_bank(s.row_bank);
  m.row_row(s.row_row);
  m.col_valid(s.col_valid);
  m.col_cmd(s.col_cmd);
  m.col_pc(s.col_pc);
  m.col_bank(s.col_bank);
  m.col_col(s.col_col);
  m.wdata_valid(s.adapter.pc_wdata_valid);
  m.wdata(s.adapter.pc_wdata);
  m.wstrb(s.adapter.pc_wstrb);
  m.rdata_valid(s.adapter.pc_rdata_valid);
  m.rdata(s.adapter.pc_rdata);

  SC_HAS_PROCESS(AccelSc);
  SC_THREAD(HostThread);
  SC_METHOD(CheckAssertions);
  sensitive << s.clk.negedge_event();
  dont_initialize();
}

AccelSc::~AccelSc() = default;

uint64_t AccelSc::cycle() const {
  return impl_->mem.cycle();
}
const tpu::hbm::Channel& AccelSc::device() const {
  return impl_->mem.device();
}
size_t AccelSc::ViolationCount() const {
  return impl_->mem.violations().size();
}
std::string AccelSc::Violations(size_t max_lines) const {
  return impl_->mem.ViolationReport(max_lines);
}

// ---------------------------------------------------------------------------------------------
// Simulation

void AccelSc::Simulate() {
  if (sc_core::sc_get_status() != sc_core::SC_ELABORATION) {
    throw std::logic_error(
        "AccelSc::Simulate: SystemC allows one simulation per process and this one has already "
        "run (run each test in its own process, as ctest does)");
  }
  const uint64_t budget = opt_.max_cycles + static_cast<uint64_t>(opt_.reset_cycles) + 2;
  sc_core::sc_start(opt_.period * static_cast<double>(budget));
  impl_->dut->final();
  if (!assert_error_.empty()) throw AssertionError(assert_error_);
  if (host_error_) std::rethrow_exception(host_error_);
  if (!host_done_) {
    throw WatchdogError(fmt::format(
        "{}: watchdog: the host program did not finish in {} cycles; it was waiting for {} "
        "(cycle {})",
        name(), opt_.max_cycles, waiting_for_, cycle()));
  }
}

void AccelSc::CheckAssertions() {
  if (!impl_->ctx->gotError() || !assert_error_.empty()) return;
  assert_error_ =
      fmt::format("{}: an RTL assertion failed (at or before cycle {}); Verilator printed it above",
                  name(), cycle());
  sc_core::sc_stop();
}

void AccelSc::HostThread() {
  Impl& s = *impl_;
  try {
    // Reset: rst_ni low for reset_cycles rising edges, released after a falling edge. The next
    // rising edge ends cycle 0 for the RTL and the device model alike.
    waiting_for_ = "reset";
    s.rst_n.write(false);
    for (int i = 0; i < opt_.reset_cycles; ++i) wait(s.clk.posedge_event());
    wait(s.clk.negedge_event());
    s.rst_n.write(true);
    const uint32_t magic = ReadReg(reg::kMagic), shape = ReadReg(reg::kShape);
    if (magic != 0x31555054u || int(shape & 0xFFFF) != cfg_.machine.r ||
        int(shape >> 16) != cfg_.machine.c) {
      throw std::runtime_error(
          fmt::format("{}: the model reports magic 0x{:08X}, shape {}x{} (want {}x{})", name(),
                      magic, shape & 0xFFFF, shape >> 16, cfg_.machine.r, cfg_.machine.c));
    }
    waiting_for_ = "the host program";
    host_(*this);
    host_done_ = true;
  } catch (const sc_core::sc_unwind_exception&) {
    throw;  // the kernel's own
  } catch (...) {
    host_error_ = std::current_exception();
  }
  sc_core::sc_stop();
}

void AccelSc::Edge(const char* waiting_for) {
  waiting_for_ = waiting_for;
  wait(impl_->clk.posedge_event());
}

void AccelSc::WaitCycles(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    Edge("WaitCycles");
    wait(impl_->clk.negedge_event());
  }
}

// Every host access starts and ends right after a falling edge: inputs change there, and are
// sampled at the next rising edge, where (woken by it) the thread reads the outputs from before it.
void AccelSc::WriteReg(uint32_t addr, uint32_t value) {
  Impl& s = *impl_;
  s.aw_valid.write(true);
  s.aw_addr.write(addr);
  s.w_valid.write(true);
  s.w_data.write(value);
  s.b_ready.write(true);
  bool aw_done = false, w_done = false, b_done = false;
  for (int i = 0; i < 100 && !b_done; ++i) {
    Edge("an AXI4-Lite write response");
    const bool aw_fire = s.aw_valid.read() && s.aw_ready.read();
    const bool w_fire = s.w_valid.read() && s.w_ready.read();
    const bool b_fire = s.b_valid.read() && s.b_ready.read();
    const fcov::Group& g = *fcov::Groups().accel_host;
    fcov::Handshake(g, fcov::kAxiAw, s.aw_valid.read(), s.aw_ready.read());
    fcov::Handshake(g, fcov::kAxiW, s.w_valid.read(), s.w_ready.read());
    fcov::Handshake(g, fcov::kAxiB, s.b_valid.read(), s.b_ready.read());
    wait(s.clk.negedge_event());
    if (aw_fire) {
      aw_done = true;
      s.aw_valid.write(false);
    }
    if (w_fire) {
      w_done = true;
      s.w_valid.write(false);
    }
    if (b_fire) b_done = true;
  }
  s.aw_valid.write(false);
  s.w_valid.write(false);
  s.b_ready.write(false);
  if (!aw_done || !w_done || !b_done) {
    throw std::runtime_error(fmt::format(
        "{}: AXI4-Lite write to 0x{:03X} not answered in 100 cycles (AW {}, W {}, B {}; cycle {})",
        name(), addr, aw_done, w_done, b_done, cycle()));
  }
}

uint32_t AccelSc::ReadReg(uint32_t addr) {
  Impl& s = *impl_;
  s.ar_valid.write(true);
  s.ar_addr.write(addr);
  s.r_ready.write(true);
  for (int i = 0; i < 100; ++i) {
    Edge("an AXI4-Lite read response");
    const bool ar_fire = s.ar_valid.read() && s.ar_ready.read();
    const bool r_fire = s.r_valid.read() && s.r_ready.read();
    const uint32_t data = static_cast<uint32_t>(s.r_data.read().to_uint());
    const fcov::Group& g = *fcov::Groups().accel_host;
    fcov::Handshake(g, fcov::kAxiAr, s.ar_valid.read(), s.ar_ready.read());
    fcov::Handshake(g, fcov::kAxiR, s.r_valid.read(), s.r_ready.read());
    wait(s.clk.negedge_event());
    if (ar_fire) s.ar_valid.write(false);
    if (r_fire) {
      s.r_ready.write(false);
      return data;
    }
  }
  s.ar_valid.write(false);
  s.r_ready.write(false);
  throw std::runtime_error(
      fmt::format("{}: AXI4-Lite read of 0x{:03X} not answered (cycle {})", name(), addr, cycle()));
}

uint64_t AccelSc::Counter(int i) {
  const uint32_t lo = ReadReg(reg::kCounters + 8 * i);
  const uint32_t hi = ReadReg(reg::kCounters + 8 * i + 4);
  return (uint64_t(hi) << 32) | lo;
}

Result AccelSc::Run(uint64_t prog_addr, uint32_t count, const RunOptions& opt) {
  if (!opt.trace_file.empty()) {
    throw std::invalid_argument(
        fmt::format("{}: waves are not supported by the SystemC harness", name()));
  }
  const auto t0 = std::chrono::steady_clock::now();
  Impl& s = *impl_;
  // The program as it is in HBM before the run, for functional coverage (accel.instr).
  std::vector<uint8_t> prog;
  const uint64_t total = cfg_.machine.hbm_bytes;
  if (fcov::Enabled() && prog_addr % 32 == 0 && prog_addr < total) {
    prog.resize(std::min<uint64_t>(count, (total - prog_addr) / 32) * 32);
    ReadHbm(prog_addr, prog.data(), prog.size());
  }
  WriteReg(reg::kProgLo, uint32_t(prog_addr));
  WriteReg(reg::kProgHi, uint32_t(prog_addr >> 32));
  WriteReg(reg::kProgLen, count);
  const uint32_t ftz = cfg_.machine.mode == num::Mode::kFtz ? 2u : 0u;
  WriteReg(reg::kCtrl, ftz);  // the mode a cycle before the start (tpu_mxu registers it)
  WriteReg(reg::kCtrl, ftz | 1u);
  const uint64_t start = cycle();
  uint64_t next_progress = start + opt.progress_every;
  // irq_o as it is after a rising edge (read after the falling edge).
  while (!s.irq.read()) {
    WaitCycles(1);
    if (cycle() - start > opt.max_cycles) {
      throw WatchdogError(fmt::format(
          "{}: the program did not finish in {} cycles (status 0x{:X}, {} instructions consumed)",
          name(), opt.max_cycles, ReadReg(reg::kStatus), Counter(reg::kInstructions)));
    }
    if (opt.progress && cycle() >= next_progress) {
      next_progress += opt.progress_every;
      opt.progress(cycle() - start, Counter(reg::kInstructions));
    }
  }
  // Writes are posted (B when queued): let the controllers put the last data into memory.
  const uint64_t q0 = cycle();
  while (s.hbm_busy.read()) {
    WaitCycles(1);
    if (cycle() - q0 > 1'000'000) {
      throw WatchdogError(fmt::format("{}: HBM queues not empty 1M cycles after done", name()));
    }
  }
  WaitCycles(64);

  Result r;
  r.code = isa::ErrorCode(ReadReg(reg::kErrCode));
  r.pc = ReadReg(reg::kErrPc);
  r.status = ReadReg(reg::kStatus);
  const uint32_t tokens = ReadReg(reg::kTokens);
  for (int q = 0; q < 4; ++q) r.tokens[size_t(q)] = (tokens >> (8 * q)) & 0xFF;
  r.perf = ReadPerf([this](int i) { return Counter(i); });
  r.hbm_violations = ViolationCount();
  r.violations = Violations();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fcov::AccelRun(prog, r.code, r.pc, false);  // the SystemC build has no vector unit
  return r;
}

// ---------------------------------------------------------------------------------------------
// Backdoor HBM access: the device model's storage, 32-byte bursts (as AccelSim).

void AccelSc::CheckRange(uint64_t addr, uint64_t n, const char* what) const {
  const uint64_t total = cfg_.machine.hbm_bytes;
  if (addr > total || n > total - addr) {
    throw std::out_of_range(
        fmt::format("{}: bytes 0x{:X} + {} exceed HbmBytes=0x{:X}", what, addr, n, total));
  }
}

namespace {

// The burst holding global address `base` (32-byte aligned) on the one channel.
tpu::hbm::Command Where(uint64_t base, int* pc) {
  const hbm::AddressMap map{1, 16, 5, 0};
  *pc = map.Port(base);
  return map.Decode(map.Local(base));
}

}  // namespace

void AccelSc::WriteHbm(uint64_t addr, const void* data, uint64_t n) {
  CheckRange(addr, n, "WriteHbm");
  const auto* src = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const uint64_t base = addr & ~uint64_t{31}, off = addr - base;
    const uint64_t len = std::min<uint64_t>(n, 32 - off);
    uint8_t beat[32];
    int pc;
    const auto c = Where(base, &pc);
    if (len != 32) impl_->mem.Peek(pc, c.bank, c.row, c.col, beat);
    std::memcpy(beat + off, src, len);
    impl_->mem.Poke(pc, c.bank, c.row, c.col, beat);
    addr += len, src += len, n -= len;
  }
}

void AccelSc::ReadHbm(uint64_t addr, void* data, uint64_t n) {
  CheckRange(addr, n, "ReadHbm");
  auto* dst = static_cast<uint8_t*>(data);
  while (n > 0) {
    const uint64_t base = addr & ~uint64_t{31}, off = addr - base;
    const uint64_t len = std::min<uint64_t>(n, 32 - off);
    uint8_t beat[32];
    int pc;
    const auto c = Where(base, &pc);
    impl_->mem.Peek(pc, c.bank, c.row, c.col, beat);
    std::memcpy(dst, beat + off, len);
    addr += len, dst += len, n -= len;
  }
}

}  // namespace tpu::tb::accel
