// SPDX-License-Identifier: Apache-2.0
// The HBM2 channel device model (models/src/hbm_device.cpp). The checker is tested rule by rule:
// on the `test` preset a directed sequence breaks one rule by one cycle (exactly one
// violation, naming that rule, with the required and actual numbers) and the same sequence at the
// limit is clean. Then data (strobes, background, read latency, backdoor), random legal traffic
// from an in-test scheduler written independently of the model, the presets against the spec
// table, and malformed input.
#include "tpu/hbm/hbm_device.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "test_support.h"

namespace tpu {
namespace {

using hbm::Channel;
using hbm::Cmd;
using hbm::Command;
using hbm::kNumPresets;
using hbm::kPresets;
using hbm::Org;
using hbm::PresetRow;
using hbm::Timing;
using Burst = std::array<uint8_t, Org::kBurstBytes>;

std::string Dump(const Channel& ch) {
  std::string s;
  for (const auto& v : ch.violations()) s += "  " + v.ToString() + "\n";
  return s.empty() ? "  (no violations)\n" : s;
}

// ---------------------------------------------------------------------------------------------
// A directed sequence: commands and write-data bursts at given cycles, run cycle by cycle in the
// order the header prescribes (Issue, WriteData, ReadData, EndCycle).

class Script {
 public:
  explicit Script(const Timing& t) : t_(t) {}
  Script& Act(int64_t c, int bank, int pc = 0, uint32_t row = 0) {
    return Add(c, {Cmd::kAct, pc, bank, row, 0});
  }
  Script& Pre(int64_t c, int bank, int pc = 0) { return Add(c, {Cmd::kPre, pc, bank, 0, 0}); }
  Script& PreA(int64_t c, int pc = 0) { return Add(c, {Cmd::kPreA, pc, 0, 0, 0}); }
  Script& RefAb(int64_t c, int pc = 0) { return Add(c, {Cmd::kRefAb, pc, 0, 0, 0}); }
  Script& RefPb(int64_t c, int bank, int pc = 0) { return Add(c, {Cmd::kRefPb, pc, bank, 0, 0}); }
  Script& Rd(int64_t c, int bank, int pc = 0) { return Add(c, {Cmd::kRd, pc, bank, 0, 0}); }
  Script& Rda(int64_t c, int bank, int pc = 0) { return Add(c, {Cmd::kRda, pc, bank, 0, 0}); }
  // WR / WRA with their data on time (WR + nCWL).
  Script& Wr(int64_t c, int bank, int pc = 0) { return WrOnly(c, bank, pc).Data(c + t_.cwl, pc); }
  Script& Wra(int64_t c, int bank, int pc = 0) {
    return Add(c, {Cmd::kWra, pc, bank, 0, 0}).Data(c + t_.cwl, pc);
  }
  // WR whose data the caller places (or leaves out).
  Script& WrOnly(int64_t c, int bank, int pc = 0) { return Add(c, {Cmd::kWr, pc, bank, 0, 0}); }
  Script& Data(int64_t c, int pc = 0) {
    events_.push_back({c, true, {Cmd::kWr, pc, 0, 0, 0}});
    return *this;
  }

  // Runs from cycle 0 to `until` (default: the last event plus room for its data).
  void Run(Channel& ch, int64_t until = -1) const {
    auto ev = events_;
    std::stable_sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
      return std::make_tuple(a.cycle, a.data) < std::make_tuple(b.cycle, b.data);
    });
    const int64_t last = ev.empty() ? 0 : ev.back().cycle;
    const int64_t end = until >= 0 ? until : last + t_.cl + t_.cwl + 8;
    uint8_t buf[Org::kBurstBytes];
    size_t i = 0;
    for (int64_t t = 0; t <= end; ++t) {
      for (; i < ev.size() && ev[i].cycle == t; ++i) {
        if (ev[i].data) {
          std::memset(buf, int(t & 0xFF), sizeof buf);
          ch.WriteData(t, ev[i].cmd.pc, buf, 0xFFFFFFFFu);
        } else {
          ch.Issue(t, ev[i].cmd);
        }
      }
      for (int pc = 0; pc < ch.org().pcs; ++pc) ch.ReadData(t, pc, buf);
      ch.EndCycle(t);
    }
  }

 private:
  struct Event {
    int64_t cycle;
    bool data;
    Command cmd;
  };
  Script& Add(int64_t c, const Command& cmd) {
    events_.push_back({c, false, cmd});
    return *this;
  }
  Timing t_;
  std::vector<Event> events_;
};

// ---------------------------------------------------------------------------------------------
// The rule table. `build(script, s)`: s = -1 breaks the rule by one cycle (or, for a state
// rule, takes the illegal variant), s = 0 is the same sequence at the limit (the legal variant).

struct RuleCase {
  std::string id;    // test name
  std::string rule;  // the one violation expected when broken
  Cmd cmd;           // the command it names
  int bank;          // and its bank (-1: the whole PC)
  int64_t required, actual;
  std::function<void(Script&, int)> build;
  int pc = 0;
  int64_t until = -1;  // run length (default: past the last event)
};

std::ostream& operator<<(std::ostream& os, const RuleCase& r) {
  return os << r.id;
}

const Timing kT = Timing::PresetTest();

// The rules of a bank and of a pseudo-channel: activation, row cycle, column and precharge
// spacing, PREA, auto-precharge.
std::vector<RuleCase> BankRuleCases() {
  const Timing& T = kT;
  const int wend = T.cwl + T.bl;  // WR to end of write data
  std::vector<RuleCase> r = {
      // ACT to column, same bank
      {"nRCDRD", "nRCDRD", Cmd::kRd, 0, T.rcdrd, T.rcdrd - 1,
       [=](Script& s, int d) { s.Act(0, 0).Rd(T.rcdrd + d, 0); }},
      {"nRCDWR", "nRCDWR", Cmd::kWr, 0, T.rcdwr, T.rcdwr - 1,
       [=](Script& s, int d) { s.Act(0, 0).Wr(T.rcdwr + d, 0); }},
      // Row cycle, same bank (PRE late enough that nRC holds when nRP is broken, and back)
      {"nRP", "nRP", Cmd::kAct, 0, T.rp, T.rp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Pre(T.rc, 0).Act(T.rc + T.rp + d, 0); }},
      {"nRAS", "nRAS", Cmd::kPre, 0, T.ras, T.ras - 1,
       [=](Script& s, int d) { s.Act(0, 0).Pre(T.ras + d, 0); }},
      {"nRC", "nRC", Cmd::kAct, 0, T.rc, T.rc - 1,
       [=](Script& s, int d) { s.Act(0, 0).Pre(T.ras, 0).Act(T.rc + d, 0); }},
      // ACT to ACT in a PC
      {"nRRDS", "nRRDS", Cmd::kAct, 4, T.rrds, T.rrds - 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(T.rrds + d, 4); }},
      {"nRRDL", "nRRDL", Cmd::kAct, 1, T.rrdl, T.rrdl - 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(T.rrdl + d, 1); }},
      {"nFAW", "nFAW", Cmd::kAct, 1, T.faw, T.faw - 1,
       [=](Script& s, int d) {
         s.Act(0, 0).Act(T.rrds, 4).Act(2 * T.rrds, 8).Act(3 * T.rrds, 12).Act(T.faw + d, 1);
       }},
      // Column to column in a PC
      {"nCCDS", "nCCDS", Cmd::kRd, 4, T.ccds, T.ccds - 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(T.rrds, 4).Rd(30, 0).Rd(30 + T.ccds + d, 4); }},
      {"nCCDL", "nCCDL", Cmd::kRd, 1, T.ccdl, T.ccdl - 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(T.rrdl, 1).Rd(30, 0).Rd(30 + T.ccdl + d, 1); }},
      {"nCCDL_WrWr", "nCCDL", Cmd::kWr, 1, T.ccdl, T.ccdl - 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(T.rrdl, 1).Wr(30, 0).Wr(30 + T.ccdl + d, 1); }},
      {"nRTW", "nRTW", Cmd::kWr, 4, T.rtw(), T.rtw() - 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(T.rrds, 4).Rd(30, 0).Wr(30 + T.rtw() + d, 4); }},
      {"nWTRS", "nWTRS", Cmd::kRd, 4, T.wtrs, T.wtrs - 1,
       [=](Script& s, int d) {
         s.Act(0, 0).Act(T.rrds, 4).Wr(30, 0).Rd(30 + wend + T.wtrs + d, 4);
       }},
      {"nWTRL", "nWTRL", Cmd::kRd, 1, T.wtrl, T.wtrl - 1,
       [=](Script& s, int d) {
         s.Act(0, 0).Act(T.rrdl, 1).Wr(30, 0).Rd(30 + wend + T.wtrl + d, 1);
       }},
      // Column to PRE, same bank
      {"nWR", "nWR", Cmd::kPre, 0, T.wr, T.wr - 1,
       [=](Script& s, int d) { s.Act(0, 0).Wr(30, 0).Pre(30 + wend + T.wr + d, 0); }},
      {"nRTP", "nRTP", Cmd::kPre, 0, T.rtp, T.rtp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Rd(40, 0).Pre(40 + T.rtp + d, 0); }},
      // PREA honours nRAS, nRTP and nWR of every open bank (here the second bank breaks nRAS)
      {"PreA_nRAS", "nRAS", Cmd::kPreA, 4, T.ras, T.ras - 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(10, 4).PreA(10 + T.ras + d); }},
      {"PreA_nRTP", "nRTP", Cmd::kPreA, 0, T.rtp, T.rtp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Rd(40, 0).PreA(40 + T.rtp + d); }},
      {"PreA_nWR", "nWR", Cmd::kPreA, 0, T.wr, T.wr - 1,
       [=](Script& s, int d) { s.Act(0, 0).Wr(30, 0).PreA(30 + wend + T.wr + d); }},
      // Auto-precharge: the bank closes at max(ACT + nRAS, RDA + nRTP) or
      // max(ACT + nRAS, WRA + nCWL + nBL + nWR); the next ACT / REF is nRP after that.
      {"AutoPre_RDA_nRTP_ACT", "nRP (auto-precharge)", Cmd::kAct, 0, T.rp, T.rp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Rda(40, 0).Act(40 + T.rtp + T.rp + d, 0); }},
      {"AutoPre_RDA_nRAS_REFab", "nRP (auto-precharge)", Cmd::kRefAb, 0, T.rp, T.rp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Rda(T.rcdrd, 0).RefAb(T.ras + T.rp + d); }},
      {"AutoPre_WRA_ACT", "nRP (auto-precharge)", Cmd::kAct, 0, T.rp, T.rp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Wra(30, 0).Act(30 + wend + T.wr + T.rp + d, 0); }},
      {"AutoPre_WRA_REFpb", "nRP (auto-precharge)", Cmd::kRefPb, 0, T.rp, T.rp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Wra(30, 0).RefPb(30 + wend + T.wr + T.rp + d, 0); }},
  };
  return r;
}

// Refresh (spacing and debt), the shared command buses, bank states and write data.
std::vector<RuleCase> RefreshAndBusRuleCases() {
  const Timing& T = kT;
  std::vector<RuleCase> r = {
      // Refresh
      {"nRFC_ACT", "nRFC", Cmd::kAct, 0, T.rfc, T.rfc - 1,
       [=](Script& s, int d) { s.RefAb(0).Act(T.rfc + d, 0); }},
      {"nRFC_REFab", "nRFC", Cmd::kRefAb, -1, T.rfc, T.rfc - 1,
       [=](Script& s, int d) { s.RefAb(0).RefAb(T.rfc + d); }},
      {"nRFC_REFpb", "nRFC", Cmd::kRefPb, 3, T.rfc, T.rfc - 1,
       [=](Script& s, int d) { s.RefAb(0).RefPb(T.rfc + d, 3); }},
      {"nRFCsb_ACT", "nRFCsb", Cmd::kAct, 0, T.rfcsb, T.rfcsb - 1,
       [=](Script& s, int d) { s.RefPb(0, 0).Act(T.rfcsb + d, 0); }},
      {"nRFCsb_REFpb", "nRFCsb", Cmd::kRefPb, 0, T.rfcsb, T.rfcsb - 1,
       [=](Script& s, int d) { s.RefPb(0, 0).RefPb(T.rfcsb + d, 0); }},
      {"nRFCsb_REFab", "nRFCsb", Cmd::kRefAb, 5, T.rfcsb, T.rfcsb - 1,
       [=](Script& s, int d) { s.RefPb(0, 5).RefAb(T.rfcsb + d); }},
      {"nRREFD_REFpb", "nRREFD", Cmd::kRefPb, 1, T.rrefd, T.rrefd - 1,
       [=](Script& s, int d) { s.RefPb(0, 0).RefPb(T.rrefd + d, 1); }},
      {"nRREFD_ACT", "nRREFD", Cmd::kAct, 1, T.rrefd, T.rrefd - 1,
       [=](Script& s, int d) { s.RefPb(0, 0).Act(T.rrefd + d, 1); }},
      {"ActRefPb_nRRDS_OtherGroup", "nRRDS", Cmd::kRefPb, 4, T.rrds, T.rrds - 1,
       [=](Script& s, int d) { s.Act(0, 0).RefPb(T.rrds + d, 4); }},
      {"ActRefPb_nRRDS_SameGroup", "nRRDS", Cmd::kRefPb, 1, T.rrds, T.rrds - 1,
       [=](Script& s, int d) { s.Act(0, 0).RefPb(T.rrds + d, 1); }},
      {"ActRefPb_nRC", "nRC", Cmd::kRefPb, 0, T.rc, T.rc - 1,
       [=](Script& s, int d) { s.Act(0, 0).Pre(T.ras, 0).RefPb(T.rc + d, 0); }},
      {"PreRefPb_nRP", "nRP", Cmd::kRefPb, 0, T.rp, T.rp - 1,
       [=](Script& s, int d) { s.Act(0, 0).Pre(T.rc, 0).RefPb(T.rc + T.rp + d, 0); }},
      {"PreRefAb_nRP", "nRP", Cmd::kRefAb, 2, T.rp, T.rp - 1,
       [=](Script& s, int d) { s.Act(0, 2).Pre(40, 2).RefAb(40 + T.rp + d); }},
      // Command buses (the two PCs share them)
      {"RowBus_SameCycle", "row bus busy", Cmd::kPre, 0, 1, 0,
       [=](Script& s, int d) { s.Act(0, 0).Act(2, 0, 1).Pre(40, 0).Pre(41 + d, 0, 1); }, 1},
      {"RowBus_ActSecondCycle", "row bus busy", Cmd::kAct, 0, 2, 1,
       [=](Script& s, int d) { s.Act(0, 0).Act(2 + d, 0, 1); }, 1},
      {"RowBus_ActSecondCyclePre", "row bus busy", Cmd::kPre, 0, 2, 1,
       [=](Script& s, int d) { s.Act(0, 0).Pre(2 + d, 0, 1); }, 1},
      {"ColumnBus_SameCycle", "column bus busy", Cmd::kRd, 0, 1, 0,
       [=](Script& s, int d) { s.Act(0, 0).Act(2, 0, 1).Rd(30, 0).Rd(31 + d, 0, 1); }, 1},
      // Bank states (d = -1: the illegal variant)
      {"State_ActOpen", "state: ACT to an open bank", Cmd::kAct, 0, 0, 0,
       [=](Script& s, int d) {
         s.Act(0, 0).Act(T.rc + 10, 0);
         if (d == 0) s.Pre(T.ras, 0);
       }},
      {"State_RdClosed", "state: RD to a closed bank", Cmd::kRd, 0, 0, 0,
       [=](Script& s, int d) {
         if (d == 0) s.Act(0, 0);
         s.Rd(30, 0);
       }},
      {"State_WrClosed", "state: WR to a closed bank", Cmd::kWr, 0, 0, 0,
       [=](Script& s, int d) {
         if (d == 0) s.Act(0, 0);
         s.Wr(30, 0);
       }},
      {"State_RdAfterRda", "state: column command after auto-precharge", Cmd::kRd, 0, 0, 0,
       [=](Script& s, int d) {
         s.Act(0, 0).Rd(40, 0);
         d == 0 ? s.Rd(30, 0) : s.Rda(30, 0);
       }},
      {"State_WrAfterWra", "state: column command after auto-precharge", Cmd::kWr, 0, 0, 0,
       [=](Script& s, int d) {
         s.Act(0, 0).Wr(40, 0);
         d == 0 ? s.Wr(20, 0) : s.Wra(20, 0);
       }},
      {"State_RefAbOpen", "state: REFab with a bank open", Cmd::kRefAb, 3, 0, 0,
       [=](Script& s, int d) {
         s.Act(0, 3).RefAb(100);
         if (d == 0) s.Pre(40, 3);
       }},
      {"State_RefPbOpen", "state: REFpb to an open bank", Cmd::kRefPb, 0, 0, 0,
       [=](Script& s, int d) {
         s.Act(0, 0).RefPb(100, 0);
         if (d == 0) s.Pre(40, 0);
       }},
      // Write data: exactly at WR + nCWL
      {"WriteData_Early", "write data timing", Cmd::kWr, 0, T.cwl, T.cwl - 1,
       [=](Script& s, int d) { s.Act(0, 0).WrOnly(30, 0).Data(30 + T.cwl + d); }},
      {"WriteData_Late", "write data timing", Cmd::kWr, 0, T.cwl, T.cwl + 1,
       [=](Script& s, int d) { s.Act(0, 0).WrOnly(30, 0).Data(30 + T.cwl - d); }},
      {"WriteData_Missing", "write data timing", Cmd::kWr, 0, T.cwl, -1,
       [=](Script& s, int d) {
         s.Act(0, 0).WrOnly(30, 0);
         if (d == 0) s.Data(30 + T.cwl);
       }},
      {"WriteData_NoWr", "write data timing", Cmd::kWr, -1, T.cwl, -1,
       [=](Script& s, int d) {
         s.Act(0, 0).Data(30 + T.cwl);
         if (d == 0) s.WrOnly(30, 0);
       }},
  };
  // Refresh debt: floor(t / nREFI) - refreshes stays within [-8, +8].
  RuleCase above{
      "Debt_Above_AllBank", "refresh debt", Cmd::kRefAb, -1, 8, 9, [=](Script& s, int d) {
        s.RefAb(0, 1).RefAb(9 * T.refi - d, 0);
      }};
  above.until = 9 * T.refi + 2;
  RuleCase below{
      "Debt_Below_AllBank", "refresh debt", Cmd::kRefAb, -1, -8, -9, [=](Script& s, int d) {
        for (int k = 0; k < 8; ++k) s.RefAb(k * T.rfc);
        s.RefAb(T.refi + d);
      }};
  below.until = T.refi + 2;
  RuleCase above_pb{
      "Debt_Above_PerBank", "refresh debt", Cmd::kRefPb, 0, 8, 9, [=](Script& s, int d) {
        s.RefAb(0, 1);
        for (int b = 1; b < 16; ++b) s.RefPb(b * T.rrefd, b);
        s.RefPb(9 * T.refi - d, 0);
      }};
  above_pb.until = 9 * T.refi + 2;
  RuleCase below_pb{
      "Debt_Below_PerBank", "refresh debt", Cmd::kRefPb, 0, -8, -9, [=](Script& s, int d) {
        for (int k = 0; k < 8; ++k) s.RefPb(k * T.rfcsb, 0);
        s.RefPb(T.refi + d, 0);
      }};
  below_pb.until = T.refi + 2;
  for (auto* c : {&above, &below, &above_pb, &below_pb}) r.push_back(*c);
  return r;
}

std::vector<RuleCase> RuleCases() {
  std::vector<RuleCase> r = BankRuleCases();
  for (auto& c : RefreshAndBusRuleCases()) r.push_back(std::move(c));
  return r;
}

class HbmCheckerTest : public ::testing::TestWithParam<RuleCase> {
 protected:
  // Runs the case's sequence (s = -1 broken, 0 at the limit) on a fresh channel.
  Channel Run(int s) {
    Channel ch(Org{}, kT);
    Script script(kT);
    GetParam().build(script, s);
    script.Run(ch, GetParam().until);
    return ch;
  }
};

TEST_P(HbmCheckerTest, BrokenByOneCycle) {
  const RuleCase& r = GetParam();
  const Channel ch = Run(-1);
  ASSERT_EQ(ch.violations().size(), 1u) << r.id << ": want one " << r.rule << ", got\n" << Dump(ch);
  const auto& v = ch.violations()[0];
  EXPECT_EQ(v.rule, r.rule) << v.ToString();
  EXPECT_EQ(v.required, r.required) << v.ToString();
  EXPECT_EQ(v.actual, r.actual) << v.ToString();
  EXPECT_EQ(v.cmd.cmd, r.cmd) << v.ToString();
  EXPECT_EQ(v.cmd.bank, r.bank) << v.ToString();
  EXPECT_EQ(v.cmd.pc, r.pc) << v.ToString();
  EXPECT_NE(v.ToString().find(r.rule), std::string::npos) << v.ToString();
}

TEST_P(HbmCheckerTest, CleanAtTheLimit) {
  const Channel ch = Run(0);
  EXPECT_TRUE(ch.violations().empty()) << GetParam().id << ":\n" << Dump(ch);
}

INSTANTIATE_TEST_SUITE_P(Rules, HbmCheckerTest, ::testing::ValuesIn(RuleCases()),
                         [](const auto& info) { return info.param.id; });

// ---------------------------------------------------------------------------------------------
// The model: presets, messages, data, traffic, input checks

class HbmDeviceTest : public ::testing::Test {
 protected:
  // Advances `ch` to cycle `c` (EndCycle for every cycle before it).
  void To(Channel& ch, int64_t c) {
    while (now_ < c) ch.EndCycle(now_++);
  }
  int64_t now_ = 0;
};

TEST_F(HbmDeviceTest, PresetsMatchTheSpecTable) {
  const Timing a = Timing::Preset2000();
  const std::vector<std::pair<int, int>> v2000 = {
      {a.cl, 14},     {a.cwl, 5},     {a.bl, 2},       {a.rcdrd, 14}, {a.rcdwr, 12}, {a.rp, 14},
      {a.ras, 34},    {a.rc, 48},     {a.ccds, 2},     {a.ccdl, 4},   {a.rrds, 4},   {a.rrdl, 4},
      {a.faw, 15},    {a.wr, 16},     {a.rtp, 5},      {a.wtrs, 6},   {a.wtrl, 8},   {a.rfc, 350},
      {a.rfcsb, 160}, {a.refi, 3900}, {a.refisb, 243}, {a.rrefd, 8},  {a.rtw(), 13}};
  for (size_t i = 0; i < v2000.size(); ++i) EXPECT_EQ(v2000[i].first, v2000[i].second) << i;
  const Timing b = Timing::Preset2400();
  const std::vector<std::pair<int, int>> v2400 = {
      {b.cl, 17},     {b.cwl, 6},     {b.bl, 2},       {b.rcdrd, 17}, {b.rcdwr, 14}, {b.rp, 17},
      {b.ras, 40},    {b.rc, 57},     {b.ccds, 2},     {b.ccdl, 4},   {b.rrds, 5},   {b.rrdl, 5},
      {b.faw, 19},    {b.wr, 19},     {b.rtp, 6},      {b.wtrs, 8},   {b.wtrl, 10},  {b.rfc, 421},
      {b.rfcsb, 193}, {b.refi, 4682}, {b.refisb, 292}, {b.rrefd, 10}, {b.rtw(), 15}};
  for (size_t i = 0; i < v2400.size(); ++i) EXPECT_EQ(v2400[i].first, v2400[i].second) << i;
  // The test preset pulls apart the rules the default bin implies.
  const Timing t = Timing::PresetTest();
  EXPECT_GT(t.rc, t.ras + t.rp);
  EXPECT_GT(t.faw, 4 * t.rrds);
  EXPECT_NE(t.rrdl, t.rrds);
  EXPECT_EQ(t.faw, 24);
  EXPECT_EQ(t.rc, 52);
  EXPECT_EQ(Timing::ByName("2000").rc, 48);
  EXPECT_EQ(Timing::ByName("2400").rc, 57);
  EXPECT_EQ(Timing::ByName("test").rc, 52);
  const Org o;
  EXPECT_EQ(o.pcs, 2);
  EXPECT_EQ(o.banks(), 16);
  EXPECT_EQ(o.row_bits, 16);
  EXPECT_EQ(o.columns * Org::kBurstBytes, 1024);
}

TEST_F(HbmDeviceTest, ViolationMessages) {
  Channel ch(Org{}, kT, 2);
  Script s(kT);
  s.Act(0, 5, 1, 0x1234).Rd(kT.rcdrd - 1, 5, 1).Rd(40, 6, 1).WrOnly(60, 5, 1);
  s.Run(ch, 100);
  ASSERT_EQ(ch.violations().size(), 3u) << Dump(ch);
  EXPECT_EQ(ch.violations()[0].ToString(),
            "cycle 13 ch2 pc1 bank 5: RD col 0 breaks nRCDRD: needs 14 cycles after ACT, got 13");
  EXPECT_EQ(ch.violations()[1].ToString(),
            "cycle 40 ch2 pc1 bank 6: RD col 0 breaks state: RD to a closed bank");
  EXPECT_EQ(ch.violations()[2].ToString(),
            "cycle 65 ch2 pc1 bank 5: WR col 0 breaks write data timing: needs data at WR + 5, "
            "got none");
}

TEST_F(HbmDeviceTest, RefreshDebtReportedOncePerExcursion) {
  // No refresh at all: each PC leaves the range once (all banks together), not every cycle.
  Channel ch(Org{}, kT);
  To(ch, 11 * kT.refi);
  ASSERT_EQ(ch.violations().size(), 2u) << Dump(ch);
  for (int pc = 0; pc < 2; ++pc) {
    const auto& v = ch.violations()[pc];
    EXPECT_EQ(v.rule, "refresh debt");
    EXPECT_EQ(v.cycle, uint64_t(9 * kT.refi));
    EXPECT_EQ(v.cmd.cmd, Cmd::kRefAb);
    EXPECT_EQ(v.cmd.pc, pc);
    EXPECT_EQ(v.actual, 9);
  }
  EXPECT_EQ(ch.RefreshDebt(11 * kT.refi, 1, 7), 11);
}

TEST_F(HbmDeviceTest, NoOpsAndStats) {
  Channel ch(Org{}, kT);
  Script s(kT);
  s.Pre(3, 2).PreA(5).PreA(7, 1).RefAb(10, 1).Act(20, 2).Rd(40, 2).Rda(50, 2).Act(80, 3);
  s.Wr(100, 3).Wra(110, 3).RefPb(400, 9, 1);
  s.Run(ch);
  EXPECT_TRUE(ch.violations().empty()) << Dump(ch);
  const auto& a = ch.stats(0);
  EXPECT_EQ(a.pre, 1u);
  EXPECT_EQ(a.prea, 1u);
  EXPECT_EQ(a.act, 2u);
  EXPECT_EQ(a.rd, 2u);
  EXPECT_EQ(a.wr, 2u);
  EXPECT_EQ(a.refab, 0u);
  const auto& b = ch.stats(1);
  EXPECT_EQ(b.prea, 1u);
  EXPECT_EQ(b.refab, 1u);
  EXPECT_EQ(b.refpb, 1u);
  EXPECT_EQ(ch.RefreshDebt(500, 1, 9), -2);
  EXPECT_EQ(ch.RefreshDebt(500, 1, 8), -1);
  EXPECT_EQ(ch.RefreshDebt(kT.refi, 0, 8), 1);
}

TEST_F(HbmDeviceTest, WriteWithStrobesReadBackAtReadLatency) {
  const Timing t = Timing::Preset2000();
  Channel ch(Org{}, t, 3);
  const int pc = 1, bank = 5, col = 7;
  const uint32_t row = 0x1234;
  uint8_t data[32], out[32], bg[32], bg8[32];
  for (int i = 0; i < 32; ++i) data[i] = uint8_t(0xA0 + i);
  const uint32_t strb = 0x0FF0F00Fu;

  ch.Issue(0, {Cmd::kAct, pc, bank, row, 0});
  To(ch, t.rcdwr);
  ch.Issue(now_, {Cmd::kWr, pc, bank, 0, col});
  const int64_t wr = now_;
  To(ch, wr + t.cwl);
  ch.WriteData(now_, pc, data, strb);
  const int64_t rd = wr + t.cwl + t.bl + t.wtrl;
  To(ch, rd);
  ch.Issue(now_, {Cmd::kRd, pc, bank, 0, col});
  To(ch, rd + t.ccdl);
  ch.Issue(now_, {Cmd::kRd, pc, bank, 0, col + 1});  // never written
  for (int64_t c = rd + t.ccdl; c < rd + t.cl; ++c) {
    EXPECT_FALSE(ch.ReadData(c, pc, out)) << "read data early at cycle " << c;
    EXPECT_FALSE(ch.ReadData(c, 0, out)) << "read data on the other PC at cycle " << c;
    To(ch, c + 1);
  }
  ASSERT_TRUE(ch.ReadData(rd + t.cl, pc, out)) << "no read data at RD + nCL";
  Channel::Background(3, pc, bank, row, col, bg);
  for (int i = 0; i < 32; ++i) {
    const uint8_t want = ((strb >> i) & 1u) ? data[i] : bg[i];
    EXPECT_EQ(out[i], want) << fmt::format("byte {}: want 0x{:02x}, got 0x{:02x}", i, want, out[i]);
  }
  uint8_t peek[32];
  ch.Peek(pc, bank, row, col, peek);
  EXPECT_EQ(std::memcmp(peek, out, 32), 0);
  To(ch, rd + t.cl + 1);
  EXPECT_FALSE(ch.ReadData(rd + t.cl + 1, pc, out)) << "read data late";
  To(ch, rd + t.ccdl + t.cl);
  ASSERT_TRUE(ch.ReadData(now_, pc, out));
  Channel::Background(3, pc, bank, row, col + 1, bg8);
  EXPECT_EQ(std::memcmp(out, bg8, 32), 0) << "never-written burst is not the background";
  To(ch, now_ + 40);
  EXPECT_TRUE(ch.violations().empty()) << Dump(ch);
}

TEST_F(HbmDeviceTest, DataStaysWithItsRow) {
  const Timing t = Timing::Preset2000();
  Channel ch(Org{}, t);
  Script s(t);
  // Row 7 written (all bytes t & 0xFF = the data cycle), then row 9 opened in the same bank.
  s.Act(0, 0, 0, 7).Wr(20, 0).Pre(60, 0).Act(80, 0, 0, 9).Pre(120, 0).Act(140, 0, 0, 7);
  s.Run(ch);
  ASSERT_TRUE(ch.violations().empty()) << Dump(ch);
  uint8_t out[32], bg[32];
  ch.Peek(0, 0, 7, 0, out);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(out[i], 20 + t.cwl) << i;
  ch.Peek(0, 0, 9, 0, out);
  Channel::Background(0, 0, 0, 9, 0, bg);
  EXPECT_EQ(std::memcmp(out, bg, 32), 0);
}

TEST_F(HbmDeviceTest, BackgroundAndBackdoor) {
  uint8_t a[32], b[32];
  // A fixed function of the location, different for each coordinate.
  const std::vector<std::tuple<int, int, int, uint32_t, int>> locs = {
      {0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 1, 0, 0, 0},      {0, 0, 1, 0, 0},
      {0, 0, 0, 1, 0}, {0, 0, 0, 0, 1}, {7, 1, 15, 65535, 31}};
  std::vector<Burst> seen;
  for (const auto& [c, p, k, r, col] : locs) {
    Channel::Background(c, p, k, r, col, a);
    Channel::Background(c, p, k, r, col, b);
    EXPECT_EQ(std::memcmp(a, b, 32), 0);
    Burst x;
    std::memcpy(x.data(), a, 32);
    for (const auto& y : seen) EXPECT_NE(x, y);
    seen.push_back(x);
  }
  Channel ch(Org{}, Timing::Preset2000(), 5);
  ch.Peek(1, 3, 100, 4, a);
  Channel::Background(5, 1, 3, 100, 4, b);
  EXPECT_EQ(std::memcmp(a, b, 32), 0);
  for (int i = 0; i < 32; ++i) b[i] = uint8_t(i * 7);
  ch.Poke(1, 3, 100, 4, b);
  ch.Peek(1, 3, 100, 4, a);
  EXPECT_EQ(std::memcmp(a, b, 32), 0);
  // A read returns poked data.
  const Timing t = ch.timing();
  ch.Issue(0, {Cmd::kAct, 1, 3, 100, 0});
  To(ch, t.rcdrd);
  ch.Issue(now_, {Cmd::kRd, 1, 3, 0, 4});
  To(ch, t.rcdrd + t.cl);
  ASSERT_TRUE(ch.ReadData(now_, 1, a));
  EXPECT_EQ(std::memcmp(a, b, 32), 0);
  EXPECT_THROW(ch.Poke(2, 0, 0, 0, b), std::invalid_argument);
  EXPECT_THROW(ch.Peek(0, 0, 0, 32, a), std::invalid_argument);
}

template <typename F>
void ExpectInvalid(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "accepted; want std::invalid_argument mentioning '" << text << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST_F(HbmDeviceTest, RefusesMalformedInput) {
  const Timing t = Timing::Preset2000();
  Org o;
  o.pcs = 0;
  ExpectInvalid([&] { Channel c(o, t); }, "pcs = 0");
  o = Org{};
  o.columns = -4;
  ExpectInvalid([&] { Channel c(o, t); }, "columns = -4");
  o = Org{};
  o.row_bits = 33;
  ExpectInvalid([&] { Channel c(o, t); }, "row_bits = 33");
  Timing bad = t;
  bad.cl = 0;
  ExpectInvalid([&] { Channel c(Org{}, bad); }, "cl = 0");
  bad = t;
  bad.rrefd = -1;
  ExpectInvalid([&] { Channel c(Org{}, bad); }, "rrefd = -1");
  ExpectInvalid([] { Timing::ByName("3200"); }, "3200");
  ExpectInvalid([] { Timing::Preset(kNumPresets); }, "does not exist");
  ExpectInvalid([] { Timing::Preset(-1); }, "HBM preset -1 does not exist");

  Channel ch(Org{}, t);
  ExpectInvalid([&] { ch.Issue(10, {Cmd::kAct, 2, 0, 0, 0}); }, "pc 2");
  ExpectInvalid([&] { ch.Issue(10, {Cmd::kAct, -1, 0, 0, 0}); }, "pc -1");
  ExpectInvalid([&] { ch.Issue(10, {Cmd::kPre, 0, 16, 0, 0}); }, "bank 16");
  ExpectInvalid([&] { ch.Issue(10, {Cmd::kAct, 0, 0, 65536, 0}); }, "row 65536");
  ExpectInvalid([&] { ch.Issue(10, {Cmd::kRd, 0, 0, 0, 32}); }, "col 32");
  ExpectInvalid([&] { ch.Issue(10, {Cmd::kWra, 0, 0, 0, -1}); }, "col -1");
  ExpectInvalid([&] { ch.Issue(10, {static_cast<Cmd>(42), 0, 0, 0, 0}); }, "42");
  ExpectInvalid([&] { ch.WriteData(10, 3, nullptr, 0); }, "pc 3");
  ExpectInvalid([&] { ch.ReadData(10, 3, nullptr); }, "pc 3");
  EXPECT_EQ(ch.stats(0).act, 0u);           // refused commands change nothing
  ch.Issue(10, {Cmd::kPreA, 0, 99, 0, 0});  // PREA and REFab ignore the bank
  ch.Issue(12, {Cmd::kAct, 0, 0, 65535, 0});
  ExpectInvalid([&] { ch.Issue(11, {Cmd::kPre, 0, 0, 0, 0}); }, "cycle 11");
  ch.EndCycle(20);
  ExpectInvalid([&] { ch.Issue(19, {Cmd::kPre, 0, 0, 0, 0}); }, "cycle 19");
  EXPECT_TRUE(ch.violations().empty()) << Dump(ch);
}

// ---------------------------------------------------------------------------------------------
// Random legal traffic. The scheduler below keeps its own history of the commands it issued and
// issues one only when every rule of the spec, written here as "earliest cycle" inequalities,
// allows it. Refresh: per PC either REFab (PREA first) or REFpb bank by bank, as soon as a debt of
// one interval is due. Data are random with random strobes; reads are checked against a shadow.

class LegalTraffic {
 public:
  LegalTraffic(const Org& org, const Timing& t, uint64_t seed) : o_(org), t_(t), rng_(seed) {
    pcs_.resize(org.pcs);
    for (auto& p : pcs_) {
      p.b.resize(org.banks());
      p.col_bg.assign(org.bank_groups, kNo);
      p.wend_bg.assign(org.bank_groups, kNo);
      p.per_bank_refresh = rng_.Bit();
    }
  }

  void Cycle(Channel& ch, int64_t t) {
    epoch_ = t / t_.refi;
    if (t > last_row_ && t > last_act_ + 1 && rng_.Range(0, 9) != 0) RowCommand(ch, t);
    if (t > last_col_ && rng_.Range(0, 9) != 0) ColumnCommand(ch, t);
    while (!writes_.empty() && writes_.front().due == t) {
      const auto& w = writes_.front();
      ch.WriteData(t, w.pc, w.data.data(), w.strb);
      Burst& cell = Cell(ch, w.pc, w.bank, w.row, w.col);
      for (int i = 0; i < 32; ++i) {
        if ((w.strb >> i) & 1u) cell[i] = w.data[i];
      }
      writes_.pop_front();
    }
    for (int pc = 0; pc < o_.pcs; ++pc) {
      uint8_t out[32];
      const bool got = ch.ReadData(t, pc, out);
      auto& q = reads_[pc];
      const bool due = !q.empty() && q.front().due == t;
      if (got != due) {
        Mismatch(fmt::format("cycle {} pc{}: ReadData returned {}, want {}", t, pc, got, due));
      } else if (due) {
        const auto& r = q.front();
        const Burst& want = Cell(ch, pc, r.bank, r.row, r.col);
        if (std::memcmp(want.data(), out, 32) != 0) {
          Mismatch(fmt::format("cycle {} pc{} bank {} row {} col {}: read data differ", t, pc,
                               r.bank, r.row, r.col));
        }
      }
      if (due) q.pop_front();
    }
    ch.EndCycle(t);
  }

  uint64_t mismatches() const { return mismatches_; }
  const std::string& first_mismatch() const { return first_; }

 private:
  static constexpr int64_t kNo = -1000000;
  struct B {
    bool open = false;
    uint32_t row = 0;
    int64_t act = kNo, pre = kNo, apc = kNo, rd = kNo, wend = kNo, refpb = kNo, refs = 0;
  };
  struct P {
    std::vector<B> b;
    std::vector<int64_t> col_bg, wend_bg;
    std::deque<int64_t> acts;  // the last four
    int64_t rd = kNo, refab = kNo, refabs = 0;
    bool per_bank_refresh = false;
    bool writing = false;  // the current streak
  };
  struct Pending {
    int64_t due;
    int pc, bank;
    uint32_t row;
    int col;
    Burst data;
    uint32_t strb;
  };

  int Bg(int bank) const { return bank / o_.banks_per_group; }
  bool Due(const P& p, int k) const { return epoch_ - p.refabs - p.b[k].refs >= 1; }
  bool AllBankDue(const P& p) const { return !p.per_bank_refresh && epoch_ - p.refabs >= 1; }

  bool CanAct(const P& p, int k, int64_t t) const {
    const B& b = p.b[k];
    if (b.open) return false;
    int64_t e = std::max(
        {b.act + t_.rc, b.pre + t_.rp, b.apc + t_.rp, p.refab + t_.rfc, b.refpb + t_.rfcsb});
    for (int o = 0; o < o_.banks(); ++o) {
      if (o == k) continue;
      e = std::max(e, p.b[o].act + (Bg(o) == Bg(k) ? t_.rrdl : t_.rrds));
      e = std::max(e, p.b[o].refpb + t_.rrefd);
    }
    if (p.acts.size() == 4) e = std::max(e, p.acts.front() + t_.faw);
    return t >= e;
  }
  bool CanPre(const B& b, int64_t t) const {
    return b.open && t >= std::max({b.act + t_.ras, b.rd + t_.rtp, b.wend + t_.wr});
  }
  bool CanRefAb(const P& p, int64_t t) const {
    int64_t e = p.refab + t_.rfc;
    for (const B& b : p.b) {
      if (b.open) return false;
      e = std::max({e, b.pre + t_.rp, b.apc + t_.rp, b.refpb + t_.rfcsb});
    }
    return t >= e;
  }
  bool CanRefPb(const P& p, int k, int64_t t) const {
    const B& b = p.b[k];
    if (b.open) return false;
    int64_t e = std::max(
        {b.pre + t_.rp, b.apc + t_.rp, b.act + t_.rc, p.refab + t_.rfc, b.refpb + t_.rfcsb});
    for (int o = 0; o < o_.banks(); ++o) {
      if (o != k) e = std::max({e, p.b[o].act + t_.rrds, p.b[o].refpb + t_.rrefd});
    }
    return t >= e;
  }
  bool CanColumn(const P& p, int k, bool read, int64_t t) const {
    const B& b = p.b[k];
    if (!b.open) return false;
    int64_t e = b.act + (read ? t_.rcdrd : t_.rcdwr);
    for (int g = 0; g < o_.bank_groups; ++g) {
      const bool same = g == Bg(k);
      e = std::max(e, p.col_bg[g] + (same ? t_.ccdl : t_.ccds));
      if (read) e = std::max(e, p.wend_bg[g] + (same ? t_.wtrl : t_.wtrs));
    }
    if (!read) e = std::max(e, p.rd + t_.rtw());
    return t >= e;
  }

  void IssueRow(Channel& ch, int64_t t, const Command& c) {
    ch.Issue(t, c);
    last_row_ = t;
    P& p = pcs_[c.pc];
    switch (c.cmd) {
      case Cmd::kAct: {
        B& b = p.b[c.bank];
        b.open = true;
        b.row = c.row;
        b.act = t;
        last_act_ = t;
        p.acts.push_back(t);
        if (p.acts.size() > 4) p.acts.pop_front();
        break;
      }
      case Cmd::kPre:
        p.b[c.bank].open = false;
        p.b[c.bank].pre = t;
        break;
      case Cmd::kPreA:
        for (B& b : p.b) {
          if (b.open) b.open = false, b.pre = t;
        }
        break;
      case Cmd::kRefAb:
        p.refab = t;
        ++p.refabs;
        break;
      case Cmd::kRefPb:
        p.b[c.bank].refpb = t;
        ++p.b[c.bank].refs;
        break;
      default: break;
    }
  }

  void RowCommand(Channel& ch, int64_t t) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int pc = rng_.Range(0, o_.pcs - 1);
      P& p = pcs_[pc];
      if (AllBankDue(p)) {  // close everything, then REFab; no ACT meanwhile
        bool any_open = false, can_prea = true;
        for (const B& b : p.b) {
          if (b.open) any_open = true, can_prea = can_prea && CanPre(b, t);
        }
        if (any_open && can_prea) return IssueRow(ch, t, {Cmd::kPreA, pc, 0, 0, 0});
        if (!any_open && CanRefAb(p, t)) return IssueRow(ch, t, {Cmd::kRefAb, pc, 0, 0, 0});
        continue;
      }
      if (p.per_bank_refresh) {
        for (int k = 0; k < o_.banks(); ++k) {
          if (!Due(p, k)) continue;
          if (p.b[k].open && CanPre(p.b[k], t)) return IssueRow(ch, t, {Cmd::kPre, pc, k, 0, 0});
          if (CanRefPb(p, k, t)) return IssueRow(ch, t, {Cmd::kRefPb, pc, k, 0, 0});
        }
      }
      const int k = rng_.Range(0, o_.banks() - 1);
      if (p.per_bank_refresh && Due(p, k)) continue;
      if (!p.b[k].open) {
        const uint32_t row = uint32_t(rng_.Range(0, std::min(7, (1 << o_.row_bits) - 1)));
        if (CanAct(p, k, t)) return IssueRow(ch, t, {Cmd::kAct, pc, k, row, 0});
      } else if (rng_.Range(0, 3) == 0 && CanPre(p.b[k], t)) {
        return IssueRow(ch, t, {Cmd::kPre, pc, k, 0, 0});
      }
    }
  }

  void ColumnCommand(Channel& ch, int64_t t) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      const int pc = rng_.Range(0, o_.pcs - 1);
      const int k = rng_.Range(0, o_.banks() - 1);
      P& p = pcs_[pc];
      B& b = p.b[k];
      if (AllBankDue(p) || (p.per_bank_refresh && Due(p, k))) continue;  // let it close
      // Reads and writes come in streaks (either starves the other when mixed at random), with
      // a stray one of the other kind now and then for the turnarounds.
      const bool read = p.writing == (rng_.Range(0, 7) == 0);
      const bool autopre = rng_.Range(0, 7) == 0;
      if (!CanColumn(p, k, read, t)) continue;
      const int col = rng_.Range(0, o_.columns - 1);
      const Cmd cmd = read ? (autopre ? Cmd::kRda : Cmd::kRd) : (autopre ? Cmd::kWra : Cmd::kWr);
      ch.Issue(t, {cmd, pc, k, 0, col});
      last_col_ = t;
      if (rng_.Range(0, 15) == 0) p.writing = !p.writing;
      p.col_bg[Bg(k)] = t;
      int64_t close;
      if (read) {
        b.rd = p.rd = t;
        reads_[pc].push_back({t + t_.cl, pc, k, b.row, col, {}, 0});
        close = t + t_.rtp;
      } else {
        b.wend = p.wend_bg[Bg(k)] = t + t_.cwl + t_.bl;
        Pending w{t + t_.cwl, pc, k, b.row, col, {}, 0xFFFFFFFFu};
        for (auto& x : w.data) x = uint8_t(rng_.Next());
        if (rng_.Range(0, 3) == 0) w.strb = rng_.U32();
        writes_.push_back(w);
        close = b.wend + t_.wr;
      }
      if (autopre) {
        b.open = false;
        b.apc = std::max(b.act + t_.ras, close);
      }
      return;
    }
  }

  Burst& Cell(const Channel& ch, int pc, int bank, uint32_t row, int col) {
    const auto key = std::make_tuple(pc, bank, row, col);
    auto it = shadow_.find(key);
    if (it == shadow_.end()) {
      Burst bg;
      Channel::Background(ch.channel(), pc, bank, row, col, bg.data());
      it = shadow_.emplace(key, bg).first;
    }
    return it->second;
  }

  void Mismatch(const std::string& what) {
    if (mismatches_++ == 0) first_ = what;
  }

  Org o_;
  Timing t_;
  tb::Rng rng_;
  std::vector<P> pcs_;
  int64_t epoch_ = 0, last_row_ = kNo, last_act_ = kNo, last_col_ = kNo;
  std::deque<Pending> writes_;
  std::map<int, std::deque<Pending>> reads_;
  std::map<std::tuple<int, int, uint32_t, int>, Burst> shadow_;
  uint64_t mismatches_ = 0;
  std::string first_;
};

TEST_F(HbmDeviceTest, RandomLegalTrafficHasNoViolations) {
  tb::Rng rng(test::TestSeed());
  Org small;
  small.bank_groups = 2;
  small.banks_per_group = 2;
  small.row_bits = 2;
  small.columns = 4;
  const int64_t cycles = int64_t(test::Scaled(40000));
  for (const PresetRow& row : kPresets) {  // every preset of the table, a new one included
    const char* preset = row.name;
    for (const Org& org : {Org{}, small}) {
      SCOPED_TRACE(fmt::format("preset {}, {} banks", preset, org.banks()));
      Channel ch(org, Timing::ByName(preset), 1);
      LegalTraffic traffic(org, ch.timing(), rng.Next());
      for (int64_t t = 0; t < cycles; ++t) traffic.Cycle(ch, t);
      EXPECT_TRUE(ch.violations().empty()) << ch.violations().size() << " violations, the first:\n"
                                           << ch.violations().front().ToString();
      EXPECT_EQ(traffic.mismatches(), 0u) << traffic.first_mismatch();
      for (int pc = 0; pc < org.pcs; ++pc) {
        const auto& s = ch.stats(pc);
        EXPECT_GT(s.act, uint64_t(cycles / 200)) << "pc" << pc;
        EXPECT_GT(s.rd, uint64_t(cycles / 100)) << "pc" << pc;
        EXPECT_GT(s.wr, uint64_t(cycles / 100)) << "pc" << pc;
        const uint64_t intervals = uint64_t(cycles / ch.timing().refi);
        EXPECT_GE(s.refab * org.banks() + s.refpb, (intervals - 1) * org.banks()) << "pc" << pc;
      }
    }
  }
}

}  // namespace
}  // namespace tpu
