// SPDX-License-Identifier: Apache-2.0
// Runs a network plan (tpu/net.h) on a back end (the RTL or the golden model): every accelerator
// job becomes a workload (MakeJob), runs on the back end, and, when checking, also on a fresh
// golden model, with every output element compared bit for bit (the scoreboard). A job whose
// machine reports an error, whose HBM timing is violated, or whose output differs stops the run
// with a NetFailure that says which step, which job and what differed. Per-step statistics sum
// the jobs' counters.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpu/net.h"
#include "tpu/tb/accel_sim.h"
#include "tpu/tb/workloads.h"

namespace tpu::tb::accel {

struct NetStepStats {
  int jobs = 0;
  int programs = 0;          // the programs the jobs ran as (more than jobs when split: JobPool)
  Perf perf;                 // summed over the step's jobs
  uint64_t checked = 0;      // output elements compared bit for bit with the golden model
  double sim_seconds = 0;    // the back end's runs
  double check_seconds = 0;  // the golden model's runs
  double step_seconds = 0;   // the whole step on the host (data moves and host operators too)
  // A whole-network run's Concat that its program did as address arithmetic: every reader is a
  // job that read it as its pieces, stored there by their producers in the same program
  // (AccelJob::a_pieces), so no host step fed the program (the report's `on`: "addr").
  bool addressed = false;
};

struct NetFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether `dut` is the golden model back end (ModelSim): the reference itself, never checked
// against itself.
bool IsGoldenModel(const Sim& dut);
// Runs one accelerator job on `dut` (and, when checking and `dut` is not the golden model, on a
// fresh golden model, compared bit for bit) and returns its output; adds its counters and times
// to *st. Throws NetFailure (`where` first) or net::Error (data that do not match the job's
// shape).
std::vector<uint32_t> RunAccelJob(Sim& dut, const net::AccelJob& job, bool check,
                                  const RunOptions& opt, const std::string& where,
                                  NetStepStats* st);
// Runs a workload on `dut` as RunAccelJob runs a job's, and returns every output tensor.
std::vector<std::vector<uint32_t>> RunWorkloadChecked(Sim& dut, const Workload& w, bool check,
                                                      const RunOptions& opt,
                                                      const std::string& where, NetStepStats* st);
// The sum of steps' statistics.
NetStepStats Sum(const std::vector<NetStepStats>& steps);

class JobPool;

// One program of a whole-network run (NetRunner::SetWholeNetwork): the steps whose jobs it ran,
// and its counters (stats.jobs: the jobs linked into it).
struct NetProgram {
  int first_step = 0, last_step = 0;
  NetStepStats stats;
};

class NetRunner {
 public:
  NetRunner(Sim& dut, bool check, RunOptions opt = {});
  // Every job through `pool` (tpu/tb/job_pool.h: split over its processes), which checks or not.
  explicit NetRunner(JobPool& pool);
  ~NetRunner();
  // Runs the plan; throws NetFailure (a job failed) or net::Error (bad inputs).
  std::map<std::string, net::Tensor> Run(
      const net::Plan& plan, const std::map<std::string, net::Tensor>& inputs,
      const std::function<void(const net::Step&, const NetStepStats&)>& on_step = {});
  // Whole-network programs (docs/onnx.md, "One program per network"): the plan runs on the golden
  // model job by job, then the jobs run on the back end linked into as few programs as the plan
  // allows (tpu/tb/workloads.h LinkWorkloads): a job starts a new program only when the host
  // computes one of its operands from a job's output (AccelJob::host_a, host_b) or the
  // program's tensors would not fit in HBM; an operand that is an earlier job's output in the
  // same program is read where that job stored it (AccelJob::from_a, from_b). Every output of
  // every program is compared bit for bit with the golden model's job by job (and, checking on
  // the RTL, the program with the golden model's run of it). Not with several processes.
  void SetWholeNetwork(bool on) { whole_ = on; }
  const std::vector<NetStepStats>& steps() const { return steps_; }
  // Whole-network runs: the programs (the steps' statistics then hold their jobs, MACs and host
  // times, and no counters of the machine).
  const std::vector<NetProgram>& programs() const { return programs_; }
  NetStepStats Total() const;

 private:
  std::vector<uint32_t> RunJob(const net::AccelJob& job, int step);
  std::map<std::string, net::Tensor> RunWhole(
      const net::Plan& plan, const std::map<std::string, net::Tensor>& inputs,
      const std::function<void(const net::Step&, const NetStepStats&)>& on_step);
  struct Recorded;
  void RunProgram(const std::vector<Recorded>& recs, size_t first, size_t end);
  bool whole_ = false;
  std::vector<NetProgram> programs_;
  std::set<size_t> placed_;  // RunWhole's jobs (their index) that read their pieces placed
  std::unique_ptr<JobPool> own_;
  JobPool* pool_;
  std::vector<NetStepStats> steps_;
  std::vector<std::string> labels_;
};

// 1234567 -> "1,234,567" (the reports' counts).
std::string Num(uint64_t x);

// The graph inputs from command-line specs: "NAME=FILE.npy", "FILE.npz" (every array by name),
// or "FILE.npy" when the graph has one input (tpu/io/npy.h converts the element types). Throws
// std::invalid_argument for an unreadable file or a name given twice; net::PlanForInputs checks
// the names against the graph.
std::map<std::string, net::Tensor> LoadNetInputs(const net::Graph& g,
                                                 const std::vector<std::string>& specs);

// The per-step table: step, nodes, where it ran, output shape, jobs, MACs, cycles, MAC
// utilization, HBM bytes, host time; then the totals (`timed`: the back end has a clock).
// `programs`: a whole-network run's (NetRunner::programs()): a line per program and the totals
// from them.
std::string FormatNetTable(const net::Plan& plan, const std::vector<NetStepStats>& steps,
                           const Config& cfg, bool timed,
                           const std::vector<NetProgram>& programs = {});
// A run's counters as JSON: the "perf" objects of the --json files (and tpusim gemm/run's).
nlohmann::json PerfJson(const Perf& p);
// Every counter as JSON (docs/onnx.md, "JSON"): the configuration, the totals and every step.
std::string NetJson(const net::Plan& plan, const std::vector<NetStepStats>& steps,
                    const Config& cfg, const std::string& backend, bool pass,
                    const std::vector<NetProgram>& programs = {});

}  // namespace tpu::tb::accel
