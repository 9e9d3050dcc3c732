// SPDX-License-Identifier: Apache-2.0
// SystemC wrapper of the HBM2 channel device model (tpu::hbm::Channel): the memory side of one
// channel of tpu_hbm_channel as SystemC ports, for a SystemC top (`verilator --sc`) in place of
// the per-cycle C++ harness (hbm_harness.h, class HbmMemory, whose pin-to-model mapping it uses).
//
// Ports, from the memory's side (the RTL's *_o outputs are this module's inputs):
//   clk, rst_n                  the RTL's clock and active-low reset (see "Cycle 0" below)
//   row_valid, row_cmd[2:0], row_pc, row_bank[3:0], row_row[RowBits-1:0]
//                               row command bus: ACT=0 PRE=1 PREA=2 REFab=3 REFpb=4
//   col_valid, col_cmd[1:0], col_pc, col_bank[3:0], col_col[ColBits-1:0]
//                               column command bus: RD=0 RDA=1 WR=2 WRA=3
//   wdata_valid[pc], wdata[pc] (256 bits), wstrb[pc] (32 bits)   write data, per pseudo-channel
//   rdata_valid[pc], rdata[pc] (256 bits)                          read data (outputs)
// Byte i of a burst is bits [8i+7:8i] of wdata/rdata and bit i of wstrb (1 = write the byte).
// The per-PC ports are sc_vectors (element names wdata_0, wdata_1, ...); tpu_hbm_channel flattens
// them (PC p in bits [p*256 +: 256]), so a top binding it splits those vectors per PC. Types are
// those of `verilator --sc --pins-sc-uint --pins-sc-biguint`: bool for 1 bit, sc_uint<N> up to 64
// bits, sc_biguint<N> above. Caution (measured with Verilator 5.006 and SystemC 2.3.4): with
// --pins-sc-biguint every sc_biguint *output* of a Verilated model reads as 0 (Verilator fills
// the digits without the sign), so the accelerator's SystemC top (accel_sc.h) is built with
// --pins-sc-uint only (ports above 64 bits are then sc_bv<N>) and converts between the two.
//
// Timing contract (the same cycle numbering as HbmMemory; the device model's cycle t is the
// clock period between the rising edge that starts it and the rising edge that ends it):
//   - The RTL drives the command buses and write data of cycle t from its registers, i.e. they
//     change in the delta cycles after the rising edge that starts cycle t.
//   - At the rising edge that ends cycle t this module reads every input (SystemC gives it the
//     values from before the edge: cycle t's), and calls the model for cycle t in the order its
//     header prescribes: Issue (row command, then column command), WriteData per PC, EndCycle.
//   - In the same evaluation it calls ReadData(t + 1) and writes rdata_valid/rdata: they change one
//     delta after that edge (the one that starts cycle t + 1) and hold for the whole cycle, so the
//     RTL samples cycle t + 1's read data at the rising edge that ends cycle t + 1, as it samples
//     the per-cycle harness's. The look-ahead is exact because read data due at t + 1 comes from
//     an RD issued at t + 1 - nCL <= t (nCL >= 1 is required). One difference from HbmMemory, which
//     collects a cycle's read data after its write data: if write data lands in the very cycle in
//     which read data of the same burst is due, this module returns the data from before the
//     write. That takes a WR nCL - nCWL cycles after an RD of the same PC, closer than nRTW
//     (nCL + nBL + 2 - nCWL): a violation the model reports anyway.
//   - rdata holds its last value while rdata_valid is low (the RTL ignores it then).
//   - Both this module and the RTL must be clocked by the same signal (no delta skew).
// Cycle 0: rising edges at which rst_n is (was, before the edge) low are not counted until the
// first one at which it is high; that edge ends cycle 0, as in SimCtrl::Reset + HbmHarness. Once
// counting started, rst_n is ignored: the memory is not reset with its controller and the refresh
// debt keeps counting.
//
// Errors: a malformed command (row_cmd > 4, a bank, row or column out of the Org's range) is
// reported with SC_REPORT_ERROR (message type "tpu/hbm/HbmChannelSc", naming the module and the
// cycle), which throws out of sc_start. JEDEC rule violations never stop the simulation: they are
// recorded by the model (violations()).
//
// Not in one translation unit with verilated.h of the VM_SC=0 runtime (verilated_rt, sim_ctrl.h):
// after <systemc>, verilated.h assumes a SystemC build. A `verilator --sc` top (VM_SC=1) is fine.
//
// SystemC 2.3 allows one elaboration and simulation per process, so a test using this module runs
// in a process of its own (ctest runs every GoogleTest test in its own process).
//
// Functional coverage (tpu/tb/fcov.h): every command in the bank state it finds (hbm.cmd), through
// the model's command observer (the AXI side is not visible here: no hbm.refresh).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "tpu/hbm/hbm_device.h"
#include "tpu/tb/fcov.h"

namespace tpu::tb::hbm {

// The width-independent part of the wrapper: every port but row_row and col_col, the model, and
// the clocked process. Use BasicHbmChannelSc / HbmChannelSc.
class HbmChannelScBase : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<bool> rst_n;
  // Row command bus.
  sc_core::sc_in<bool> row_valid;
  sc_core::sc_in<sc_dt::sc_uint<3>> row_cmd;
  sc_core::sc_in<bool> row_pc;
  sc_core::sc_in<sc_dt::sc_uint<4>> row_bank;
  // Column command bus.
  sc_core::sc_in<bool> col_valid;
  sc_core::sc_in<sc_dt::sc_uint<2>> col_cmd;
  sc_core::sc_in<bool> col_pc;
  sc_core::sc_in<sc_dt::sc_uint<4>> col_bank;
  // Data, one element per pseudo-channel.
  sc_core::sc_vector<sc_core::sc_in<bool>> wdata_valid;
  sc_core::sc_vector<sc_core::sc_in<sc_dt::sc_biguint<256>>> wdata;
  sc_core::sc_vector<sc_core::sc_in<sc_dt::sc_uint<32>>> wstrb;
  sc_core::sc_vector<sc_core::sc_out<bool>> rdata_valid;
  sc_core::sc_vector<sc_core::sc_out<sc_dt::sc_biguint<256>>> rdata;

  SC_HAS_PROCESS(HbmChannelScBase);

  // The model: its checker, statistics and storage.
  tpu::hbm::Channel& device() { return channel_; }
  const tpu::hbm::Channel& device() const { return channel_; }
  const std::vector<tpu::hbm::Violation>& violations() const { return channel_.violations(); }
  const tpu::hbm::Stats& stats(int pc) const { return channel_.stats(pc); }
  // Backdoor access to one 32-byte burst (no timing), e.g. to preload memory before sc_start.
  void Peek(int pc, int bank, uint32_t row, int col, uint8_t* out32) const {
    channel_.Peek(pc, bank, row, col, out32);
  }
  void Poke(int pc, int bank, uint32_t row, int col, const uint8_t* data32) {
    channel_.Poke(pc, bank, row, col, data32);
  }
  // Cycles handed to the model so far (the number of the cycle now being driven by the RTL).
  uint64_t cycle() const { return cycle_; }
  // Every violation, one per line ("" when none), at most `max_lines` of them.
  std::string ViolationReport(size_t max_lines = 20) const;

  // A burst as bytes (byte i = bits [8i+7:8i]) and back.
  static void ToBytes(const sc_dt::sc_biguint<256>& v, uint8_t* out32);
  static sc_dt::sc_biguint<256> FromBytes(const uint8_t* in32);

  static constexpr const char* kMsgType = "tpu/hbm/HbmChannelSc";

 protected:
  // Throws std::invalid_argument if the Org does not fit the port widths, or nCL < 1.
  HbmChannelScBase(sc_core::sc_module_name name, const tpu::hbm::Org& org,
                   const tpu::hbm::Timing& timing, int channel, int row_bits, int col_bits);
  virtual uint32_t SampleRow() const = 0;  // row_row
  virtual int SampleCol() const = 0;       // col_col

 private:
  void OnRisingEdge();
  void DoCycle(uint64_t t);

  tpu::hbm::Channel channel_;
  bool counting_ = false;  // rst_n was seen high: cycles are being counted
  uint64_t cycle_ = 0;
};

// The wrapper for a channel built with RowBits / ColBits (tpu_hbm_channel's parameters); the
// Org's row_bits and columns must match them. Constructor: name, Org, Timing, channel index (which
// only labels violations and seeds the background contents, as in tpu::hbm::Channel).
template <int RowBits, int ColBits>
class BasicHbmChannelSc : public HbmChannelScBase {
  static_assert(RowBits >= 1 && RowBits <= 32, "row_row must fit a uint32_t");
  static_assert(ColBits >= 1 && ColBits <= 16, "col_col width out of range");

 public:
  sc_core::sc_in<sc_dt::sc_uint<RowBits>> row_row;
  sc_core::sc_in<sc_dt::sc_uint<ColBits>> col_col;

  BasicHbmChannelSc(sc_core::sc_module_name name, const tpu::hbm::Org& org,
                    const tpu::hbm::Timing& timing, int channel = 0)
      : HbmChannelScBase(name, org, timing, channel, RowBits, ColBits),
        row_row("row_row"),
        col_col("col_col") {
    device().SetCommandObserver([](const tpu::hbm::Channel& dev, uint64_t,
                                   const tpu::hbm::Command& c) { fcov::HbmCommand(dev, c, -1); });
  }

 protected:
  uint32_t SampleRow() const override { return static_cast<uint32_t>(row_row.read().to_uint64()); }
  int SampleCol() const override { return static_cast<int>(col_col.read().to_uint()); }
};

// The RTL's default widths (RowBits = 16, ColBits = 5) and the model's default Org.
using HbmChannelSc = BasicHbmChannelSc<16, 5>;

}  // namespace tpu::tb::hbm
