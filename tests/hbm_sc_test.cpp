// SPDX-License-Identifier: Apache-2.0
// The SystemC wrapper of the HBM2 channel device model (tb/include/tpu/tb/hbm_sc.h). A driver
// module plays the RTL's part: like the controller's registers it drives the command buses and
// write data of cycle t right after the rising edge that starts cycle t (the same delta in which
// the wrapper samples cycle t - 1: the harshest case for it), and it samples read data at the
// rising edge that ends a cycle, as tpu_hbm_pc_ctrl does. Two benches share one clock and one
// simulation: a legal sequence (ACT, WR with data at WL, WRA, RD/RDA with data due at RL, PRE,
// PREA, REFab, REFpb, a backdoor Poke) that must be clean and return the written bytes exactly at
// RL, and an illegal one (RD one cycle before nRCDRD) that must give exactly one violation naming
// nRCDRD.
//
// SystemC 2.3 allows one elaboration and simulation per process, so this file holds exactly one
// test (ctest runs it in a process of its own either way); run again in the same process (e.g.
// --gtest_repeat=2) it fails with a message saying so instead of a SystemC error.
#include "tpu/tb/hbm_sc.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "sc_test_support.h"
#include "tpu/tb/rng.h"

namespace tpu {
namespace {

using hbm::Channel;
using hbm::Cmd;
using hbm::Command;
using hbm::Org;
using hbm::Timing;
using tb::hbm::HbmChannelSc;
using Burst = std::array<uint8_t, Org::kBurstBytes>;
using sc_dt::sc_biguint;
using sc_dt::sc_uint;

constexpr int kRowBits = 16;
constexpr int kColBits = 5;
constexpr int kResetEdges = 3;  // rising edges with rst_n low before cycle 0

// What the driver puts on the buses in one cycle.
struct WriteBeat {
  Burst data{};
  uint32_t strb = 0xFFFF'FFFFu;
};
struct CycleStim {
  std::optional<Command> row, col;
  std::array<std::optional<WriteBeat>, 2> wdata;
};
using Schedule = std::map<uint64_t, CycleStim>;

// Read data as the RTL sees it: the cycle whose ending rising edge sampled it.
struct ReadBeat {
  uint64_t cycle = 0;
  int pc = 0;
  Burst data{};
};

// The pin encodings of tpu_pkg, written out here rather than taken from the wrapper.
unsigned RowCode(Cmd c) {
  switch (c) {
    case Cmd::kAct: return 0;
    case Cmd::kPre: return 1;
    case Cmd::kPreA: return 2;
    case Cmd::kRefAb: return 3;
    case Cmd::kRefPb: return 4;
    default: throw std::logic_error("not a row command");
  }
}
unsigned ColCode(Cmd c) {
  switch (c) {
    case Cmd::kRd: return 0;
    case Cmd::kRda: return 1;
    case Cmd::kWr: return 2;
    case Cmd::kWra: return 3;
    default: throw std::logic_error("not a column command");
  }
}

// Byte i of a burst is bits [8i+7:8i] of the data bus (written here bit by bit, independently of
// the wrapper's packing).
sc_biguint<256> ToPins(const Burst& b) {
  sc_biguint<256> v = 0;
  for (int i = 0; i < Org::kBurstBytes; ++i) {
    for (int k = 0; k < 8; ++k) v[8 * i + k] = (b[i] >> k) & 1;
  }
  return v;
}
Burst FromPins(const sc_biguint<256>& v) {
  Burst b{};
  for (int i = 0; i < Org::kBurstBytes; ++i) {
    for (int k = 0; k < 8; ++k) b[i] |= static_cast<uint8_t>((v[8 * i + k] ? 1 : 0) << k);
  }
  return b;
}

// ---------------------------------------------------------------------------------------------
// The RTL's side of the memory interface, driven from a schedule.

class Driver : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk{"clk"};
  sc_core::sc_out<bool> rst_n{"rst_n"};
  sc_core::sc_out<bool> row_valid{"row_valid"};
  sc_core::sc_out<sc_uint<3>> row_cmd{"row_cmd"};
  sc_core::sc_out<bool> row_pc{"row_pc"};
  sc_core::sc_out<sc_uint<4>> row_bank{"row_bank"};
  sc_core::sc_out<sc_uint<kRowBits>> row_row{"row_row"};
  sc_core::sc_out<bool> col_valid{"col_valid"};
  sc_core::sc_out<sc_uint<2>> col_cmd{"col_cmd"};
  sc_core::sc_out<bool> col_pc{"col_pc"};
  sc_core::sc_out<sc_uint<4>> col_bank{"col_bank"};
  sc_core::sc_out<sc_uint<kColBits>> col_col{"col_col"};
  sc_core::sc_vector<sc_core::sc_out<bool>> wdata_valid{"wdata_valid", 2};
  sc_core::sc_vector<sc_core::sc_out<sc_biguint<256>>> wdata{"wdata", 2};
  sc_core::sc_vector<sc_core::sc_out<sc_uint<32>>> wstrb{"wstrb", 2};
  sc_core::sc_vector<sc_core::sc_in<bool>> rdata_valid{"rdata_valid", 2};
  sc_core::sc_vector<sc_core::sc_in<sc_biguint<256>>> rdata{"rdata", 2};

  SC_HAS_PROCESS(Driver);
  // Drives `schedule` from cycle 0 and keeps sampling read data until cycle `end` has ended.
  Driver(sc_core::sc_module_name name, Schedule schedule, uint64_t end)
      : sc_core::sc_module(name), schedule_(std::move(schedule)), end_(end) {
    rst_n.initialize(false);
    row_valid.initialize(false);
    col_valid.initialize(false);
    for (auto& p : wdata_valid) p.initialize(false);
    SC_METHOD(OnRisingEdge);
    sensitive << clk.pos();
    dont_initialize();
  }

  const std::vector<ReadBeat>& reads() const { return reads_; }
  uint64_t cycles_ended() const { return cycles_ended_; }
  bool done() const { return cycles_ended_ > end_; }

 private:
  void OnRisingEdge() {
    // The edge that ends cycle cur_: sample its read data (the values from before the edge).
    if (cur_ >= 0) {
      for (int pc = 0; pc < 2; ++pc) {
        if (!rdata_valid[pc].read()) continue;
        ReadBeat b;
        b.cycle = static_cast<uint64_t>(cur_);
        b.pc = pc;
        b.data = FromPins(rdata[pc].read());
        reads_.push_back(b);
      }
      ++cycles_ended_;
    }
    // The edge that starts the next cycle: drive it.
    if (++edge_ < kResetEdges) return;
    cur_ = edge_ - kResetEdges;
    rst_n.write(true);
    const auto it = schedule_.find(static_cast<uint64_t>(cur_));
    const CycleStim idle;
    const CycleStim& s = it == schedule_.end() ? idle : it->second;
    row_valid.write(s.row.has_value());
    if (s.row) {
      row_cmd.write(RowCode(s.row->cmd));
      row_pc.write(s.row->pc == 1);
      row_bank.write(static_cast<unsigned>(s.row->bank));
      row_row.write(s.row->row);
    }
    col_valid.write(s.col.has_value());
    if (s.col) {
      col_cmd.write(ColCode(s.col->cmd));
      col_pc.write(s.col->pc == 1);
      col_bank.write(static_cast<unsigned>(s.col->bank));
      col_col.write(static_cast<unsigned>(s.col->col));
    }
    for (int pc = 0; pc < 2; ++pc) {
      wdata_valid[pc].write(s.wdata[pc].has_value());
      if (s.wdata[pc]) {
        wdata[pc].write(ToPins(s.wdata[pc]->data));
        wstrb[pc].write(s.wdata[pc]->strb);
      }
    }
  }

  Schedule schedule_;
  uint64_t end_;
  int64_t edge_ = -1;  // rising edges seen - 1
  int64_t cur_ = -1;   // the cycle being driven (-1 in reset)
  uint64_t cycles_ended_ = 0;
  std::vector<ReadBeat> reads_;
};

// A driver and the wrapper, connected by signals, on a shared clock.
class Bench : public sc_core::sc_module {
 public:
  Bench(sc_core::sc_module_name name, sc_core::sc_clock& clock, const Org& org, const Timing& tm,
        int channel, Schedule schedule, uint64_t end)
      : sc_core::sc_module(name),
        dut("dut", org, tm, channel),
        driver("driver", std::move(schedule), end) {
    Connect(dut, clock);
    Connect(driver, clock);
  }

  HbmChannelSc dut;
  Driver driver;

 private:
  // The driver's ports carry the wrapper's names.
  template <class M>
  void Connect(M& m, sc_core::sc_clock& clock) {
    m.clk(clock);
    m.rst_n(rst_n_);
    m.row_valid(row_valid_);
    m.row_cmd(row_cmd_);
    m.row_pc(row_pc_);
    m.row_bank(row_bank_);
    m.row_row(row_row_);
    m.col_valid(col_valid_);
    m.col_cmd(col_cmd_);
    m.col_pc(col_pc_);
    m.col_bank(col_bank_);
    m.col_col(col_col_);
    m.wdata_valid(wdata_valid_);
    m.wdata(wdata_);
    m.wstrb(wstrb_);
    m.rdata_valid(rdata_valid_);
    m.rdata(rdata_);
  }

  sc_core::sc_signal<bool> rst_n_{"rst_n"};
  sc_core::sc_signal<bool> row_valid_{"row_valid"};
  sc_core::sc_signal<sc_uint<3>> row_cmd_{"row_cmd"};
  sc_core::sc_signal<bool> row_pc_{"row_pc"};
  sc_core::sc_signal<sc_uint<4>> row_bank_{"row_bank"};
  sc_core::sc_signal<sc_uint<kRowBits>> row_row_{"row_row"};
  sc_core::sc_signal<bool> col_valid_{"col_valid"};
  sc_core::sc_signal<sc_uint<2>> col_cmd_{"col_cmd"};
  sc_core::sc_signal<bool> col_pc_{"col_pc"};
  sc_core::sc_signal<sc_uint<4>> col_bank_{"col_bank"};
  sc_core::sc_signal<sc_uint<kColBits>> col_col_{"col_col"};
  sc_core::sc_vector<sc_core::sc_signal<bool>> wdata_valid_{"wdata_valid", 2};
  sc_core::sc_vector<sc_core::sc_signal<sc_biguint<256>>> wdata_{"wdata", 2};
  sc_core::sc_vector<sc_core::sc_signal<sc_uint<32>>> wstrb_{"wstrb", 2};
  sc_core::sc_vector<sc_core::sc_signal<bool>> rdata_valid_{"rdata_valid", 2};
  sc_core::sc_vector<sc_core::sc_signal<sc_biguint<256>>> rdata_{"rdata", 2};
};

// ---------------------------------------------------------------------------------------------
// Sequences

Command Row(Cmd cmd, int pc, int bank, uint32_t row = 0) {
  Command c;
  c.cmd = cmd;
  c.pc = pc;
  c.bank = bank;
  c.row = row;
  return c;
}
Command Col(Cmd cmd, int pc, int bank, int col) {
  Command c;
  c.cmd = cmd;
  c.pc = pc;
  c.bank = bank;
  c.col = col;
  return c;
}

Burst RandomBurst(tb::Rng& rng) {
  Burst b;
  for (auto& x : b) x = static_cast<uint8_t>(rng.Next());
  return b;
}
Burst BackgroundOf(int channel, int pc, int bank, uint32_t row, int col) {
  Burst b;
  Channel::Background(channel, pc, bank, row, col, b.data());
  return b;
}
int OtherThan(tb::Rng& rng, int lo, int hi, int avoid) {
  int v = rng.Range(lo, hi - 1);
  return v >= avoid ? v + 1 : v;
}

struct Expected {
  ReadBeat beat;
  std::string what;
};

std::string Hex(const Burst& b) {
  std::string s;
  for (int i = Org::kBurstBytes - 1; i >= 0; --i) s += fmt::format("{:02x}", b[i]);
  return s;
}

// Every expected read beat arrived at its cycle with its bytes, and nothing else arrived.
void CheckReads(const std::string& bench, uint64_t seed, const std::vector<ReadBeat>& got,
                const std::vector<Expected>& want) {
  std::map<std::pair<uint64_t, int>, const ReadBeat*> by_slot;
  for (const auto& g : got) by_slot[{g.cycle, g.pc}] = &g;
  for (const auto& w : want) {
    const auto it = by_slot.find({w.beat.cycle, w.beat.pc});
    if (it == by_slot.end()) {
      ADD_FAILURE() << fmt::format(
          "{} (seed {}): {}: no read data on PC {} at cycle {} (RL); beats seen at cycles: {}",
          bench, seed, w.what, w.beat.pc, w.beat.cycle, [&] {
            std::string s;
            for (const auto& g : got) s += fmt::format("{}/pc{} ", g.cycle, g.pc);
            return s.empty() ? std::string("none") : s;
          }());
      continue;
    }
    const Burst& a = it->second->data;
    for (int i = 0; i < Org::kBurstBytes; ++i) {
      if (a[i] == w.beat.data[i]) continue;
      ADD_FAILURE() << fmt::format(
          "{} (seed {}): {}: PC {} cycle {} byte {}: expected {:#04x} ({}), actual {:#04x} ({})\n"
          "  expected {}\n  actual   {}",
          bench, seed, w.what, w.beat.pc, w.beat.cycle, i, w.beat.data[i], w.beat.data[i], a[i],
          a[i], Hex(w.beat.data), Hex(a));
      break;
    }
    by_slot.erase(it);
  }
  for (const auto& [slot, g] : by_slot) {
    ADD_FAILURE() << fmt::format("{} (seed {}): unexpected read data on PC {} at cycle {}: {}",
                                 bench, seed, g->pc, g->cycle, Hex(g->data));
  }
}

std::string Dump(const HbmChannelSc& dut) {
  const std::string s = dut.ViolationReport();
  return s.empty() ? "  (no violations)\n" : s;
}

// ---------------------------------------------------------------------------------------------

class HbmScTest : public ::testing::Test {};

TEST_F(HbmScTest, LegalAndIllegalSequences) {
  ASSERT_EQ(sc_core::sc_get_status(), sc_core::SC_ELABORATION)
      << "SystemC allows one simulation per process and this one has already run: run each test "
         "of this binary in its own process (ctest does)";
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  const Timing tm = Timing::Preset2000();
  const Org org;  // 2 PCs, 16 banks, 2^16 rows, 32 columns: the RTL's defaults
  ASSERT_EQ(org.row_bits, kRowBits);
  ASSERT_EQ(org.columns, 1 << kColBits);

  // Legal: both pseudo-channels and every command code, with spacings comfortably legal for
  // Preset2000 (nRCDWR 12, nRCDRD 14, nCWL 5, nCL 14, nWTRL 8, nRAS 34, nRTP 5, nWR 16, nRP 14).
  const int b0 = rng.Range(0, 15), b1 = rng.Range(0, 15), b2 = OtherThan(rng, 0, 15, b1);
  const uint32_t r0 = rng.U16(), r1 = rng.U16(), r2 = rng.U16();
  const int c0 = rng.Range(0, 31), c0b = OtherThan(rng, 0, 31, c0);
  const int c1 = rng.Range(0, 31), c1p = OtherThan(rng, 0, 31, c1), c2 = rng.Range(0, 31);
  WriteBeat w0{RandomBurst(rng), 0xFFFF'FFFFu};
  WriteBeat w1{RandomBurst(rng), (rng.U32() & ~1u) | 2u};  // some bytes masked, some written
  WriteBeat w2{RandomBurst(rng), 0xFFFF'FFFFu};
  const Burst poked = RandomBurst(rng);

  Schedule legal;
  legal[1].row = Row(Cmd::kAct, 0, b0, r0);
  legal[4].row = Row(Cmd::kAct, 1, b1, r1);
  legal[8].row = Row(Cmd::kAct, 1, b2, r2);
  legal[20].col = Col(Cmd::kWr, 0, b0, c0);
  legal[20 + tm.cwl].wdata[0] = w0;
  legal[22].col = Col(Cmd::kWr, 1, b1, c1);
  legal[22 + tm.cwl].wdata[1] = w1;
  legal[30].col = Col(Cmd::kWra, 1, b2, c2);
  legal[30 + tm.cwl].wdata[1] = w2;
  const uint64_t rd0 = 40, rda0 = 44, rd1 = 48, rd1p = 52;
  legal[rd0].col = Col(Cmd::kRd, 0, b0, c0);
  legal[rda0].col = Col(Cmd::kRda, 0, b0, c0b);
  legal[rd1].col = Col(Cmd::kRd, 1, b1, c1);
  legal[rd1p].col = Col(Cmd::kRd, 1, b1, c1p);
  legal[70].row = Row(Cmd::kPre, 1, b1);
  legal[75].row = Row(Cmd::kPreA, 0, 0);
  legal[90].row = Row(Cmd::kRefAb, 0, 0);
  legal[100].row = Row(Cmd::kRefPb, 1, b2);

  Burst w1_merged = BackgroundOf(0, 1, b1, r1, c1);
  for (int i = 0; i < Org::kBurstBytes; ++i) {
    if ((w1.strb >> i) & 1u) w1_merged[i] = w1.data[i];
  }
  const std::vector<Expected> legal_reads = {
      {{rd0 + tm.cl, 0, w0.data}, "RD of the WR burst"},
      {{rda0 + tm.cl, 0, BackgroundOf(0, 0, b0, r0, c0b)}, "RDA of an unwritten burst"},
      {{rd1 + tm.cl, 1, w1_merged}, "RD of the masked WR burst"},
      {{rd1p + tm.cl, 1, poked}, "RD of the poked burst"},
  };

  // Illegal: RD one cycle before nRCDRD after its ACT (channel 1: a bench of its own).
  const int bi = rng.Range(0, 15), ci = rng.Range(0, 31);
  const uint32_t ri = rng.U16();
  const uint64_t act_i = 3, rd_i = act_i + tm.rcdrd - 1;
  Schedule illegal;
  illegal[act_i].row = Row(Cmd::kAct, 0, bi, ri);
  illegal[rd_i].col = Col(Cmd::kRd, 0, bi, ci);
  // The model still applies the command: the burst is returned at RL.
  const std::vector<Expected> illegal_reads = {
      {{rd_i + tm.cl, 0, BackgroundOf(1, 0, bi, ri, ci)}, "RD too early after ACT"}};

  const uint64_t end = 120;
  sc_core::sc_clock clock("clk", 1, sc_core::SC_NS);
  Bench bench_legal("legal", clock, org, tm, 0, legal, end);
  Bench bench_illegal("illegal", clock, org, tm, 1, illegal, end);
  bench_legal.dut.Poke(1, b1, r1, c1p, poked.data());

  // Watchdog: a fixed budget of clock periods; a driver short of its end says where it stopped.
  sc_core::sc_start(sc_core::sc_time(static_cast<double>(kResetEdges + end + 10), sc_core::SC_NS));
  for (const Bench* b : {&bench_legal, &bench_illegal}) {
    ASSERT_TRUE(b->driver.done()) << fmt::format("{}: the simulation stopped after {} of {} cycles",
                                                 b->name(), b->driver.cycles_ended(), end + 1);
    // The wrapper and the driver agree on cycle 0 (reset) and on the number of cycles.
    EXPECT_EQ(b->dut.cycle(), b->driver.cycles_ended()) << b->name();
  }

  // Legal: clean, every burst at RL with its bytes, the storage and the counters as issued.
  EXPECT_TRUE(bench_legal.dut.violations().empty())
      << "seed " << seed << ": violations of the legal sequence:\n"
      << Dump(bench_legal.dut);
  CheckReads("legal", seed, bench_legal.driver.reads(), legal_reads);
  struct Stored {
    int pc, bank;
    uint32_t row;
    int col;
    Burst want;
    const char* what;
  };
  for (const Stored& s :
       {Stored{0, b0, r0, c0, w0.data, "WR"}, Stored{1, b1, r1, c1, w1_merged, "masked WR"},
        Stored{1, b2, r2, c2, w2.data, "WRA"}}) {
    Burst got;
    bench_legal.dut.Peek(s.pc, s.bank, s.row, s.col, got.data());
    EXPECT_EQ(Hex(got), Hex(s.want))
        << fmt::format("seed {}: Peek after the {} (PC {} bank {} row {} col {})", seed, s.what,
                       s.pc, s.bank, s.row, s.col);
  }
  const hbm::Stats& s0 = bench_legal.dut.stats(0);
  const hbm::Stats& s1 = bench_legal.dut.stats(1);
  EXPECT_EQ(std::vector<uint64_t>({s0.act, s0.pre, s0.prea, s0.refab, s0.refpb, s0.rd, s0.wr}),
            std::vector<uint64_t>({1, 0, 1, 1, 0, 2, 1}))
      << "PC 0 stats: act pre prea refab refpb rd wr";
  EXPECT_EQ(std::vector<uint64_t>({s1.act, s1.pre, s1.prea, s1.refab, s1.refpb, s1.rd, s1.wr}),
            std::vector<uint64_t>({2, 1, 0, 0, 1, 2, 2}))
      << "PC 1 stats: act pre prea refab refpb rd wr";

  // Illegal: exactly one violation, nRCDRD, at the RD, with the numbers.
  const auto& v = bench_illegal.dut.violations();
  ASSERT_EQ(v.size(), 1u) << "seed " << seed << ":\n" << Dump(bench_illegal.dut);
  EXPECT_EQ(v[0].rule, "nRCDRD") << v[0].ToString();
  EXPECT_EQ(v[0].cycle, rd_i) << v[0].ToString();
  EXPECT_EQ(v[0].channel, 1) << v[0].ToString();
  EXPECT_EQ(v[0].cmd.cmd, Cmd::kRd) << v[0].ToString();
  EXPECT_EQ(v[0].cmd.bank, bi) << v[0].ToString();
  EXPECT_EQ(v[0].required, tm.rcdrd) << v[0].ToString();
  EXPECT_EQ(v[0].actual, tm.rcdrd - 1) << v[0].ToString();
  CheckReads("illegal", seed, bench_illegal.driver.reads(), illegal_reads);
}

}  // namespace
}  // namespace tpu
