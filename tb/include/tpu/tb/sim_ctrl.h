// SPDX-License-Identifier: Apache-2.0
// Simulation controller: owns the VerilatedContext and the model, the clock, reset, a watchdog,
// (in traced builds) FST tracing limited to a window of cycles and to a module subtree, and (in
// coverage builds) writing the model's line/toggle coverage when it is destroyed.
//
// Drive inputs after FallingEdge() and read outputs after RisingEdge() (stimulus away from the
// sampling edge). One model per context, always an explicit context.
#pragma once

#include <fmt/format.h>
#include <verilated.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#if VM_TRACE
#include <verilated_fst_c.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <vector>
#endif
#if VM_COVERAGE
#include <unistd.h>
#include <verilated_cov.h>

#include <atomic>
#include <cstdlib>
#endif

namespace tpu::tb {

// Thrown when a simulation runs past its cycle budget: names the simulation and the cycle.
class WatchdogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when an RTL assertion ($error in an assert) has failed; Verilator printed the message.
class AssertionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where and what to trace; empty path means no tracing.
struct TraceOptions {
  static constexpr int kAllLevels = 99;
  std::string path;                // e.g. waves/Suite_Test.fst
  uint64_t from_cycle = 0;         // first traced cycle
  uint64_t to_cycle = UINT64_MAX;  // last traced cycle
  int depth = kAllLevels;          // levels dumped: 1 = only the signals of the top module (of
                                   // `scope` if given), 2 = also its instances' signals, ...
  std::string scope;               // module subtree to dump, relative to the top module, e.g.
                                   // "u_mxu.u_array" of tpu_accel (empty: the whole design)
};

#if VM_TRACE
// The scopes of an FST file's hierarchy ("dut", "dut.tpu_mac", "dut.tpu_mac.u_cut0", ...) and for
// each the fewest levels down to a signal (1: it holds signals itself; absent: none below it).
struct FstScopes {
  std::vector<std::string> names;  // in declaration order
  std::map<std::string, int> signal_levels;
};

inline FstScopes ReadFstScopes(const std::string& path) {
  void* fst = fstReaderOpen(path.c_str());
  if (fst == nullptr) throw std::runtime_error("cannot read back the FST file " + path);
  FstScopes s;
  std::vector<std::string> stack;
  std::vector<int> levels;  // per open scope: fewest levels to a signal so far (INT_MAX: none)
  const auto close_scope = [&] {
    const int l = levels.back();
    if (l != INT_MAX) s.signal_levels[stack.back()] = l;
    stack.pop_back();
    levels.pop_back();
    if (!levels.empty() && l != INT_MAX) levels.back() = std::min(levels.back(), l + 1);
  };
  fstReaderIterateHierRewind(fst);
  while (const fstHier* h = fstReaderIterateHier(fst)) {
    if (h->htyp == FST_HT_SCOPE) {
      const std::string name = h->u.scope.name;
      stack.push_back(stack.empty() ? name : stack.back() + "." + name);
      levels.push_back(INT_MAX);
      s.names.push_back(stack.back());
    } else if (h->htyp == FST_HT_UPSCOPE && !stack.empty()) {
      close_scope();
    } else if (h->htyp == FST_HT_VAR && !levels.empty()) {
      levels.back() = 1;
    }
  }
  while (!stack.empty()) close_scope();
  fstReaderClose(fst);
  return s;
}
#endif

template <class Model>
class SimCtrl {
 public:
  SimCtrl(std::string name, uint64_t max_cycles, const TraceOptions& trace = {})
      : name_(std::move(name)), max_cycles_(max_cycles), ctx_(new VerilatedContext) {
    ctx_->fatalOnError(false);
    if (!trace.path.empty()) {
#if VM_TRACE
      ctx_->traceEverOn(true);
#else
      throw std::runtime_error(fmt::format(
          "{}: tracing asked for ({}) but the models were built without it; use `make waves`",
          name_, trace.path));
#endif
    }
    Select();  // after the last throw: never leave the thread pointing at a freed context
    dut_ = std::make_unique<Model>(ctx_.get(), "dut");
#if VM_TRACE
    if (!trace.path.empty()) {
      trace_ = trace;
      fst_ = std::make_unique<VerilatedFstC>();
      // A subtree or fewer levels: only the signals under that scope, `depth` levels deep, are
      // declared (dumpvars must precede open, and must match at least one signal: Verilator
      // 5.006 crashes on the first dump when none matches).
      if (!trace.scope.empty() || trace.depth < TraceOptions::kAllLevels) {
        std::string scope;
        try {
          scope = ResolveTraceScope(trace);
        } catch (...) {  // free the model in its context, then leave no dangling context
          fst_.reset();
          dut_.reset();
          ctx_.reset();
          Verilated::threadContextp(Verilated::defaultContextp());
          throw;
        }
        fst_->dumpvars(trace.depth, scope);
      }
      dut_->trace(fst_.get(), TraceOptions::kAllLevels);
      fst_->open(trace.path.c_str());
    }
#endif
  }
  ~SimCtrl() {
    Select();  // the model's scopes unregister from the thread's current context
#if VM_TRACE
    if (fst_) fst_->close();
#endif
    dut_->final();
#if VM_COVERAGE
    WriteCoverage();
#endif
    dut_.reset();
    ctx_.reset();
    Verilated::threadContextp(Verilated::defaultContextp());  // never leave it dangling
  }
  SimCtrl(const SimCtrl&) = delete;
  SimCtrl& operator=(const SimCtrl&) = delete;

  Model& dut() {
    return *dut_;
  }
  VerilatedContext& context() {
    return *ctx_;
  }
  uint64_t cycle() const {
    return cycle_;
  }
  const std::string& name() const {
    return name_;
  }

  // Makes this model's context the thread's current one. Verilator reports assertion failures to,
  // and unregisters scopes from, the thread's current context: with several models in a thread,
  // select before every eval (the methods below and EvalMac/EvalCvt do).
  // Setting it also writes a process-wide pointer: only do that on a change, or threads that
  // each own a model fight over that cache line on every eval (measured: 40% slower sweeps).
  void Select() {
    if (Verilated::threadContextp() != ctx_.get()) Verilated::threadContextp(ctx_.get());
  }

  // Whether an RTL assertion has failed. Loops that call dut().eval() directly (for speed) must
  // check this, or call CheckAssertions(), when they finish; the methods below check it always.
  bool AssertionFailed() const {
    return ctx_->gotError();
  }
  void CheckAssertions() const {
    if (AssertionFailed()) {
      throw AssertionError(fmt::format(
          "{}: an RTL assertion failed (at or before cycle {}); Verilator printed it above", name_,
          cycle_));
    }
  }

  // Combinational settle without a clock edge.
  void Eval() {
    Select();
    dut_->eval();
    Dump();
    CheckAssertions();
  }
  void RisingEdge() {
    if (++cycle_ > max_cycles_) {
      throw WatchdogError(
          fmt::format("{}: watchdog: no completion after {} cycles", name_, max_cycles_));
    }
    Select();
#if VM_TRACE
    // Traced: settle the inputs driven since the falling edge and dump them before the edge that
    // samples them (else they would appear to change with the edge, and registers to load them
    // in no time).
    if (fst_) {
      dut_->eval();
      Dump(4 * cycle_ - 1);
    }
#endif
    dut_->clk_i = 1;
    dut_->eval();
    Dump(4 * cycle_);
    CheckAssertions();
  }
  void FallingEdge() {
    Select();
    dut_->clk_i = 0;
    dut_->eval();
    Dump(4 * cycle_ + 2);
    CheckAssertions();
  }
  // Holds reset for `cycles` clock cycles; ends just after a falling edge.
  void Reset(int cycles = 2) {
    dut_->clk_i = 0;
    dut_->rst_ni = 0;
    Eval();
    for (int i = 0; i < cycles; ++i) {
      RisingEdge();
      FallingEdge();
    }
    dut_->rst_ni = 1;
    Eval();
  }

 private:
#if VM_COVERAGE
  // Coverage builds (`make coverage`): each model writes its counters to its own file in
  // $TPU_COVERAGE_DIR (default: the working directory), merged later by verilator_coverage.
  void WriteCoverage() {
    static std::atomic<int> serial{0};
    const char* dir = std::getenv("TPU_COVERAGE_DIR");
    std::string tag = name_;
    for (char& ch : tag) {
      const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
      if (!ok) ch = '_';
    }
    const std::string path =
        fmt::format("{}/cov_{}_{}_{}.dat", (dir != nullptr && *dir != '\0') ? dir : ".", tag,
                    static_cast<long>(::getpid()), serial++);
    ctx_->coveragep()->write(path.c_str());
  }
#endif
#if VM_TRACE
  // The full name ("dut.tpu_accel.u_mxu") of the traced scope: trace.scope relative to the top
  // module (or already starting with it), found in the declarations of a probe dump, which also
  // shows that it holds signals within trace.depth levels. Throws, naming the instances there
  // are, when it does not.
  std::string ResolveTraceScope(const TraceOptions& trace) {
    const std::string probe = trace.path + ".scopes.fst";
    {
      VerilatedFstC p;
      dut_->trace(&p, TraceOptions::kAllLevels);
      p.open(probe.c_str());
      p.close();
    }
    const FstScopes scopes = ReadFstScopes(probe);
    std::remove(probe.c_str());
    const std::string root = dut_->name();  // the instance name given to the model: "dut"
    std::string top;
    for (const std::string& n : scopes.names) {
      if (n.size() > root.size() + 1 && n.compare(0, root.size() + 1, root + ".") == 0) {
        top = n.substr(0, n.find('.', root.size() + 1));
        break;
      }
    }
    if (top.empty()) {
      throw std::runtime_error(fmt::format(
          "{}: cannot trace a scope: the model declares no module under '{}'", name_, root));
    }
    const auto exists = [&](const std::string& n) {
      return std::find(scopes.names.begin(), scopes.names.end(), n) != scopes.names.end();
    };
    std::string full = top;
    if (!trace.scope.empty()) {
      full = top + "." + trace.scope;
      if (!exists(full) && exists(root + "." + trace.scope)) full = root + "." + trace.scope;
    }
    if (!exists(full)) {
      // Name the instances under the deepest part of the path that exists.
      std::string base = top;
      std::string rest = trace.scope;
      for (size_t dot = 0; (dot = rest.find('.')) != std::string::npos;) {
        if (!exists(base + "." + rest.substr(0, dot))) break;
        base += "." + rest.substr(0, dot);
        rest = rest.substr(dot + 1);
      }
      std::string children;
      int shown = 0;
      for (const std::string& n : scopes.names) {
        if (n.size() <= base.size() + 1 || n.compare(0, base.size() + 1, base + ".") != 0 ||
            n.find('.', base.size() + 1) != std::string::npos) {
          continue;
        }
        if (++shown > 40) {
          children += ", ...";
          break;
        }
        children += (children.empty() ? "" : ", ") + n.substr(base.size() + 1);
      }
      throw std::runtime_error(fmt::format(
          "{}: trace scope '{}' is no module instance of the design (scopes are relative to the "
          "top module {}, e.g. 'u_x.gen_y[0].u_z'); under {} there are: {}",
          name_, trace.scope, top.substr(root.size() + 1), base.substr(root.size() + 1),
          children.empty() ? "no instances" : children));
    }
    const auto it = scopes.signal_levels.find(full);
    if (it == scopes.signal_levels.end() || it->second > trace.depth) {
      throw std::runtime_error(fmt::format(
          "{}: trace scope '{}' holds no signal within {} level(s){}", name_,
          full.substr(root.size() + 1), trace.depth,
          it == scopes.signal_levels.end()
              ? std::string()
              : fmt::format(" (the nearest are {} levels down: raise the depth)", it->second)));
    }
    return full;
  }
#endif
  // Advances time by one step and, when tracing inside the window, dumps. Traced runs keep time
  // on a grid, `at`: cycle c's rising edge at 4c, its falling edge at 4c + 2 and the inputs driven
  // after it at 4c + 3 (time never goes back: extra Eval()s take the next free steps).
  void Dump(uint64_t at = 0) {
#if VM_TRACE
    if (fst_) {
      ctx_->time(std::max(ctx_->time() + 1, at));
      if (cycle_ >= trace_.from_cycle && cycle_ <= trace_.to_cycle) fst_->dump(ctx_->time());
      return;
    }
#endif
    (void)at;
    ctx_->timeInc(1);
  }

  std::string name_;
  uint64_t max_cycles_;
  uint64_t cycle_ = 0;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> dut_;
#if VM_TRACE
  TraceOptions trace_;
  std::unique_ptr<VerilatedFstC> fst_;
#endif
};

}  // namespace tpu::tb
