// SPDX-License-Identifier: Apache-2.0
// tpu_mxu_bench (`make bench`): the matrix unit's utilization on the GEMM shapes and
// array sizes (4×4 … 128×128; 256×256 on request), operands already on chip, next to the fully
// pipelined limit and SCALE-Sim's figure, with every lost cycle by cause; then, per array size, the
// simulation speed (single thread, and two threads where a multithreaded build exists), the cold
// build time and the size of the generated C++. Every run's results are checked bit for bit against
// the golden GEMM (--no-check skips it).
// --csv FILE also writes the table, one row per run, for `make report` (scripts/report.py).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "Vmxu_b128.h"
#include "Vmxu_b128_t2.h"
#include "Vmxu_b16.h"
#include "Vmxu_b256.h"
#include "Vmxu_b32.h"
#include "Vmxu_b4.h"
#include "Vmxu_b64.h"
#include "Vmxu_b8.h"
#include "bench_util.h"
#include "tpu/builds.h"
#include "tpu/gemm.h"
#include "tpu/tb/gemm_data.h"
#include "tpu/tb/mxu_plan.h"
#include "tpu/tb/mxu_runner.h"

namespace {

using namespace tpu;
using Clock = std::chrono::steady_clock;

struct Row {
  tb::ArrayConfig cfg;
  gemm::Shape shape;
  tb::MxuPerf perf;
  uint64_t limit = 0, scalesim = 0;
  double seconds = 0;
  std::string check;
};

struct Case {
  gemm::Shape shape;
  tb::GemmOperands ops;
  std::vector<uint32_t> golden;  // empty with --no-check
};

template <class V>
Row RunOn(const tb::ArrayConfig& cfg, const Case& c) {
  tb::SimCtrl<V> sim(fmt::format("mxu {}x{}", cfg.rows, cfg.cols), 1ull << 40);
  sim.Reset();
  tb::MxuRunner<V> runner(sim, cfg);
  const auto plan = tb::PlanGemm(c.shape, cfg);
  const auto t0 = Clock::now();
  const auto r = runner.Run(plan, c.ops.a, c.ops.b, {}, num::Mode::kIeee);
  Row row{cfg,
          c.shape,
          r.perf,
          tb::PipelinedLimit(c.shape, cfg),
          tb::ScaleSimCycles(c.shape, cfg),
          std::chrono::duration<double>(Clock::now() - t0).count(),
          "-"};
  if (!c.golden.empty()) {
    size_t bad = 0;
    for (size_t i = 0; i < c.golden.size(); ++i) bad += c.golden[i] != r.c[i];
    row.check = bad == 0 ? "bit-exact" : fmt::format("{} MISMATCHES", bad);
  }
  if (sim.AssertionFailed()) row.check = "ASSERTION FAILED";
  return row;
}

// The n×n array the benches measure: P = 1, 4096-row accumulators.
tb::ArrayConfig Square(int n) {
  return {n, n, 1, 4096};
}

// A runner of the n×n model V.
template <class V>
std::function<Row(const Case&)> Runner(int n) {
  return [cfg = Square(n)](const Case& c) { return RunOn<V>(cfg, c); };
}

// The n×n arrays of both tables, with their model names (rtl/builds.json); run_threaded: the
// multithreaded build of the same array, if there is one. The speed table starts at 16×16.
struct Array {
  int n;
  const char* model;
  std::function<Row(const Case&)> run;
  std::function<Row(const Case&)> run_threaded;
  tb::ArrayConfig cfg() const { return Square(n); }
};
constexpr int kSpeedMin = 16;

std::vector<Array> Arrays() {
  return {{4, "mxu_b4", Runner<Vmxu_b4>(4), {}},
          {8, "mxu_b8", Runner<Vmxu_b8>(8), {}},
          {16, "mxu_b16", Runner<Vmxu_b16>(16), {}},
          {32, "mxu_b32", Runner<Vmxu_b32>(32), {}},
          {64, "mxu_b64", Runner<Vmxu_b64>(64), {}},
          {128, "mxu_b128", Runner<Vmxu_b128>(128), Runner<Vmxu_b128_t2>(128)},
          {256, "mxu_b256", Runner<Vmxu_b256>(256), {}}};
}

std::string Pct(double x) {
  return fmt::format("{:.2f}%", 100.0 * x);
}

// Cold Verilator build (ccache off, both cores) of the model NAME of rtl/builds.json, as the CMake
// build does it; also the size of the C++ it generated (every .cpp and .h, blocks included).
struct BuildCost {
  double seconds = -1;
  double cpp_mb = 0;
};

BuildCost ColdBuild(const std::string& name) {
  const builds::Model* m = nullptr;
  for (const builds::Model& b : builds::kModels) {
    if (name == b.name) m = &b;
  }
  if (m == nullptr) return {};
  std::string params;
  for (std::string p = m->params; !p.empty();) {
    const size_t comma = p.find(',');
    params += " -G" + p.substr(0, comma);
    p = comma == std::string::npos ? "" : p.substr(comma + 1);
  }
  const std::string dir = fmt::format("/tmp/tpu_mxu_bench_build_{}", name);
  std::string cmd = fmt::format(
      "rm -rf {0} && mkdir -p {0} && CCACHE_DISABLE=1 {1}/scripts/verilate.sh {2} {3} {0}/m "
      "--opt {4}{5}{6}{7} > /dev/null",
      dir, TPU_SOURCE_DIR, m->name, m->top, TPU_MXU_OPT,
      *m->hier ? fmt::format(" --hier {}", m->hier) : "",
      m->threads ? fmt::format(" --threads {}", m->threads) : "", params);
  BuildCost c;
  const auto t0 = Clock::now();
  if (std::system(cmd.c_str()) != 0) return c;
  c.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  uintmax_t bytes = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir + "/m")) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".cpp" || ext == ".h")) bytes += e.file_size();
  }
  c.cpp_mb = double(bytes) / 1e6;
  std::filesystem::remove_all(dir);
  return c;
}

}  // namespace

// The utilisation table (unless --no-util left it out; the rows are printed and written to the CSV
// file regardless). Returns whether every row was bit-exact (or unchecked).
bool PrintUtilization(const std::vector<Row>& rows, bool no_util, bool no_check,
                      std::ofstream& csv) {
  if (!no_util) {  // --no-util: no empty table
    fmt::print(
        "\nUtilization = useful MACs / (R·C·cycles); P = 1, accumulators 4096 rows/column.\n");
    fmt::print("limit = R + F·M + (F−1)·max(0,R−M) + P·R + C − 2; SCALE-Sim = F·(2R+C+M−2) − 1\n");
    fmt::print(
        "lost cycles by cause: wload = waiting for a weight tile (first load, folds shorter "
        "than R), hazard = accumulator read-after-write, starve = no operand, drain = "
        "pipeline emptying at the end\n\n");
    fmt::print(
        "| array | M×K×N | cycles | limit | SCALE-Sim | util | util SCALE-Sim | cycles/limit "
        "| wload | hazard | starve | drain | results |\n");
    fmt::print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  }
  bool ok = true;
  for (const Row& r : rows) {
    const double rc = double(r.cfg.rows) * r.cfg.cols;
    const double macs = double(r.shape.m) * r.shape.k * r.shape.n;
    fmt::print("| {}×{} | {} | {} | {} | {} | {} | {} | {:.4f} | {} | {} | {} | {} | {} |\n",
               r.cfg.rows, r.cfg.cols, tb::ShapeName(r.shape), r.perf.cycles, r.limit, r.scalesim,
               Pct(double(r.perf.macs) / (rc * double(r.perf.cycles))),
               Pct(macs / (rc * double(r.scalesim))), double(r.perf.cycles) / double(r.limit),
               r.perf.wstall, r.perf.hazard, r.perf.starve, r.perf.drain, r.check);
    ok = ok && (no_check || r.check == "bit-exact");
    if (csv.is_open()) {
      csv << fmt::format(
          "{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.6f},{},{},{},{},{:.3f},{}\n", r.cfg.rows,
          r.cfg.cols, r.shape.m, r.shape.k, r.shape.n, r.perf.macs, r.perf.cycles, r.limit,
          r.scalesim, 100.0 * double(r.perf.macs) / (rc * double(r.perf.cycles)),
          100.0 * macs / (rc * double(r.scalesim)), double(r.perf.cycles) / double(r.limit),
          r.perf.wstall, r.perf.hazard, r.perf.starve, r.perf.drain, r.seconds, r.check);
    }
  }
  if (csv.is_open()) csv.flush();
  return ok;
}

// Simulation speed and build cost per array size: one thread (and the threaded build where
// there is one), the same 512³ GEMM on each, one run at a time. Clears `ok` on a result that is
// not bit-exact; returns false when a build fails.
bool SpeedTable(const std::vector<Array>& arrays, const std::function<bool(int)>& want,
                uint64_t seed, bool no_check, bool no_build, std::ofstream& csv, bool& ok) {
  const gemm::Shape s{512, 512, 512};
  tb::Rng rng(seed);
  Case c{s, tb::RandomGemm(rng, s, tb::GemmData::kModerate, false), {}};
  if (!no_check) c.golden = gemm::Gemm(s, c.ops.a, c.ops.b, {}, num::Mode::kIeee);
  fmt::print("\nSimulation speed ({} GEMM, checked: {}) and cold build (ccache off, 2 cores):\n\n",
             tb::ShapeName(s), no_check ? "no" : "bit for bit");
  fmt::print(
      "| array | cycles | cycles/s | million MACs/s | 2 threads: million MACs/s "
      "| cold build | C++ generated | results |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const Array& a : arrays) {
    if (a.n < kSpeedMin || !want(a.n)) continue;
    const Row r = a.run(c);
    std::string threaded = "-";
    if (a.run_threaded) {
      const Row t = a.run_threaded(c);
      threaded = fmt::format("{:.2f}", double(t.perf.macs) / t.seconds / 1e6);
      if (t.check != "bit-exact" && !no_check) ok = false;
      if (csv.is_open()) {
        csv << fmt::format("# speed_{0}x{0}_t2_seconds={1:.3f}\n", a.n, t.seconds);
      }
    }
    const BuildCost b = no_build ? BuildCost{} : ColdBuild(a.model);
    if (!no_build && b.seconds < 0) {
      fmt::print("  {0}x{0}: build FAILED\n", a.n);
      return 1;
    }
    fmt::print("| {0}×{0} | {1} | {2:.0f} | {3:.2f} | {4} | {5} | {6} | {7} |\n", a.n,
               r.perf.cycles, double(r.perf.cycles) / r.seconds,
               double(r.perf.macs) / r.seconds / 1e6, threaded,
               no_build ? "-" : fmt::format("{:.1f} s", b.seconds),
               no_build ? "-" : fmt::format("{:.1f} MB", b.cpp_mb), r.check);
    if (r.check != "bit-exact" && !no_check) ok = false;
    if (csv.is_open()) {
      csv << fmt::format("# speed_{0}x{0}_cycles={1}\n# speed_{0}x{0}_macs={2}\n", a.n,
                         r.perf.cycles, r.perf.macs);
      csv << fmt::format("# speed_{0}x{0}_seconds={1:.3f}\n", a.n, r.seconds);
      if (!no_build) {
        csv << fmt::format("# cold_build_{0}x{0}_seconds={1:.1f}\n", a.n, b.seconds);
        csv << fmt::format("# cpp_{0}x{0}_mb={1:.1f}\n", a.n, b.cpp_mb);
      }
      csv.flush();
    }
  }
  return true;
}

int main(int argc, char** argv) {
  CLI::App app{
      "Matrix-unit benchmark: utilization against the pipelined limit and SCALE-Sim, "
      "and simulation speed"};
  bool quick = false, no_check = false, no_build = false;
  int jobs = 2;
  uint64_t seed = 20261122;
  app.add_flag("--quick", quick, "skip 1024^3 on 4x4 and 8x8 (the two longest runs)");
  app.add_flag("--no-check", no_check, "do not compare results with the golden GEMM");
  app.add_option("--jobs", jobs, "simulations run in parallel for the table (speed is single)")
      ->check(CLI::Range(1, 64));
  app.add_option("--seed", seed, "operand seed");
  app.add_flag("--no-build", no_build, "skip the cold Verilator build measurements");
  std::vector<int> sizes;
  app.add_option(
         "--sizes", sizes,
         "only these array sizes (4 8 16 32 64 128 256; default all but 256, a TPU v1-sized "
         "array that takes minutes per run) in both tables")
      ->check(CLI::IsMember({4, 8, 16, 32, 64, 128, 256}))
      ->delimiter(',');
  bool no_util = false, no_speed = false;
  app.add_flag("--no-util", no_util, "skip the utilization table");
  app.add_flag("--no-speed", no_speed, "skip the speed and build table");
  std::string csv_path;
  app.add_option("--csv", csv_path, "also write the utilization table to this CSV file");
  CLI11_PARSE(app, argc, argv);
  // --csv: opened before the runs, so that a path that cannot be written fails at once.
  bench::CsvFile csv_file;
  if (!csv_path.empty()) {
    try {
      csv_file.Open(csv_path, "tpu_mxu_bench", argc, argv);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tpu_mxu_bench: {}\n", e.what());
      return 2;
    }
  }
  std::ofstream& csv = csv_file.stream();
  if (csv.is_open()) {
    csv << fmt::format("# seed={}\n# quick={}\n# checked={}\n# jobs={}\n", seed, int(quick),
                       int(!no_check), jobs);
    csv << "rows,cols,m,k,n,macs,cycles,limit,scalesim,util_pct,util_scalesim_pct,"
           "cycles_over_limit,wload,hazard,starve,drain,seconds,check\n";
  }

  const std::vector<gemm::Shape> shapes = {{64, 64, 64},      {128, 128, 128}, {256, 256, 256},
                                           {100, 300, 70},    {1, 256, 256},   {512, 64, 512},
                                           {1024, 1024, 1024}};
  fmt::print("operands: seed {}, moderate bf16 data, IEEE mode; results checked: {}\n", seed,
             no_check ? "no" : "bit for bit against the golden GEMM");
  std::vector<Case> cases;
  {
    const auto t0 = Clock::now();
    std::vector<std::thread> th;
    cases.resize(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      tb::Rng rng(tb::DeriveSeed(seed, tb::ShapeName(shapes[i])));
      cases[i].shape = shapes[i];
      cases[i].ops = tb::RandomGemm(rng, shapes[i], tb::GemmData::kModerate, false);
    }
    if (!no_check && !no_util) {
      std::atomic<size_t> next{0};
      for (int j = 0; j < jobs; ++j) {
        th.emplace_back([&] {
          for (size_t i; (i = next++) < cases.size();) {
            cases[i].golden =
                gemm::Gemm(cases[i].shape, cases[i].ops.a, cases[i].ops.b, {}, num::Mode::kIeee);
          }
        });
      }
      for (auto& t : th) t.join();
      fmt::print("golden GEMMs computed in {:.1f} s\n",
                 std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }

  // The table: every (array, shape), longest first over `jobs` threads.
  const auto arrays = Arrays();
  const auto want = [&](int n) {
    if (sizes.empty()) return n <= 128;
    return std::find(sizes.begin(), sizes.end(), n) != sizes.end();
  };
  struct Task {
    size_t a, s;
    double cost;
  };
  std::vector<Task> tasks;
  for (size_t a = 0; a < arrays.size(); ++a) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      const bool big = shapes[s].m == 1024;
      if (quick && big && arrays[a].n <= 8) continue;
      if (no_util || !want(arrays[a].n)) continue;
      const double cyc = double(tb::PipelinedLimit(shapes[s], arrays[a].cfg()));
      tasks.push_back({a, s, cyc * arrays[a].n * arrays[a].n});
    }
  }
  std::sort(tasks.begin(), tasks.end(), [](auto& x, auto& y) { return x.cost > y.cost; });
  std::vector<Row> rows(tasks.size());
  std::vector<bool> ran(tasks.size(), false);
  {
    std::atomic<size_t> next{0};
    std::mutex mu;
    std::vector<std::thread> th;
    const auto t0 = Clock::now();
    for (int j = 0; j < jobs; ++j) {
      th.emplace_back([&] {
        for (size_t i; (i = next++) < tasks.size();) {
          rows[i] = arrays[tasks[i].a].run(cases[tasks[i].s]);
          std::lock_guard<std::mutex> lock(mu);
          fmt::print(stderr, "  [{:6.1f} s] {}x{} {} done\n",
                     std::chrono::duration<double>(Clock::now() - t0).count(), rows[i].cfg.rows,
                     rows[i].cfg.cols, tb::ShapeName(rows[i].shape));
        }
      });
    }
    for (auto& t : th) t.join();
  }
  std::sort(rows.begin(), rows.end(), [&](const Row& x, const Row& y) {
    if (x.cfg.rows != y.cfg.rows) return x.cfg.rows < y.cfg.rows;
    const auto ix = std::find_if(shapes.begin(), shapes.end(), [&](auto& s) {
      return s.m == x.shape.m && s.k == x.shape.k && s.n == x.shape.n;
    });
    const auto iy = std::find_if(shapes.begin(), shapes.end(), [&](auto& s) {
      return s.m == y.shape.m && s.k == y.shape.k && s.n == y.shape.n;
    });
    return ix < iy;
  });

  bool ok = PrintUtilization(rows, no_util, no_check, csv);

  // Simulation speed and build cost per array size.
  if (!no_speed && !SpeedTable(arrays, want, seed, no_check, no_build, csv, ok)) return 1;
  return ok ? 0 : 1;
}
