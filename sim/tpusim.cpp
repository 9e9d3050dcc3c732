// SPDX-License-Identifier: Apache-2.0
// tpusim: runs a workload (GEMM, MLP, convolution, or a GEMM on host .npy matrices) on the
// accelerator, by default on its RTL, checks every output bit against the golden model, and
// prints cycles, MAC utilization, HBM bandwidth and the stall breakdown.
//
//   tpusim gemm --m M --k K --n N [--init overwrite|preload|accumulate] [--bf16-out] [--relu]
//               [--trans-a] [--trans-b]
//   tpusim mlp --m M --sizes 256,512,10 [--bias] [--relu]
//   tpusim conv --h H --w W --cin CI --cout CO --kh KH --kw KW [--n N --stride S --pad P]
//               [--bias] [--relu] [--bf16-out]
//   tpusim run --a A.npy --b B.npy [--c C.npy] --out OUT.npy
//   tpusim onnx MODEL.onnx --input NAME=X.npy|X.npz ... --out DIR|OUT.npz [--json F|-]
//   tpusim train MODEL.onnx --train D.npz [--test D.npz] --epochs E|--steps N [--batch B --lr LR
//                --momentum M --seed S --from-scratch --every N] [--out TRAINED.onnx] [--json F|-]
//   common: --config NAME|FILE.json  --backend rtl|model  --seed S  --trace F.fst
//           [--trace-from C --trace-to C]  --check/--no-check  --max-cycles N  --quiet
//
// This file builds two kinds of program:
//  * `tpusim` (no engine, built by default): the launcher. `--backend model` runs here on the
//    golden model. `--backend rtl` resolves the configuration to its engine name, builds
//    <build>/sim/tpusim-<name> on first use (`cmake --build`; an undeclared configuration is first
//    added to the CMake cache variable TPU_EXTRA_ENGINES) and execv's it with the same arguments.
//  * `tpusim-<name>` (TPUSIM_ENGINE_CLASS defined, rtl/builds.json): the engine, linked
//    with the Verilated accelerator of one configuration; it runs both back ends.
//
// Exit status: 0 PASS, 1 mismatch or machine error, 2 bad usage.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tpu/io/npy.h"
#include "tpu/isa.h"
#include "tpu/isa_model.h"
#include "tpu/onnx_import.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_scoreboard.h"
#include "tpu/tb/accel_sim.h"
#include "tpu/tb/job_pool.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/workloads.h"
#include "tpusim_train.h"

#ifdef TPUSIM_ENGINE_CLASS
#include TPUSIM_ENGINE_HEADER
#include "tpu/tb/accel_harness.h"
#endif

namespace {

using namespace tpu;
using namespace tpu::tb::accel;

// Bad usage (exit status 2): a message for the user.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// Options

struct Options {
  // common
  std::string config = "16x16_1ch";
  std::string backend = "rtl";
  std::string trace;
  uint64_t trace_from = 0, trace_to = UINT64_MAX;
  bool check = true;
  uint64_t max_cycles = 2'000'000'000;
  bool quiet = false;
  std::optional<uint64_t> seed;
  // gemm / mlp / conv
  int m = 0, k = 0, n = 0;
  std::string init = "overwrite";
  bool bf16_out = false, relu = false, bias = false;
  bool trans_a = false, trans_b = false;
  std::vector<int> sizes;
  host::ConvShape conv;
  // run
  std::string a_file, b_file, c_file, out_file;
  // onnx
  std::string model;
  std::vector<std::string> inputs;
  std::string json;
  std::string labels, reference;
  bool whole = false;  // --whole-network
  // train
  tpusim::TrainOptions train;
  // onnx and train: engine processes
  int jobs = 1;
  std::string launcher = "local";
  std::string worker_of;  // a worker of another tpusim's pool (hidden)
};

void AddCommon(CLI::App* s, Options& o, bool with_seed) {
  s->add_option("--config", o.config,
                "accelerator configuration: RxC_Nch (e.g. 16x16_1ch, 4x4_1ch, 16x16_8ch) or a "
                "JSON file (keys: " +
                    ConfigKeys() + ")")
      ->capture_default_str();
  s->add_option("--backend", o.backend, "rtl: the Verilated accelerator; model: the golden model")
      ->check(CLI::IsMember({"rtl", "model"}))
      ->capture_default_str();
  if (with_seed) {
    s->add_option("--seed", o.seed, "seed of the random inputs (default: a fresh one, printed)");
  }
  s->add_option("--trace", o.trace, "write FST waves to this file (an engine built with tracing)");
  s->add_option("--trace-from", o.trace_from, "first traced cycle");
  s->add_option("--trace-to", o.trace_to, "last traced cycle");
  s->add_flag("--check,!--no-check", o.check,
              "also run the golden model and compare every output bit (default on)");
  s->add_option("--max-cycles", o.max_cycles, "give up after this many cycles")
      ->capture_default_str();
  s->add_flag("--quiet", o.quiet, "print only the result line (and errors)");
}

void AddJobs(CLI::App* s, Options& o) {
  s->add_option("--jobs,-j", o.jobs,
                "engine processes: every accelerator job is split over them (by output columns "
                "or rows), each part checked; the outputs are bit-identical for every count")
      ->capture_default_str();
  s->add_option("--launcher", o.launcher,
                "where --jobs starts the other processes: local (forked here) or slurm (srun "
                "tasks, on any node of the allocation or partition, connecting back over TCP)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
}

// ---------------------------------------------------------------------------------------------
// Output helpers

std::string Rate(double x) {  // 12345678 -> "12.3 M"
  if (x >= 1e9) return fmt::format("{:.2f} G", x / 1e9);
  if (x >= 1e6) return fmt::format("{:.2f} M", x / 1e6);
  if (x >= 1e3) return fmt::format("{:.2f} k", x / 1e3);
  return fmt::format("{:.2f} ", x);
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? sep : "") + v[i];
  return r;
}

double Pct(uint64_t a, uint64_t b) {
  return b == 0 ? 0.0 : 100.0 * double(a) / double(b);
}

// ---------------------------------------------------------------------------------------------
// NumPy files

// A 2-D matrix from a .npy file (any element type tpu/io/npy.h reads; integers as float32).
struct HostMatrix {
  int rows = 0, cols = 0;
  std::vector<float> v;
};

HostMatrix LoadMatrix(const std::string& file, const char* what) {
  net::Tensor t;
  try {
    t = io::ReadNpy(file);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{} ({})", e.what(), what));
  }
  t = AsFloat(std::move(t));  // a matrix of integers, as NumPy's astype(float32)
  if (t.shape.size() != 2) {
    throw UsageError(fmt::format("{} ({}): shape {} has rank {}; tpusim needs a 2-D matrix", file,
                                 what, net::ShapeText(t.shape), t.shape.size()));
  }
  if (t.shape[0] < 1 || t.shape[1] < 1 || t.shape[0] > 65535 * 64 || t.shape[1] > 65535 * 64) {
    throw UsageError(fmt::format("{} ({}): shape {} is empty or too large", file, what,
                                 net::ShapeText(t.shape)));
  }
  HostMatrix m;
  m.rows = int(t.shape[0]);
  m.cols = int(t.shape[1]);
  m.v = std::move(t.f);
  return m;
}

void SaveMatrix(const std::string& file, int rows, int cols, const std::vector<uint32_t>& bits) {
  net::Tensor t;
  t.shape = {rows, cols};
  t.f.resize(bits.size());
  std::memcpy(t.f.data(), bits.data(), bits.size() * 4);
  io::WriteNpy(file, t);
}

// ---------------------------------------------------------------------------------------------
// The launcher: find or build the engine of a configuration, then execv it.

#ifndef TPUSIM_ENGINE_CLASS

// Runs a command with stdout sent to stderr (tpusim's stdout stays the report); its exit status.
int RunCommand(const std::vector<std::string>& args, bool quiet = false) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    if (quiet) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
    } else {
      dup2(2, 1);
    }
    execvp(argv[0], argv.data());
    fmt::print(stderr, "tpusim: cannot run {}: {}\n", args[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// The engines CMake declared (rtl/builds.json, sim/CMakeLists.txt): "name Param=Value ..." per line
// of <build>/sim/tpusim_engines.txt. Empty when the name is not declared.
std::optional<std::string> DeclaredParams(const std::string& bin, const std::string& name) {
  std::ifstream f(bin + "/sim/tpusim_engines.txt");
  for (std::string line; std::getline(f, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto sp = line.find(' ');
    if (line.substr(0, sp) == name) {
      return sp == std::string::npos ? std::string() : line.substr(sp + 1);
    }
  }
  return std::nullopt;
}

// The current value of the cache variable TPU_EXTRA_ENGINES.
std::string ExtraEngines(const std::string& bin) {
  std::ifstream f(bin + "/CMakeCache.txt");
  const std::string key = "TPU_EXTRA_ENGINES:STRING=";
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  }
  return "";
}

// With --trace the engines come from a second tree, build-trace/ next to the sources (FST tracing
// compiled in, as `make waves` uses), configured on first use.
int Launch(const Config& cfg, int argc, char** argv, bool trace) {
  const std::string name = EngineName(cfg);
  const std::string params = Join(VerilogParams(cfg), " ");
  const std::string bin = trace ? std::string(TPU_SOURCE_DIR) + "/build-trace" : TPU_BINARY_DIR;
  const std::string engine = bin + "/sim/tpusim-" + name;
  if (trace && access((bin + "/CMakeCache.txt").c_str(), R_OK) != 0) {
    fmt::print(stderr, "tpusim: --trace: configuring {} with FST tracing (first use only)\n", bin);
    if (RunCommand({TPU_CMAKE_COMMAND, "-S", TPU_SOURCE_DIR, "-B", bin,
                    "-DCMAKE_BUILD_TYPE=Release", "-DTPU_TRACE=ON"}) != 0) {
      fmt::print(stderr, "tpusim: configuring {} failed\n", bin);
      return 1;
    }
  }
  // One launcher at a time brings an engine up to date: two builds of one target at once leave
  // a broken library behind. A second launcher waits here, then finds the engine up to date.
  const std::string lock_path = bin + "/.tpusim-" + name + ".lock";
  const int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock >= 0 && flock(lock, LOCK_EX) != 0) {
    fmt::print(stderr, "tpusim: cannot lock {}: {}\n", lock_path, std::strerror(errno));
  }
  if (access(engine.c_str(), X_OK) == 0) {
    // Present: bring it up to date with the RTL and sources (quick when nothing changed).
    if (RunCommand({TPU_CMAKE_COMMAND, "--build", bin, "--target", "tpusim-" + name}, true) != 0) {
      fmt::print(stderr, "tpusim: rebuilding tpusim-{} failed:\n", name);
      RunCommand({TPU_CMAKE_COMMAND, "--build", bin, "--target", "tpusim-" + name});
      return 1;
    }
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    const auto declared = DeclaredParams(bin, name);
    if (declared && *declared != params) {
      throw UsageError(
          fmt::format("the engine table (rtl/builds.json) gives {} the parameters\n  {}\nbut the "
                      "configuration library says\n  {}\nre-run cmake, or fix rtl/builds.json",
                      name, *declared, params));
    }
    if (!declared) {
      // Not declared: add it to TPU_EXTRA_ENGINES ("name:P=V,P=V;...") and re-run CMake.
      fmt::print(stderr, "tpusim: adding engine {} ({}) to {}\n", name, params, bin);
      std::string extra = ExtraEngines(bin);
      extra += (extra.empty() ? "" : ";") + name + ":" + Join(VerilogParams(cfg), ",");
      if (RunCommand({TPU_CMAKE_COMMAND, "-S", TPU_SOURCE_DIR, "-B", bin,
                      "-DTPU_EXTRA_ENGINES=" + extra}) != 0) {
        fmt::print(stderr, "tpusim: re-running CMake in {} failed\n", bin);
        return 1;
      }
    }
    fmt::print(stderr, "tpusim: building the {} accelerator model (first run only) ...\n", name);
    const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    if (RunCommand({TPU_CMAKE_COMMAND, "--build", bin, "--target", "tpusim-" + name, "-j",
                    std::to_string(jobs)}) != 0) {
      fmt::print(stderr, "tpusim: building tpusim-{} failed (see above)\n", name);
      return 1;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "tpusim: built tpusim-{} in {:.1f} s\n", name, s);
  }
  if (lock >= 0) close(lock);
  std::vector<char*> args(argv, argv + argc);
  args[0] = const_cast<char*>(engine.c_str());
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(engine.c_str(), args.data());
  fmt::print(stderr, "tpusim: cannot run {}: {}\n", engine, std::strerror(errno));
  return 1;
}

#endif  // !TPUSIM_ENGINE_CLASS

std::unique_ptr<Sim> MakeRtlSim(const Config& cfg, const std::string& trace_path,
                                uint64_t trace_from, uint64_t trace_to) {
#ifdef TPUSIM_ENGINE_CLASS
  tpu::tb::TraceOptions trace;
  trace.path = trace_path;
  trace.from_cycle = trace_from;
  trace.to_cycle = trace_to;
  return MakeAccelSim<TPUSIM_ENGINE_CLASS>(cfg, trace);
#else
  (void)cfg;
  (void)trace_path;
  (void)trace_from;
  (void)trace_to;
  throw std::logic_error("the launcher has no RTL engine");
#endif
}

// What makes the back end --backend names (in each engine process).
JobPool::MakeSim BackEnd(const Options& o, const Config& cfg) {
  return [&o, cfg]() -> std::unique_ptr<Sim> {
    if (o.backend == "model") return std::make_unique<ModelSim>(cfg);
    return MakeRtlSim(cfg, o.trace, o.trace_from, o.trace_to);
  };
}

// The pool of --jobs processes: forked here, or srun tasks running this program as workers.
std::unique_ptr<JobPool> MakePool(const Options& o, const Config& cfg, const RunOptions& ro) {
  if (o.launcher != "slurm" || o.jobs == 1) {
    return std::make_unique<JobPool>(o.jobs, BackEnd(o, cfg), o.check, ro);
  }
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  RemoteLaunch launch;
  launch.command = {"srun",
                    fmt::format("--ntasks={}", o.jobs - 1),
                    "--overcommit",
                    "--quiet",
                    self,
                    "worker",
                    "--worker-of",
                    "{addr}",
                    "--config",
                    o.config,
                    "--backend",
                    o.backend,
                    "--max-cycles",
                    std::to_string(o.max_cycles),
                    o.check ? "--check" : "--no-check"};
  try {
    return std::make_unique<JobPool>(o.jobs, launch, BackEnd(o, cfg), o.check, ro);
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("--launcher slurm: {}", e.what()));
  }
}

// ---------------------------------------------------------------------------------------------
// Progress of long runs: one updating line on a terminal, else a line every ~10 s.

class Progress {
 public:
  Progress(uint32_t count, bool quiet) : count_(count), quiet_(quiet), tty_(isatty(2) != 0) {}
  void operator()(uint64_t cycles, uint64_t fetched) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    const double t = std::chrono::duration<double>(now - t0_).count();
    if (!tty_ && t - last_ < 10.0) return;
    last_ = t;
    const std::string line =
        fmt::format("  {} cycles, {} of {} instructions, {}cycles/s, {:.0f} s", Num(cycles),
                    Num(fetched), Num(count_), Rate(t > 0 ? double(cycles) / t : 0), t);
    if (tty_) {
      fmt::print(stderr, "\r{}\x1b[K", line);
      shown_ = true;
    } else {
      fmt::print(stderr, "{}\n", line);
    }
  }
  void Done() {
    if (shown_) fmt::print(stderr, "\r\x1b[K");
  }

 private:
  uint32_t count_;
  bool quiet_, tty_;
  bool shown_ = false;
  double last_ = 0;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// ---------------------------------------------------------------------------------------------
// Reports

void PrintError(const char* who, isa::ErrorCode code, uint32_t pc, const std::string& message,
                const Workload& w) {
  const std::string at = pc < w.prog.instrs.size()
                             ? isa::Disassemble(w.prog.instrs[pc])
                             : std::string("(past the program's last instruction)");
  fmt::print("{} error {} at pc {}: {}\n", who, isa::ErrorName(code), pc, at);
  if (!message.empty()) fmt::print("  {}\n", message);
}

void PrintPerf(const Options& o, const Config& cfg, const Workload& w, const Result& r) {
  const Perf& p = r.perf;
  const double secs = r.wall_seconds;
  fmt::print("instructions: {} fetched; {} MACs; HBM {} B read (program included), {} B written\n",
             Num(p.instructions), Num(p.macs), Num(p.hbm_read_bytes), Num(p.hbm_write_bytes));
  if (o.backend == "model") {
    fmt::print("cycles:   - (the model back end has no clock; --backend rtl for timing)\n");
    fmt::print("speed:    {:.3f} s host time, {}MACs/s\n", secs,
               Rate(secs > 0 ? double(p.macs) / secs : 0));
    return;
  }
  const double cyc = double(p.cycles);
  const double util = cyc > 0 ? double(p.macs) / (cyc * cfg.PeakMacsPerCycle()) : 0;
  const double bpc = cyc > 0 ? double(p.hbm_read_bytes + p.hbm_write_bytes) / cyc : 0;
  fmt::print("cycles:   {}\n", Num(p.cycles));
  fmt::print("MAC utilization: {:.1f}% ({} MACs / ({} cycles x {} MACs/cycle))\n", 100 * util,
             Num(p.macs), Num(p.cycles), cfg.machine.r * cfg.machine.c);
  fmt::print(
      "HBM bandwidth:   {:.2f} B/cycle read+write (program fetch included), {:.1f}% of the "
      "DMA's {:.0f} B/cycle peak",
      bpc, 100 * bpc / cfg.PeakBytesPerCycle(), cfg.PeakBytesPerCycle());
  if (cfg.channels > 1) {
    fmt::print(" ({:.1f}% of the {} channels' {:.0f} B/cycle)",
               100 * bpc / cfg.HbmPeakBytesPerCycle(), cfg.channels, cfg.HbmPeakBytesPerCycle());
  }
  fmt::print("\n");
  (void)w;
  fmt::print("\ncycles by cause (each cycle in exactly one class; TPU v1 paper, table 3)\n");
  fmt::print("  {:<20} {:>15} {:>7}\n", "class", "cycles", "%");
  const std::pair<const char*, uint64_t> rows[] = {
      {"busy (array)", p.busy},       {"weight stall", p.weight_stall},
      {"input stall", p.input_stall}, {"accumulator hazard", p.acc_hazard},
      {"store stall", p.store_stall}, {"idle", p.idle}};
  uint64_t sum = 0;
  for (const auto& [name, v] : rows) {
    fmt::print("  {:<20} {:>15} {:>6.1f}%\n", name, Num(v), Pct(v, p.cycles));
    sum += v;
  }
  fmt::print("  {:<20} {:>15} {:>6.1f}%\n", "total", Num(sum), Pct(sum, p.cycles));
  if (sum != p.cycles) {
    fmt::print("  (the classes add up to {} cycles, not {}: a counter is wrong)\n", Num(sum),
               Num(p.cycles));
  }
  fmt::print("\nspeed:    {:.2f} s host time, {}cycles/s simulated, {}MACs/s\n", secs,
             Rate(secs > 0 ? cyc / secs : 0), Rate(secs > 0 ? double(p.macs) / secs : 0));
}

// ---------------------------------------------------------------------------------------------

// The subcommands, defined on `app` with their options stored in `o`.
struct Commands {
  CLI::App* gemm = nullptr;
  CLI::App* mlp = nullptr;
  CLI::App* conv = nullptr;
  CLI::App* run = nullptr;
  CLI::App* onnx = nullptr;
  CLI::App* train = nullptr;
  CLI::App* worker = nullptr;  // hidden: a --launcher slurm task
};

Commands DefineCommands(CLI::App& app, Options& o) {
  Commands c;
  app.require_subcommand(1);
  // The configuration keys (rtl/builds.json's accel_params), printed as the flag is read.
  app.add_flag_callback(
         "--config-keys",
         [] {
           fmt::print("{}", ParamsTable());
           throw CLI::Success();
         },
         "list the keys of --config FILE.json: Verilog parameter, default, range, meaning")
      ->trigger_on_parse();
  auto* gemm = c.gemm = app.add_subcommand("gemm", "C = A·B (+ C0) with random bf16 operands");
  gemm->add_option("--m", o.m, "rows of A and C")->required()->check(CLI::Range(1, 1 << 22));
  gemm->add_option("--k", o.k, "columns of A, rows of B")
      ->required()
      ->check(CLI::Range(1, 1 << 22));
  gemm->add_option("--n", o.n, "columns of B and C")->required()->check(CLI::Range(1, 1 << 22));
  gemm->add_option("--init", o.init,
                   "overwrite: C = A·B; preload: C = C0 + A·B; accumulate: C += A·B")
      ->check(CLI::IsMember({"overwrite", "preload", "accumulate"}))
      ->capture_default_str();
  gemm->add_flag("--bf16-out", o.bf16_out, "store C as bf16 (default fp32)");
  gemm->add_flag("--relu", o.relu, "relu on the store path");
  gemm->add_flag("--trans-a", o.trans_a,
                 "A stored transposed (K x M), read by transposing LOADs (ISA 1.3)");
  gemm->add_flag("--trans-b", o.trans_b,
                 "B stored transposed (N x K), read by transposing LOADs (ISA 1.3)");
  gemm->add_option("--json", o.json, "the counters as JSON to this file ('-': standard output)");
  AddCommon(gemm, o, true);

  auto* mlp = c.mlp =
      app.add_subcommand("mlp", "a multi-layer perceptron, every layer's output checked");
  mlp->add_option("--m", o.m, "batch rows")->required()->check(CLI::Range(1, 1 << 22));
  mlp->add_option("--sizes", o.sizes, "layer sizes in,hidden...,out (e.g. 256,512,10)")
      ->required()
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 22));
  mlp->add_flag("--bias", o.bias, "a bias per layer");
  mlp->add_flag("--relu", o.relu, "relu on the hidden layers");
  AddCommon(mlp, o, true);

  auto* conv = c.conv = app.add_subcommand("conv", "a 2-D convolution (NHWC, HWIO weights)");
  auto& s = o.conv;
  conv->add_option("--n", s.n, "batch")->capture_default_str()->check(CLI::Range(1, 1 << 16));
  conv->add_option("--h", s.h, "input height")->required()->check(CLI::Range(1, 1 << 16));
  conv->add_option("--w", s.w, "input width")->required()->check(CLI::Range(1, 1 << 16));
  conv->add_option("--cin", s.cin, "input channels")->required()->check(CLI::Range(1, 1 << 16));
  conv->add_option("--cout", s.cout, "output channels")->required()->check(CLI::Range(1, 1 << 16));
  conv->add_option("--kh", s.kh, "kernel height")->required()->check(CLI::Range(1, 1 << 10));
  conv->add_option("--kw", s.kw, "kernel width")->required()->check(CLI::Range(1, 1 << 10));
  conv->add_option("--stride", s.stride, "stride")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 10));
  conv->add_option("--pad", s.pad, "zero padding")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 10));
  conv->add_flag("--bias", o.bias, "a bias per output channel");
  conv->add_flag("--relu", o.relu, "relu on the output");
  conv->add_flag("--bf16-out", o.bf16_out, "store the output as bf16 (default fp32)");
  AddCommon(conv, o, true);

  auto* run = c.run = app.add_subcommand(
      "run", "C = A·B (+ C) on float32 .npy matrices (A, B rounded to bf16 per the contract)");
  run->add_option("--a", o.a_file, "A: M x K float32 .npy")->required()->check(CLI::ExistingFile);
  run->add_option("--b", o.b_file, "B: K x N float32 .npy")->required()->check(CLI::ExistingFile);
  run->add_option("--c", o.c_file, "C: M x N float32 .npy, added (kept fp32)")
      ->check(CLI::ExistingFile);
  run->add_option("--out", o.out_file, "the result, M x N float32 .npy")->required();
  run->add_option("--json", o.json, "the counters as JSON to this file ('-': standard output)");
  AddCommon(run, o, false);

  auto* onnx = c.onnx = app.add_subcommand(
      "onnx",
      "an ONNX model: GEMMs and convolutions on the accelerator (every job checked against the "
      "golden model), the other operators on the host (docs/onnx.md)");
  onnx->add_option("model", o.model, "the model (.onnx)")->required()->check(CLI::ExistingFile);
  onnx->add_option("--input,-i", o.inputs,
                   "NAME=FILE.npy, FILE.npz (arrays by name), or FILE.npy for a one-input model; "
                   "float32, float64 (converted to float32) or bf16 bits as uint16")
      ->required();
  onnx->add_option("--out,-o", o.out_file,
                   "where the graph outputs go: a directory (NAME.npy each) or a file .npz");
  onnx->add_option("--json", o.json, "every counter as JSON to this file ('-': standard output)");
  onnx->add_option("--labels", o.labels,
                   "class labels of the batch (.npy, integers): prints the top-1 accuracy of the "
                   "first output (argmax over its last axis)")
      ->check(CLI::ExistingFile);
  onnx->add_option("--reference", o.reference,
                   "the framework's own first output (.npy, e.g. PyTorch's float32 logits): prints "
                   "its accuracy and how many predictions agree")
      ->check(CLI::ExistingFile);
  onnx->add_flag("--whole-network", o.whole,
                 "run the accelerator's jobs linked into one program (a new one only where the "
                 "host computes an operand from the machine's output), activations left in HBM "
                 "between layers; every output checked against the golden model's jobs");
  AddCommon(onnx, o, false);
  AddJobs(onnx, o);

  auto& t = o.train;
  auto* tr = c.train = app.add_subcommand(
      "train",
      "trains an MLP (an ONNX model: Gemm/MatMul+Add layers, Relu between) by mixed-precision SGD "
      "on the accelerator, every job of every step checked against the golden model "
      "(docs/training.md)");
  tr->add_option("model", t.model, "the model (.onnx)")->required()->check(CLI::ExistingFile);
  tr->add_option("--train", t.train_data, "training data: .npz with x (rows x features) and y")
      ->required()
      ->check(CLI::ExistingFile);
  tr->add_option("--test", t.test_data, "test data (.npz, as --train), evaluated every epoch")
      ->check(CLI::ExistingFile);
  tr->add_option("--epochs", t.epochs, "epochs (full batches of a shuffled order)")
      ->check(CLI::Range(1, 1 << 20));
  tr->add_option("--steps", t.steps, "steps (instead of --epochs)")->check(CLI::Range(1, 1 << 30));
  tr->add_option("--batch", t.batch, "rows per step")->capture_default_str();
  tr->add_option("--lr", t.lr, "learning rate")->capture_default_str();
  tr->add_option("--momentum", t.momentum, "momentum (0: plain SGD)")->capture_default_str();
  tr->add_option("--seed", t.seed, "seed of the data order (and of --from-scratch weights)")
      ->capture_default_str();
  tr->add_flag("--from-scratch", t.from_scratch,
               "start from He-uniform weights from --seed (default: the model's weights)");
  tr->add_option("--every", t.every, "also print the loss every N steps")->capture_default_str();
  tr->add_option("--out,-o", t.out, "write the trained model here (.onnx)");
  tr->add_option("--json", t.json, "the curves and counters as JSON to this file ('-': stdout)");
  AddCommon(tr, o, false);
  AddJobs(tr, o);

  // One of another tpusim's --jobs processes started by --launcher slurm: it needs the back end's
  // options only (not the model or its data), connects to HOST:PORT:KEY and serves parts.
  auto* wk = c.worker = app.add_subcommand("worker", "")->group("");
  wk->add_option("--worker-of", o.worker_of)->required();
  AddCommon(wk, o, false);

  return c;
}

// The workload the parsed subcommand asks for; `sub` gets the subcommand's name. Bad input (a
// shape that does not fit, a malformed .npy file) is a UsageError.
Workload MakeWorkload(const Options& o, const Config& cfg, const Commands& cmd, uint64_t seed,
                      std::string* sub) {
  const auto& s = o.conv;
  try {
    if (cmd.gemm->parsed()) {
      *sub = "gemm";
      const host::Init init = o.init == "preload"      ? host::Init::kPreload
                              : o.init == "accumulate" ? host::Init::kAccumulate
                                                       : host::Init::kOverwrite;
      return MakeGemm(cfg, o.m, o.k, o.n, init,
                      o.bf16_out ? host::OutFormat::kBf16 : host::OutFormat::kFp32, o.relu, seed,
                      Values::kFinite, host::GemmTranspose{o.trans_a, o.trans_b});
    }
    if (cmd.mlp->parsed()) {
      *sub = "mlp";
      if (o.sizes.size() < 2) throw UsageError("--sizes needs at least two sizes (in,out)");
      return MakeMlp(cfg, o.m, o.sizes, o.bias, o.relu, seed);
    }
    if (cmd.conv->parsed()) {
      *sub = "conv";
      if (s.OutH() < 1 || s.OutW() < 1 || s.h + 2 * s.pad < s.kh || s.w + 2 * s.pad < s.kw) {
        throw UsageError(fmt::format("conv: the {}x{} kernel does not fit the padded {}x{} input",
                                     s.kh, s.kw, s.h + 2 * s.pad, s.w + 2 * s.pad));
      }
      return MakeConv(cfg, s, o.bias, o.relu,
                      o.bf16_out ? host::OutFormat::kBf16 : host::OutFormat::kFp32, seed);
    }
    *sub = "run";
    const HostMatrix a = LoadMatrix(o.a_file, "A");
    const HostMatrix b = LoadMatrix(o.b_file, "B");
    if (b.rows != a.cols) {
      throw UsageError(
          fmt::format("{} (B): {} rows, but {} (A) has {} columns: B must be K x N "
                      "with K = A's columns",
                      o.b_file, b.rows, o.a_file, a.cols));
    }
    std::optional<HostMatrix> c;
    if (!o.c_file.empty()) {
      c = LoadMatrix(o.c_file, "C");
      if (c->rows != a.rows || c->cols != b.cols) {
        throw UsageError(fmt::format("{} (C): shape ({}, {}), but A·B is ({}, {})", o.c_file,
                                     c->rows, c->cols, a.rows, b.cols));
      }
    }
    return MakeFromHost(cfg, a.rows, a.cols, b.cols, a.v, b.v, c ? &c->v : nullptr);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// What is about to run: workload, seed, configuration, back end, sizes and tensors.
void PrintHeader(const Options& o, const Config& cfg, const Workload& w, const std::string& sub,
                 uint64_t seed) {
  fmt::print("tpusim {}: {}", sub, w.description);
  if (sub != "run") fmt::print(", seed {} (reproduce: --seed {})", seed, seed);
  fmt::print("\n");
  fmt::print("config:   {}: {}\n", cfg.name, Describe(cfg));
  fmt::print("backend:  {}\n", o.backend == "model"
                                   ? "model (the instruction-level golden model; no clock)"
                                   : fmt::format("rtl (engine tpusim-{})", EngineName(cfg)));
  fmt::print("workload: {} MACs, {} instructions ({} B of program), inputs {} B, outputs {} B\n",
             Num(w.Macs()), Num(w.Instructions()), Num(w.ProgramBytes()), Num(w.InputBytes()),
             Num(w.OutputBytes()));
  std::string in, out;
  for (const auto& t : w.inputs) in += (in.empty() ? "" : ", ") + t.Describe();
  for (const auto& t : w.outputs) out += (out.empty() ? "" : ", ") + t.Describe();
  fmt::print("tensors:  in {}; out {}\n", in, out);
}

// The machine's error code, the HBM timing checks and (unless --no-check, or on the golden model
// back end) every output against the golden model, whose run `golden_run` the caller started
// beside the back end's (not valid when there is none); prints what failed. Returns whether the
// run passed.
bool CheckRun(const Options& o, const Workload& w, Sim& dut, const Result& r,
              std::future<GoldenRun>* golden_run) {
  FILE* out = o.json == "-" ? stderr : stdout;  // the JSON alone on standard output
  bool pass = true;
  std::string dut_message;
  if (auto* ms = dynamic_cast<ModelSim*>(&dut)) dut_message = ms->last_run().message;
  if (r.code != isa::ErrorCode::kOk) {
    pass = false;
    PrintError("machine", r.code, r.pc, dut_message, w);
  }
  if (r.hbm_violations != 0) {
    pass = false;
    fmt::print(out, "HBM: {} JEDEC timing violations:\n{}\n", r.hbm_violations, r.violations);
  }

  bool reported = false;  // a FAIL line is out already
  if (golden_run->valid()) {
    const GoldenRun gr = golden_run->get();
    const isa::Machine& golden = *gr.machine;
    const isa::RunResult& g = gr.result;
    if (!g.ok()) {
      pass = false;
      PrintError("golden model", g.code, g.pc, g.message, w);
    } else if (r.code == isa::ErrorCode::kOk) {
      const Report rep = Compare(dut, golden, w);
      pass = pass && rep.pass;
      fmt::print(out, "{}\n", rep.Format());
      reported = !rep.pass;
      if (const std::string diff = EndStateDiff(r, g); !diff.empty()) {
        pass = false;
        reported = true;
        fmt::print(out, "FAIL: the machine's end state differs from the golden model's:\n{}", diff);
      }
      if (const std::string diff = OnChipDiff(dut.ReadOnChip(), golden); !diff.empty()) {
        pass = false;
        reported = true;
        fmt::print(out, "FAIL: the machine's on-chip state differs from the golden model's:\n{}",
                   diff);
      }
    }
  } else if (pass) {
    fmt::print(out, "{}\n", tpusim::NotChecked(o.check));
  }
  if (!pass && !reported) fmt::print(out, "FAIL\n");

  return pass;
}

// ---------------------------------------------------------------------------------------------
// ONNX models

// A file we are about to write: its folder must exist and let us write (checked before any
// simulation, so a long run never ends in a lost result).
void CheckWritableFile(const std::string& file, const char* what) {
  namespace fs = std::filesystem;
  const fs::path p(file);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw UsageError(fmt::format("{} {}: the folder {} does not exist", what, file, dir.string()));
  }
  if (fs::is_directory(p, ec)) throw UsageError(fmt::format("{} {}: is a folder", what, file));
  if (access(dir.c_str(), W_OK) != 0 || (fs::exists(p, ec) && access(file.c_str(), W_OK) != 0)) {
    throw UsageError(
        fmt::format("{} {}: cannot be written ({})", what, file, std::strerror(errno)));
  }
}

void CheckOutPath(const std::string& out) {
  namespace fs = std::filesystem;
  if (out.empty()) return;
  if (out.size() > 4 && out.compare(out.size() - 4, 4, ".npz") == 0) {
    CheckWritableFile(out, "--out");
    return;
  }
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    throw UsageError(
        fmt::format("--out {}: exists and is not a folder (give a folder, or a file "
                    "ending in .npz)",
                    out));
  }
  if (!fs::exists(out, ec) && !fs::create_directories(out, ec)) {
    throw UsageError(fmt::format("--out {}: cannot create the folder: {}", out, ec.message()));
  }
  if (access(out.c_str(), W_OK) != 0) {
    throw UsageError(fmt::format("--out {}: cannot be written ({})", out, std::strerror(errno)));
  }
}

// Top-1 predictions of an (N, C) output (argmax over the last axis; the first of equal maxima).
std::vector<int64_t> Argmax(const net::Tensor& t) {
  const int64_t c = t.shape.empty() ? 1 : t.shape.back();
  std::vector<int64_t> r;
  for (int64_t i = 0; c > 0 && i + c <= int64_t(t.f.size()); i += c) {
    int64_t best = 0;
    for (int64_t k = 1; k < c; ++k) {
      if (t.f[size_t(i + k)] > t.f[size_t(i + best)]) best = k;
    }
    r.push_back(best);
  }
  return r;
}

struct Classification {
  std::vector<int64_t> labels;
  std::optional<net::Tensor> reference;
};

// --labels / --reference, read and checked against the first output's shape before the run.
Classification LoadClassification(const Options& o, const net::Plan& plan) {
  Classification c;
  if (o.labels.empty() && o.reference.empty()) return c;
  const net::Shape& out = plan.outputs().at(0).shape;
  const int64_t rows = out.empty() ? 1 : net::Elements(out) / out.back();
  try {
    if (!o.labels.empty()) {
      net::Tensor l = io::ReadNpy(o.labels);
      if (!l.is_int) throw UsageError(fmt::format("--labels {}: not integers", o.labels));
      if (int64_t(l.i.size()) != rows) {
        throw UsageError(fmt::format("--labels {}: {} labels for {} rows of output {} {}", o.labels,
                                     l.i.size(), rows, plan.outputs()[0].name,
                                     net::ShapeText(out)));
      }
      c.labels = l.i;
    }
    if (!o.reference.empty()) {
      net::Tensor r = io::ReadNpy(o.reference);
      if (r.is_int || r.shape != out) {
        throw UsageError(fmt::format("--reference {}: shape {}, but output {} is {} float",
                                     o.reference, net::ShapeText(r.shape), plan.outputs()[0].name,
                                     net::ShapeText(out)));
      }
      c.reference = std::move(r);
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return c;
}

void PrintClassification(const Classification& c, const net::Tensor& out) {
  const auto pred = Argmax(out);
  auto correct = [&](const std::vector<int64_t>& p) {
    int64_t n = 0;
    for (size_t i = 0; i < p.size() && i < c.labels.size(); ++i) n += p[i] == c.labels[i];
    return n;
  };
  const auto rows = int64_t(pred.size());
  if (!c.labels.empty()) {
    const int64_t ok = correct(pred);
    fmt::print("top-1 accuracy: {:.2f}% ({} of {}) on the accelerator",
               100.0 * double(ok) / double(rows), ok, rows);
    if (c.reference) {
      const int64_t rk = correct(Argmax(*c.reference));
      fmt::print("; {:.2f}% ({} of {}) for the reference", 100.0 * double(rk) / double(rows), rk,
                 rows);
    }
    fmt::print("\n");
  }
  if (c.reference) {
    const auto rp = Argmax(*c.reference);
    int64_t agree = 0;
    double diff = 0;
    for (size_t i = 0; i < pred.size(); ++i) agree += pred[i] == rp[i];
    for (size_t i = 0; i < out.f.size(); ++i) {
      diff = std::max(diff, double(std::fabs(out.f[i] - c.reference->f[i])));
    }
    fmt::print(
        "predictions agree with the reference on {} of {} rows; largest output difference "
        "{:.4g}\n",
        agree, rows, diff);
  }
}

// An ONNX run, checked and planned before anything is simulated.
struct OnnxJob {
  net::Graph graph;
  std::map<std::string, net::Tensor> inputs;
  std::optional<net::Plan> plan;
  Classification cls;  // --labels, --reference
};

// The model, its inputs and its plan; every problem is a UsageError before anything runs.
OnnxJob PrepareOnnx(const Options& o, const Config& cfg) {
  OnnxJob j;
  try {
    j.graph = onnx_import::LoadModel(o.model);
    j.inputs = LoadNetInputs(j.graph, o.inputs);
    j.plan.emplace(net::PlanForInputs(&j.graph, &j.inputs, cfg.machine.mode,
                                      cfg.machine.vector_unit(), cfg.machine.vmem_depth));
  } catch (const net::Error& e) {
    throw UsageError(e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  CheckOutPath(o.out_file);
  if (!o.json.empty() && o.json != "-") CheckWritableFile(o.json, "--json");
  j.cls = LoadClassification(o, *j.plan);
  return j;
}

int RunOnnx(const Options& o, const Config& cfg, OnnxJob& j) {
  const net::Plan& plan = *j.plan;
  const bool quiet = o.quiet || o.json == "-";
  int accel_steps = 0, views = 0;
  for (const auto& s : plan.steps()) {
    accel_steps += s.accel ? 1 : 0;
    views += s.view ? 1 : 0;
  }
  if (!quiet) {
    fmt::print("tpusim onnx: {} (graph '{}', opset {}, {} nodes)\n", o.model, j.graph.name,
               j.graph.opset, j.graph.nodes.size());
    fmt::print("config:   {}: {}\n", cfg.name, Describe(cfg));
    fmt::print("backend:  {}\n", o.backend == "model"
                                     ? "model (the instruction-level golden model; no clock)"
                                     : fmt::format("rtl (engine tpusim-{})", EngineName(cfg)));
    std::string in;
    for (const auto& v : plan.inputs()) {
      in += fmt::format("{}{} {}", in.empty() ? "" : ", ", v.name, net::ShapeText(v.shape));
    }
    fmt::print("inputs:   {}\n", in);
    fmt::print(
        "plan:     {} steps: {} on the accelerator, {} on the host{}; {} MACs\n",
        plan.steps().size(), accel_steps, plan.steps().size() - size_t(accel_steps) - size_t(views),
        views ? fmt::format(", {} view{}", views, views == 1 ? "" : "s") : "", Num(plan.Macs()));
  }
  for (const std::string& w : plan.warnings()) fmt::print(stderr, "tpusim: warning: {}\n", w);
  const Classification& cls = j.cls;
  if (o.jobs > 1 && !quiet) {
    fmt::print("jobs:     {} processes, each job split over them (by output columns or rows)\n",
               o.jobs);
  }
  RunOptions ro;
  ro.max_cycles = o.max_cycles;
  ro.trace_file = o.trace;
  ro.trace_from = o.trace_from;
  ro.trace_to = o.trace_to;
  const std::unique_ptr<JobPool> pool = MakePool(o, cfg, ro);
  Sim* dut = &pool->dut();
  NetRunner runner(*pool);
  runner.SetWholeNetwork(o.whole);
  const bool tty = isatty(2) != 0;
  const size_t n_steps = plan.steps().size();
  bool pass = true;
  std::map<std::string, net::Tensor> outs;
  try {
    // Progress: an updating line on a terminal, else a line every ~10 s.
    const auto t0 = std::chrono::steady_clock::now();
    double last = 0;
    outs = runner.Run(plan, j.inputs, [&](const net::Step& s, const NetStepStats&) {
      if (quiet) return;
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (tty) {
        fmt::print(stderr, "\r  step {} of {} done: {}\x1b[K", s.index + 1, n_steps, s.label);
      } else if (t - last >= 10.0) {
        last = t;
        fmt::print(stderr, "  step {} of {} done ({:.0f} s): {}\n", s.index + 1, n_steps, t,
                   s.label);
      }
    });
  } catch (const NetFailure& e) {
    pass = false;
    if (tty && !quiet) fmt::print(stderr, "\r\x1b[K");
    fmt::print(o.json == "-" ? stderr : stdout, "FAIL: {}\n", e.what());
  } catch (const net::Error& e) {
    throw UsageError(e.what());
  }
  if (tty && !quiet) fmt::print(stderr, "\r\x1b[K");
  const bool timed = o.backend != "model";
  if (!quiet) {
    fmt::print("\n{}", FormatNetTable(plan, runner.steps(), cfg, timed, runner.programs()));
  }
  if (pass) {
    const NetStepStats t = runner.Total();
    if (!quiet) {
      if (o.check && !IsGoldenModel(*dut)) {
        fmt::print(
            "PASS: every accelerator output bit-exact against the golden model ({} "
            "elements in {} jobs{})\n",
            Num(t.checked), t.jobs,
            o.whole ? fmt::format(" run as {} program{}", t.programs, t.programs == 1 ? "" : "s")
                    : "");
      } else {
        fmt::print("{}\n", tpusim::NotChecked(o.check));
      }
      for (const auto& [name, t] : outs) {
        float lo = t.f.empty() ? 0 : t.f[0], hi = lo;
        for (float v : t.f) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        fmt::print("output {}: {} float32, min {:g}, max {:g}\n", name, net::ShapeText(t.shape), lo,
                   hi);
      }
      if (!cls.labels.empty() || cls.reference) {
        PrintClassification(cls, outs.at(plan.outputs().at(0).name));
      }
    }
    if (!o.out_file.empty()) {
      const std::string& out = o.out_file;
      if (out.size() > 4 && out.compare(out.size() - 4, 4, ".npz") == 0) {
        io::WriteNpz(out, outs);
        if (!quiet) fmt::print("wrote {} ({} arrays)\n", out, outs.size());
      } else {
        for (const auto& [name, t] : outs) {
          std::string safe = name;
          for (char& ch : safe) {
            if (ch == '/' || ch == '\\') ch = '_';
          }
          io::WriteNpy((std::filesystem::path(out) / (safe + ".npy")).string(), t);
        }
        if (!quiet) {
          std::string dir = out;
          while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
          fmt::print("wrote {} arrays into {}/\n", outs.size(), dir);
        }
      }
    }
  }
  if (!o.json.empty()) {
    const std::string js = NetJson(plan, runner.steps(), cfg, o.backend, pass, runner.programs());
    tpusim::WriteJson(o.json, js);
  }
  return pass ? 0 : 1;
}

int Main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "tpusim: runs a workload on the TPU-style accelerator (RTL or golden model) and checks "
      "every output bit against the golden model"};
  const Commands cmd = DefineCommands(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (o.trace_from > o.trace_to) throw UsageError("--trace-from is after --trace-to");
  if (o.jobs < 1 || o.jobs > 256) {
    throw UsageError(fmt::format("--jobs {}: give from 1 to 256 processes", o.jobs));
  }
  if (o.jobs > 1 && !o.trace.empty()) {
    throw UsageError(fmt::format(
        "--trace with --jobs {}: waves come from one process; trace with --jobs 1", o.jobs));
  }
  if (o.jobs > 1 && o.whole) {
    throw UsageError(fmt::format(
        "--whole-network with --jobs {}: a whole-network program runs in one process", o.jobs));
  }

  Config cfg;
  try {
    cfg = ResolveConfig(o.config);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (cmd.worker->parsed()) {  // one of another tpusim's --jobs processes (--launcher slurm)
    RunOptions ro;
    ro.max_cycles = o.max_cycles;
    ServeJobs(o.worker_of, BackEnd(o, cfg), o.check, ro);
  }

  // An ONNX run is checked here, in the launcher too (once more in the engine): bad input is
  // reported before an engine is built or started.
  std::optional<OnnxJob> onnx;
  if (cmd.onnx->parsed()) onnx = PrepareOnnx(o, cfg);
  tpusim::TrainJobPtr train;
  if (cmd.train->parsed()) {
    try {
      train = tpusim::PrepareTrain(o.train, cfg);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }

#ifdef TPUSIM_ENGINE_CLASS
  if (EngineName(cfg) != TPUSIM_ENGINE_NAME ||
      Join(VerilogParams(cfg), ",") != TPUSIM_ENGINE_PARAMS) {
    throw UsageError(fmt::format(
        "this engine runs {} ({}); the configuration is {} ({}): run tpusim, which picks the "
        "engine",
        TPUSIM_ENGINE_NAME, TPUSIM_ENGINE_PARAMS, EngineName(cfg), Join(VerilogParams(cfg), ",")));
  }
#else
  if (o.backend == "rtl") return Launch(cfg, argc, argv, !o.trace.empty());
#endif
  if (onnx) return RunOnnx(o, cfg, *onnx);
  if (train) {
    RunOptions ro;
    ro.max_cycles = o.max_cycles;
    const std::unique_ptr<JobPool> pool = MakePool(o, cfg, ro);
    return tpusim::RunTrain(o.train, cfg, *train, *pool, o.check, o.quiet, o.backend);
  }

  // With the JSON on standard output, every other line goes to standard error or is left out,
  // so that the output parses (as for onnx).
  if (o.json == "-") o.quiet = true;

  // The workload.
  const uint64_t seed = o.seed ? *o.seed : tb::ChooseSeed();
  std::string sub;
  const Workload w = MakeWorkload(o, cfg, cmd, seed, &sub);
  if (!o.quiet) PrintHeader(o, cfg, w, sub, seed);

  // The back end.
  if (!o.trace.empty() && o.backend == "model")
    fmt::print(stderr, "tpusim: --trace ignored: the model back end has no waves\n");
  std::unique_ptr<Sim> dut = BackEnd(o, cfg)();
  if (!o.trace.empty() && o.backend != "model" && !o.quiet) fmt::print("waves:    {}\n", o.trace);
  Load(*dut, w);
  RunOptions ro;
  ro.max_cycles = o.max_cycles;
  ro.trace_file = o.trace;
  ro.trace_from = o.trace_from;
  ro.trace_to = o.trace_to;
  Progress progress(w.Instructions(), o.quiet);
  ro.progress = [&progress](uint64_t c, uint64_t f) { progress(c, f); };
  // The golden model runs the workload on a second thread meanwhile (unless --no-check or the
  // back end is the golden model).
  std::future<GoldenRun> golden_run;
  if (o.check && !IsGoldenModel(*dut)) golden_run = StartGolden(cfg.machine, w);
  Result r;
  try {
    r = Run(*dut, w, ro);
  } catch (const std::exception& e) {
    progress.Done();
    fmt::print(o.json == "-" ? stderr : stdout, "FAIL: the run stopped: {}\n", e.what());
    return 1;
  }
  progress.Done();

  const bool pass = CheckRun(o, w, *dut, r, &golden_run);
  if (!o.json.empty()) {
    nlohmann::json js = PerfJson(r.perf);
    js["config"] = cfg.name;
    js["backend"] = o.backend;
    js["pass"] = pass;
    js["workload"] = w.description;
    js["peak_macs_per_cycle"] = cfg.PeakMacsPerCycle();
    js["sim_seconds"] = r.wall_seconds;
    tpusim::WriteJson(o.json, js.dump());
  }

  if (sub == "run" && r.code == isa::ErrorCode::kOk) {
    const tb::accel::Tensor& c = w.Output("C");
    SaveMatrix(o.out_file, c.Rows(), c.Cols(), ReadTensor(*dut, c));
    if (!o.quiet) fmt::print("wrote {} ({}x{} float32)\n", o.out_file, c.Rows(), c.Cols());
  }
  if (!o.quiet) PrintPerf(o, cfg, w, r);
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "tpusim: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tpusim: error: {}\n", e.what());
    return 1;
  }
}
