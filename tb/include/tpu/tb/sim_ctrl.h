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
  std::string path;                // e.g. waves/Suite_Test.fst
  uint64_t from_cycle = 0;         // first traced cycle
  uint64_t to_cycle = UINT64_MAX;  // last traced cycle
  int depth = 99;                  // hierarchy levels below the top (below `scope` if given)
  std::string scope;               // module subtree to dump, relative to the model, e.g.
                                   // "u_mxu.u_array" (empty: the whole design)
};

// The hierarchical name of a traced scope as Verilator's trace declares it: the model instance is
// "dut" (under Verilator's TOP), so "u_mxu" becomes "TOP.dut.u_mxu".
inline std::string TraceScopeName(const std::string& scope) {
  return scope.empty() ? std::string("TOP") : "TOP.dut." + scope;
}

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
      // A subtree: only signals under that scope, `depth` levels deep, are dumped (dumpvars must
      // precede open). Whether the scope exists is checked after open, when names are declared.
      if (!trace.scope.empty()) fst_->dumpvars(trace.depth, TraceScopeName(trace.scope));
      dut_->trace(fst_.get(), trace.scope.empty() ? trace.depth : 99);
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
    dut_->clk_i = 1;
    dut_->eval();
    Dump();
    CheckAssertions();
  }
  void FallingEdge() {
    Select();
    dut_->clk_i = 0;
    dut_->eval();
    Dump();
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
  void Dump() {
    ctx_->timeInc(1);
#if VM_TRACE
    if (fst_ && cycle_ >= trace_.from_cycle && cycle_ <= trace_.to_cycle) fst_->dump(ctx_->time());
#endif
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
