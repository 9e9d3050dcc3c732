// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/net_run.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "tpu/io/npy.h"
#include "tpu/isa_model.h"
#include "tpu/tb/accel_scoreboard.h"
#include "tpu/tb/job_pool.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/workloads.h"

namespace tpu::tb::accel {
namespace {

void Add(Perf& a, const Perf& b) {
  a.cycles += b.cycles;
  a.busy += b.busy;
  a.weight_stall += b.weight_stall;
  a.input_stall += b.input_stall;
  a.acc_hazard += b.acc_hazard;
  a.store_stall += b.store_stall;
  a.idle += b.idle;
  a.macs += b.macs;
  a.hbm_read_bytes += b.hbm_read_bytes;
  a.hbm_write_bytes += b.hbm_write_bytes;
  a.instructions += b.instructions;
  a.vector_busy += b.vector_busy;
}

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

NetStepStats Sum(const std::vector<NetStepStats>& steps) {
  NetStepStats t;
  for (const auto& s : steps) {
    t.jobs += s.jobs;
    t.programs += s.programs;
    Add(t.perf, s.perf);
    t.checked += s.checked;
    t.sim_seconds += s.sim_seconds;
    t.check_seconds += s.check_seconds;
    t.step_seconds += s.step_seconds;
  }
  return t;
}

bool IsGoldenModel(const Sim& dut) {
  return dynamic_cast<const ModelSim*>(&dut) != nullptr;
}

NetRunner::NetRunner(Sim& dut, bool check, RunOptions opt)
    : own_(std::make_unique<JobPool>(dut, check, std::move(opt))), pool_(own_.get()) {}

NetRunner::NetRunner(JobPool& pool) : pool_(&pool) {}

NetRunner::~NetRunner() = default;

std::vector<uint32_t> RunAccelJob(Sim& dut, const net::AccelJob& job, bool check,
                                  const RunOptions& opt, const std::string& where,
                                  NetStepStats* st) {
  const Config& cfg = dut.config();
  Workload w;
  try {
    w = MakeJob(cfg, job);
  } catch (const std::invalid_argument& e) {
    throw net::Error(fmt::format("{}: {}", where, e.what()));
  }
  // The golden model runs the same job on a second thread while the back end runs it, so that a
  // checked run takes about the back end's time (the golden model is not checked against
  // itself).
  const bool checking = check && !IsGoldenModel(dut);
  std::future<GoldenRun> golden_run;
  if (checking) golden_run = StartGolden(cfg.machine, w);
  auto t0 = std::chrono::steady_clock::now();
  Load(dut, w);
  Result r;
  try {
    r = accel::Run(dut, w, opt);
  } catch (const std::runtime_error& e) {  // a watchdog: the program did not finish
    throw NetFailure(fmt::format("{}: the run stopped: {}", where, e.what()));
  }
  st->sim_seconds += Since(t0);
  ++st->jobs;
  ++st->programs;
  Add(st->perf, r.perf);
  if (r.code != isa::ErrorCode::kOk) {
    std::string msg;
    if (auto* ms = dynamic_cast<ModelSim*>(&dut)) msg = ms->last_run().message;
    throw NetFailure(fmt::format("{}: machine error {} at pc {}{}{}", where, isa::ErrorName(r.code),
                                 r.pc, msg.empty() ? "" : ": ", msg));
  }
  if (r.hbm_violations != 0) {
    throw NetFailure(
        fmt::format("{}: {} HBM timing violations:\n{}", where, r.hbm_violations, r.violations));
  }
  const Tensor& out = w.outputs.at(0);
  std::vector<uint32_t> got = ReadTensor(dut, out);
  if (checking) {
    t0 = std::chrono::steady_clock::now();  // the check's cost: the wait beyond the back end
    const GoldenRun gr = golden_run.get();
    const isa::Machine& golden = *gr.machine;
    const isa::RunResult& g = gr.result;
    if (!g.ok()) {
      throw NetFailure(fmt::format("{}: golden model error {} at pc {}: {}", where,
                                   isa::ErrorName(g.code), g.pc, g.message));
    }
    if (const std::string diff = EndStateDiff(r, g); !diff.empty()) {
      throw NetFailure(fmt::format(
          "{}: the machine's end state differs from the golden model's:\n{}", where, diff));
    }
    if (const std::string diff = OnChipDiff(dut.ReadOnChip(), golden); !diff.empty()) {
      throw NetFailure(fmt::format(
          "{}: the machine's on-chip state differs from the golden model's:\n{}", where, diff));
    }
    const Report rep = CompareData(w, {got}, {ReadTensor(golden, out)});
    st->check_seconds += Since(t0);
    if (!rep.pass) throw NetFailure(fmt::format("{}:\n{}", where, rep.Format()));
    st->checked += rep.Elements();
  }
  return got;
}

std::vector<uint32_t> NetRunner::RunJob(const net::AccelJob& job, int step) {
  NetStepStats& st = steps_.at(size_t(step));
  return pool_->Run(job,
                    fmt::format("step {} ({}), job {}: {}", step, labels_.at(size_t(step)), st.jobs,
                                job.Describe()),
                    &st);
}

std::map<std::string, net::Tensor> NetRunner::Run(
    const net::Plan& plan, const std::map<std::string, net::Tensor>& inputs,
    const std::function<void(const net::Step&, const NetStepStats&)>& on_step) {
  steps_.assign(plan.steps().size(), NetStepStats{});
  labels_.clear();
  for (const auto& s : plan.steps()) labels_.push_back(s.label);
  return plan.Run(
      inputs, [this](const net::AccelJob& job, int step) { return RunJob(job, step); },
      [&](const net::Step& s, double seconds) {
        steps_[size_t(s.index)].step_seconds = seconds;
        if (on_step) on_step(s, steps_[size_t(s.index)]);
      });
}

NetStepStats NetRunner::Total() const {
  return Sum(steps_);
}

}  // namespace tpu::tb::accel

namespace tpu::tb::accel {

std::string Num(uint64_t x) {
  std::string s = std::to_string(x), r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i != 0 && (s.size() - i) % 3 == 0) r += ',';
    r += s[i];
  }
  return r;
}

std::map<std::string, net::Tensor> LoadNetInputs(const net::Graph& g,
                                                 const std::vector<std::string>& specs) {
  std::map<std::string, net::Tensor> in;
  auto put = [&](const std::string& name, net::Tensor t) {
    if (in.count(name)) throw std::invalid_argument(fmt::format("input '{}' given twice", name));
    in[name] = std::move(t);
  };
  auto ends = [](const std::string& s, const char* suf) {
    const size_t n = std::strlen(suf);
    return s.size() >= n && s.compare(s.size() - n, n, suf) == 0;
  };
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    if (eq != std::string::npos) {
      const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
      if (ends(file, ".npz")) {
        throw std::invalid_argument(
            fmt::format("--input {}: give an .npz file without NAME=", spec));
      }
      put(name, io::ReadNpy(file));
    } else if (ends(spec, ".npz")) {
      for (auto& [name, t] : io::ReadNpz(spec)) put(name, std::move(t));
    } else {
      if (g.inputs.size() != 1) {
        throw std::invalid_argument(
            fmt::format("--input {}: the model has {} inputs; name it: --input NAME={}", spec,
                        g.inputs.size(), spec));
      }
      put(g.inputs[0].name, io::ReadNpy(spec));
    }
  }
  return in;
}

namespace {

std::string Clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

}  // namespace

std::string FormatNetTable(const net::Plan& plan, const std::vector<NetStepStats>& steps,
                           const Config& cfg, bool timed) {
  const double peak = cfg.PeakMacsPerCycle();
  std::string r = fmt::format(
      "{:>3}  {:<34} {:<18} {:<5} {:<18} {:>4} {:>14} {:>12} {:>6} {:>12} {:>9}\n", "#", "nodes",
      "op", "on", "output", "jobs", "MACs", timed ? "cycles" : "-", "util", "HBM bytes", "host ms");
  for (const auto& s : plan.steps()) {
    const NetStepStats& t = steps.at(size_t(s.index));
    const uint64_t bytes = t.perf.hbm_read_bytes + t.perf.hbm_write_bytes;
    const std::string util =
        s.accel && timed && t.perf.cycles
            ? fmt::format("{:.1f}%", 100.0 * double(t.perf.macs) / (double(t.perf.cycles) * peak))
            : "-";
    r +=
        fmt::format("{:>3}  {:<34} {:<18} {:<5} {:<18} {:>4} {:>14} {:>12} {:>6} {:>12} {:>9.1f}\n",
                    s.index, Clip(s.label, 34), Clip(s.op, 18), s.accel ? "accel" : "host",
                    Clip(net::ShapeText(s.out_shape), 18), s.accel ? std::to_string(t.jobs) : "-",
                    s.accel ? Num(t.perf.macs) : "-", s.accel && timed ? Num(t.perf.cycles) : "-",
                    util, s.accel ? Num(bytes) : "-", 1e3 * t.step_seconds);
    if (!s.detail.empty()) r += fmt::format("     ({})\n", s.detail);
  }
  const NetStepStats tot = Sum(steps);
  double host_s = 0;
  int host_steps = 0, accel_steps = 0;
  for (const auto& st : plan.steps()) {
    if (st.accel) {
      ++accel_steps;
    } else {
      ++host_steps;
      host_s += steps.at(size_t(st.index)).step_seconds;
    }
  }
  r +=
      fmt::format("\ntotal: {} steps ({} on the accelerator in {} jobs{}, {} on the host); {} MACs",
                  plan.steps().size(), accel_steps, tot.jobs,
                  tot.programs != tot.jobs ? fmt::format(" run as {} programs", tot.programs) : "",
                  host_steps, Num(tot.perf.macs));
  if (timed) {
    r += fmt::format(
        ", {} cycles, MAC utilization {:.1f}%", Num(tot.perf.cycles),
        tot.perf.cycles ? 100.0 * double(tot.perf.macs) / (double(tot.perf.cycles) * peak) : 0.0);
  }
  r += fmt::format("; HBM {} B read, {} B written\n", Num(tot.perf.hbm_read_bytes),
                   Num(tot.perf.hbm_write_bytes));
  r += fmt::format(
      "host time: {:.2f} s: back end {:.2f} s, golden check {:.2f} s, host operators {:.3f} s "
      "({:.1f}%), data moves and compiling {:.2f} s\n",
      tot.step_seconds, tot.sim_seconds, tot.check_seconds, host_s,
      tot.step_seconds > 0 ? 100.0 * host_s / tot.step_seconds : 0.0,
      tot.step_seconds - tot.sim_seconds - tot.check_seconds - host_s);
  return r;
}

nlohmann::json PerfJson(const Perf& p) {
  return {{"cycles", p.cycles},
          {"busy", p.busy},
          {"weight_stall", p.weight_stall},
          {"input_stall", p.input_stall},
          {"acc_hazard", p.acc_hazard},
          {"store_stall", p.store_stall},
          {"idle", p.idle},
          {"macs", p.macs},
          {"hbm_read_bytes", p.hbm_read_bytes},
          {"hbm_write_bytes", p.hbm_write_bytes},
          {"instructions", p.instructions},
          {"vector_busy", p.vector_busy}};
}

std::string NetJson(const net::Plan& plan, const std::vector<NetStepStats>& steps,
                    const Config& cfg, const std::string& backend, bool pass) {
  nlohmann::json j;
  j["config"] = cfg.name;
  j["backend"] = backend;
  j["pass"] = pass;
  j["peak_macs_per_cycle"] = cfg.PeakMacsPerCycle();
  j["warnings"] = plan.warnings();
  j["steps"] = nlohmann::json::array();
  double host_s = 0;
  for (const auto& s : plan.steps()) {
    const NetStepStats& t = steps.at(size_t(s.index));
    nlohmann::json e{{"index", s.index},
                     {"label", s.label},
                     {"op", s.op},
                     {"class", s.klass},
                     {"on", s.accel ? "accel" : "host"},
                     {"nodes", s.nodes},
                     {"detail", s.detail},
                     {"output_shape", s.out_shape},
                     {"jobs", t.jobs},
                     {"programs", t.programs},
                     {"checked_elements", t.checked},
                     {"sim_seconds", t.sim_seconds},
                     {"check_seconds", t.check_seconds},
                     {"step_seconds", t.step_seconds},
                     {"perf", PerfJson(t.perf)}};
    if (s.accel && t.perf.cycles) {
      e["mac_utilization"] = double(t.perf.macs) / (double(t.perf.cycles) * cfg.PeakMacsPerCycle());
    }
    j["steps"].push_back(e);
    if (!s.accel) host_s += t.step_seconds;
  }
  const NetStepStats tot = Sum(steps);
  j["total"] = {{"jobs", tot.jobs},
                {"programs", tot.programs},
                {"checked_elements", tot.checked},
                {"step_seconds", tot.step_seconds},
                {"sim_seconds", tot.sim_seconds},
                {"check_seconds", tot.check_seconds},
                {"host_operator_seconds", host_s},
                {"perf", PerfJson(tot.perf)}};
  if (tot.perf.cycles) {
    j["total"]["mac_utilization"] =
        double(tot.perf.macs) / (double(tot.perf.cycles) * cfg.PeakMacsPerCycle());
  }
  return j.dump(1);
}

}  // namespace tpu::tb::accel
