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
  ~JobPool();  // ends the workers
  JobPool(const JobPool&) = delete;
  JobPool& operator=(const JobPool&) = delete;

  Sim& dut() { return *dut_; }  // this process's back end
  int processes() const { return int(workers_.size()) + 1; }
  // Runs one job as RunAccelJob does (same errors, `where` first; a part's error names the
  // part), split over the processes; adds the parts' counters to *st (st->jobs counts the parts'
  // programs; st->sim_seconds the wall time of the parts together).
  std::vector<uint32_t> Run(const net::AccelJob& job, const std::string& where, NetStepStats* st);

 private:
  struct Worker {
    pid_t pid = -1;
    int to = -1, from = -1;  // the pipe to it, the pipe from it
    bool waiting = false;    // a job sent, its reply not read yet
  };
  void Stop();
  std::unique_ptr<Sim> own_;
  Sim* dut_ = nullptr;
  bool check_;
  RunOptions opt_;
  std::vector<Worker> workers_;
  bool broken_ = false;  // a worker died: later jobs fail at once
};

}  // namespace tpu::tb::accel
