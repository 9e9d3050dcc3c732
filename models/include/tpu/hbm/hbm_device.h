// SPDX-License-Identifier: Apache-2.0
// HBM2 channel device model: bank state per pseudo-channel, sparse data storage, read data at RL,
// and a checker for every rule of docs/hbm.md (spacings, bank states, command-bus
// occupancy, refresh debt). Plain C++: unit tests need no SystemC kernel.
//
// Time is in cycles of tCK. The model is driven one cycle at a time, in increasing order:
//   for each cycle t: Issue(t, cmd) for the row command and/or the column command of that cycle,
//                     WriteData(t, pc, ...) for write bursts whose data is on the bus at t,
//                     ReadData(t, pc, out) to collect the burst due at t (if any),
//                     EndCycle(t).
// A burst is handled as one 32-byte word presented on the first of its nBL data cycles (the
// controller's memory-side interface is burst-level): write data is due at WR + nCWL, read data
// is returned at RD + nCL.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "tpu/hbm/hbm_presets.h"

namespace tpu::hbm {

// Every timing value of the spec, in cycles: hbm::Timing and the presets (tpu/hbm/hbm_presets.h,
// generated from rtl/hbm/hbm_presets.json).

// Organisation of one channel.
struct Org {
  int pcs = 2;              // pseudo-channels per channel
  int bank_groups = 4;      // per PC
  int banks_per_group = 4;  // bank = bg * banks_per_group + ba
  int row_bits = 16;        // rows per bank = 2^row_bits
  int columns = 32;         // 32-byte column bursts per 1 KB row
  static constexpr int kBurstBytes = 32;
  int banks() const { return bank_groups * banks_per_group; }
};

enum class Cmd : uint8_t { kAct, kPre, kPreA, kRefAb, kRefPb, kRd, kRda, kWr, kWra };
const char* CmdName(Cmd c);
inline bool IsColumn(Cmd c) {
  return c >= Cmd::kRd;
}
inline bool IsRow(Cmd c) {
  return c < Cmd::kRd;
}

struct Command {
  Cmd cmd = Cmd::kAct;
  int pc = 0;
  int bank = 0;      // 0 .. banks-1 (ignored by PREA and REFab)
  uint32_t row = 0;  // ACT only
  int col = 0;       // column commands only: 0 .. columns-1
};

// One broken rule: when, which command, where, which rule, required and actual spacing.
// Conventions: a spacing rule has required = its minimum and actual = cycles since the earlier
// event; a state rule has both 0; "row bus busy" / "column bus busy" have the cycles since the
// command holding the bus; "refresh debt" has required = the bound broken (+8 or -8) and
// actual = the debt (cmd REFab with bank -1 when every bank of the PC left the range at once,
// else REFpb with the bank); "write data timing" has required = nCWL and actual = data cycle -
// WR cycle, or -1 when no data came (reported at the due cycle; updated if it comes late) or
// when no WR was pending (cmd.bank = -1). PREA and REFab carry bank -1 unless one bank broke it.
struct Violation {
  uint64_t cycle = 0;
  int channel = 0;  // the Channel's label
  Command cmd;
  // e.g. "nRCDRD", "state: RD to a closed bank", "row bus busy", "refresh debt"
  std::string rule;
  int64_t required = 0;          // required spacing (or bound)
  int64_t actual = 0;            // actual spacing (or value)
  std::string ToString() const;  // one line naming all of the above
};

struct Stats {
  uint64_t act = 0, pre = 0, prea = 0, refab = 0, refpb = 0;
  uint64_t rd = 0, wr = 0;  // column commands, auto-precharge variants included
};

class Channel {
 public:
  // `channel` only labels messages. Throws std::invalid_argument on a bad Org or Timing.
  Channel(const Org& org, const Timing& t, int channel = 0);

  // Check a command issued at `cycle` and apply it. Violations are recorded (see violations()),
  // the command is still applied as far as it makes sense, and the model never throws for them.
  // Throws std::invalid_argument for a malformed command (pc, bank, row or column out of range)
  // or a cycle earlier than the last one seen.
  void Issue(uint64_t cycle, const Command& c);
  // Write data of a burst: must be on the bus exactly nCWL after its WR/WRA (else a violation
  // "write data timing"). `strb` bit i = 1 writes byte i (a 0 is the data mask).
  void WriteData(uint64_t cycle, int pc, const uint8_t* data32, uint32_t strb);
  // True (and `out` filled with the burst's 32 bytes) when read data of `pc` is due at `cycle`.
  bool ReadData(uint64_t cycle, int pc, uint8_t* out32);
  // Checks at the end of a cycle: the refresh debt of every bank (see RefreshDebt) within
  // [-8, +8]; write bursts whose data never came. Call once per cycle.
  void EndCycle(uint64_t cycle);

  // Backdoor access (no timing): one 32-byte burst at (pc, bank, row, col).
  void Peek(int pc, int bank, uint32_t row, int col, uint8_t* out32) const;
  void Poke(int pc, int bank, uint32_t row, int col, const uint8_t* data32);
  // Contents of never-written storage: a fixed pseudo-random function of the location, so a
  // read of the wrong location is visible even before anything was written.
  static void Background(int channel, int pc, int bank, uint32_t row, int col, uint8_t* out32);

  const std::vector<Violation>& violations() const { return violations_; }
  const Stats& stats(int pc) const { return stats_.at(pc); }
  const Org& org() const { return org_; }
  const Timing& timing() const { return t_; }
  int channel() const { return channel_; }
  // Refresh debt as the spec defines it, at `cycle`, per bank: debt = floor(cycle / nREFI) -
  // (REFab issued to the PC + REFpb issued to that bank). A REFab refreshes every bank of its PC,
  // a REFpb one bank, so the same rule covers all-bank mode (where it is the PC's debt), per-bank
  // mode (a REFpb every nREFIsb = nREFI / 16 on average keeps each bank at most 0 behind) and any
  // mix. Checked in EndCycle: within [-8, +8] at every cycle.
  int64_t RefreshDebt(uint64_t cycle, int pc, int bank) const;

  // Bank state, as the checker sees it (for observers; never changes the checking): whether a bank
  // is open (activated and not yet precharged, auto-precharge included), and how many of a PC's
  // banks are. Throw std::invalid_argument for a pc or bank out of range.
  bool BankOpen(int pc, int bank) const;
  int OpenBanks(int pc) const;

  // An observer of every well-formed command, called by Issue before the command is checked and
  // applied, so BankOpen / OpenBanks give the state the command finds (e.g. functional coverage
  // of command x bank state, tpu/tb/fcov.h). It must not issue commands. Empty: none (default).
  using CommandObserver = std::function<void(const Channel&, uint64_t cycle, const Command&)>;
  void SetCommandObserver(CommandObserver observer) { observer_ = std::move(observer); }

 private:
  static constexpr int64_t kNever = -(int64_t(1) << 40);  // "long ago": passes every spacing
  struct BankState {
    bool open = false;
    bool auto_pre = false;  // closed by RDA/WRA (for the state message)
    uint32_t row = 0;       // open row (the last one once closed)
    int64_t act = kNever, pre = kNever, ap_close = kNever, rd = kNever, wr_end = kNever;
    int64_t refpb = kNever;
    int64_t refpb_count = 0;
    bool debt_out = false;  // refresh debt out of range (reported once per excursion)
  };
  struct Burst {
    int64_t due = 0;  // data cycle: WR + nCWL or RD + nCL
    Command cmd;      // the column command (bank, col)
    uint32_t row = 0;
    int64_t issued = 0;
    bool missed = false;   // write data not on the bus at `due` (already reported)
    size_t violation = 0;  // index of that report (updated if the data comes late)
  };
  struct PcState {
    std::vector<BankState> banks;
    std::vector<int64_t> col_bg;     // last column command per bank group
    std::vector<int64_t> wr_end_bg;  // last end of write data per bank group
    // The last four ACTs (a ring).
    std::array<int64_t, 4> faw{{kNever, kNever, kNever, kNever}};
    int faw_head = 0;        // the oldest of them
    int64_t rd = kNever;     // last RD/RDA
    int64_t refab = kNever;  // last REFab
    int64_t refab_count = 0;
    bool debt_dirty = false;  // refresh counts changed since the last debt evaluation
    std::deque<Burst> writes, reads;
  };

  void Flag(int64_t cycle, const Command& c, std::string rule, int64_t required, int64_t actual);
  void Need(int64_t cycle, const Command& c, int64_t last, int64_t spacing, const char* rule);
  void CheckBuses(int64_t cycle, const Command& c);
  void DoAct(int64_t cycle, const Command& c);
  void ClosingChecks(int64_t cycle, const Command& c, int bank);  // nRAS, nRTP, nWR
  void DoRefAb(int64_t cycle, const Command& c);
  void DoRefPb(int64_t cycle, const Command& c);
  void DoColumn(int64_t cycle, const Command& c);
  void EvaluateDebt(int64_t cycle, int pc);
  void CheckLocation(const char* where, int pc, int bank, uint32_t row, int col) const;
  uint64_t Key(int pc, int bank, uint32_t row, int col) const;
  void Load(int pc, int bank, uint32_t row, int col, uint8_t* out32) const;

  Org org_;
  Timing t_;
  int channel_;
  std::vector<Violation> violations_;
  std::vector<Stats> stats_;
  std::vector<PcState> pcs_;
  int64_t last_cycle_ = 0;        // latest cycle seen by Issue or EndCycle
  int64_t row_bus_ = kNever;      // last row command
  int64_t act_bus_ = kNever;      // last ACT (holds the row bus one more cycle)
  int64_t col_bus_ = kNever;      // last column command
  int64_t epoch_ = 0;             // floor(cycle / nREFI) at the last EndCycle
  int64_t next_epoch_cycle_ = 0;  // first cycle of the next nREFI interval
  std::unordered_map<uint64_t, std::array<uint8_t, Org::kBurstBytes>> data_;
  CommandObserver observer_;
};

}  // namespace tpu::hbm
