// SPDX-License-Identifier: Apache-2.0
// `tpusim train` (docs/training.md): trains an MLP given as an ONNX model on the accelerator by
// mixed-precision SGD (tpu/train.h), every accelerator job of every step checked bit for bit
// against the golden model, and writes the trained model as ONNX.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_sim.h"
#include "tpu/tb/job_pool.h"

namespace tpusim {

struct TrainOptions {
  std::string model;       // the ONNX MLP (architecture and, unless from_scratch, weights)
  std::string train_data;  // .npz with x (rows × features…) and y (integer labels)
  std::string test_data;   // the same, evaluated after every epoch (optional)
  std::string out;         // the trained model (.onnx), optional
  std::string json;        // the curves and counters as JSON ("-": standard output), optional
  int epochs = 0;          // epochs, or
  int64_t steps = 0;       // steps (one of the two, > 0)
  int batch = 32;
  float lr = 0.1f;
  float momentum = 0.9f;
  uint64_t seed = 1;  // initial weights (--from-scratch) and the data order
  bool from_scratch = false;
  int every = 0;  // print a line every this many steps (0: per epoch only)
};

struct TrainJob;
struct TrainJobDeleter {
  void operator()(TrainJob* j) const;
};
using TrainJobPtr = std::unique_ptr<TrainJob, TrainJobDeleter>;

// --json output (every subcommand's): to the file, or to standard output for "-". Throws
// std::runtime_error when the file cannot be written.
void WriteJson(const std::string& file, const std::string& js);

// Reads the model and the data and checks them (before any engine is built or run): throws
// std::invalid_argument with a one-line message naming the problem.
TrainJobPtr PrepareTrain(const TrainOptions& o, const tpu::tb::accel::Config& cfg);

// Trains; returns the exit status (0 pass, 1 a job differed from the golden model or failed).
// Every job runs through `pool` (one process, or split over --jobs processes), which checks it.
int RunTrain(const TrainOptions& o, const tpu::tb::accel::Config& cfg, TrainJob& j,
             tpu::tb::accel::JobPool& pool, bool check, bool quiet, const std::string& backend);

// The last line of a run that was not checked: --no-check, or the golden model back end (the
// reference itself, not run twice to compare it with itself).
std::string NotChecked(bool check);

}  // namespace tpusim
