// SPDX-License-Identifier: Apache-2.0
// Process-level parallelism for big runs (`tpusim onnx|train --jobs N`, `jobs=` in Python;
// docs/usage.md, "Several processes"). Verilator's threads slow this design down, independent
// processes scale, so a JobPool of N runs every accelerator job as up to N parts, each on its own
// back end: this process's and those of N-1 worker processes forked when the pool starts. A job
// splits along a dimension whose outputs do not interact: the output's columns (whole tiles of
// the array's width) or its rows (a GEMM's M, a convolution's images), whichever repeats fewer
// operand bytes in the parts. Every part is checked against the golden model in the process that
// runs it, as a whole job is. Each output element is the same fused-MAC chain over k in every part
// (docs/numerics.md), so the outputs are bit-identical for every N; the counters are those of the
// parts' programs, summed (each part loads its own operands: cycles and HBM bytes grow a little
// with N).
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tpu/net.h"
#include "tpu/tb/net_run.h"

namespace tpu::tb::accel {

// How a job splits into parts.
struct JobSplit {
  enum class Dim : uint8_t { kNone, kCols, kRows, kImages };
  Dim dim = Dim::kNone;
  std::vector<int> bounds;  // parts + 1 increasing boundaries along `dim` (empty: kNone)
  int Parts() const { return dim == Dim::kNone ? 1 : int(bounds.size()) - 1; }
};
// The split of `job` into at most `parts` parts on an array `array_cols` wide: by output columns
// in whole tiles of array_cols, or by rows (a convolution: by images), the dimension whose split
// repeats fewer operand bytes (rows repeat B, K x N; columns repeat A, M x K); kNone when neither
// splits (parts 1, one row or image and one column tile).
JobSplit PlanSplit(const net::AccelJob& job, int parts, int array_cols);
// Part i of the job (0 <= i < s.Parts()).
net::AccelJob JobPart(const net::AccelJob& job, const JobSplit& s, int i);
// Writes part i's output (its rows x columns, row-major) into the whole job's M x N output.
void PutPart(const net::AccelJob& job, const JobSplit& s, int i, const std::vector<uint32_t>& part,
             std::vector<uint32_t>* out);

// Workers started by a command instead of fork(), e.g. Slurm's `srun` (`--launcher slurm`):
// they may run on other machines and connect back over TCP (ServeJobs).
struct RemoteLaunch {
  // The command (argv[0] found on PATH); every "{addr}" is replaced by the address the workers
  // connect to (HOST:PORT:KEY). It must start processes - 1 workers, each running ServeJobs.
  std::vector<std::string> command;
  double connect_timeout_s = 300;  // all workers connected by then, or an error
};

class JobPool {
 public:
  using MakeSim = std::function<std::unique_ptr<Sim>()>;
  // One process: runs every job on `dut` (not owned), whole.
  JobPool(Sim& dut, bool check, RunOptions opt = {});
  // `processes` in all: forks processes - 1 workers, each of which makes its own back end with
  // make_sim, then makes this process's. Start it before this process starts threads (a forked
  // child has only the thread that forked). Throws std::invalid_argument for processes < 1,
  // std::runtime_error when a fork fails.
  JobPool(int processes, const MakeSim& make_sim, bool check, RunOptions opt = {});
  // `processes` in all: processes - 1 workers started by `launch`, then this process's back end.
  // Throws std::runtime_error when the command cannot start, ends early, or its workers do not
  // all connect in time (the message names the command and what it printed last).
  JobPool(int processes, const RemoteLaunch& launch, const MakeSim& make_sim, bool check,
          RunOptions opt = {});
  ~JobPool();  // ends the workers
  JobPool(const JobPool&) = delete;
  JobPool& operator=(const JobPool&) = delete;

  Sim& dut() { return *dut_; }  // this process's back end
  bool check() const { return check_; }
  const RunOptions& options() const { return opt_; }
  int processes() const { return int(workers_.size()) + 1; }
  // Runs one job as RunAccelJob does (same errors, `where` first; a part's error names the
  // part), split over the processes; adds the parts' counters to *st (st->jobs counts the job
  // once, st->programs each part; st->sim_seconds the wall time of the parts together). A job
  // whose data do not match its shape runs whole, for RunAccelJob's error.
  std::vector<uint32_t> Run(const net::AccelJob& job, const std::string& where, NetStepStats* st);

 private:
  struct Worker {
    pid_t pid = -1;          // a forked worker's (-1: reaped, or a remote worker)
    int to = -1, from = -1;  // the pipe to it, the pipe from it (a remote one's socket, twice)
    bool waiting = false;    // a job sent, its reply not read yet
    std::string name;        // "engine process 4711", "engine process on node3"
  };
  void Stop();
  std::unique_ptr<Sim> own_;
  Sim* dut_ = nullptr;
  bool check_;
  RunOptions opt_;
  std::vector<Worker> workers_;
  pid_t launcher_ = -1;  // the RemoteLaunch command's process
  bool broken_ = false;  // a worker died: later jobs fail at once
};

// A worker's whole life in a process a RemoteLaunch command started: connects to `addr`
// (HOST:PORT:KEY), makes its back end, runs the jobs that come, and exits when the connection
// closes. Never returns; a failure to connect is one line on stderr and exit status 1.
[[noreturn]] void ServeJobs(const std::string& addr, const JobPool::MakeSim& make_sim, bool check,
                            RunOptions opt = {});

}  // namespace tpu::tb::accel
