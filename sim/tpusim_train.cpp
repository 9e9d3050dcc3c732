// SPDX-License-Identifier: Apache-2.0
#include "tpusim_train.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "tpu/io/npy.h"
#include "tpu/onnx_import.h"
#include "tpu/tb/net_run.h"
#include "tpu/tb/train_run.h"
#include "tpu/train.h"

namespace tpusim {

using namespace tpu;
using namespace tpu::tb::accel;

struct Data {
  int rows = 0, features = 0;
  std::vector<float> x;  // rows × features
  std::vector<int32_t> y;
};

// The model: an MLP (train::Mlp, its own numerics) or any other supported graph (train::Network).
struct TrainJob {
  net::Graph graph;
  train::MlpBinding binding;
  train::Mlp mlp;
  std::optional<train::Network> net;
  int classes = 0;
  Data train, test;
  std::string What() const {
    return net ? "network" : fmt::format("MLP {}", fmt::join(mlp.Sizes(), "-"));
  }
  train::StepResult Step(const train::Recipe& r, const std::vector<float>& x,
                         const std::vector<int32_t>& y, const net::AccelFn& fn, num::Mode mode,
                         train::VectorUnit vu) {
    return net ? net->Step(r, x, y, fn, mode, vu) : train::Step(mlp, r, x, y, fn, mode, vu);
  }
  std::vector<float> Logits(const std::vector<float>& x, int n, const net::AccelFn& fn,
                            num::Mode mode) {
    return net ? net->Logits(x, n, fn, mode) : train::Logits(mlp, x, n, fn, mode);
  }
  std::map<std::string, net::Tensor> Initializers() const {
    return net ? net->Initializers() : train::MlpInitializers(mlp, binding);
  }
};

void TrainJobDeleter::operator()(TrainJob* j) const {
  delete j;
}

namespace {

[[noreturn]] void Bad(const std::string& msg) {
  throw std::invalid_argument(msg);
}

Data LoadData(const std::string& file, const char* what, int features, int classes) {
  std::map<std::string, net::Tensor> a;
  try {
    a = io::ReadNpz(file);
  } catch (const std::exception& e) {
    Bad(fmt::format("{} {}: {}", what, file, e.what()));
  }
  if (!a.count("x") || !a.count("y")) {
    Bad(fmt::format("{} {}: needs arrays 'x' (rows × features) and 'y' (labels)", what, file));
  }
  const net::Tensor &x = a.at("x"), &y = a.at("y");
  Data d;
  if (x.is_int || x.shape.empty()) Bad(fmt::format("{} {}: 'x' must be float", what, file));
  if (!y.is_int || y.shape.size() != 1) {
    Bad(fmt::format("{} {}: 'y' must be a 1-D array of integers", what, file));
  }
  d.rows = int(x.shape[0]);
  const int64_t f = d.rows > 0 ? int64_t(x.f.size()) / d.rows : 0;
  if (f != features || d.rows < 1) {
    Bad(fmt::format("{} {}: 'x' {} gives rows of {} features; the model takes {}", what, file,
                    net::ShapeText(x.shape), f, features));
  }
  if (int64_t(y.i.size()) != d.rows) {
    Bad(fmt::format("{} {}: {} labels for {} rows", what, file, y.i.size(), d.rows));
  }
  d.features = features;
  d.x = x.f;
  for (size_t i = 0; i < y.i.size(); ++i) {
    if (y.i[i] < 0 || y.i[i] >= classes) {
      Bad(fmt::format("{} {}: label {} of row {} is outside 0..{}", what, file, y.i[i], i,
                      classes - 1));
    }
    d.y.push_back(int32_t(y.i[i]));
  }
  return d;
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Top-1 accuracy of the model on `d` (forward passes of up to 512 rows, pass kEval).
int Correct(TrainJob& job, const Data& d, int classes, const net::AccelFn& fn, num::Mode mode) {
  int ok = 0;
  for (int r0 = 0; r0 < d.rows; r0 += 512) {
    const int n = std::min(512, d.rows - r0);
    const std::vector<float> x(d.x.begin() + ptrdiff_t(r0) * d.features,
                               d.x.begin() + ptrdiff_t(r0 + n) * d.features);
    const std::vector<float> z = job.Logits(x, n, fn, mode);
    for (int i = 0; i < n; ++i) {
      int best = 0;
      for (int j = 1; j < classes; ++j) {
        if (z[size_t(i * classes + j)] > z[size_t(i * classes + best)]) best = j;
      }
      ok += best == d.y[size_t(r0 + i)];
    }
  }
  return ok;
}

std::string PassLine(const NetStepStats& s, const Config& cfg, bool timed) {
  if (!timed || s.perf.cycles == 0)
    return fmt::format("{} MACs, {} jobs", Num(s.perf.macs), s.jobs);
  const double mpc = double(s.perf.macs) / double(s.perf.cycles);
  return fmt::format("{:.1f} MACs/cycle ({:.1f}%)", mpc, 100.0 * mpc / cfg.PeakMacsPerCycle());
}

nlohmann::json PassJson(const NetStepStats& s, const Config& cfg) {
  const double mpc = s.perf.cycles ? double(s.perf.macs) / double(s.perf.cycles) : 0.0;
  return {{"jobs", s.jobs},
          {"programs", s.programs},
          {"macs", s.perf.macs},
          {"cycles", s.perf.cycles},
          {"macs_per_cycle", mpc},
          {"utilization", mpc / cfg.PeakMacsPerCycle()},
          {"hbm_read_bytes", s.perf.hbm_read_bytes},
          {"hbm_write_bytes", s.perf.hbm_write_bytes},
          {"checked_elements", s.checked},
          {"sim_seconds", s.sim_seconds},
          {"check_seconds", s.check_seconds}};
}

}  // namespace

void WriteJson(const std::string& file, const std::string& js) {
  if (file == "-") {
    fmt::print("{}\n", js);
    return;
  }
  std::ofstream f(file);
  f << js << "\n";
  if (!f) throw std::runtime_error(fmt::format("--json {}: cannot be written", file));
}

TrainJobPtr PrepareTrain(const TrainOptions& o, const Config& cfg) {
  (void)cfg;
  TrainJobPtr j(new TrainJob);
  if ((o.epochs > 0) == (o.steps > 0)) Bad("give --epochs or --steps (one of them, above 0)");
  if (o.batch < 1) Bad(fmt::format("--batch {}: must be at least 1", o.batch));
  if (!(o.lr > 0.0f) || !std::isfinite(o.lr)) Bad(fmt::format("--lr {}: must be above 0", o.lr));
  if (!(o.momentum >= 0.0f && o.momentum < 1.0f)) {
    Bad(fmt::format("--momentum {}: must be in [0, 1)", o.momentum));
  }
  int features = 0, classes = 0;
  try {
    j->graph = onnx_import::LoadModel(o.model);
    try {
      j->mlp = train::MlpFromGraph(j->graph, &j->binding);
      if (o.from_scratch) j->mlp = train::InitMlp(j->mlp.Sizes(), o.seed);
      features = j->mlp.layers[0].in;
      classes = j->mlp.layers.back().out;
    } catch (const net::Error&) {  // not an MLP: the general network trainer, or its error
      j->net.emplace(train::Network::FromGraph(j->graph));
      if (o.from_scratch) j->net->InitFromSeed(o.seed);
      features = int(j->net->Features());
      classes = j->net->Classes();
      if (classes < 1) Bad(fmt::format("{}: the output must be a Gemm's logits", o.model));
    }
    j->classes = classes;
  } catch (const net::Error& e) {
    Bad(fmt::format("{}: {}", o.model, e.what()));
  }
  j->train = LoadData(o.train_data, "--train", features, classes);
  if (!o.test_data.empty()) j->test = LoadData(o.test_data, "--test", features, classes);
  if (j->train.rows < o.batch) {
    Bad(fmt::format("--batch {}: the training data has {} rows", o.batch, j->train.rows));
  }
  // The outputs' folders must exist and let us write, checked before a long run.
  for (const auto& [file, what] : {std::pair{o.out, "--out"}, std::pair{o.json, "--json"}}) {
    if (file.empty() || file == "-") continue;
    namespace fs = std::filesystem;
    const fs::path p(file);
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      Bad(fmt::format("{} {}: the folder {} does not exist", what, file, dir.string()));
    }
    if (fs::is_directory(p, ec)) Bad(fmt::format("{} {}: is a folder", what, file));
    if (access(dir.c_str(), W_OK) != 0 || (fs::exists(p, ec) && access(file.c_str(), W_OK) != 0)) {
      Bad(fmt::format("{} {}: cannot be written", what, file));
    }
  }
  return j;
}

std::string NotChecked(bool check) {
  return check ? "done on the golden model (the reference itself: nothing to check it against)"
               : "done (not checked: --no-check)";
}

// The table of the passes after a run: jobs, MACs, cycles, MACs per cycle and utilisation of the
// forward, backward, evaluation and update passes, and the host's time between the jobs.
void PrintPasses(const TrainRunner& runner, const Config& cfg, bool timed, double host_seconds) {
  static const char* const kPass[] = {"forward", "backward", "evaluation", "update"};
  fmt::print("\n{:<11} {:>6} {:>15} {:>13} {:>11} {:>8}\n", "pass", "jobs", "MACs", "cycles",
             "MACs/cycle", "util");
  for (int p = 0; p < TrainRunner::kPasses; ++p) {
    const NetStepStats& s = runner.pass(p);
    const double mpc = s.perf.cycles ? double(s.perf.macs) / double(s.perf.cycles) : 0.0;
    fmt::print("{:<11} {:>6} {:>15} {:>13} {:>11} {:>8}\n", kPass[p], s.jobs, Num(s.perf.macs),
               timed ? Num(s.perf.cycles) : "-", timed ? fmt::format("{:.1f}", mpc) : "-",
               timed ? fmt::format("{:.1f}%", 100.0 * mpc / cfg.PeakMacsPerCycle()) : "-");
  }
  fmt::print("{:.2f} s on the host between the jobs (data moves, bias gradients, the loss{})\n",
             host_seconds,
             cfg.machine.vector_unit() ? "" : "; without the vector unit: relu's masks, SGD");
}

int RunTrain(const TrainOptions& o, const Config& cfg, TrainJob& j, JobPool& pool, bool check,
             bool quiet, const std::string& backend) {
  const num::Mode mode = cfg.machine.mode;
  const bool timed = backend != "model";
  const bool json_out = o.json == "-";
  auto say = [&](const std::string& s) {  // line by line, also into a file or a pipe
    if (quiet || json_out) return;
    fmt::print("{}", s);
    std::fflush(stdout);
  };
  const Data& tr = j.train;
  const int per_epoch = tr.rows / o.batch;  // full batches; the rest of an epoch's rows wait
  const int64_t total = o.steps > 0 ? o.steps : int64_t(o.epochs) * per_epoch;
  const train::Recipe recipe{o.batch, o.lr, o.momentum};
  say(fmt::format("tpusim train: {} ({}), {} weights\n", o.model, j.What(),
                  o.from_scratch ? fmt::format("initial from seed {}", o.seed) : "the model's"));
  say(fmt::format("config:   {}: {}\n", cfg.name, Describe(cfg)));
  say(fmt::format("backend:  {}\n", timed ? "rtl (every job checked against the golden model)"
                                          : "model (the golden model; no clock)"));
  say(
      fmt::format("recipe:   SGD, batch {}, lr {:g}, momentum {:g}, {} steps ({} per epoch of {} "
                  "rows), data order from seed {}\n",
                  o.batch, o.lr, o.momentum, total, per_epoch, tr.rows, o.seed));
  if (pool.processes() > 1) {
    say(fmt::format("jobs:     {} processes, each job split over them\n", pool.processes()));
  }
  TrainRunner runner(pool);
  // The loss gradient, relu's masks and the update on the vector unit where the machine has one.
  const train::VectorUnit vu{cfg.machine.vmem_depth, cfg.machine.c};
  nlohmann::json steps = nlohmann::json::array(), epochs = nlohmann::json::array();
  bool pass = true;
  std::string failure;
  double host_seconds = 0;
  int64_t done = 0;
  try {
    for (int epoch = 0; done < total; ++epoch) {
      const std::vector<int> order = train::EpochOrder(tr.rows, o.seed, epoch);
      double loss_sum = 0;
      int correct = 0, n = 0;
      for (int s = 0; s < per_epoch && done < total; ++s, ++done, ++n) {
        std::vector<float> x(size_t(o.batch) * size_t(tr.features));
        std::vector<int32_t> y(size_t(o.batch));
        for (int i = 0; i < o.batch; ++i) {
          const int row = order[size_t(s * o.batch + i)];
          std::memcpy(&x[size_t(i) * size_t(tr.features)], &tr.x[size_t(row) * size_t(tr.features)],
                      size_t(tr.features) * 4);
          y[size_t(i)] = tr.y[size_t(row)];
        }
        const NetStepStats before = Sum({runner.pass(0), runner.pass(1), runner.pass(3)});
        const auto t0 = std::chrono::steady_clock::now();
        const train::StepResult r = j.Step(recipe, x, y, runner.Fn(), mode, vu);
        const NetStepStats after = Sum({runner.pass(0), runner.pass(1), runner.pass(3)});
        host_seconds += Since(t0) - (after.sim_seconds - before.sim_seconds) -
                        (after.check_seconds - before.check_seconds);
        uint32_t bits;
        std::memcpy(&bits, &r.loss, 4);
        steps.push_back({{"step", done},
                         {"epoch", epoch},
                         {"loss", r.loss},
                         {"loss_bits", fmt::format("0x{:08X}", bits)},
                         {"correct", r.correct}});
        loss_sum += double(r.loss);
        correct += r.correct;
        if (o.every > 0 && (done + 1) % o.every == 0) {
          say(fmt::format("  step {}: loss {:.6f} (0x{:08X}), {} of {} right\n", done + 1, r.loss,
                          bits, r.correct, o.batch));
        }
      }
      if (n == 0) break;
      nlohmann::json e = {{"epoch", epoch + 1},
                          {"steps", n},
                          {"loss", loss_sum / n},
                          {"train_accuracy", double(correct) / (double(n) * o.batch)}};
      std::string test;
      if (j.test.rows > 0) {
        const int ok = Correct(j, j.test, j.classes, runner.Fn(TrainRunner::kEval), mode);
        e["test_accuracy"] = double(ok) / j.test.rows;
        test = fmt::format(", test {:.2f}% ({} of {})", 100.0 * ok / j.test.rows, ok, j.test.rows);
      }
      epochs.push_back(e);
      say(fmt::format("epoch {}: loss {:.4f}, train {:.2f}%{} | forward {}, backward {}\n",
                      epoch + 1, loss_sum / n, 100.0 * correct / (double(n) * o.batch), test,
                      PassLine(runner.pass(0), cfg, timed), PassLine(runner.pass(1), cfg, timed)));
    }
  } catch (const NetFailure& e) {
    pass = false;
    failure = e.what();
    fmt::print(json_out ? stderr : stdout, "FAIL: {}\n", failure);
  } catch (const net::Error& e) {
    pass = false;
    failure = e.what();
    fmt::print(stderr, "tpusim: error: {}\n", failure);
  }
  if (!quiet && !json_out) PrintPasses(runner, cfg, timed, host_seconds);
  if (pass && !quiet && !json_out) {
    const NetStepStats t = Sum({runner.pass(0), runner.pass(1), runner.pass(2), runner.pass(3)});
    if (check && timed) {
      fmt::print(
          "PASS: every accelerator output of every step bit-exact against the golden model "
          "({} elements in {} jobs)\n",
          Num(t.checked), t.jobs);
    } else {  // --no-check, or the golden model back end: the reference itself
      fmt::print("{}\n", NotChecked(check));
    }
  }
  if (pass && !o.out.empty()) {
    try {
      onnx_import::SaveWithInitializers(o.model, o.out, j.Initializers());
    } catch (const net::Error& e) {
      fmt::print(stderr, "tpusim: error: {}\n", e.what());
      return 1;
    }
    say(fmt::format("wrote {} (the trained weights)\n", o.out));
  }
  if (!o.json.empty()) {
    nlohmann::json js = {{"config", cfg.name},
                         {"backend", backend},
                         {"pass", pass},
                         {"model", o.model},
                         {"model_kind", j.What()},
                         {"sizes", j.net ? std::vector<int>{} : j.mlp.Sizes()},
                         {"recipe",
                          {{"batch", o.batch},
                           {"lr", o.lr},
                           {"momentum", o.momentum},
                           {"seed", o.seed},
                           {"from_scratch", o.from_scratch},
                           {"steps", total}}},
                         {"peak_macs_per_cycle", cfg.PeakMacsPerCycle()},
                         {"steps", steps},
                         {"epochs", epochs},
                         {"passes",
                          {{"forward", PassJson(runner.pass(0), cfg)},
                           {"backward", PassJson(runner.pass(1), cfg)},
                           {"evaluation", PassJson(runner.pass(2), cfg)},
                           {"update", PassJson(runner.pass(3), cfg)},
                           {"host_seconds", host_seconds}}}};
    if (!pass) js["failure"] = failure;
    WriteJson(o.json, js.dump(1));
  }
  return pass ? 0 : 1;
}

}  // namespace tpusim
