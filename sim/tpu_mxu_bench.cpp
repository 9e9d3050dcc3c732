// SPDX-License-Identifier: Apache-2.0
// tpu_mxu_bench (`make bench`): the matrix unit's utilization on the GEMM shapes and
// array sizes, operands already on chip, next to the fully pipelined limit and SCALE-Sim's
// figure, with every lost cycle by cause; then the single-thread simulation speed of 16×16.
// Every run's results are checked bit for bit against the golden GEMM (--no-check skips it).
// --csv FILE also writes the table, one row per run, for `make report` (scripts/report.py).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "Vmxu_b16.h"
#include "Vmxu_b32.h"
#include "Vmxu_b4.h"
#include "Vmxu_b8.h"
#include "bench_util.h"
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

template <class V>
struct Tag {
  using type = V;
};

struct Array {
  tb::ArrayConfig cfg;
  std::function<Row(const Case&)> run;
};

std::vector<Array> Arrays() {
  std::vector<Array> v;
  const auto add = [&](int n, auto tag) {
    using V = typename decltype(tag)::type;
    const tb::ArrayConfig cfg{n, n, 1, 4096};
    v.push_back({cfg, [cfg](const Case& c) { return RunOn<V>(cfg, c); }});
  };
  add(4, Tag<Vmxu_b4>{});
  add(8, Tag<Vmxu_b8>{});
  add(16, Tag<Vmxu_b16>{});
  add(32, Tag<Vmxu_b32>{});
  return v;
}

std::string Pct(double x) {
  return fmt::format("{:.2f}%", 100.0 * x);
}

// Cold Verilator build (ccache off) of one tpu_mxu configuration, as the CMake build does it.
double BuildSeconds(int n) {
  const std::string dir = fmt::format("/tmp/tpu_mxu_bench_build_{}", n);
  const std::string cmd = fmt::format(
      "rm -rf {0} && mkdir -p {0} && CCACHE_DISABLE=1 {1}/scripts/verilate.sh mxu_{2}x{2} tpu_mxu "
      "{0}/m --opt {3} -GRows={2} -GCols={2} -GPipeRegs=1 -GAccDepth=4096 > /dev/null && rm -rf "
      "{0}",
      dir, TPU_SOURCE_DIR, n, TPU_MXU_OPT);
  const auto t0 = Clock::now();
  if (std::system(cmd.c_str()) != 0) return -1;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

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
    if (!no_check) {
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
  struct Task {
    size_t a, s;
    double cost;
  };
  std::vector<Task> tasks;
  for (size_t a = 0; a < arrays.size(); ++a) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      const bool big = shapes[s].m == 1024;
      if (quick && big && arrays[a].cfg.rows <= 8) continue;
      const double cyc = double(tb::PipelinedLimit(shapes[s], arrays[a].cfg));
      tasks.push_back({a, s, cyc * arrays[a].cfg.rows * arrays[a].cfg.cols});
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

  fmt::print("\nUtilization = useful MACs / (R·C·cycles); P = 1, accumulators 4096 rows/column.\n");
  fmt::print("limit = R + F·M + (F−1)·max(0,R−M) + P·R + C − 2; SCALE-Sim = F·(2R+C+M−2) − 1\n");
  fmt::print(
      "lost cycles by cause: wload = waiting for a weight tile (first load, folds shorter "
      "than R), hazard = accumulator read-after-write, starve = no operand, drain = "
      "pipeline emptying at the end\n\n");
  fmt::print(
      "| array | M×K×N | cycles | limit | SCALE-Sim | util | util SCALE-Sim | cycles/limit "
      "| wload | hazard | starve | drain | results |\n");
  fmt::print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
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

  // Simulation speed: 16×16, one thread, a 512³ GEMM (524,000 cycles).
  {
    const gemm::Shape s{512, 512, 512};
    tb::Rng rng(seed);
    Case c{s, tb::RandomGemm(rng, s, tb::GemmData::kModerate, false), {}};
    const Row r = arrays[2].run(c);
    fmt::print("\nSimulation speed, 16×16 array, one thread, {} GEMM: {:.2f} s for {} cycles\n",
               tb::ShapeName(s), r.seconds, r.perf.cycles);
    fmt::print("  {:.0f} cycles/s, {:.2f} million useful MACs/s, {:.2f} million PE-cycles/s\n",
               double(r.perf.cycles) / r.seconds, double(r.perf.macs) / r.seconds / 1e6,
               256.0 * double(r.perf.cycles) / r.seconds / 1e6);
    if (csv.is_open()) {
      csv << fmt::format("# speed_array=16x16\n# speed_shape={}\n# speed_cycles={}\n",
                         tb::ShapeName(s), r.perf.cycles);
      csv << fmt::format("# speed_macs={}\n# speed_seconds={:.3f}\n", r.perf.macs, r.seconds);
      csv.flush();
    }
  }
  if (!no_build) {
    fmt::print(
        "\nCold Verilator build of the matrix unit (ccache off, 2 cores; goals 60 s / 180 s):\n");
    for (const int n : {16, 32}) {
      const double t = BuildSeconds(n);
      if (t < 0) {
        fmt::print("  {0}x{0}: build FAILED\n", n);
        return 1;
      }
      fmt::print("  {0}x{0}: {1:.1f} s\n", n, t);
      if (csv.is_open()) csv << fmt::format("# cold_build_{0}x{0}_seconds={1:.1f}\n", n, t);
    }
  }
  return ok ? 0 : 1;
}
