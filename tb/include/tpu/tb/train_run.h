// SPDX-License-Identifier: Apache-2.0
// Training on a back end (the RTL or the golden model): the job function of tpu/train.h runs
// every accelerator job on `dut` and, when checking, on a fresh golden model too, every output
// element compared bit for bit (RunAccelJob); statistics per pass.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "tpu/tb/job_pool.h"
#include "tpu/tb/net_run.h"
#include "tpu/train.h"

namespace tpu::tb::accel {

class TrainRunner {
 public:
  // The passes: the training step's forward, backward and update (train::Pass) and evaluations.
  enum : int {
    kForward = train::kForward,
    kBackward = train::kBackward,
    kEval = train::kEvaluation,
    kUpdate = train::kUpdate,
    kPasses = 4
  };
  TrainRunner(Sim& dut, bool check, RunOptions opt = {});
  // Every job through `pool` (tpu/tb/job_pool.h: split over its processes).
  explicit TrainRunner(JobPool& pool);
  ~TrainRunner();
  // The job function for train::Step (its `step` argument is the pass) and for evaluations
  // (pass kEval: Fn(kEval) sends every job there). Throws NetFailure or net::Error.
  net::AccelFn Fn(int force_pass = -1);
  const NetStepStats& pass(int p) const { return passes_.at(size_t(p)); }
  // Clears the statistics (e.g. per epoch).
  void Reset() { passes_ = {}; }

 private:
  std::unique_ptr<JobPool> own_;
  JobPool* pool_;
  std::array<NetStepStats, kPasses> passes_{};
};

}  // namespace tpu::tb::accel
