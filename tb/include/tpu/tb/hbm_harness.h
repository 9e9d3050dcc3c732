// SPDX-License-Identifier: Apache-2.0
// Testbench for the HBM subsystem (tpu_hbm_subsys): AXI4 master drivers and monitors on every
// pseudo-channel port, and the C++ device model (tpu::hbm::Channel) on every channel's memory
// side, which checks every command against the JEDEC rules and holds the data.
//
// Cycle discipline: after the falling edge every output of the subsystem depends only on its
// state, so the harness reads the command buses, write data and the AXI ready/valid outputs
// there, feeds the device models for that cycle, drives the masters and the read data, and
// clocks. Cycle 0 is the first cycle after reset (the device model's t = 0).
//
// Functional coverage (tpu/tb/fcov.h): every command in the bank state it finds (hbm.cmd),
// refresh while AXI requests are outstanding (hbm.refresh), and the handshakes of every AXI
// channel of every port (hbm.axi.port<p>).
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tpu/hbm/hbm_device.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/sim_ctrl.h"
#include "tpu/tb/vl_bits.h"

namespace tpu::tb::hbm {

using tpu::hbm::Channel;
using tpu::hbm::Cmd;
using tpu::hbm::Command;

// The address map of the RTL (tpu_hbm_axi_port) and of the ports (global addresses): bits 5:0
// are the byte in a 64-byte block, then 1 bit of pseudo-channel, then the channel bits, then the
// port-local block address, which tpu_hbm_axi_port maps to (bank group, bank, block, row) per
// AddrMap. Port p = 2 * channel + pc.
struct AddressMap {
  int channels = 1;
  int row_bits = 16;
  int col_bits = 5;  // 32-byte columns per row = 2^col_bits
  int addr_map = 0;  // 0: RoCoBaBg, 1: RoBaBgCo (see tpu_hbm_axi_port)

  int ports() const { return 2 * channels; }
  int port_bits() const {
    int b = 0;
    while ((1 << b) < ports()) ++b;
    return b;
  }
  // Bytes behind one port, and in all.
  uint64_t port_bytes() const { return uint64_t{1} << (5 + col_bits + 4 + row_bits); }
  uint64_t total_bytes() const { return port_bytes() * static_cast<uint64_t>(ports()); }
  int Port(uint64_t global) const { return static_cast<int>((global >> 6) & (ports() - 1)); }
  uint64_t Local(uint64_t global) const {
    return ((global >> (6 + port_bits())) << 6) | (global & 63);
  }
  uint64_t Global(int port, uint64_t local) const {
    return ((local >> 6) << (6 + port_bits())) | (static_cast<uint64_t>(port) << 6) | (local & 63);
  }
  // The burst (bank, row, column) holding a port-local byte address.
  tpu::hbm::Command Decode(uint64_t local) const {
    const uint64_t blk = local >> 6;
    const int blk_bits = col_bits - 1;
    Command c;
    int bg, ba, col_hi;
    if (addr_map == 0) {
      bg = static_cast<int>(blk & 3);
      ba = static_cast<int>((blk >> 2) & 3);
      col_hi = static_cast<int>((blk >> 4) & ((1u << blk_bits) - 1));
    } else {
      col_hi = static_cast<int>(blk & ((1u << blk_bits) - 1));
      bg = static_cast<int>((blk >> blk_bits) & 3);
      ba = static_cast<int>((blk >> (blk_bits + 2)) & 3);
    }
    c.bank = bg * 4 + ba;
    c.row = static_cast<uint32_t>((blk >> (4 + blk_bits)) & ((uint64_t{1} << row_bits) - 1));
    c.col = (col_hi << 1) | static_cast<int>((local >> 5) & 1);
    return c;
  }
  // The inverse: the port-local address of block `blk_in_row` (0 .. 2^(col_bits-1)-1) of a row.
  uint64_t Encode(int bank, uint32_t row, int blk_in_row) const {
    const int blk_bits = col_bits - 1;
    const uint64_t bg = bank / 4, ba = bank % 4;
    uint64_t blk;
    if (addr_map == 0) {
      blk = bg | (ba << 2) | (static_cast<uint64_t>(blk_in_row) << 4);
    } else {
      blk = static_cast<uint64_t>(blk_in_row) | (bg << blk_bits) | (ba << (blk_bits + 2));
    }
    blk |= static_cast<uint64_t>(row) << (4 + blk_bits);
    return blk << 6;
  }
};

// One AXI4 burst as the master sees it.
struct AxiTxn {
  bool write = false;
  int port = 0;
  uint32_t id = 0;
  uint64_t addr = 0;           // port-local byte address
  int len = 0;                 // AxLEN: beats - 1
  int size = 5;                // AxSIZE
  int burst = 1;               // AxBURST (1 = INCR)
  std::vector<uint8_t> data;   // 32 bytes per beat (write data, or read data as returned)
  std::vector<uint32_t> strb;  // per write beat
  bool wlast_early = false;    // drive WLAST on the first beat (a protocol error, for tests)
  uint64_t tag = 0;            // the test's own handle
  // Filled by the harness.
  uint64_t accept_cycle = 0;  // AR/AW handshake
  uint64_t done_cycle = 0;    // last R beat / B
  std::vector<int> resp;      // per R beat, or one B response
  int beats() const { return len + 1; }
};

struct PortStats {
  uint64_t reads = 0, writes = 0, read_beats = 0, write_beats = 0;
  uint64_t read_latency_sum = 0, read_latency_max = 0;  // AR accepted -> last R beat
};

// The device models on the memory side of a top with tpu_hbm_subsys's memory-side ports
// (tpu_hbm_subsys, tpu_hbm_single): one tpu::hbm::Channel per channel, which checks every command
// against the JEDEC rules and holds the data. Step() is called once per cycle after the falling
// edge: it reads the command buses and write data, feeds the device models for that cycle and
// drives the read data. `axi_outstanding` (for functional coverage only): the requests accepted
// on the AXI side and not yet answered, or -1 when the caller does not know them.
class HbmMemory {
 public:
  HbmMemory(const AddressMap& map, const tpu::hbm::Timing& timing) : map_(map) {
    tpu::hbm::Org org;
    org.row_bits = map.row_bits;
    org.columns = 1 << map.col_bits;
    for (int c = 0; c < map.channels; ++c) devices_.emplace_back(org, timing, c);
  }

  Channel& device(int c) { return devices_.at(c); }
  const Channel& device(int c) const { return devices_.at(c); }

  template <class V>
  void Step(V& d, uint64_t t, int64_t axi_outstanding = -1) {
    const int rb = map_.row_bits, cb = map_.col_bits;
    for (int c = 0; c < map_.channels; ++c) {
      Channel& dev = devices_[c];
      if (GetBits(d.row_valid_o, c, 1)) {
        Command cmd;
        const int code = static_cast<int>(GetBits(d.row_cmd_o, c * 3, 3));
        static constexpr Cmd kRow[] = {Cmd::kAct, Cmd::kPre, Cmd::kPreA, Cmd::kRefAb, Cmd::kRefPb};
        if (code > 4) throw std::runtime_error(fmt::format("bad row command code {}", code));
        cmd.cmd = kRow[code];
        cmd.pc = static_cast<int>(GetBits(d.row_pc_o, c, 1));
        cmd.bank = static_cast<int>(GetBits(d.row_bank_o, c * 4, 4));
        cmd.row = static_cast<uint32_t>(GetBits(d.row_row_o, c * rb, rb));
        fcov::HbmCommand(dev, cmd, axi_outstanding);
        dev.Issue(t, cmd);
      }
      if (GetBits(d.col_valid_o, c, 1)) {
        Command cmd;
        static constexpr Cmd kCol[] = {Cmd::kRd, Cmd::kRda, Cmd::kWr, Cmd::kWra};
        cmd.cmd = kCol[GetBits(d.col_cmd_o, c * 2, 2)];
        cmd.pc = static_cast<int>(GetBits(d.col_pc_o, c, 1));
        cmd.bank = static_cast<int>(GetBits(d.col_bank_o, c * 4, 4));
        cmd.col = static_cast<int>(GetBits(d.col_col_o, c * cb, cb));
        fcov::HbmCommand(dev, cmd, axi_outstanding);
        dev.Issue(t, cmd);
      }
      for (int pc = 0; pc < 2; ++pc) {
        const int p = 2 * c + pc;
        if (GetBits(d.wdata_valid_o, p, 1)) {
          uint8_t buf[32];
          GetBeat32(d.wdata_o, p * 256, buf);
          dev.WriteData(t, pc, buf, GetLane(d.wstrb_o, p * 32, 32));
        }
        uint8_t out[32];
        const bool v = dev.ReadData(t, pc, out);
        SetBits(d.rdata_valid_i, p, 1, v);
        if (v) SetBeat32(d.rdata_i, p * 256, out);
      }
      dev.EndCycle(t);
    }
  }

  // Every timing violation the device models saw, one per line ("" when none).
  std::string Violations(size_t max_lines = 20) const {
    std::string s;
    size_t n = 0;
    for (const auto& dev : devices_) {
      for (const auto& v : dev.violations()) {
        if (n++ < max_lines) s += v.ToString() + "\n";
      }
    }
    if (n > max_lines) s += fmt::format("... {} violations in all\n", n);
    return s;
  }
  size_t ViolationCount() const {
    size_t n = 0;
    for (const auto& dev : devices_) n += dev.violations().size();
    return n;
  }

 private:
  AddressMap map_;
  std::vector<Channel> devices_;
};

template <class V>
class HbmHarness {
 public:
  struct Options {
    AddressMap map;
    tpu::hbm::Timing timing;
    uint64_t max_cycles = 10'000'000;
    TraceOptions trace;
    int r_ready_pct = 100;  // chance per cycle that a port takes an R beat
    int b_ready_pct = 100;
    uint64_t seed = 1;  // for back-pressure
  };

  explicit HbmHarness(std::string name, const Options& o)
      : o_(o),
        sim_(std::move(name), o.max_cycles, o.trace),
        rng_(o.seed),
        ports_(o.map.ports()),
        mem_(o.map, o.timing) {
    auto& d = sim_.dut();
    d.aw_valid_i = 0;
    d.w_valid_i = 0;
    d.ar_valid_i = 0;
    d.r_ready_i = 0;
    d.b_ready_i = 0;
    d.rdata_valid_i = 0;
    for (int p = 0; p < o.map.ports(); ++p) ports_[p].cov = &fcov::HbmPort(p);
    sim_.Reset();
  }

  V& dut() { return sim_.dut(); }
  SimCtrl<V>& sim() { return sim_; }
  Channel& device(int c) { return mem_.device(c); }
  int channels() const { return o_.map.channels; }
  const AddressMap& map() const { return o_.map; }
  uint64_t cycle() const { return t_; }
  const PortStats& stats(int port) const { return ports_.at(port).stats; }

  // Called when a burst completes (last R beat, or B), with the transaction filled in.
  std::function<void(AxiTxn&)> on_done;

  // Queues a burst on its port; the master drives it as soon as the bursts before it went.
  void Submit(std::unique_ptr<AxiTxn> t) {
    Port& p = ports_.at(t->port);
    ++outstanding_;
    if (t->write) {
      for (int b = 0; b < t->beats(); ++b) p.w.push_back({t.get(), b});
      p.aw.push_back(std::move(t));
    } else {
      p.ar.push_back(std::move(t));
    }
  }
  // Whether a new read (write) offered to `port` this cycle is accepted at once: nothing queued
  // before it and the port's ready is up (the trace replay's "offer until refused").
  bool CanAcceptRead(int port) {
    return ports_[port].ar.empty() && GetBits(sim_.dut().ar_ready_o, port, 1);
  }
  bool CanAcceptWrite(int port) {
    return ports_[port].aw.empty() && ports_[port].w.empty() &&
           GetBits(sim_.dut().aw_ready_o, port, 1);
  }
  // Bursts submitted and not yet completed.
  uint64_t outstanding() const { return outstanding_; }

  // One clock cycle.
  void Step() {
    sim_.FallingEdge();
    MemorySide();
    Masters();
    sim_.RisingEdge();
    ++t_;
  }
  // Steps until every submitted burst completed; throws (naming the oldest stuck burst) after
  // `budget` cycles without any completion.
  void Drain(uint64_t budget = 200'000) {
    uint64_t last = t_, done = completed_;
    while (outstanding_ > 0) {
      Step();
      if (completed_ != done) {
        done = completed_;
        last = t_;
      } else if (t_ - last > budget) {
        throw WatchdogError(fmt::format("{}: no burst completed for {} cycles; {}", sim_.name(),
                                        budget, StuckReport()));
      }
    }
  }
  // Drain, then step until every controller's queues are empty and the last write data is in the
  // memory (writes are posted: B comes when a write is queued, not when it reaches memory).
  void Quiesce(uint64_t budget = 200'000) {
    Drain(budget);
    const uint64_t start = t_;
    auto busy = [&] {
      auto& d = sim_.dut();
      for (int p = 0; p < o_.map.ports(); ++p) {
        if (GetBits(d.rq_count_o, p * 8, 8) || GetBits(d.wq_count_o, p * 8, 8)) return true;
      }
      return false;
    };
    while (busy()) {
      Step();
      if (t_ - start > budget) {
        throw WatchdogError(
            fmt::format("{}: queues not empty after {} cycles", sim_.name(), budget));
      }
    }
    for (int i = 0; i < 64; ++i) Step();
  }
  std::string StuckReport() const {
    std::string s;
    for (size_t p = 0; p < ports_.size(); ++p) {
      const Port& q = ports_[p];
      auto name = [](const AxiTxn* t) {
        return fmt::format("{} id {} addr {:#x} len {} (accepted at cycle {})",
                           t->write ? "write" : "read", t->id, t->addr, t->len, t->accept_cycle);
      };
      if (!q.ar.empty()) s += fmt::format("port {}: AR waits: {}; ", p, name(q.ar.front().get()));
      if (!q.aw.empty()) s += fmt::format("port {}: AW waits: {}; ", p, name(q.aw.front().get()));
      if (!q.w.empty()) s += fmt::format("port {}: W beat {} waits; ", p, q.w.front().beat);
      for (auto& [id, l] : q.r_pend)
        if (!l.empty())
          s += fmt::format("port {}: R of {} outstanding; ", p, name(l.front().get()));
      for (auto& [id, l] : q.b_pend)
        if (!l.empty())
          s += fmt::format("port {}: B of {} outstanding; ", p, name(l.front().get()));
    }
    return s.empty() ? "nothing outstanding" : s;
  }

  // Every timing violation the device models saw, one per line ("" when none).
  std::string Violations(size_t max_lines = 20) const { return mem_.Violations(max_lines); }
  size_t ViolationCount() const { return mem_.ViolationCount(); }

 private:
  struct WBeat {
    AxiTxn* t;
    int beat;
  };
  struct Port {
    std::deque<std::unique_ptr<AxiTxn>> ar, aw;
    std::deque<WBeat> w;
    std::map<uint32_t, std::deque<std::unique_ptr<AxiTxn>>> r_pend, b_pend;
    std::map<uint32_t, int> r_beat;  // beats received of the oldest read per ID
    PortStats stats;
    const fcov::Group* cov = nullptr;  // hbm.axi.port<p>
  };

  void MemorySide() { mem_.Step(sim_.dut(), t_, static_cast<int64_t>(accepted_)); }

  void Masters() {
    auto& d = sim_.dut();
    for (int p = 0; p < o_.map.ports(); ++p) {
      Port& q = ports_[p];
      // R beats (valid and data as the slave shows them in this cycle).
      const bool r_ready = o_.r_ready_pct >= 100 || rng_.Range(0, 99) < o_.r_ready_pct;
      SetBits(d.r_ready_i, p, 1, r_ready);
      const bool r_valid = GetBits(d.r_valid_o, p, 1);
      fcov::Handshake(*q.cov, fcov::kAxiR, r_valid, r_ready);
      if (r_ready && r_valid) TakeR(p);
      const bool b_ready = o_.b_ready_pct >= 100 || rng_.Range(0, 99) < o_.b_ready_pct;
      SetBits(d.b_ready_i, p, 1, b_ready);
      const bool b_valid = GetBits(d.b_valid_o, p, 1);
      fcov::Handshake(*q.cov, fcov::kAxiB, b_valid, b_ready);
      if (b_ready && b_valid) TakeB(p);
      // AR.
      SetBits(d.ar_valid_i, p, 1, !q.ar.empty());
      if (!q.ar.empty()) {
        AxiTxn* t = q.ar.front().get();
        DriveA(d.ar_id_i, d.ar_addr_i, d.ar_len_i, d.ar_size_i, d.ar_burst_i, p, *t);
        const bool ar_ready = GetBits(d.ar_ready_o, p, 1);
        fcov::Handshake(*q.cov, fcov::kAxiAr, true, ar_ready);
        if (ar_ready) {
          t->accept_cycle = t_;
          ++accepted_;
          q.r_pend[t->id].push_back(std::move(q.ar.front()));
          q.ar.pop_front();
        }
      }
      // AW.
      SetBits(d.aw_valid_i, p, 1, !q.aw.empty());
      if (!q.aw.empty()) {
        AxiTxn* t = q.aw.front().get();
        DriveA(d.aw_id_i, d.aw_addr_i, d.aw_len_i, d.aw_size_i, d.aw_burst_i, p, *t);
        const bool aw_ready = GetBits(d.aw_ready_o, p, 1);
        fcov::Handshake(*q.cov, fcov::kAxiAw, true, aw_ready);
        if (aw_ready) {
          t->accept_cycle = t_;
          ++accepted_;
          q.b_pend[t->id].push_back(std::move(q.aw.front()));
          q.aw.pop_front();
        }
      }
      // W (beats of bursts in AW order; they may run ahead of their AW).
      SetBits(d.w_valid_i, p, 1, !q.w.empty());
      if (!q.w.empty()) {
        const WBeat wb = q.w.front();
        SetBeat32(d.w_data_i, p * 256, wb.t->data.data() + 32 * wb.beat);
        SetLane(d.w_strb_i, p * 32, 32, wb.t->strb[wb.beat]);
        const bool last = wb.t->wlast_early ? wb.beat == 0 : wb.beat == wb.t->len;
        SetBits(d.w_last_i, p, 1, last);
        const bool w_ready = GetBits(d.w_ready_o, p, 1);
        fcov::Handshake(*q.cov, fcov::kAxiW, true, w_ready);
        if (w_ready) {
          q.w.pop_front();
          ++q.stats.write_beats;
        }
      }
    }
  }

  template <class A, class B, class C, class D, class E>
  void DriveA(A& id, B& addr, C& len, D& size, E& burst, int p, const AxiTxn& t) {
    SetBits(id, p * 6, 6, t.id);
    SetBits(addr, p * 32, 32, t.addr);
    SetBits(len, p * 8, 8, static_cast<uint64_t>(t.len));
    SetBits(size, p * 3, 3, static_cast<uint64_t>(t.size));
    SetBits(burst, p * 2, 2, static_cast<uint64_t>(t.burst));
  }

  void TakeR(int p) {
    auto& d = sim_.dut();
    Port& q = ports_[p];
    const uint32_t id = static_cast<uint32_t>(GetBits(d.r_id_o, p * 6, 6));
    auto it = q.r_pend.find(id);
    if (it == q.r_pend.end() || it->second.empty()) {
      throw std::runtime_error(
          fmt::format("{}: port {} cycle {}: R beat with id {} but no read "
                      "of that id is outstanding",
                      sim_.name(), p, t_, id));
    }
    AxiTxn* t = it->second.front().get();
    int& beat = q.r_beat[id];
    if (t->data.size() < static_cast<size_t>(32 * t->beats())) t->data.assign(32 * t->beats(), 0);
    GetBeat32(d.r_data_o, p * 256, t->data.data() + 32 * beat);
    t->resp.push_back(static_cast<int>(GetBits(d.r_resp_o, p * 2, 2)));
    const bool last = GetBits(d.r_last_o, p, 1);
    ++q.stats.read_beats;
    if (last != (beat == t->len)) {
      throw std::runtime_error(
          fmt::format("{}: port {} cycle {}: RLAST {} on beat {} of a {}-beat "
                      "read (id {}, addr {:#x})",
                      sim_.name(), p, t_, last, beat, t->beats(), id, t->addr));
    }
    if (!last) {
      ++beat;
      return;
    }
    beat = 0;
    t->done_cycle = t_;
    ++q.stats.reads;
    const uint64_t lat = t_ - t->accept_cycle;
    q.stats.read_latency_sum += lat;
    q.stats.read_latency_max = std::max(q.stats.read_latency_max, lat);
    std::unique_ptr<AxiTxn> own = std::move(it->second.front());
    it->second.pop_front();
    Complete(*own);
  }

  void TakeB(int p) {
    auto& d = sim_.dut();
    Port& q = ports_[p];
    const uint32_t id = static_cast<uint32_t>(GetBits(d.b_id_o, p * 6, 6));
    auto it = q.b_pend.find(id);
    if (it == q.b_pend.end() || it->second.empty()) {
      throw std::runtime_error(
          fmt::format("{}: port {} cycle {}: B with id {} but no write of "
                      "that id is outstanding",
                      sim_.name(), p, t_, id));
    }
    // The W beats of a burst whose B comes must all have gone.
    for (const WBeat& wb : q.w) {
      if (wb.t == it->second.front().get()) {
        throw std::runtime_error(
            fmt::format("{}: port {} cycle {}: B before all W beats", sim_.name(), p, t_));
      }
    }
    std::unique_ptr<AxiTxn> own = std::move(it->second.front());
    it->second.pop_front();
    own->resp.push_back(static_cast<int>(GetBits(d.b_resp_o, p * 2, 2)));
    own->done_cycle = t_;
    ++q.stats.writes;
    Complete(*own);
  }

  void Complete(AxiTxn& t) {
    --outstanding_;
    --accepted_;
    ++completed_;
    if (on_done) on_done(t);
  }

 private:
  Options o_;
  SimCtrl<V> sim_;
  Rng rng_;
  std::vector<Port> ports_;
  HbmMemory mem_;
  uint64_t t_ = 0;
  uint64_t outstanding_ = 0;
  uint64_t accepted_ = 0;  // bursts accepted (AR / AW handshake) and not yet completed
  uint64_t completed_ = 0;
};

}  // namespace tpu::tb::hbm
