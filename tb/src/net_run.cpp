// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/net_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

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
  return RunWorkloadChecked(dut, w, check, opt, where, st).at(0);
}

std::vector<std::vector<uint32_t>> RunWorkloadChecked(Sim& dut, const Workload& w, bool check,
                                                      const RunOptions& opt,
                                                      const std::string& where, NetStepStats* st) {
  const Config& cfg = dut.config();
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
  std::vector<std::vector<uint32_t>> got;
  for (const Tensor& out : w.outputs) got.push_back(ReadTensor(dut, out));
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
    std::vector<std::vector<uint32_t>> want;
    for (const Tensor& out : w.outputs) want.push_back(ReadTensor(golden, out));
    const Report rep = CompareData(w, got, want);
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
  programs_.clear();
  labels_.clear();
  for (const auto& s : plan.steps()) labels_.push_back(s.label);
  if (whole_) return RunWhole(plan, inputs, on_step);
  return plan.Run(
      inputs, [this](const net::AccelJob& job, int step) { return RunJob(job, step); },
      [&](const net::Step& s, double seconds) {
        steps_[size_t(s.index)].step_seconds = seconds;
        if (on_step) on_step(s, steps_[size_t(s.index)]);
      });
}

NetStepStats NetRunner::Total() const {
  NetStepStats t = Sum(steps_);
  if (!whole_) return t;
  t.perf = Perf{};
  t.programs = 0;
  for (const auto& p : programs_) {
    Add(t.perf, p.stats.perf);
    t.programs += p.stats.programs;
    t.checked += p.stats.checked;
    t.sim_seconds += p.stats.sim_seconds;
    t.check_seconds += p.stats.check_seconds;
  }
  return t;
}

namespace {

// A job's output as tensor `o` of its workload holds it: the output itself, or its bf16 copy
// (MakeJob's bf16_copy: the contract's rounding of the fp32 output).
std::vector<uint32_t> Expected(const std::vector<uint32_t>& out, const Tensor& o,
                               const Config& cfg) {
  const std::string suffix = ".bf16";
  if (o.name.size() < suffix.size() ||
      o.name.compare(o.name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return out;
  }
  std::vector<uint32_t> r(out.size());
  for (size_t i = 0; i < out.size(); ++i) r[i] = num::Fp32ToBf16(out[i], cfg.machine.mode);
  return r;
}

}  // namespace

namespace {

// The HBM bytes a program's LOADs read and its STOREs write (whole 32-byte beats per row).
std::pair<uint64_t, uint64_t> HbmBytes(const host::Compiled& p) {
  uint64_t rd = 0, wr = 0;
  for (const auto& in : p.instrs) {
    if (const auto* l = std::get_if<isa::Load>(&in)) {
      const bool acc = l->buffer == isa::kBufAcc;
      const uint64_t size =
          acc || (l->buffer == isa::kBufVmem && l->format == isa::kFmtFp32) ? 4 : 2;
      const uint64_t rows = acc && l->hbm_stride == 0 ? 1 : l->rows;
      rd += rows * host::RoundUp32(l->elems * size);
    } else if (const auto* st = std::get_if<isa::Store>(&in)) {
      wr += uint64_t(st->rows) * host::RoundUp32(st->elems * (st->format == isa::kFmtBf16 ? 2 : 4));
    }
  }
  return {rd, wr};
}

}  // namespace

struct NetRunner::Recorded {
  net::AccelJob job;
  int step = 0;
  int index = 0;  // within its step
  std::vector<uint32_t> out;
};

std::map<std::string, net::Tensor> NetRunner::RunWhole(
    const net::Plan& plan, const std::map<std::string, net::Tensor>& inputs,
    const std::function<void(const net::Step&, const NetStepStats&)>& on_step) {
  if (pool_->processes() > 1) {
    throw net::Error("whole-network programs run in one process (not with several processes)");
  }
  const Config& cfg = pool_->dut().config();
  std::vector<Recorded> recs;
  // The golden model, job by job: the reference for every program's outputs.
  auto outs = plan.Run(
      inputs,
      [&](const net::AccelJob& job, int step) {
        NetStepStats& st = steps_.at(size_t(step));
        const std::string where = fmt::format("step {} ({}), job {}: {}", step,
                                              labels_.at(size_t(step)), st.jobs, job.Describe());
        Workload w;
        try {
          w = MakeJob(cfg, job);
        } catch (const std::invalid_argument& e) {
          throw net::Error(fmt::format("{}: {}", where, e.what()));
        }
        const auto t0 = std::chrono::steady_clock::now();
        isa::Machine m(cfg.machine);
        const isa::RunResult r = RunGolden(m, w);
        if (!r.ok()) {
          throw NetFailure(fmt::format("{}: golden model error {} at pc {}: {}", where,
                                       isa::ErrorName(r.code), r.pc, r.message));
        }
        std::vector<uint32_t> o = ReadTensor(m, w.outputs.at(0));
        st.check_seconds += Since(t0);
        st.perf.macs += job.Macs();
        recs.push_back({job, step, st.jobs, o});
        ++st.jobs;
        return o;
      },
      [&](const net::Step& s, double seconds) {
        steps_[size_t(s.index)].step_seconds = seconds;
        if (on_step) on_step(s, steps_[size_t(s.index)]);
      });
  // The programs: a job whose operand the host computes from a job's output starts a new one.
  placed_.clear();
  size_t first = 0;
  while (first < recs.size()) {
    size_t end = first + 1;
    while (end < recs.size() && !recs[end].job.host_a && !recs[end].job.host_b) ++end;
    RunProgram(recs, first, end);
    first = end;
  }
  // A Concat is address arithmetic when every step reading it is a job step whose jobs all read
  // it placed (NetStepStats::addressed).
  std::set<std::string> graph_outs;
  for (const auto& v : plan.outputs()) graph_outs.insert(v.name);
  for (const net::Step& s : plan.steps()) {
    if (s.accel || s.op != "Concat" || s.outputs.size() != 1 || graph_outs.count(s.outputs[0])) {
      continue;
    }
    const std::string& v = s.outputs[0];
    bool read = false, all = true;
    for (const net::Step& t : plan.steps()) {
      if (std::find(t.inputs.begin(), t.inputs.end(), v) == t.inputs.end()) continue;
      read = true;
      all = all && t.accel;
    }
    for (size_t i = 0; i < recs.size() && all; ++i) {
      const net::Step& t = plan.steps().at(size_t(recs[i].step));
      if (std::find(t.inputs.begin(), t.inputs.end(), v) == t.inputs.end()) continue;
      all = recs[i].job.a_cat == v && placed_.count(i);
    }
    steps_.at(size_t(s.index)).addressed = read && all;
  }
  return outs;
}

// The jobs [first, end) as programs: as many as fit in HBM in each.
void NetRunner::RunProgram(const std::vector<Recorded>& recs, size_t first, size_t end) {
  const Config& cfg = pool_->dut().config();
  while (first < end) {
    std::vector<Workload> parts;
    std::vector<WorkloadLink> links;
    // Outputs read in place (bound) and outputs stored into a reader's input (placed): one use
    // each way, and never both.
    std::set<std::pair<size_t, std::string>> bound_outs, placed_outs;
    std::map<std::string, std::vector<uint32_t>> filled;  // "j<part>.<input>": its data
    uint64_t base = 0;
    size_t k = first;
    for (; k < end; ++k) {
      const Recorded& rc = recs[k];
      const std::string where =
          fmt::format("step {} ({}), job {}: {}", rc.step, labels_.at(size_t(rc.step)), rc.index,
                      rc.job.Describe());
      Workload w;
      try {
        w = MakeJob(cfg, rc.job, base, /*bf16_copy=*/true);
        // A convolution the host would feed through its im2col reads its input in place when
        // that input is an earlier job's output here: through windows (slower on the array,
        // but no program boundary).
        const bool linked_in =
            (rc.job.from_a >= int(first) && rc.job.from_a < int(k)) || !rc.job.a_pieces.empty();
        if (rc.job.kind == net::AccelJob::Kind::kConv && linked_in &&
            JobOperand(w, rc.job, 0) == nullptr) {
          net::AccelJob wj = rc.job;
          wj.windows = true;
          Workload ww = MakeJob(cfg, wj, base, /*bf16_copy=*/true);
          if (JobOperand(ww, wj, 0) != nullptr) w = std::move(ww);
        }
      } catch (const std::invalid_argument& e) {
        if (k == first) throw net::Error(fmt::format("{}: {}", where, e.what()));
        break;  // HBM is full: the next program starts here
      }
      // Operands that are an earlier job's output in this program are read where it stored
      // them; one that the program cannot read as stored (another layout, the host's im2col of
      // it) starts a new program, whose host writes it.
      std::vector<WorkloadLink> mine;
      bool linkable = true;
      for (int op = 0; op < 3 && linkable; ++op) {
        const int src = op == 0 ? rc.job.from_a : op == 1 ? rc.job.from_b : rc.job.from_res;
        if (src < int(first) || src >= int(k)) continue;  // the host writes it
        const Tensor* in = JobOperand(w, rc.job, op);
        const Workload& pw = parts[size_t(src) - first];
        const Tensor* po = nullptr;
        for (const Tensor& t : pw.outputs) {
          if (!t.weights && in != nullptr && t.elem_bytes == in->elem_bytes) {
            po = &t;
            break;
          }
        }
        const int group = op == 0 ? rc.job.from_a_group : 1;
        if (in == nullptr || po == nullptr || !host::BindableGrouped(in->mat, po->mat, group)) {
          linkable = false;
          break;
        }
        if (placed_outs.count({size_t(src) - first, po->name})) {
          linkable = false;
          break;
        }
        if (in->data != Expected(recs[size_t(src)].out, *po, cfg)) {
          throw NetFailure(fmt::format(
              "{}: operand {} is not the output of job {} as the plan says (a planner error)",
              where,
              op == 0   ? "A"
              : op == 1 ? "B"
                        : "R",
              src));
        }
        WorkloadLink l{k - first, in->name, size_t(src) - first, po->name};
        l.group = group;
        mine.push_back(l);
      }
      // A concatenation of earlier jobs' outputs: each stored into this job's input.
      const auto& pieces = rc.job.a_pieces;
      // (Pieces all from earlier programs: the host writes the concatenation of their outputs.
      // Some from this one: they must all be, else the next program starts here.)
      bool in_program = !pieces.empty(), any_here = false;
      for (const auto& pc : pieces) {
        const bool here = pc.job >= int(first) && pc.job < int(k);
        in_program = in_program && here;
        any_here = any_here || here;
      }
      if (any_here && !in_program) linkable = false;
      std::vector<uint32_t> cat_want;
      if (linkable && in_program) {
        const Tensor* in = JobOperand(w, rc.job, 0);
        std::vector<const Tensor*> pos;
        for (const auto& pc : pieces) {
          const Tensor* po = nullptr;
          for (const Tensor& t : parts[size_t(pc.job) - first].outputs) {
            if (!t.weights && in != nullptr && t.elem_bytes == in->elem_bytes) {
              po = &t;
              break;
            }
          }
          const std::pair<size_t, std::string> key{size_t(pc.job) - first,
                                                   po ? po->name : std::string()};
          if (in == nullptr || po == nullptr || !host::Placeable(po->mat, in->mat, pc.col0) ||
              bound_outs.count(key) || placed_outs.count(key)) {
            linkable = false;
            break;
          }
          pos.push_back(po);
        }
        if (linkable) {
          // The operand must be the pieces side by side, row by row.
          const size_t rows = size_t(in->Rows()), cols = size_t(in->Cols());
          cat_want.assign(rows * cols, 0);
          for (size_t i = 0; i < pieces.size(); ++i) {
            const std::vector<uint32_t> pv =
                Expected(recs[size_t(pieces[i].job)].out, *pos[i], cfg);
            const size_t pc = size_t(pos[i]->Cols());
            for (size_t r = 0; r < rows; ++r) {
              std::copy(pv.begin() + long(r * pc), pv.begin() + long((r + 1) * pc),
                        cat_want.begin() + long(r * cols + size_t(pieces[i].col0)));
            }
          }
          if (in->data != cat_want) {
            throw NetFailure(fmt::format(
                "{}: operand A is not the concatenation the plan says (a planner error)", where));
          }
          for (size_t i = 0; i < pieces.size(); ++i) {
            WorkloadLink l{k - first, in->name, size_t(pieces[i].job) - first, pos[i]->name};
            l.col0 = pieces[i].col0;
            mine.push_back(l);
          }
          filled[fmt::format("j{}.{}", k - first, in->name)] = cat_want;
        }
      }
      if (!linkable) break;
      if (in_program) placed_.insert(k);
      for (const auto& l : mine) {
        (l.col0 >= 0 ? placed_outs : bound_outs).insert({l.from, l.output});
      }
      links.insert(links.end(), mine.begin(), mine.end());
      base = w.prog.addr;
      parts.push_back(std::move(w));
    }
    NetProgram np;
    np.first_step = recs[first].step;
    np.last_step = recs[k - 1].step;
    const std::string where = fmt::format("program {} (steps {} to {}, {} jobs)", programs_.size(),
                                          np.first_step, np.last_step, k - first);
    Workload linked;
    try {
      linked = LinkWorkloads(cfg, parts, links);
    } catch (const std::invalid_argument& e) {
      throw NetFailure(fmt::format("{}: {}", where, e.what()));
    }
    // Cycles per job: part j ends when the store module has taken its last instruction (the
    // counters sampled through the host port every 64 cycles while the machine runs).
    const size_t nparts = parts.size();
    std::vector<uint64_t> threshold(nparts), ends(nparts, 0);
    uint64_t cum = 0;
    for (size_t j = 0; j < nparts; ++j) {
      for (const auto& in : parts[j].prog.instrs) {
        cum += isa::ModuleOf(in) == isa::Module::kStore ? 1 : 0;
      }
      threshold[j] = cum;
    }
    size_t ended = 0;
    RunOptions opt = pool_->options();
    if (!IsGoldenModel(pool_->dut())) {
      opt.modules_every = 64;
      opt.on_modules = [&](uint64_t cycles, const std::array<uint64_t, 3>& taken) {
        while (ended < nparts && taken[2] >= threshold[ended]) ends[ended++] = cycles;
      };
    }
    const auto got =
        RunWorkloadChecked(pool_->dut(), linked, pool_->check(), opt, where, &np.stats);
    for (size_t j = ended; j < nparts; ++j) ends[j] = np.stats.perf.cycles;
    for (size_t j = 0; j < nparts; ++j) {
      NetStepStats& st = steps_.at(size_t(recs[first + j].step));
      const uint64_t start = j == 0 ? 0 : std::min(ends[j - 1], ends[j]);
      st.perf.cycles += ends[j] - start;
      const auto [rd, wr] = HbmBytes(parts[j].prog);
      st.perf.hbm_read_bytes += rd;
      st.perf.hbm_write_bytes += wr;
    }
    np.stats.jobs = int(k - first);
    np.stats.checked = 0;
    // The linked workload's outputs ("j<part>.<name>"): every part's output, bf16 copies
    // included, and every input the pieces of a concatenation were stored into.
    for (size_t t = 0; t < linked.outputs.size(); ++t) {
      const std::string& name = linked.outputs[t].name;
      const size_t dot = name.find('.');
      const size_t part = size_t(std::stoul(name.substr(1, dot - 1)));
      const Recorded& rc = recs[first + part];
      std::vector<uint32_t> want;
      if (auto it = filled.find(name); it != filled.end()) {
        want = it->second;
      } else {
        Tensor o = linked.outputs[t];
        o.name = name.substr(dot + 1);
        want = Expected(rc.out, o, cfg);
      }
      const std::vector<uint32_t>& g = got.at(t);
      if (g != want) {
        size_t bad = 0;
        while (bad < want.size() && bad < g.size() && g[bad] == want[bad]) ++bad;
        throw NetFailure(fmt::format(
            "{}: step {} ({}), job {}: {} element {} is {:#x}, the golden model's jobs give {:#x}",
            where, rc.step, labels_.at(size_t(rc.step)), rc.index, name, bad,
            bad < g.size() ? g[bad] : 0, bad < want.size() ? want[bad] : 0));
      }
      np.stats.checked += want.size();
    }
    programs_.push_back(np);
    first = k;
  }
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

// Where a step ran: "accel", "view", "addr" (NetStepStats::addressed) or "host".
const char* OnText(const net::Step& s, const NetStepStats& t) {
  return s.view ? "view" : s.accel ? "accel" : t.addressed ? "addr" : "host";
}

std::string Clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

}  // namespace

std::string FormatNetTable(const net::Plan& plan, const std::vector<NetStepStats>& steps,
                           const Config& cfg, bool timed, const std::vector<NetProgram>& programs) {
  const double peak = cfg.PeakMacsPerCycle();
  const bool whole = !programs.empty();
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
                    s.index, Clip(s.label, 34), Clip(s.op, 18), OnText(s, t),
                    Clip(net::ShapeText(s.out_shape), 18), s.accel ? std::to_string(t.jobs) : "-",
                    s.accel ? Num(t.perf.macs) : "-", s.accel && timed ? Num(t.perf.cycles) : "-",
                    util, s.accel && (!whole || timed) ? Num(bytes) : "-", 1e3 * t.step_seconds);
    if (!s.detail.empty()) r += fmt::format("     ({})\n", s.detail);
  }
  NetStepStats tot = Sum(steps);
  if (whole) {
    r += fmt::format("\n{} program{} (whole network: the jobs linked, activations left in HBM):\n",
                     programs.size(), programs.size() == 1 ? "" : "s");
    tot.perf = Perf{};
    tot.programs = 0;
    for (size_t i = 0; i < programs.size(); ++i) {
      const NetStepStats& p = programs[i].stats;
      r += fmt::format(
          "  program {}: steps {} to {}, {} jobs, {} instructions, {} MACs{}, HBM {} B\n", i,
          programs[i].first_step, programs[i].last_step, p.jobs, Num(p.perf.instructions),
          Num(p.perf.macs),
          timed ? fmt::format(", {} cycles, MAC utilization {:.1f}%", Num(p.perf.cycles),
                              p.perf.cycles
                                  ? 100.0 * double(p.perf.macs) / (double(p.perf.cycles) * peak)
                                  : 0.0)
                : "",
          Num(p.perf.hbm_read_bytes + p.perf.hbm_write_bytes));
      Add(tot.perf, p.perf);
      tot.programs += p.programs;
      tot.checked += p.checked;
      tot.sim_seconds += p.sim_seconds;
      tot.check_seconds += p.check_seconds;
      tot.step_seconds += p.sim_seconds + p.check_seconds;  // the programs run after the steps
    }
  }
  double host_s = 0;
  int host_steps = 0, accel_steps = 0, views = 0, addressed = 0;
  for (const auto& st : plan.steps()) {
    if (st.accel) {
      ++accel_steps;
    } else if (st.view) {
      ++views;
    } else if (steps.at(size_t(st.index)).addressed) {
      ++addressed;
    } else {
      ++host_steps;
      host_s += steps.at(size_t(st.index)).step_seconds;
    }
  }
  r += fmt::format(
      "\ntotal: {} steps ({} on the accelerator in {} jobs{}, {} on the host{}{}); {} MACs",
      plan.steps().size(), accel_steps, tot.jobs,
      tot.programs != tot.jobs
          ? fmt::format(" run as {} program{}", tot.programs, tot.programs == 1 ? "" : "s")
          : "",
      host_steps, views ? fmt::format(", {} view{}", views, views == 1 ? "" : "s") : "",
      addressed ? fmt::format(", {} address arithmetic in the program", addressed) : "",
      Num(tot.perf.macs));
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
                    const Config& cfg, const std::string& backend, bool pass,
                    const std::vector<NetProgram>& programs) {
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
                     {"on", OnText(s, t)},
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
  NetStepStats tot = Sum(steps);
  if (!programs.empty()) {
    j["programs"] = nlohmann::json::array();
    tot.perf = Perf{};
    tot.programs = 0;
    for (const auto& p : programs) {
      j["programs"].push_back({{"first_step", p.first_step},
                               {"last_step", p.last_step},
                               {"jobs", p.stats.jobs},
                               {"checked_elements", p.stats.checked},
                               {"sim_seconds", p.stats.sim_seconds},
                               {"perf", PerfJson(p.stats.perf)}});
      Add(tot.perf, p.stats.perf);
      tot.programs += p.stats.programs;
      tot.checked += p.stats.checked;
      tot.sim_seconds += p.stats.sim_seconds;
      tot.check_seconds += p.stats.check_seconds;
    }
  }
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
