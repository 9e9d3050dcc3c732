// SPDX-License-Identifier: Apache-2.0
// SystemC wrapper of the HBM2 channel device model: pins to model calls, once per rising edge
// (see tpu/tb/hbm_sc.h for the timing contract).
#include "tpu/tb/hbm_sc.h"

#include <fmt/format.h>

#include <exception>
#include <iterator>
#include <string>

namespace tpu::tb::hbm {

using tpu::hbm::Cmd;
using tpu::hbm::Command;

namespace {

// The codes of tpu_pkg (as in HbmMemory::Step).
constexpr Cmd kRowCmd[] = {Cmd::kAct, Cmd::kPre, Cmd::kPreA, Cmd::kRefAb, Cmd::kRefPb};
constexpr Cmd kColCmd[] = {Cmd::kRd, Cmd::kRda, Cmd::kWr, Cmd::kWra};

size_t PcPorts(const tpu::hbm::Org& org) {
  return org.pcs > 0 ? static_cast<size_t>(org.pcs) : 0;
}

}  // namespace

HbmChannelScBase::HbmChannelScBase(sc_core::sc_module_name name, const tpu::hbm::Org& org,
                                   const tpu::hbm::Timing& timing, int channel, int row_bits,
                                   int col_bits)
    : sc_core::sc_module(name),
      clk("clk"),
      rst_n("rst_n"),
      row_valid("row_valid"),
      row_cmd("row_cmd"),
      row_pc("row_pc"),
      row_bank("row_bank"),
      col_valid("col_valid"),
      col_cmd("col_cmd"),
      col_pc("col_pc"),
      col_bank("col_bank"),
      wdata_valid("wdata_valid", PcPorts(org)),
      wdata("wdata", PcPorts(org)),
      wstrb("wstrb", PcPorts(org)),
      rdata_valid("rdata_valid", PcPorts(org)),
      rdata("rdata", PcPorts(org)),
      channel_(org, timing, channel) {
  auto bad = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("HbmChannelSc {}: {}", this->name(), what));
  };
  if (org.pcs < 1 || org.pcs > 2) bad(fmt::format("{} pseudo-channels (row_pc is 1 bit)", org.pcs));
  if (org.banks() > 16) bad(fmt::format("{} banks per PC (row_bank is 4 bits)", org.banks()));
  if (org.row_bits != row_bits) {
    bad(fmt::format("Org.row_bits {} but row_row has {} bits", org.row_bits, row_bits));
  }
  if (org.columns != (1 << col_bits)) {
    bad(fmt::format("Org.columns {} but col_col has {} bits", org.columns, col_bits));
  }
  if (timing.cl < 1)
    bad(fmt::format("nCL {} < 1 (read data is looked up a cycle ahead)", timing.cl));
  for (auto& p : rdata_valid) p.initialize(false);

  SC_METHOD(OnRisingEdge);
  sensitive << clk.pos();
  dont_initialize();
}

std::string HbmChannelScBase::ViolationReport(size_t max_lines) const {
  std::string s;
  const auto& v = channel_.violations();
  for (size_t i = 0; i < v.size() && i < max_lines; ++i) s += v[i].ToString() + "\n";
  if (v.size() > max_lines) s += fmt::format("... {} violations in all\n", v.size());
  return s;
}

void HbmChannelScBase::ToBytes(const sc_dt::sc_biguint<256>& v, uint8_t* out32) {
  for (int w = 0; w < 8; ++w) {
    const uint32_t word = static_cast<uint32_t>(v.range(32 * w + 31, 32 * w).to_uint());
    for (int k = 0; k < 4; ++k) out32[w * 4 + k] = static_cast<uint8_t>(word >> (8 * k));
  }
}

sc_dt::sc_biguint<256> HbmChannelScBase::FromBytes(const uint8_t* in32) {
  sc_dt::sc_biguint<256> v = 0;
  for (int w = 0; w < 8; ++w) {
    uint32_t word = 0;
    for (int k = 0; k < 4; ++k) word |= static_cast<uint32_t>(in32[w * 4 + k]) << (8 * k);
    v.range(32 * w + 31, 32 * w) = word;
  }
  return v;
}

// At the rising edge that ends cycle cycle_ (inputs hold that cycle's values).
void HbmChannelScBase::OnRisingEdge() {
  if (!counting_) {
    if (!rst_n.read()) return;  // still in reset: cycle 0 has not started
    counting_ = true;
  }
  const uint64_t t = cycle_;
  try {
    DoCycle(t);
  } catch (const std::exception& e) {
    SC_REPORT_ERROR(kMsgType, fmt::format("{}: cycle {}: {}", name(), t, e.what()).c_str());
  }
}

void HbmChannelScBase::DoCycle(uint64_t t) {
  if (row_valid.read()) {
    const unsigned code = row_cmd.read().to_uint();
    if (code >= std::size(kRowCmd)) {
      throw std::invalid_argument(fmt::format("bad row command code {}", code));
    }
    Command c;
    c.cmd = kRowCmd[code];
    c.pc = row_pc.read() ? 1 : 0;
    c.bank = static_cast<int>(row_bank.read().to_uint());
    c.row = SampleRow();
    channel_.Issue(t, c);
  }
  if (col_valid.read()) {
    Command c;
    c.cmd = kColCmd[col_cmd.read().to_uint()];
    c.pc = col_pc.read() ? 1 : 0;
    c.bank = static_cast<int>(col_bank.read().to_uint());
    c.col = SampleCol();
    channel_.Issue(t, c);
  }
  const int pcs = static_cast<int>(wdata_valid.size());
  uint8_t buf[tpu::hbm::Org::kBurstBytes];
  for (int pc = 0; pc < pcs; ++pc) {
    if (!wdata_valid[pc].read()) continue;
    ToBytes(wdata[pc].read(), buf);
    channel_.WriteData(t, pc, buf, static_cast<uint32_t>(wstrb[pc].read().to_uint()));
  }
  channel_.EndCycle(t);
  cycle_ = t + 1;
  // Read data of the next cycle (its RD was issued at t + 1 - nCL <= t).
  for (int pc = 0; pc < pcs; ++pc) {
    const bool v = channel_.ReadData(t + 1, pc, buf);
    rdata_valid[pc].write(v);
    if (v) rdata[pc].write(FromBytes(buf));
  }
}

}  // namespace tpu::tb::hbm
