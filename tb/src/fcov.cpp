// SPDX-License-Identifier: Apache-2.0
// Functional coverage: the registry of groups, the per-thread counters, the JSON writer and the
// catalog of the testbench's groups (see tpu/tb/fcov.h and docs/fcov.md).
#include "tpu/tb/fcov.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpu/hbm/hbm_device.h"
#include "tpu/isa.h"

namespace tpu::tb::fcov {

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// mkdir -p; returns "" or what went wrong.
std::string MakeDirs(const std::string& dir) {
  std::string path;
  size_t i = 0;
  while (i <= dir.size()) {
    const size_t j = dir.find('/', i);
    path = dir.substr(0, j == std::string::npos ? dir.size() : j);
    i = (j == std::string::npos ? dir.size() : j) + 1;
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) {
      return fmt::format("cannot create directory {}: {}", path, std::strerror(errno));
    }
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fmt::format("{} is not a directory", dir);
  }
  return "";
}

// The command line of this process, from /proc (empty where there is no /proc).
std::vector<std::string> CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0')) args.push_back(arg);
  return args;
}

void WriteAtExit();

}  // namespace

// ---------------------------------------------------------------------------------------------
// The registry: groups, slots, per-thread blocks.

class Registry {
 public:
  // Never destroyed: threads that end after the exit handlers still fold their blocks into it.
  static Registry& Get() {
    static Registry* r = new Registry();
    return *r;
  }

  const Group& Declare(const std::string& name, const std::string& description,
                       const std::vector<std::string>& bins) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = by_name_.find(name);
    if (it != by_name_.end()) {
      if (it->second->bins() != bins) {
        throw std::logic_error(
            fmt::format("fcov: group '{}' declared again with other bins", name));
      }
      return *it->second;
    }
    if (bins.empty()) throw std::logic_error(fmt::format("fcov: group '{}' has no bins", name));
    if (next_slot_ + bins.size() > detail::kMaxSlots) {
      throw std::logic_error(
          fmt::format("fcov: group '{}' does not fit: {} bins declared, {} more, room for {} "
                      "(detail::kMaxSlots)",
                      name, next_slot_, bins.size(), detail::kMaxSlots));
    }
    groups_.push_back(std::unique_ptr<Group>(new Group(name, description, bins, next_slot_)));
    next_slot_ += bins.size();
    by_name_[name] = groups_.back().get();
    return *groups_.back();
  }

  std::atomic<uint64_t>* Attach() {
    auto* block = new std::atomic<uint64_t>[detail::kMaxSlots];
    for (size_t i = 0; i < detail::kMaxSlots; ++i) block[i].store(0, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(block);
    return block;
  }

  // A thread ends: its counts go into the process totals.
  void Detach(std::atomic<uint64_t>* block) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < detail::kMaxSlots; ++i) {
      folded_[i] += block[i].load(std::memory_order_relaxed);
    }
    live_.erase(block);
    delete[] block;
  }

  uint64_t Total(size_t slot) {
    std::lock_guard<std::mutex> lock(mu_);
    return TotalLocked(slot);
  }

  std::string Write() {
    if (!Enabled()) return "";
    Groups();  // every file lists the whole catalog, hit or not
    const std::string& dir = OutputDir();
    const std::string err = MakeDirs(dir);
    if (!err.empty()) {
      throw std::runtime_error(fmt::format("fcov: TPU_FCOV_DIR={}: {}", dir, err));
    }
    std::string json;
    {
      std::lock_guard<std::mutex> lock(mu_);
      json = Json();
    }
    const long pid = static_cast<long>(::getpid());
    for (int n = 0; n < 1000; ++n) {
      const std::string path = n == 0 ? fmt::format("{}/fcov_{}.json", dir, pid)
                                      : fmt::format("{}/fcov_{}_{}.json", dir, pid, n);
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666);
      if (fd < 0 && errno == EEXIST) continue;  // an earlier process with this pid, or WriteNow
      if (fd < 0) {
        throw std::runtime_error(
            fmt::format("fcov: cannot create {}: {}", path, std::strerror(errno)));
      }
      size_t done = 0;
      while (done < json.size()) {
        const ssize_t w = ::write(fd, json.data() + done, json.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
          const int e = errno;
          ::close(fd);
          throw std::runtime_error(fmt::format("fcov: cannot write {}: {}", path,
                                               w < 0 ? std::strerror(e) : "short write"));
        }
        done += static_cast<size_t>(w);
      }
      if (::close(fd) != 0) {
        throw std::runtime_error(
            fmt::format("fcov: cannot write {}: {}", path, std::strerror(errno)));
      }
      return path;
    }
    throw std::runtime_error(fmt::format("fcov: no free file name for pid {} in {}", pid, dir));
  }

 private:
  Registry() : folded_(detail::kMaxSlots, 0) {
    if (Enabled()) {
      const std::string err = MakeDirs(OutputDir());
      if (!err.empty()) {
        fmt::print(stderr, "fcov: TPU_FCOV_DIR={}: {} (coverage will not be written)\n",
                   OutputDir(), err);
      }
      std::atexit(WriteAtExit);
    }
  }

  uint64_t TotalLocked(size_t slot) const {
    uint64_t n = folded_[slot];
    for (const auto* block : live_) n += block[slot].load(std::memory_order_relaxed);
    return n;
  }

  // The file's text (nlohmann-json; bytes that are not UTF-8 in an argument become U+FFFD).
  std::string Json() const {
    const auto args = CommandLine();
    std::string program = args.empty() ? std::string("?") : args[0];
    const size_t slash = program.rfind('/');
    if (slash != std::string::npos) program = program.substr(slash + 1);
    nlohmann::ordered_json groups = nlohmann::ordered_json::array();
    for (const auto& grp : groups_) {
      std::vector<uint64_t> hits(grp->size());
      for (size_t b = 0; b < grp->size(); ++b) hits[b] = TotalLocked(grp->base_ + b);
      groups.push_back({{"name", grp->name()},
                        {"description", grp->description()},
                        {"bins", grp->bins()},
                        {"hits", hits}});
    }
    const nlohmann::ordered_json j = {
        {"format", "tpu-fcov-1"},
        {"program", program},
        {"pid", static_cast<long>(::getpid())},
        {"args", std::vector<std::string>(args.begin() + (args.empty() ? 0 : 1), args.end())},
        {"groups", groups}};
    return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }

  std::mutex mu_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::map<std::string, Group*> by_name_;
  size_t next_slot_ = 0;
  std::vector<uint64_t> folded_;
  std::set<std::atomic<uint64_t>*> live_;
};

namespace {

// Coverage was asked for: a process that cannot write it fails (exit status 3) rather than
// passing with its coverage silently missing.
void WriteAtExit() {
  try {
    Registry::Get().Write();
  } catch (const std::exception& e) {
    fmt::print(stderr, "{} (functional coverage of this process lost)\n", e.what());
    std::fflush(nullptr);
    std::_Exit(3);
  }
}

// Folds the thread's block into the totals when the thread ends.
struct ThreadBlock {
  std::atomic<uint64_t>* block = nullptr;
  ~ThreadBlock() {
    if (block != nullptr) {
      detail::t_counters = nullptr;
      Registry::Get().Detach(block);
    }
  }
};

}  // namespace

namespace detail {

std::atomic<uint64_t>* AttachThread() {
  static thread_local ThreadBlock owner;
  if (owner.block == nullptr) owner.block = Registry::Get().Attach();
  t_counters = owner.block;
  return owner.block;
}

void BadBin(const std::string& group, size_t bin, size_t size) {
  throw std::logic_error(
      fmt::format("fcov: bin {} of group '{}' is out of range (it has {} bins)", bin, group, size));
}

}  // namespace detail

uint64_t Group::Hits(size_t bin) const {
  if (bin >= bins_.size()) detail::BadBin(name_, bin, bins_.size());
  return Registry::Get().Total(base_ + bin);
}

const Group& Declare(const std::string& name, const std::string& description,
                     const std::vector<std::string>& bins) {
  return Registry::Get().Declare(name, description, bins);
}

bool Enabled() {
  static const bool enabled = !Env("TPU_FCOV_DIR").empty();
  return enabled;
}

const std::string& OutputDir() {
  static const std::string dir = Env("TPU_FCOV_DIR");
  return dir;
}

std::string WriteNow() {
  return Registry::Get().Write();
}

// ---------------------------------------------------------------------------------------------
// The catalog

namespace {

const char* const kOperandNames[] = {"+0",      "-0",   "+subnormal", "-subnormal", "+normal",
                                     "-normal", "+inf", "-inf",       "nan"};
static_assert(sizeof(kOperandNames) / sizeof(kOperandNames[0]) == kNumOperandBins);

std::vector<std::string> OperandBins() {
  return {std::begin(kOperandNames), std::end(kOperandNames)};
}

std::vector<std::string> HandshakeBins(const std::vector<std::string>& channels) {
  std::vector<std::string> bins;
  for (const auto& c : channels) {
    bins.push_back(c + ".stall");
    bins.push_back(c + ".xfer");
  }
  return bins;
}

const std::vector<std::string> kAxiChannels = {"ar", "r", "aw", "w", "b"};

using num::RoundCase;

// The rounding cases each group has, in bin order. Cases missing from a group cannot happen
// there: an IEEE result is never flushed; an FTZ result is never subnormal; a normal fp32
// never converts to a bf16 subnormal or zero, and in FTZ mode subnormal fp32 are read as zero.
const std::vector<RoundCase> kRoundIeee = {RoundCase::kSpecial,      RoundCase::kExact,
                                           RoundCase::kDown,         RoundCase::kUp,
                                           RoundCase::kTieEvenDown,  RoundCase::kTieEvenUp,
                                           RoundCase::kOverflow,     RoundCase::kUnderflowSubnormal,
                                           RoundCase::kUnderflowZero};
const std::vector<RoundCase> kRoundMacFtz = {
    RoundCase::kSpecial,  RoundCase::kExact,         RoundCase::kDown,
    RoundCase::kUp,       RoundCase::kTieEvenDown,   RoundCase::kTieEvenUp,
    RoundCase::kOverflow, RoundCase::kUnderflowZero, RoundCase::kFtzFlush};
const std::vector<RoundCase> kRoundCvtFtz = {
    RoundCase::kSpecial,     RoundCase::kExact,     RoundCase::kDown,     RoundCase::kUp,
    RoundCase::kTieEvenDown, RoundCase::kTieEvenUp, RoundCase::kOverflow, RoundCase::kFtzFlush};

// A rounding-case group and the map from RoundCase to its bin (-1: not a bin of the group).
struct RoundGroup {
  const Group* group = nullptr;
  int bin[num::kNumRoundCases];
};
RoundGroup MakeRoundGroup(const std::string& name, const std::string& description,
                          const std::vector<RoundCase>& cases) {
  RoundGroup r;
  std::fill(std::begin(r.bin), std::end(r.bin), -1);
  std::vector<std::string> bins;
  for (size_t i = 0; i < cases.size(); ++i) {
    bins.push_back(num::RoundCaseName(cases[i]));
    r.bin[static_cast<int>(cases[i])] = static_cast<int>(i);
  }
  r.group = &Declare(name, description, bins);
  return r;
}

struct RoundGroups {
  RoundGroup mac[2], cvt[2], fma32[2];
};

RoundGroups& Rounding() {
  static RoundGroups* r = [] {
    auto* g = new RoundGroups;
    g->mac[0] = MakeRoundGroup("mac.round.ieee",
                               "rounding of the MAC's fp32 result (golden model's rounding case "
                               "of every MAC evaluation driven into the RTL), IEEE mode",
                               kRoundIeee);
    g->mac[1] = MakeRoundGroup("mac.round.ftz", "as mac.round.ieee, FTZ mode", kRoundMacFtz);
    g->cvt[0] = MakeRoundGroup("cvt.round.ieee",
                               "rounding of the fp32->bf16 converter (of relu(x) when relu is "
                               "on), every conversion driven into the RTL, IEEE mode",
                               kRoundIeee);
    g->cvt[1] = MakeRoundGroup("cvt.round.ftz", "as cvt.round.ieee, FTZ mode", kRoundCvtFtz);
    g->fma32[0] = MakeRoundGroup("fma32.round.ieee",
                                 "rounding of the fp32 FMA's result (golden model's rounding "
                                 "case of every fma32 evaluation driven into the RTL), IEEE mode",
                                 kRoundIeee);
    g->fma32[1] = MakeRoundGroup("fma32.round.ftz", "as fma32.round.ieee, FTZ mode", kRoundMacFtz);
    return g;
  }();
  return *r;
}

void HitRound(const RoundGroup& g, RoundCase how) {
  const int bin = g.bin[static_cast<int>(how)];
  if (bin < 0) {
    throw std::logic_error(
        fmt::format("fcov: {}: the golden model reports rounding case '{}', "
                    "which this mode cannot produce",
                    g.group->name(), num::RoundCaseName(how)));
  }
  g.group->Hit(static_cast<size_t>(bin));
}

// The error codes reported at an instruction that belongs to a module (accel.error_behind).
constexpr std::array<const char*, 6> kBehindCodes = {
    "ERR_RESERVED", "ERR_FIELD", "ERR_HBM", "ERR_DEADLOCK", "ERR_TOKEN_OVERFLOW", "ERR_WINDOW"};

// The module of an instruction by its bytes: 0 load, 1 compute, 2 store, -1 none (HEADER, END,
// an unknown opcode).
int ModuleByBytes(const uint8_t* in, bool vector_unit) {
  const std::optional<isa::Module> m = isa::ModuleOfBytes(in, vector_unit);  // as Decode below
  return m && int(*m) <= int(isa::Module::kStore) ? int(*m) : -1;
}

Catalog* MakeCatalog() {
  auto* c = new Catalog;
  const char* const ops[] = {"a", "b", "c"};
  const char* const op_desc[] = {"bf16 operand a", "bf16 operand b", "fp32 addend c"};
  const char* const modes[] = {"ieee", "ftz"};
  const char* const mode_desc[] = {"IEEE mode", "FTZ mode"};
  for (int o = 0; o < 3; ++o) {
    for (int m = 0; m < 2; ++m) {
      c->mac_operand[o][m] =
          &Declare(fmt::format("mac.{}.{}", ops[o], modes[m]),
                   fmt::format("class of the {} of every MAC evaluation driven into the MAC RTL "
                               "(EvalMac, MacPipeChecker), {}",
                               op_desc[o], mode_desc[m]),
                   OperandBins());
    }
  }
  const char* const fma32_desc[] = {"fp32 operand a", "fp32 operand b", "fp32 addend c"};
  for (int o = 0; o < 3; ++o) {
    for (int m = 0; m < 2; ++m) {
      c->fma32_operand[o][m] = &Declare(
          fmt::format("fma32.{}.{}", ops[o], modes[m]),
          fmt::format("class of the {} of every fp32 FMA evaluation driven into the fma32 RTL "
                      "(EvalFma32, MacPipeChecker), {}",
                      fma32_desc[o], mode_desc[m]),
          OperandBins());
    }
  }
  const RoundGroups& r = Rounding();
  c->fma32_round[0] = r.fma32[0].group;
  c->fma32_round[1] = r.fma32[1].group;
  c->mac_round[0] = r.mac[0].group;
  c->mac_round[1] = r.mac[1].group;
  c->cvt_round[0] = r.cvt[0].group;
  c->cvt_round[1] = r.cvt[1].group;
  c->cvt_relu = &Declare("cvt.relu",
                         "the converter's relu (relu_i = 1), by input: kept (> 0), clamped to +0 "
                         "(< 0), the zeros (both give +0), NaN (canonical NaN)",
                         {"positive", "negative", "+0", "-0", "nan"});
  const char* const mxu_ops[] = {"a", "b", "c0"};
  const char* const mxu_desc[] = {"activation (A, bf16)", "weight (B, bf16)",
                                  "accumulator preload (C0, fp32)"};
  for (int o = 0; o < 3; ++o) {
    for (int m = 0; m < 2; ++m) {
      c->mxu_operand[o][m] =
          &Declare(fmt::format("mxu.{}.{}", mxu_ops[o], modes[m]),
                   fmt::format("class of every {} element the matrix unit took (padding lanes "
                               "excluded), {}",
                               mxu_desc[o], mode_desc[m]),
                   OperandBins());
    }
  }
  c->mxu_ports = &Declare("mxu.handshake",
                          "the matrix unit's valid/ready inputs (command, weights, activations, "
                          "accumulator load): valid with ready low (stall), and transfers",
                          HandshakeBins({"cmd", "w", "a", "ld"}));
  c->hbm_cmd = &Declare(
      "hbm.cmd",
      "each legal HBM command in the bank state it finds (device model's view, before the "
      "command): ACT to a precharged bank; column commands to an open bank (its open row); PRE "
      "to an open bank; PREA with banks open; REFab with all banks precharged; REFpb to a "
      "precharged bank",
      {"ACT.idle_bank.pc_idle", "ACT.idle_bank.others_open", "RD.open_bank", "RDA.open_bank",
       "WR.open_bank", "WRA.open_bank", "PRE.open_bank", "PREA.one_open", "PREA.several_open",
       "REFab.all_idle", "REFpb.idle_bank.pc_idle", "REFpb.idle_bank.others_open"});
  c->hbm_refresh = &Declare("hbm.refresh",
                            "refresh commands issued while AXI requests were outstanding "
                            "(accepted and not answered) on the HBM subsystem's ports",
                            {"REFab.axi_outstanding", "REFpb.axi_outstanding"});
  c->accel_host = &Declare("accel.host",
                           "the accelerator's AXI4-Lite host port: valid with ready low (stall), "
                           "and transfers, per channel",
                           HandshakeBins(kAxiChannels));
  c->accel_instr = &Declare("accel.instr",
                            "instructions the accelerator executed (before the reported error pc, "
                            "or through END), by opcode and variant",
                            {"HEADER",
                             "LOAD.act",
                             "LOAD.wgt",
                             "LOAD.acc",
                             "GEMM",
                             "GEMM.accumulate",
                             "GEMM.load_weights",
                             "GEMM.load_weights.accumulate",
                             "STORE.fp32",
                             "STORE.fp32.relu",
                             "STORE.bf16",
                             "STORE.bf16.relu",
                             "END",
                             "GEMM.window",
                             "GEMM.window.reuse_weights",
                             "GEMM.broadcast",
                             "LOAD.act.transpose",
                             "LOAD.wgt.transpose",
                             "LOAD.vmem.fp32",
                             "LOAD.vmem.bf16",
                             "STORE.vmem",
                             "VOP",
                             "VOP.a_vmem",
                             "VOP.b_scalar",
                             "LOAD.acc.hold",
                             "LOAD.acc.add"});
  std::vector<std::string> codes(isa::kErrorNames.begin(), isa::kErrorNames.end());
  c->accel_error =
      &Declare("accel.error", "error codes the accelerator reported (ERR_CODE after a run)", codes);
  c->accel_error_behind = &Declare(
      "accel.error_behind",
      "errors reported at an instruction with a later instruction of the same module (load, "
      "compute or store; a LOAD's by its buffer byte) before END: the machine must name the "
      "faulty one, not the next one its module holds",
      std::vector<std::string>(kBehindCodes.begin(), kBehindCodes.end()));
  HbmPort(0);
  HbmPort(1);
  return c;
}

}  // namespace

const Catalog& Groups() {
  static const Catalog* c = MakeCatalog();
  return *c;
}

const Group& HbmPort(int port) {
  return AxiPort(fmt::format("hbm.axi.port{}", port),
                 fmt::format("AXI4 channels of the HBM subsystem's port {} (pseudo-channel {} of "
                             "channel {}): valid with ready low (stall), and transfers",
                             port, port % 2, port / 2));
}

const Group& AxiPort(const std::string& name, const std::string& description) {
  return Declare(name, description, HandshakeBins(kAxiChannels));
}

void MacRounding(uint16_t a, uint16_t b, uint32_t c, num::Mode mode) {
  num::RoundCase how;
  num::Mac(a, b, c, mode, &how);
  HitRound(Rounding().mac[ModeIndex(mode)], how);
}

void Fma32Rounding(uint32_t a, uint32_t b, uint32_t c, num::Mode mode) {
  num::RoundCase how;
  num::Fma32(a, b, c, mode, &how);
  HitRound(Rounding().fma32[ModeIndex(mode)], how);
}

void Cvt(uint32_t x, bool relu, num::Mode mode) {
  const Catalog& g = Groups();
  uint32_t v = x;
  if (relu) {
    size_t bin;
    if (num::IsNaN32(x)) {
      bin = 4;
    } else if ((x & 0x7FFFFFFFu) == 0) {
      bin = x != 0 ? 3 : 2;
    } else {
      bin = (x >> 31) != 0 ? 1 : 0;
    }
    g.cvt_relu->Hit(bin);
    v = num::Relu(x);
  }
  if (!Enabled()) return;  // the rounding case is derived only when coverage is written
  num::RoundCase how;
  num::Fp32ToBf16(v, mode, &how);
  HitRound(Rounding().cvt[ModeIndex(mode)], how);
}

void HbmCommand(const hbm::Channel& dev, const hbm::Command& c, int64_t axi_outstanding) {
  using hbm::Cmd;
  const hbm::Org& org = dev.org();
  if (c.pc < 0 || c.pc >= org.pcs) return;  // malformed: Issue reports it
  const bool per_bank = c.cmd != Cmd::kPreA && c.cmd != Cmd::kRefAb;
  if (per_bank && (c.bank < 0 || c.bank >= org.banks())) return;
  const Catalog& g = Groups();
  const int open = dev.OpenBanks(c.pc);
  const bool bank_open = per_bank && dev.BankOpen(c.pc, c.bank);
  const auto hit = [&](HbmCmdBin b) { g.hbm_cmd->Hit(b); };
  switch (c.cmd) {
    case Cmd::kAct:
      if (!bank_open) hit(open > 0 ? kActIdleBankOthersOpen : kActIdleBankAllIdle);
      break;
    case Cmd::kRd:
      if (bank_open) hit(kRdOpen);
      break;
    case Cmd::kRda:
      if (bank_open) hit(kRdaOpen);
      break;
    case Cmd::kWr:
      if (bank_open) hit(kWrOpen);
      break;
    case Cmd::kWra:
      if (bank_open) hit(kWraOpen);
      break;
    case Cmd::kPre:
      if (bank_open) hit(kPreOpen);
      break;
    case Cmd::kPreA:
      if (open == 1) hit(kPreaOneOpen);
      if (open > 1) hit(kPreaSeveralOpen);
      break;
    case Cmd::kRefAb:
      if (open == 0) hit(kRefabAllIdle);
      if (axi_outstanding > 0) g.hbm_refresh->Hit(kRefabInTraffic);
      break;
    case Cmd::kRefPb:
      if (!bank_open) hit(open > 0 ? kRefpbOthersOpen : kRefpbAllIdle);
      if (axi_outstanding > 0) g.hbm_refresh->Hit(kRefpbInTraffic);
      break;
  }
}

void AccelRun(const std::vector<uint8_t>& prog, isa::ErrorCode code, uint32_t pc,
              bool vector_unit) {
  const Catalog& g = Groups();
  g.accel_error->Hit(static_cast<size_t>(code));
  const bool ok = code == isa::ErrorCode::kOk;
  const size_t n = prog.size() / isa::kInstrBytes;
  if (!ok && pc < n) {
    const std::string name = isa::kErrorNames.at(static_cast<size_t>(code));
    const auto b = std::find(kBehindCodes.begin(), kBehindCodes.end(), name);
    const int module = ModuleByBytes(prog.data() + size_t(pc) * isa::kInstrBytes, vector_unit);
    for (size_t i = size_t(pc) + 1; b != kBehindCodes.end() && module >= 0 && i < n; ++i) {
      const uint8_t* in = prog.data() + i * isa::kInstrBytes;
      if (in[0] == 5) break;  // END
      if (ModuleByBytes(in, vector_unit) == module) {
        g.accel_error_behind->Hit(size_t(b - kBehindCodes.begin()));
        break;
      }
    }
  }
  const size_t limit = ok ? n : std::min<size_t>(n, pc);
  for (size_t i = 0; i < limit; ++i) {
    const isa::DecodeResult d = isa::Decode(prog.data() + i * isa::kInstrBytes, vector_unit);
    if (!d.ok()) break;  // not before the reported pc (the machine decodes the same way)
    size_t bin = 0;
    switch (isa::OpcodeOf(d.instr)) {
      case isa::Opcode::kHeader: bin = 0; break;
      case isa::Opcode::kLoad: {
        const auto& l = std::get<isa::Load>(d.instr);
        if (vector_unit && l.buffer == isa::kBufVmem && l.format <= isa::kFmtBf16) {
          bin = l.format == isa::kFmtBf16 ? 19 : 18;
          break;
        }
        if (l.buffer > isa::kBufAcc) return;  // ERR_FIELD: the error's own pc, not counted here
        bin = 1 + l.buffer;
        if (l.transpose) g.accel_instr->Hit(16 + l.buffer);         // also counted by buffer
        if (l.hold || l.add) g.accel_instr->Hit(l.hold ? 24 : 25);  // version 1.5, likewise
        break;
      }
      case isa::Opcode::kGemm: {
        const auto& m = std::get<isa::Gemm>(d.instr);
        bin = 4 + (m.load_weights ? 2 : 0) + (m.accumulate ? 1 : 0);
        if (m.window) g.accel_instr->Hit(m.load_weights ? 13 : 14);  // also counted by mode
        if (m.broadcast) g.accel_instr->Hit(15);
        break;
      }
      case isa::Opcode::kStore: {
        const auto& s = std::get<isa::Store>(d.instr);
        if (s.format > isa::kFmtBf16 || s.activation > isa::kActRelu) return;  // as above
        if (s.source > isa::kSrcVmem) return;
        bin = 8 + (s.format == isa::kFmtBf16 ? 2 : 0) + (s.activation == isa::kActRelu ? 1 : 0);
        if (s.source == isa::kSrcVmem) g.accel_instr->Hit(20);  // also counted by format
        break;
      }
      case isa::Opcode::kEnd: bin = 12; break;
      case isa::Opcode::kVop: {
        const auto& v = std::get<isa::Vop>(d.instr);
        if (v.op >= isa::kNumVectorOps) return;  // as above
        bin = 21;
        if (v.a_vmem) g.accel_instr->Hit(22);
        if (v.b_scalar) g.accel_instr->Hit(23);
        break;
      }
    }
    g.accel_instr->Hit(bin);
    if (isa::OpcodeOf(d.instr) == isa::Opcode::kEnd) break;
  }
}

}  // namespace tpu::tb::fcov
