// SPDX-License-Identifier: Apache-2.0
#include "tpu/isa_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "tpu/gemm.h"
#include "tpu/vpu.h"

namespace tpu::isa {
namespace {

// Token queues, indexed as in docs/isa.md.
enum Queue { kLoadToCompute = 0, kComputeToLoad = 1, kComputeToStore = 2, kStoreToCompute = 3 };
constexpr const char* kQueueName[] = {"load->compute", "compute->load", "compute->store",
                                      "store->compute"};
constexpr int kModules = 3;  // load, compute, store

// The queue a flag of module m refers to (-1 when the module has no such neighbour).
int PopQueue(int m, bool prev) {
  if (m == 0) return prev ? -1 : kComputeToLoad;
  if (m == 1) return prev ? kLoadToCompute : kStoreToCompute;
  return prev ? kComputeToStore : -1;
}
int PushQueue(int m, bool prev) {
  if (m == 0) return prev ? -1 : kLoadToCompute;
  if (m == 1) return prev ? kComputeToLoad : kComputeToStore;
  return prev ? kStoreToCompute : -1;
}
int Consumer(int q) {
  switch (q) {
    case kLoadToCompute: return 1;
    case kComputeToLoad: return 0;
    case kComputeToStore: return 2;
    default: return 1;
  }
}

struct Step {
  uint32_t pc;
  std::array<int, 2> pops;  // queues, -1 = none
  std::array<int, 2> pushes;
  bool end;
};

using Clock = std::array<uint32_t, kModules>;

// Pass 2 of Run(): see isa_model.h. The command processor dispatches in program order into the
// modules' queues (at most `queue_depth` instructions dispatched but not started each; END goes
// into all three and needs room in all three); a module starts its oldest dispatched instruction
// when all its pops succeed. A bounded Kahn network: where it stops does not depend on the order
// in which Run() lets the dispatcher and the modules move.
class TokenChecker {
 public:
  TokenChecker(const std::vector<Instr>& prog, int queue_depth)
      : prog_(prog), queue_depth_(queue_depth) {
    SplitStreams();
    CountPops();
  }

  RunResult Run() {
    for (;;) {
      bool progress = Dispatch();
      bool all_done = true;
      for (int m = 0; m < kModules; ++m) {
        progress |= StartReady(m);
        all_done &= pos_[m] < dispatched_[m] && streams_[m][pos_[m]].end;
      }
      if (!all_done && progress) continue;
      if (overflow_pc_ != kNoPc)
        return {ErrorCode::kTokenOverflow, overflow_pc_, overflow_msg_, {}};
      if (all_done) return {};
      return Deadlock();
    }
  }

 private:
  static constexpr uint32_t kNoPc = std::numeric_limits<uint32_t>::max();

  // Each module's instructions in program order (END in all three).
  void SplitStreams() {
    for (uint32_t pc = 1; pc < prog_.size(); ++pc) {
      const Instr& in = prog_[pc];
      const Module mod = ModuleOf(in);
      const Deps& d = DepsOf(in);
      for (int m = 0; m < kModules; ++m) {
        if (mod != Module::kAll && int(mod) != m) continue;
        Step s{pc, {-1, -1}, {-1, -1}, mod == Module::kAll};
        if (d.pop_prev) s.pops[0] = PopQueue(m, true);
        if (d.pop_next) s.pops[1] = PopQueue(m, false);
        if (d.push_prev) s.pushes[0] = PushQueue(m, true);
        if (d.push_next) s.pushes[1] = PushQueue(m, false);
        streams_[m].push_back(s);
      }
    }
  }

  // pop_prefix_[q][n]: pops of q among the first n instructions of q's consumer.
  void CountPops() {
    for (int q = 0; q < 4; ++q) {
      const auto& st = streams_[Consumer(q)];
      pop_prefix_[q].assign(st.size() + 1, 0);
      for (size_t i = 0; i < st.size(); ++i) {
        const bool pops = st[i].pops[0] == q || st[i].pops[1] == q;
        pop_prefix_[q][i + 1] = pop_prefix_[q][i] + (pops ? 1 : 0);
      }
    }
  }

  bool Full(int m) const { return dispatched_[m] - pos_[m] >= size_t(queue_depth_); }

  // The dispatcher, in program order, while the target queue(s) have room.
  bool Dispatch() {
    bool progress = false;
    while (dpc_ < prog_.size()) {
      const Module mod = ModuleOf(prog_[dpc_]);
      if (mod == Module::kAll) {
        if (Full(0) || Full(1) || Full(2)) break;
        for (auto& n : dispatched_) ++n;
      } else {
        if (Full(int(mod))) break;
        ++dispatched_[size_t(mod)];
      }
      ++dpc_;
      progress = true;
    }
    return progress;
  }

  // Module m starts its dispatched instructions while their pops succeed (END: it is done).
  bool StartReady(int m) {
    bool progress = false;
    while (pos_[m] < dispatched_[m]) {
      const Step& s = streams_[m][pos_[m]];
      if (s.end) break;
      bool blocked = false;
      for (int q : s.pops) blocked |= q >= 0 && avail_[q] == 0;
      if (blocked) break;
      Clock c = clock_[m];
      for (int q : s.pops) {
        if (q < 0) continue;
        --avail_[q];
        const Clock& pc = pushed_[q][popped_[q]++];
        for (int k = 0; k < kModules; ++k) c[k] = std::max(c[k], pc[k]);
      }
      c[m] = uint32_t(pos_[m] + 1);
      clock_[m] = c;
      for (int q : s.pushes) {
        if (q >= 0) Push(q, s, c);
      }
      ++pos_[m];
      progress = true;
    }
    return progress;
  }

  // A push by step s at vector clock c: the tokens of q that may be outstanding are the pushes
  // so far minus the pops that must precede this push; more than kMaxTokens is an overflow.
  void Push(int q, const Step& s, const Clock& c) {
    ++avail_[q];
    pushed_[q].push_back(c);
    const uint64_t p = pushed_[q].size();
    const uint64_t must_pop = pop_prefix_[q][c[Consumer(q)]];
    if (p - must_pop > kMaxTokens && s.pc < overflow_pc_) {
      overflow_pc_ = s.pc;
      overflow_msg_ = fmt::format(
          "{} push #{} into the {} queue: only {} of its pops must come first, so the "
          "queue may hold {} tokens (at most {})",
          Disassemble(prog_[s.pc]), p, kQueueName[q], must_pop, p - must_pop, kMaxTokens);
    }
  }

  // Every dispatched head that is not END waits on a pop (there is one: a full queue the
  // dispatcher waits on holds at least one instruction that is not END, and once END is
  // dispatched everything is). The error names the earliest waiting instruction.
  RunResult Deadlock() const {
    uint32_t pc = kNoPc;
    std::string why;
    for (int m = 0; m < kModules; ++m) {
      if (pos_[m] == dispatched_[m]) continue;
      const Step& s = streams_[m][pos_[m]];
      if (s.end || s.pc >= pc) continue;
      pc = s.pc;
      int q = s.pops[0] >= 0 && avail_[s.pops[0]] == 0 ? s.pops[0] : s.pops[1];
      why = fmt::format("{} in the {} module waits on the empty {} queue", Disassemble(prog_[pc]),
                        ModuleName(Module(m)), kQueueName[q]);
    }
    if (dpc_ < prog_.size()) {
      const Module mod = ModuleOf(prog_[dpc_]);
      int m = int(mod);
      if (mod == Module::kAll) m = Full(0) ? 0 : Full(1) ? 1 : 2;
      why += fmt::format(
          "; the dispatcher is blocked: the {} queue is full ({} instructions dispatched but "
          "not started, QueueDepth={}), so {} at pc {} cannot be dispatched",
          ModuleName(Module(m)), dispatched_[m] - pos_[m], queue_depth_, Disassemble(prog_[dpc_]),
          dpc_);
    }
    std::string others;
    for (int m = 0; m < kModules; ++m) {
      const Step& s = streams_[m][pos_[m]];
      others += fmt::format("{}{} at {}{}", m ? ", " : "", ModuleName(Module(m)),
                            s.end ? fmt::format("END ({})", s.pc) : fmt::format("{}", s.pc),
                            pos_[m] == dispatched_[m] ? " (not dispatched)" : "");
    }
    return {ErrorCode::kDeadlock, pc, fmt::format("deadlock: {} (modules: {})", why, others), {}};
  }

  const std::vector<Instr>& prog_;
  const int queue_depth_;
  std::array<std::vector<Step>, kModules> streams_;
  std::array<std::vector<uint32_t>, 4> pop_prefix_;
  std::array<uint64_t, 4> avail_{};           // tokens in each queue
  std::array<std::vector<Clock>, 4> pushed_;  // clock of each push, in order
  std::array<uint64_t, 4> popped_{};
  std::array<size_t, kModules> pos_{};         // instructions started by each module
  std::array<size_t, kModules> dispatched_{};  // instructions dispatched to each module
  std::array<Clock, kModules> clock_{};
  uint32_t dpc_ = 1;  // the next instruction to dispatch (prog.back() is the END)
  uint32_t overflow_pc_ = kNoPc;
  std::string overflow_msg_;
};

RunResult CheckTokens(const std::vector<Instr>& prog, int queue_depth) {
  return TokenChecker(prog, queue_depth).Run();
}

uint64_t GetLe(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
void PutLe(uint8_t* p, int n, uint64_t v) {
  for (int i = 0; i < n; ++i) p[i] = uint8_t(v >> (8 * i));
}

}  // namespace

Machine::Machine(const MachineConfig& cfg) : cfg_(cfg) {
  auto bad = [](int v) { return v < 1 || v > 65535; };
  if (bad(cfg.r) || bad(cfg.c) || bad(cfg.act_depth) || bad(cfg.wgt_depth) || bad(cfg.acc_depth) ||
      bad(cfg.queue_depth) || cfg.hbm_bytes == 0 || cfg.vmem_depth < 0 || cfg.vmem_depth > 65535) {
    throw std::invalid_argument(fmt::format(
        "isa::Machine: R={} C={} ActDepth={} WgtDepth={} AccDepth={} QueueDepth={} must be in "
        "1..65535, VmemDepth={} in 0..65535 and HbmBytes={} at least 1",
        cfg.r, cfg.c, cfg.act_depth, cfg.wgt_depth, cfg.acc_depth, cfg.queue_depth, cfg.vmem_depth,
        cfg.hbm_bytes));
  }
  vmem_.assign(size_t(cfg.vmem_depth) * cfg.c, 0);
  vmem_def_.assign(vmem_.size(), 0);
  act_.assign(size_t(cfg.act_depth) * cfg.r, 0);
  wgt_.assign(size_t(cfg.wgt_depth) * cfg.c, 0);
  acc_.assign(size_t(cfg.acc_depth) * cfg.c, 0);
  w_.assign(size_t(cfg.r) * cfg.c, 0);
  act_def_.assign(act_.size(), 0);
  wgt_def_.assign(wgt_.size(), 0);
  acc_def_.assign(acc_.size(), 0);
  w_def_.assign(w_.size(), 0);
}

void Machine::CheckRange(uint64_t addr, uint64_t n, const char* what) const {
  if (addr > cfg_.hbm_bytes || n > cfg_.hbm_bytes - addr) {
    throw std::out_of_range(
        fmt::format("isa::Machine::{}: bytes 0x{:X} + {} exceed HbmBytes=0x{:X}", what, addr, n,
                    cfg_.hbm_bytes));
  }
}

void Machine::WriteHbm(uint64_t addr, const void* data, uint64_t n) {
  CheckRange(addr, n, "WriteHbm");
  const auto* src = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const uint64_t page = addr / kPageBytes, off = addr % kPageBytes;
    const uint64_t len = std::min(n, kPageBytes - off);
    auto& p = pages_[page];
    if (!p) p = std::make_unique<Page>();
    std::memcpy(p->data.data() + off, src, len);
    for (uint64_t b = off; b < off + len;) {  // mark [off, off + len) written, a word at a time
      const uint64_t bits = std::min<uint64_t>(64 - b % 64, off + len - b);
      p->written[b / 64] |= (bits == 64 ? ~uint64_t(0) : ((uint64_t(1) << bits) - 1)) << (b % 64);
      b += bits;
    }
    addr += len, src += len, n -= len;
  }
}

void Machine::ReadHbm(uint64_t addr, void* data, uint64_t n) const {
  CheckRange(addr, n, "ReadHbm");
  auto* dst = static_cast<uint8_t*>(data);
  while (n > 0) {
    const uint64_t page = addr / kPageBytes, off = addr % kPageBytes;
    const uint64_t len = std::min(n, kPageBytes - off);
    const auto it = pages_.find(page);
    if (it == pages_.end()) {
      std::memset(dst, 0, len);
    } else {
      std::memcpy(dst, it->second->data.data() + off, len);
    }
    addr += len, dst += len, n -= len;
  }
}

void Machine::LoadHbm(uint64_t addr, void* data, uint64_t n, RunResult* r) const {
  ReadHbm(addr, data, n);
  for (uint64_t a = addr; a < addr + n;) {
    const uint64_t page = a / kPageBytes, off = a % kPageBytes;
    const uint64_t len = std::min(addr + n - a, kPageBytes - off);
    const auto it = pages_.find(page);
    for (uint64_t b = off; b < off + len; ++b) {
      if (it != pages_.end() && (it->second->written[b / 64] >> (b % 64) & 1)) continue;
      if (r->unwritten_bytes_read++ == 0) r->first_unwritten = page * kPageBytes + b;
    }
    a += len;
  }
}

std::vector<uint8_t> Machine::ReadHbm(uint64_t addr, uint64_t n) const {
  std::vector<uint8_t> v(n);
  ReadHbm(addr, v.data(), n);
  return v;
}

void Machine::WriteProgram(uint64_t addr, const std::vector<Instr>& prog) {
  for (size_t i = 0; i < prog.size(); ++i) {
    const Bytes b = Encode(prog[i]);
    WriteHbm(addr + i * kInstrBytes, b.data(), b.size());
  }
}

RunResult Machine::Run(uint64_t prog_addr, uint32_t count) {
  // Pass 1: fetch, decode, check in program order.
  std::vector<Instr> prog;
  CheckContext ctx;
  ctx.host_count = count;
  uint32_t pc = 0;
  bool ended = false;
  for (; pc < count && !ended; ++pc) {
    const uint64_t addr = prog_addr + uint64_t(pc) * kInstrBytes;
    if (prog_addr % kInstrBytes != 0 || addr < prog_addr || addr >= cfg_.hbm_bytes ||
        cfg_.hbm_bytes - addr < kInstrBytes) {
      return {ErrorCode::kHbm,
              pc,
              fmt::format("program fetch: instruction {} at 0x{:X} (program at 0x{:X}) is "
                          "misaligned or beyond HbmBytes=0x{:X}",
                          pc, addr, prog_addr, cfg_.hbm_bytes),
              {}};
    }
    Bytes b;
    ReadHbm(addr, b.data(), b.size());
    if (pc == 0 && b[0] != uint8_t(Opcode::kHeader)) {
      return {ErrorCode::kHeader,
              0,
              fmt::format("no HEADER: instruction 0 has opcode=0x{:02X}", b[0]),
              {}};
    }
    DecodeResult d = Decode(b.data(), cfg_.vector_unit());
    if (!d.ok()) return {d.code, pc, d.message, {}};
    ctx.pc = pc;
    const CheckResult c = Check(d.instr, cfg_, ctx);
    if (!c.ok()) return {c.code, pc, c.message, {}};
    ctx.Advance(d.instr);
    ended = std::holds_alternative<End>(d.instr);
    prog.push_back(std::move(d.instr));
  }
  if (count == 0) {
    return {ErrorCode::kHeader, 0, "no HEADER: the host wrote a program length of 0", {}};
  }
  if (!ended) {
    return {ErrorCode::kNoEnd,
            count,
            fmt::format("no END in the program's {} instructions", count),
            {}};
  }
  // Pass 2: tokens.
  if (RunResult t = CheckTokens(prog, cfg_.queue_depth); !t.ok()) return t;
  // Pass 3: effects in program order.
  RunResult r;
  r.pc = uint32_t(prog.size() - 1);
  r.counters.instructions = prog.size();
  r.counters.program_length = count;
  r.counters.program_bytes = prog.size() * kInstrBytes;
  r.counters.dma_read_bytes = r.counters.program_bytes;
  std::fill(w_.begin(), w_.end(), 0);
  w_loaded_ = false;
  std::fill(w_def_.begin(), w_def_.end(), uint8_t{0});
  held_.assign(size_t(cfg_.c), 0);
  std::array<int64_t, 4> tokens{};
  for (const Instr& in : prog) {
    const bool clean = r.unwritten_bytes_read == 0;
    Execute(in, &r);
    if (clean && r.unwritten_bytes_read != 0) r.first_unwritten_pc = uint32_t(&in - prog.data());
    const Module mod = ModuleOf(in);
    if (mod != Module::kLoad && mod != Module::kCompute && mod != Module::kStore) continue;
    const int m = int(mod);
    const Deps d = DepsOf(in);
    // A flag with no neighbour (queue -1) never gets here: pass 1 rejected the program.
    auto count = [&tokens](int q, int64_t by) {
      if (q >= 0) tokens[size_t(q)] += by;
    };
    if (d.pop_prev) count(PopQueue(m, true), -1);
    if (d.pop_next) count(PopQueue(m, false), -1);
    if (d.push_prev) count(PushQueue(m, true), 1);
    if (d.push_next) count(PushQueue(m, false), 1);
  }
  for (size_t q = 0; q < 4; ++q) r.counters.tokens[q] = uint32_t(tokens[q]);
  return r;
}

void Machine::Execute(const Instr& in, RunResult* r) {
  Counters* ctr = &r->counters;
  const num::Mode mode = cfg_.mode;
  const Module mod = ModuleOf(in);
  if (mod == Module::kLoad || mod == Module::kCompute || mod == Module::kStore) {
    ++ctr->per_module[size_t(mod)];
  }
  const auto beats = [](uint64_t bytes) { return (bytes + 31) / 32 * 32; };
  if (const auto* v = std::get_if<Vop>(&in)) {
    ExecuteVop(*v);
  } else if (const auto* l = std::get_if<Load>(&in); l != nullptr && l->buffer == kBufVmem) {
    const int size = l->format == kFmtBf16 ? 2 : 4;
    ctr->dma_read_bytes += uint64_t(l->rows) * beats(uint64_t(l->elems) * size);
    std::vector<uint8_t> row(size_t(l->elems) * size);
    for (int i = 0; i < l->rows; ++i) {
      LoadHbm(l->hbm_addr + uint64_t(i) * l->hbm_stride, row.data(), row.size(), r);
      ctr->hbm_bytes_read += row.size();
      const size_t base = size_t(l->dst + i) * cfg_.c;
      for (int e = 0; e < cfg_.c; ++e) {
        uint32_t v = 0;
        if (e < l->elems) {
          v = size == 2 ? num::Bf16ToFp32(uint16_t(GetLe(&row[size_t(e) * 2], 2)))
                        : uint32_t(GetLe(&row[size_t(e) * 4], 4));
        }
        vmem_[base + e] = v, vmem_def_[base + e] = 1;
      }
    }
  } else if (const auto* l = std::get_if<Load>(&in)) {
    const int size = l->buffer == kBufAcc ? 4 : 2;
    const int width = l->buffer == kBufAct ? cfg_.r : cfg_.c;
    const bool once = l->buffer == kBufAcc && l->hbm_stride == 0;  // a bias: one row, repeated
    ctr->dma_read_bytes += uint64_t(once ? 1 : l->rows) * beats(uint64_t(l->elems) * size);
    std::vector<uint8_t> row(size_t(l->elems) * size);
    if (l->transpose) {  // buffers 0 and 1 only: HBM row i, element e -> buffer row dst + e, i
      uint16_t* buf = l->buffer == kBufAct ? act_.data() : wgt_.data();
      uint8_t* def = l->buffer == kBufAct ? act_def_.data() : wgt_def_.data();
      for (int e = 0; e < l->elems; ++e) {
        std::fill_n(&buf[size_t(l->dst + e) * width], width, uint16_t(0));
        std::fill_n(&def[size_t(l->dst + e) * width], width, uint8_t{1});
      }
      for (int i = 0; i < l->rows; ++i) {
        LoadHbm(l->hbm_addr + uint64_t(i) * l->hbm_stride, row.data(), row.size(), r);
        ctr->hbm_bytes_read += row.size();
        for (int e = 0; e < l->elems; ++e) {
          buf[size_t(l->dst + e) * width + i] = uint16_t(GetLe(&row[size_t(e) * size], size));
        }
      }
      return;
    }
    if (l->hold) {  // buffer 2, one row: into the held row (version 1.5)
      LoadHbm(l->hbm_addr, row.data(), row.size(), r);
      ctr->hbm_bytes_read += row.size();
      for (int e = 0; e < width; ++e) {
        held_[size_t(e)] = e < l->elems ? uint32_t(GetLe(&row[size_t(e) * size], size)) : 0;
      }
      return;
    }
    for (int i = 0; i < l->rows; ++i) {
      LoadHbm(l->hbm_addr + uint64_t(i) * l->hbm_stride, row.data(), row.size(), r);
      ctr->hbm_bytes_read += row.size();
      const size_t base = size_t(l->dst + i) * width;
      for (int e = 0; e < width; ++e) {
        uint64_t v = e < l->elems ? GetLe(&row[size_t(e) * size], size) : 0;
        // add (version 1.5): the row read plus the held row, the vector unit's add.
        if (l->add && e < l->elems) {
          v = ApplyVectorOp(VectorOp::kAdd, uint32_t(v), held_[size_t(e)], 0, mode);
        }
        if (l->buffer == kBufAct) act_[base + e] = uint16_t(v), act_def_[base + e] = 1;
        if (l->buffer == kBufWgt) wgt_[base + e] = uint16_t(v), wgt_def_[base + e] = 1;
        if (l->buffer == kBufAcc) acc_[base + e] = uint32_t(v), acc_def_[base + e] = 1;
      }
    }
  } else if (const auto* g = std::get_if<Gemm>(&in)) {
    if (g->load_weights) {  // the whole tile: +0 beyond kv rows and nv columns
      for (int k = 0; k < cfg_.r; ++k) {
        for (int n = 0; n < cfg_.c; ++n) {
          const bool in = k < g->kv && n < g->nv;
          const size_t src = size_t(g->wgt + k) * cfg_.c + n, i = size_t(k) * cfg_.c + n;
          w_[i] = in ? wgt_[src] : uint16_t{0};
          w_def_[i] = in ? wgt_def_[src] : uint8_t{1};
        }
      }
      w_loaded_ = true;
    }
    // A result is defined when every element it is computed from is (the machine computes the
    // others from whatever its memories held).
    std::vector<uint8_t> w_col_def(size_t(g->nv), 1);
    for (int n = 0; n < g->nv; ++n) {
      for (int k = 0; k < g->kv; ++k) w_col_def[size_t(n)] &= w_def_[size_t(k) * cfg_.c + n];
    }
    // Each row's initial values (its own, the broadcast row's or +0), then the contract's MACs
    // over kv in order for every row at once (gemm::MacRows: the fast kernel, bit-exact).
    std::vector<const uint16_t*> a_rows(size_t(g->rows));
    std::vector<uint32_t*> c_rows(size_t(g->rows));
    const uint32_t* init = &acc_[size_t(g->init_row) * cfg_.c];  // outside acc..acc+rows-1
    const uint8_t* init_def = &acc_def_[size_t(g->init_row) * cfg_.c];
    for (int m = 0; m < g->rows; ++m) {
      const int64_t row = g->window ? g->win.RowOf(m) : m;
      a_rows[size_t(m)] = row < 0 ? nullptr : &act_[size_t(g->act + row) * cfg_.r];  // null: +0
      bool a_def = true;  // a padding row (row < 0) is +0, defined
      for (int k = 0; row >= 0 && k < g->kv; ++k) {
        a_def = a_def && act_def_[size_t(g->act + row) * cfg_.r + k] != 0;
      }
      uint32_t* out = &acc_[size_t(g->acc + m) * cfg_.c];
      uint8_t* out_def = &acc_def_[size_t(g->acc + m) * cfg_.c];
      c_rows[size_t(m)] = out;
      for (int n = 0; n < g->nv; ++n) {
        if (!g->accumulate) out[n] = g->broadcast ? init[n] : 0u;
        out_def[n] = uint8_t(a_def && w_col_def[size_t(n)] &&
                             (g->accumulate ? out_def[n] != 0 : !g->broadcast || init_def[n] != 0));
      }
    }
    gemm::MacRows(g->rows, g->kv, g->nv, a_rows.data(), w_.data(), size_t(cfg_.c), c_rows.data(),
                  mode);
    ctr->macs += uint64_t(g->rows) * g->kv * g->nv;
    ctr->rows += uint64_t(g->rows);
  } else if (const auto* s = std::get_if<Store>(&in)) {
    const bool bf16 = s->format == kFmtBf16, relu = s->activation == kActRelu;
    const int size = bf16 ? 2 : 4;
    std::vector<uint8_t> row(size_t(s->elems) * size);
    ctr->dma_write_bytes += uint64_t(s->rows) * beats(row.size());
    for (int i = 0; i < s->rows; ++i) {
      const uint32_t* src = s->source == kSrcVmem ? &vmem_[size_t(s->acc + i) * cfg_.c]
                                                  : &acc_[size_t(s->acc + i) * cfg_.c];
      for (int n = 0; n < s->elems; ++n) {
        const uint32_t x = src[s->col + n];
        const uint64_t v = bf16 ? num::StoreBf16(x, relu, mode) : (relu ? num::Relu(x) : x);
        PutLe(&row[size_t(n) * size], size, v);
      }
      WriteHbm(s->hbm_addr + uint64_t(i) * s->hbm_stride, row.data(), row.size());
      ctr->hbm_bytes_written += row.size();
    }
  }
}

void Machine::ExecuteVop(const Vop& v) {
  const num::Mode mode = cfg_.mode;
  const auto op = VectorOp(v.op);
  const int c = cfg_.c;
  std::vector<uint32_t> out(static_cast<size_t>(c));
  for (int i = 0; i < v.m; ++i) {
    for (int j = 0; j < v.n; ++j) {
      const size_t ra = size_t(v.a) + size_t(i) * v.aso + size_t(j) * v.asi;
      const size_t rb = size_t(v.b) + size_t(i) * v.bso + size_t(j) * v.bsi;
      const size_t rd = size_t(v.d) + size_t(i) * v.dso + size_t(j) * v.dsi;
      const uint32_t* a = v.a_vmem ? &vmem_[ra * c] : &acc_[ra * c];
      const uint8_t* a_def = v.a_vmem ? &vmem_def_[ra * c] : &acc_def_[ra * c];
      const bool reads_b = kVectorOps[v.op].reads_b && !v.b_scalar;
      const uint32_t* b = reads_b ? (v.b_vmem ? &vmem_[rb * c] : &acc_[rb * c]) : nullptr;
      const uint8_t* b_def =
          reads_b ? (v.b_vmem ? &vmem_def_[rb * c] : &acc_def_[rb * c]) : nullptr;
      uint32_t* d = &vmem_[rd * c];
      uint8_t* d_def = &vmem_def_[rd * c];
      const bool reads_d = kVectorOps[v.op].reads_d;
      for (int n = 0; n < c; ++n) {
        // The machine computes every lane from whatever its memories hold; a result is defined
        // when what it reads is.
        out[size_t(n)] = ApplyVectorOp(op, a[n], b != nullptr ? b[n] : v.scalar, d[n], mode);
        d_def[n] = uint8_t(a_def[n] != 0 && (b_def == nullptr || b_def[n] != 0) &&
                           (!reads_d || d_def[n] != 0));
      }
      std::copy(out.begin(), out.end(), d);
    }
  }
}

uint32_t ApplyVectorOp(VectorOp op, uint32_t a, uint32_t b, uint32_t d, num::Mode mode) {
  using num::Fma32;
  switch (op) {
    case VectorOp::kCopy: return vpu::Operand(a, mode);
    case VectorOp::kAdd: return Fma32(a, vpu::kOne, b, mode);
    case VectorOp::kSub: return Fma32(b, vpu::kMinusOne, a, mode);
    case VectorOp::kMul: return Fma32(a, b, vpu::kMinusZero, mode);
    case VectorOp::kMac: return Fma32(a, b, d, mode);
    case VectorOp::kMax: return vpu::Max(a, b, mode);
    case VectorOp::kMin: return vpu::Min(a, b, mode);
    case VectorOp::kGt: return vpu::Gt(a, b, mode);
    case VectorOp::kGe: return vpu::Ge(a, b, mode);
    case VectorOp::kEq: return vpu::Eq(a, b, mode);
    case VectorOp::kSelect: return vpu::Operand(vpu::Select(d, a, b, mode), mode);
    case VectorOp::kRelu: return vpu::Relu(a, mode);
    case VectorOp::kLeakyRelu: return vpu::LeakyRelu(a, b, mode);
    case VectorOp::kExp: return vpu::Exp(a, mode);
    case VectorOp::kRecip: return vpu::Recip(a, mode);
    case VectorOp::kRsqrt: return vpu::Rsqrt(a, mode);
    case VectorOp::kSqrt: return vpu::Sqrt(a, mode);
    case VectorOp::kSigmoid: return vpu::Sigmoid(a, mode);
    case VectorOp::kTanh: return vpu::Tanh(a, mode);
    case VectorOp::kLog: return vpu::Log(a, mode);
    case VectorOp::kErf: return vpu::Erf(a, mode);
    case VectorOp::kDiv: return vpu::Div(a, b, mode);
  }
  throw std::invalid_argument(fmt::format("isa: vector op {} is not defined", int(op)));
}

VectorOp VectorOpByName(const std::string& name) {
  for (int i = 0; i < kNumVectorOps; ++i) {
    if (name == kVectorOps[size_t(i)].name) return VectorOp(i);
  }
  throw std::invalid_argument("isa: no vector op named '" + name + "'");
}

}  // namespace tpu::isa
