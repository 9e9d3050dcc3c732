// SPDX-License-Identifier: Apache-2.0
// HBM2 channel device model and JEDEC timing checker (see tpu/hbm/hbm_device.h and
// docs/hbm.md). Every rule keeps the time of the last event it is measured from;
// a command is checked against those times, recorded as a violation where it is too early or
// illegal in the bank's state, and then applied.
#include "tpu/hbm/hbm_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace tpu::hbm {

namespace {

constexpr int64_t kDebtBound = 8;    // refresh debt stays within [-8, +8]
constexpr int64_t kLateWindow = 32;  // a missed write burst can still take late data this long

uint64_t Mix(uint64_t z) {  // splitmix64's finaliser
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The event a spacing rule is measured from, for messages.
const char* Reference(const std::string& rule, int64_t required) {
  static const std::pair<const char*, const char*> kRefs[] = {
      {"nRCDRD", "ACT"},
      {"nRCDWR", "ACT"},
      {"nRAS", "ACT"},
      {"nRC", "ACT"},
      {"nRRDS", "ACT"},
      {"nRRDL", "ACT"},
      {"nFAW", "the ACT four ACTs earlier"},
      {"nRP", "the precharge"},
      {"nRP (auto-precharge)", "the auto-precharge"},
      {"nCCDS", "the last column command"},
      {"nCCDL", "the last column command"},
      {"nWR", "the end of write data"},
      {"nWTRS", "the end of write data"},
      {"nWTRL", "the end of write data"},
      {"nRTP", "RD"},
      {"nRTW", "RD"},
      {"nRFC", "REFab"},
      {"nRFCsb", "REFpb"},
      {"nRREFD", "REFpb"},
      {"column bus busy", "a column command"},
  };
  if (rule == "row bus busy") return required >= 2 ? "ACT" : "a row command";
  for (const auto& [name, ref] : kRefs) {
    if (rule == name) return ref;
  }
  return "the last event";
}

void Positive(const char* what, const char* field, int64_t v) {
  if (v <= 0) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel: {}.{} = {} must be positive", what, field, v));
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Presets

// The table's rows (rtl/hbm/hbm_presets.json; the test preset's values and why they are what
// they are are in docs/hbm.md).
Timing Timing::Preset(int index) {
  if (index < 0 || index >= kNumPresets) {
    throw std::invalid_argument(fmt::format("HBM preset {} does not exist (there are {}: 0 to {})",
                                            index, kNumPresets, kNumPresets - 1));
  }
  Timing t;
  for (int f = 0; f < kNumTimingFields; ++f) t.*kTimingFields[f] = kPresets[index].values[f];
  return t;
}

Timing Timing::ByName(const std::string& name) {
  std::string names;
  for (int i = 0; i < kNumPresets; ++i) {
    if (name == kPresets[i].name) return Preset(i);
    names += fmt::format("{}{}", i ? ", " : "", kPresets[i].name);
  }
  throw std::invalid_argument(
      fmt::format("hbm::Timing::ByName: unknown preset '{}' (want one of {})", name, names));
}

const char* CmdName(Cmd c) {
  switch (c) {
    case Cmd::kAct: return "ACT";
    case Cmd::kPre: return "PRE";
    case Cmd::kPreA: return "PREA";
    case Cmd::kRefAb: return "REFab";
    case Cmd::kRefPb: return "REFpb";
    case Cmd::kRd: return "RD";
    case Cmd::kRda: return "RDA";
    case Cmd::kWr: return "WR";
    case Cmd::kWra: return "WRA";
  }
  return "?";
}

std::string Violation::ToString() const {
  std::string where = fmt::format("cycle {} ch{} pc{}", cycle, channel, cmd.pc);
  if (cmd.bank >= 0) where += fmt::format(" bank {}", cmd.bank);
  std::string what = CmdName(cmd.cmd);
  if (cmd.cmd == Cmd::kAct) what += fmt::format(" row 0x{:x}", cmd.row);
  if (IsColumn(cmd.cmd) && cmd.bank >= 0) what += fmt::format(" col {}", cmd.col);

  if (rule.rfind("state", 0) == 0) return fmt::format("{}: {} breaks {}", where, what, rule);
  if (rule == "refresh debt") {
    return fmt::format("{}{}: refresh debt {} outside [-{}, +{}] (bound {:+} broken)", where,
                       cmd.cmd == Cmd::kRefAb ? " (all banks)" : "", actual, kDebtBound, kDebtBound,
                       required);
  }
  if (rule == "write data timing") {
    if (cmd.bank < 0) {
      return fmt::format("{}: write data breaks write data timing: no WR pending", where);
    }
    if (actual < 0) {
      return fmt::format("{}: {} breaks write data timing: needs data at {} + {}, got none", where,
                         what, CmdName(cmd.cmd), required);
    }
    return fmt::format("{}: {} breaks write data timing: needs data at {} + {}, got it at {} + {}",
                       where, what, CmdName(cmd.cmd), required, CmdName(cmd.cmd), actual);
  }
  return fmt::format("{}: {} breaks {}: needs {} cycle{} after {}, got {}", where, what, rule,
                     required, required == 1 ? "" : "s", Reference(rule, required), actual);
}

// ---------------------------------------------------------------------------------------------
// Construction and helpers

Channel::Channel(const Org& org, const Timing& t, int channel)
    : org_(org), t_(t), channel_(channel) {
  Positive("Org", "pcs", org.pcs);
  Positive("Org", "bank_groups", org.bank_groups);
  Positive("Org", "banks_per_group", org.banks_per_group);
  Positive("Org", "row_bits", org.row_bits);
  Positive("Org", "columns", org.columns);
  if (org.row_bits > 32) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel: Org.row_bits = {} must be at most 32", org.row_bits));
  }
  const uint64_t locations =
      uint64_t(org.pcs) * uint64_t(org.bank_groups) * uint64_t(org.banks_per_group) * org.columns;
  if (locations > (uint64_t(1) << 31)) {
    throw std::invalid_argument(fmt::format(
        "hbm::Channel: Org pcs × banks × columns = {} is too large (at most 2^31)", locations));
  }
  for (int f = 0; f < kNumTimingFields; ++f) {
    Positive("Timing", kTimingFieldNames[f], t.*kTimingFields[f]);
  }

  stats_.resize(org.pcs);
  pcs_.resize(org.pcs);
  for (auto& p : pcs_) {
    p.banks.resize(org.banks());
    p.col_bg.assign(org.bank_groups, kNever);
    p.wr_end_bg.assign(org.bank_groups, kNever);
  }
  next_epoch_cycle_ = t.refi;
}

void Channel::Flag(int64_t cycle, const Command& c, std::string rule, int64_t required,
                   int64_t actual) {
  Violation v;
  v.cycle = uint64_t(cycle);
  v.channel = channel_;
  v.cmd = c;
  v.rule = std::move(rule);
  v.required = required;
  v.actual = actual;
  violations_.push_back(std::move(v));
}

void Channel::Need(int64_t cycle, const Command& c, int64_t last, int64_t spacing,
                   const char* rule) {
  if (cycle - last < spacing) Flag(cycle, c, rule, spacing, cycle - last);
}

void Channel::CheckLocation(const char* where, int pc, int bank, uint32_t row, int col) const {
  if (pc < 0 || pc >= org_.pcs) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::{}: pc {} out of range [0, {})", where, pc, org_.pcs));
  }
  if (bank < 0 || bank >= org_.banks()) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::{}: bank {} out of range [0, {})", where, bank, org_.banks()));
  }
  if (org_.row_bits < 32 && row >= (uint32_t(1) << org_.row_bits)) {
    throw std::invalid_argument(fmt::format("hbm::Channel::{}: row {} out of range [0, {})", where,
                                            row, uint64_t(1) << org_.row_bits));
  }
  if (col < 0 || col >= org_.columns) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::{}: col {} out of range [0, {})", where, col, org_.columns));
  }
}

uint64_t Channel::Key(int pc, int bank, uint32_t row, int col) const {
  return ((uint64_t(pc * org_.banks() + bank) * org_.columns + uint64_t(col)) << 32) | row;
}

void Channel::Background(int channel, int pc, int bank, uint32_t row, int col, uint8_t* out32) {
  uint64_t h = Mix(uint64_t(uint32_t(channel)) << 32 | uint32_t(pc));
  h = Mix(h ^ (uint64_t(uint32_t(bank)) << 32 | row));
  h = Mix(h ^ uint64_t(uint32_t(col)));
  for (int w = 0; w < Org::kBurstBytes / 8; ++w) {
    const uint64_t word = Mix(h + uint64_t(w) * 0xD1B54A32D192ED03ull);
    std::memcpy(out32 + 8 * w, &word, 8);
  }
}

void Channel::Load(int pc, int bank, uint32_t row, int col, uint8_t* out32) const {
  const auto it = data_.find(Key(pc, bank, row, col));
  if (it != data_.end()) {
    std::memcpy(out32, it->second.data(), Org::kBurstBytes);
  } else {
    Background(channel_, pc, bank, row, col, out32);
  }
}

void Channel::Peek(int pc, int bank, uint32_t row, int col, uint8_t* out32) const {
  CheckLocation("Peek", pc, bank, row, col);
  Load(pc, bank, row, col, out32);
}

void Channel::Poke(int pc, int bank, uint32_t row, int col, const uint8_t* data32) {
  CheckLocation("Poke", pc, bank, row, col);
  auto& d = data_[Key(pc, bank, row, col)];
  std::memcpy(d.data(), data32, Org::kBurstBytes);
}

int64_t Channel::RefreshDebt(uint64_t cycle, int pc, int bank) const {
  CheckLocation("RefreshDebt", pc, bank, 0, 0);
  const auto& p = pcs_[pc];
  return int64_t(cycle / uint64_t(t_.refi)) - (p.refab_count + p.banks[bank].refpb_count);
}

bool Channel::BankOpen(int pc, int bank) const {
  CheckLocation("BankOpen", pc, bank, 0, 0);
  return pcs_[pc].banks[bank].open;
}

int Channel::OpenBanks(int pc) const {
  CheckLocation("OpenBanks", pc, 0, 0, 0);
  int n = 0;
  for (const auto& b : pcs_[pc].banks) n += b.open ? 1 : 0;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Commands

void Channel::Issue(uint64_t ucycle, const Command& in) {
  const auto cmd_index = static_cast<unsigned>(in.cmd);
  if (cmd_index > static_cast<unsigned>(Cmd::kWra)) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::Issue: command code {} is not a command", cmd_index));
  }
  const char* name = CmdName(in.cmd);
  const int64_t cycle = int64_t(ucycle);
  if (ucycle > (uint64_t(1) << 62)) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::Issue: {} at cycle {}: cycle out of range", name, ucycle));
  }
  if (cycle < last_cycle_) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::Issue: {} at cycle {} is earlier than cycle {} already seen",
                    name, ucycle, last_cycle_));
  }
  if (in.pc < 0 || in.pc >= org_.pcs) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::Issue: {} at cycle {}: pc {} out of range [0, {})", name, ucycle,
                    in.pc, org_.pcs));
  }
  Command c = in;
  if (c.cmd == Cmd::kPreA || c.cmd == Cmd::kRefAb) {
    c.bank = -1;  // ignored: the whole PC
  } else if (c.bank < 0 || c.bank >= org_.banks()) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::Issue: {} at cycle {}: bank {} out of range [0, {})", name,
                    ucycle, c.bank, org_.banks()));
  }
  if (c.cmd == Cmd::kAct && org_.row_bits < 32 && c.row >= (uint32_t(1) << org_.row_bits)) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::Issue: ACT at cycle {}: row {} out of range [0, {})", ucycle,
                    c.row, uint64_t(1) << org_.row_bits));
  }
  if (IsColumn(c.cmd) && (c.col < 0 || c.col >= org_.columns)) {
    throw std::invalid_argument(
        fmt::format("hbm::Channel::Issue: {} at cycle {}: col {} out of range [0, {})", name,
                    ucycle, c.col, org_.columns));
  }
  last_cycle_ = cycle;
  if (observer_) observer_(*this, ucycle, c);

  CheckBuses(cycle, c);
  auto& p = pcs_[c.pc];
  auto& s = stats_[c.pc];
  switch (c.cmd) {
    case Cmd::kAct:
      ++s.act;
      DoAct(cycle, c);
      break;
    case Cmd::kPre: {
      ++s.pre;
      auto& b = p.banks[c.bank];
      if (b.open) {  // PRE to a precharged bank is a legal no-op
        ClosingChecks(cycle, c, c.bank);
        b.open = false;
        b.pre = cycle;
      }
      break;
    }
    case Cmd::kPreA:
      ++s.prea;
      for (int k = 0; k < org_.banks(); ++k) {
        auto& b = p.banks[k];
        if (!b.open) continue;
        ClosingChecks(cycle, c, k);
        b.open = false;
        b.pre = cycle;
      }
      break;
    case Cmd::kRefAb:
      ++s.refab;
      DoRefAb(cycle, c);
      break;
    case Cmd::kRefPb:
      ++s.refpb;
      DoRefPb(cycle, c);
      break;
    case Cmd::kRd:
    case Cmd::kRda:
      ++s.rd;
      DoColumn(cycle, c);
      break;
    case Cmd::kWr:
    case Cmd::kWra:
      ++s.wr;
      DoColumn(cycle, c);
      break;
  }
}

void Channel::CheckBuses(int64_t cycle, const Command& c) {
  if (IsRow(c.cmd)) {
    if (row_bus_ == cycle) {
      Flag(cycle, c, "row bus busy", 1, 0);
    } else if (act_bus_ == cycle - 1) {
      Flag(cycle, c, "row bus busy", 2, 1);
    }
    row_bus_ = cycle;
    if (c.cmd == Cmd::kAct) act_bus_ = cycle;
  } else {
    if (col_bus_ == cycle) Flag(cycle, c, "column bus busy", 1, 0);
    col_bus_ = cycle;
  }
}

void Channel::DoAct(int64_t cycle, const Command& c) {
  auto& p = pcs_[c.pc];
  auto& b = p.banks[c.bank];
  const int bg = c.bank / org_.banks_per_group;
  if (b.open) Flag(cycle, c, "state: ACT to an open bank", 0, 0);
  Need(cycle, c, b.act, t_.rc, "nRC");
  Need(cycle, c, b.pre, t_.rp, "nRP");
  Need(cycle, c, b.ap_close, t_.rp, "nRP (auto-precharge)");
  int64_t same_bg = kNever, other_bg = kNever, other_refpb = kNever;
  for (int k = 0; k < org_.banks(); ++k) {
    if (k == c.bank) continue;
    const auto& o = p.banks[k];
    if (k / org_.banks_per_group == bg) {
      same_bg = std::max(same_bg, o.act);
    } else {
      other_bg = std::max(other_bg, o.act);
    }
    other_refpb = std::max(other_refpb, o.refpb);
  }
  Need(cycle, c, same_bg, t_.rrdl, "nRRDL");
  Need(cycle, c, other_bg, t_.rrds, "nRRDS");
  Need(cycle, c, p.faw[p.faw_head], t_.faw, "nFAW");
  Need(cycle, c, p.refab, t_.rfc, "nRFC");
  Need(cycle, c, b.refpb, t_.rfcsb, "nRFCsb");
  Need(cycle, c, other_refpb, t_.rrefd, "nRREFD");

  b.open = true;
  b.auto_pre = false;
  b.row = c.row;
  b.act = cycle;
  p.faw[p.faw_head] = cycle;
  p.faw_head = (p.faw_head + 1) % 4;
}

// A precharge (PRE, or PREA for each open bank) honours nRAS, nRTP and nWR of the bank.
void Channel::ClosingChecks(int64_t cycle, const Command& c, int bank) {
  Command cb = c;
  cb.bank = bank;
  const auto& b = pcs_[c.pc].banks[bank];
  Need(cycle, cb, b.act, t_.ras, "nRAS");
  Need(cycle, cb, b.rd, t_.rtp, "nRTP");
  Need(cycle, cb, b.wr_end, t_.wr, "nWR");
}

void Channel::DoRefAb(int64_t cycle, const Command& c) {
  auto& p = pcs_[c.pc];
  int open = -1, pre_bank = 0, ap_bank = 0, refpb_bank = 0;
  int64_t pre = kNever, ap = kNever, refpb = kNever;
  for (int k = 0; k < org_.banks(); ++k) {
    const auto& b = p.banks[k];
    if (b.open && open < 0) open = k;
    if (b.pre > pre) pre = b.pre, pre_bank = k;
    if (b.ap_close > ap) ap = b.ap_close, ap_bank = k;
    if (b.refpb > refpb) refpb = b.refpb, refpb_bank = k;
  }
  Command cb = c;
  if (open >= 0) {
    cb.bank = open;
    Flag(cycle, cb, "state: REFab with a bank open", 0, 0);
  }
  cb.bank = pre_bank;
  Need(cycle, cb, pre, t_.rp, "nRP");
  cb.bank = ap_bank;
  Need(cycle, cb, ap, t_.rp, "nRP (auto-precharge)");
  cb.bank = refpb_bank;
  Need(cycle, cb, refpb, t_.rfcsb, "nRFCsb");  // the bank is still refreshing
  Need(cycle, c, p.refab, t_.rfc, "nRFC");

  p.refab = cycle;
  ++p.refab_count;
  p.debt_dirty = true;
  for (auto& b : p.banks) b.auto_pre = false;
}

void Channel::DoRefPb(int64_t cycle, const Command& c) {
  auto& p = pcs_[c.pc];
  auto& b = p.banks[c.bank];
  if (b.open) Flag(cycle, c, "state: REFpb to an open bank", 0, 0);
  Need(cycle, c, b.pre, t_.rp, "nRP");
  Need(cycle, c, b.ap_close, t_.rp, "nRP (auto-precharge)");
  Need(cycle, c, b.act, t_.rc, "nRC");
  int64_t other_act = kNever, other_refpb = kNever;
  for (int k = 0; k < org_.banks(); ++k) {
    if (k == c.bank) continue;
    other_act = std::max(other_act, p.banks[k].act);
    other_refpb = std::max(other_refpb, p.banks[k].refpb);
  }
  Need(cycle, c, other_act, t_.rrds, "nRRDS");
  Need(cycle, c, p.refab, t_.rfc, "nRFC");
  Need(cycle, c, b.refpb, t_.rfcsb, "nRFCsb");
  Need(cycle, c, other_refpb, t_.rrefd, "nRREFD");

  b.refpb = cycle;
  ++b.refpb_count;
  b.auto_pre = false;
  p.debt_dirty = true;
}

void Channel::DoColumn(int64_t cycle, const Command& c) {
  auto& p = pcs_[c.pc];
  auto& b = p.banks[c.bank];
  const int bg = c.bank / org_.banks_per_group;
  const bool read = c.cmd == Cmd::kRd || c.cmd == Cmd::kRda;
  const bool auto_pre = c.cmd == Cmd::kRda || c.cmd == Cmd::kWra;
  if (!b.open) {
    Flag(cycle, c,
         b.auto_pre ? std::string("state: column command after auto-precharge")
                    : fmt::format("state: {} to a closed bank", CmdName(c.cmd)),
         0, 0);
  } else {
    Need(cycle, c, b.act, read ? t_.rcdrd : t_.rcdwr, read ? "nRCDRD" : "nRCDWR");
  }
  int64_t other_col = kNever, other_wr_end = kNever;
  for (int g = 0; g < org_.bank_groups; ++g) {
    if (g == bg) continue;
    other_col = std::max(other_col, p.col_bg[g]);
    other_wr_end = std::max(other_wr_end, p.wr_end_bg[g]);
  }
  Need(cycle, c, p.col_bg[bg], t_.ccdl, "nCCDL");
  Need(cycle, c, other_col, t_.ccds, "nCCDS");
  if (read) {
    Need(cycle, c, p.wr_end_bg[bg], t_.wtrl, "nWTRL");
    Need(cycle, c, other_wr_end, t_.wtrs, "nWTRS");
  } else {
    Need(cycle, c, p.rd, t_.rtw(), "nRTW");
  }

  // Apply. A burst is scheduled even after a state violation (at the bank's last row), so one
  // mistake does not cascade into data-timing reports.
  p.col_bg[bg] = cycle;
  Burst burst;
  burst.cmd = c;
  burst.row = b.row;
  burst.issued = cycle;
  int64_t close = 0;
  if (read) {
    b.rd = cycle;
    p.rd = cycle;
    burst.due = cycle + t_.cl;
    p.reads.push_back(burst);
    close = cycle + t_.rtp;
  } else {
    const int64_t end = cycle + t_.cwl + t_.bl;
    b.wr_end = end;
    p.wr_end_bg[bg] = end;
    burst.due = cycle + t_.cwl;
    p.writes.push_back(burst);
    close = end + t_.wr;
  }
  if (auto_pre && b.open) {
    b.ap_close = std::max(b.act + t_.ras, close);
    b.open = false;
    b.auto_pre = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Data

void Channel::WriteData(uint64_t ucycle, int pc, const uint8_t* data32, uint32_t strb) {
  CheckLocation("WriteData", pc, 0, 0, 0);
  const int64_t cycle = int64_t(ucycle);
  auto& q = pcs_[pc].writes;
  auto store = [&](const Burst& w) {
    auto [it, fresh] = data_.try_emplace(Key(pc, w.cmd.bank, w.row, w.cmd.col));
    if (fresh) Background(channel_, pc, w.cmd.bank, w.row, w.cmd.col, it->second.data());
    for (int i = 0; i < Org::kBurstBytes; ++i) {
      if ((strb >> i) & 1u) it->second[i] = data32[i];
    }
  };
  // On time: the burst due now. Older bursts were reported missing by EndCycle (or are reported
  // now if EndCycle was skipped) and are dropped.
  for (size_t i = 0; i < q.size(); ++i) {
    if (q[i].missed || q[i].due != cycle) continue;
    for (size_t j = 0; j < i; ++j) {
      if (!q[j].missed) Flag(q[j].due, q[j].cmd, "write data timing", t_.cwl, -1);
    }
    store(q[i]);
    q.erase(q.begin(), q.begin() + i + 1);
    return;
  }
  if (!q.empty() && q.front().missed) {  // late: complete the report made at the due cycle
    violations_[q.front().violation].actual = cycle - q.front().issued;
    store(q.front());
    q.pop_front();
    return;
  }
  if (!q.empty()) {  // early
    Flag(cycle, q.front().cmd, "write data timing", t_.cwl, cycle - q.front().issued);
    store(q.front());
    q.pop_front();
    return;
  }
  Command none;
  none.cmd = Cmd::kWr;
  none.pc = pc;
  none.bank = -1;
  Flag(cycle, none, "write data timing", t_.cwl, -1);
}

bool Channel::ReadData(uint64_t ucycle, int pc, uint8_t* out32) {
  CheckLocation("ReadData", pc, 0, 0, 0);
  const int64_t cycle = int64_t(ucycle);
  auto& q = pcs_[pc].reads;
  while (!q.empty() && q.front().due < cycle) q.pop_front();  // never collected
  if (q.empty() || q.front().due != cycle) return false;
  const Burst& r = q.front();
  Load(pc, r.cmd.bank, r.row, r.cmd.col, out32);
  q.pop_front();
  return true;
}

// ---------------------------------------------------------------------------------------------
// End of cycle: missing write data and refresh debt

void Channel::EndCycle(uint64_t ucycle) {
  const int64_t cycle = int64_t(ucycle);
  if (cycle > last_cycle_) last_cycle_ = cycle;
  for (auto& p : pcs_) {
    auto& w = p.writes;
    for (auto& b : w) {
      if (b.due > cycle) break;
      if (b.missed) continue;
      b.missed = true;
      b.violation = violations_.size();
      Flag(b.due, b.cmd, "write data timing", t_.cwl, -1);
    }
    while (!w.empty() && w.front().missed && w.front().due + kLateWindow < cycle) w.pop_front();
    while (!p.reads.empty() && p.reads.front().due < cycle) p.reads.pop_front();
  }
  // The debt changes only when an nREFI interval starts or a refresh is issued.
  const bool new_epoch = cycle >= next_epoch_cycle_;
  if (new_epoch) {
    epoch_ = cycle / t_.refi;
    next_epoch_cycle_ = (epoch_ + 1) * t_.refi;
  }
  for (int pc = 0; pc < org_.pcs; ++pc) {
    if (new_epoch || pcs_[pc].debt_dirty) EvaluateDebt(cycle, pc);
  }
}

void Channel::EvaluateDebt(int64_t cycle, int pc) {
  auto& p = pcs_[pc];
  p.debt_dirty = false;
  std::vector<std::pair<int, int64_t>> newly_out;  // (bank, debt) that just left the range
  for (int k = 0; k < org_.banks(); ++k) {
    auto& b = p.banks[k];
    const int64_t debt = epoch_ - (p.refab_count + b.refpb_count);
    const bool out = debt > kDebtBound || debt < -kDebtBound;
    if (out && !b.debt_out) newly_out.emplace_back(k, debt);
    b.debt_out = out;
  }
  if (newly_out.empty()) return;
  Command c;
  c.pc = pc;
  if (int(newly_out.size()) == org_.banks()) {  // the whole PC: one report, the worst debt
    int64_t worst = 0;
    for (const auto& [k, debt] : newly_out) {
      if (std::llabs(debt) > std::llabs(worst)) worst = debt;
    }
    c.cmd = Cmd::kRefAb;
    c.bank = -1;
    Flag(cycle, c, "refresh debt", worst > 0 ? kDebtBound : -kDebtBound, worst);
    return;
  }
  c.cmd = Cmd::kRefPb;
  for (const auto& [k, debt] : newly_out) {
    c.bank = k;
    Flag(cycle, c, "refresh debt", debt > 0 ? kDebtBound : -kDebtBound, debt);
  }
}

}  // namespace tpu::hbm
