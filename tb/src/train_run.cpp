// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/train_run.h"

#include <fmt/format.h>

namespace tpu::tb::accel {

TrainRunner::TrainRunner(Sim& dut, bool check, RunOptions opt)
    : own_(std::make_unique<JobPool>(dut, check, std::move(opt))), pool_(own_.get()) {}

TrainRunner::TrainRunner(JobPool& pool) : pool_(&pool) {}

TrainRunner::~TrainRunner() = default;

net::AccelFn TrainRunner::Fn(int force_pass) {
  return [this, force_pass](const net::AccelJob& job, int step) {
    const int p = force_pass >= 0 ? force_pass : step;
    static const char* const kNames[] = {"forward", "backward", "evaluation", "update"};
    NetStepStats& st = passes_.at(size_t(p));
    return pool_->Run(job, fmt::format("{} pass, job {}: {}", kNames[p], st.jobs, job.Describe()),
                      &st);
  };
}

}  // namespace tpu::tb::accel
