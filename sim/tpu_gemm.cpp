// SPDX-License-Identifier: Apache-2.0
// tpu_gemm (`make run`): one GEMM on the default matrix unit (16×16 weight-stationary array,
// P = 1, 4096-row accumulators), operands on chip, checked bit for bit against the golden model;
// prints the cycles next to the pipelined limit and SCALE-Sim's figure, the utilization and
// every lost cycle by cause.
//
//   tpu_gemm [--m 256 --k 256 --n 256] [--seed S] [--mode ieee|ftz] [--data moderate|specials|tiny]
//            [--c0] [--gap P]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <string>

#include "Vmxu_b16.h"
#include "tpu/gemm.h"
#include "tpu/tb/gemm_data.h"
#include "tpu/tb/mxu_plan.h"
#include "tpu/tb/mxu_runner.h"

namespace {

int Main(int argc, char** argv) {
  using namespace tpu;
  CLI::App app{"One GEMM on the 16x16 matrix unit RTL, checked against the golden model"};
  gemm::Shape s{256, 256, 256};
  uint64_t seed = 0;
  std::string mode_name = "ieee", data_name = "specials";
  bool with_c0 = false;
  double gap = 0;
  app.add_option("--m", s.m, "rows of A and C")->check(CLI::Range(1, 1 << 20));
  app.add_option("--k", s.k, "columns of A, rows of B")->check(CLI::Range(1, 1 << 20));
  app.add_option("--n", s.n, "columns of B and C")->check(CLI::Range(1, 1 << 20));
  app.add_option("--seed", seed, "operand seed (default: a fresh one, printed)");
  app.add_option("--mode", mode_name, "numerics mode")->check(CLI::IsMember({"ieee", "ftz"}));
  app.add_option("--data", data_name, "operand distribution")
      ->check(CLI::IsMember({"moderate", "specials", "tiny"}));
  app.add_flag("--c0", with_c0, "start from a random C0 preloaded into the accumulators");
  app.add_option("--gap", gap, "probability of an idle cycle on each input port")
      ->check(CLI::Range(0.0, 0.95));
  CLI11_PARSE(app, argc, argv);
  if (seed == 0) seed = tb::ChooseSeed();

  const std::map<std::string, tb::GemmData> kinds = {{"moderate", tb::GemmData::kModerate},
                                                     {"specials", tb::GemmData::kSpecials},
                                                     {"tiny", tb::GemmData::kTiny}};
  const num::Mode mode = mode_name == "ftz" ? num::Mode::kFtz : num::Mode::kIeee;
  const tb::ArrayConfig cfg{16, 16, 1, 4096};
  fmt::print("GEMM {} on the {} matrix unit, {} mode, {} data{}, seed {} (reproduce: --seed {})\n",
             tb::ShapeName(s), cfg.Name(), mode_name, data_name, with_c0 ? ", C0 preloaded" : "",
             seed, seed);
  tb::Rng rng(seed);
  const auto g = tb::RandomGemm(rng, s, kinds.at(data_name), with_c0);
  const auto plan = tb::PlanGemm(s, cfg, with_c0 ? tb::Init::kPreload : tb::Init::kOverwrite);
  fmt::print("plan: {} tile operations in {} accumulator blocks\n", plan.NumOps(),
             plan.blocks.size());

  tb::SimCtrl<Vmxu_b16> sim("mxu_16x16", 1ull << 40);
  sim.Reset();
  tb::MxuRunner<Vmxu_b16> runner(sim, cfg);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = runner.Run(plan, g.a, g.b, g.c0, mode, tb::Stimulus::Random(gap, seed + 1));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto golden = gemm::Gemm(s, g.a, g.b, g.c0, mode);

  size_t bad = 0;
  for (size_t i = 0; i < golden.size(); ++i) {
    if (golden[i] == r.c[i]) continue;
    if (++bad <= 8) {
      fmt::print("  MISMATCH C[{}][{}]: expected {} got {}\n", i / s.n, i % s.n,
                 num::FormatFp32(golden[i]), num::FormatFp32(r.c[i]));
    }
  }
  const auto& p = r.perf;
  const double util = double(p.macs) / (256.0 * double(p.cycles));
  fmt::print("{}: {} of {} results bit-exact against the golden model\n", bad ? "FAIL" : "PASS",
             golden.size() - bad, golden.size());
  fmt::print("cycles {} (pipelined limit {}, SCALE-Sim {}), utilization {:.2f}%\n", p.cycles,
             tb::PipelinedLimit(s, cfg), tb::ScaleSimCycles(s, cfg), 100 * util);
  fmt::print(
      "cycles by cause: busy {}, weight load {}, starved {}, accumulator hazard {}, "
      "drain {}\n",
      p.busy, p.wstall, p.starve, p.hazard, p.drain);
  fmt::print("simulated {} clock cycles in {:.2f} s: {:.0f} cycles/s, {:.2f} M MAC/s\n",
             r.sim_cycles, secs, double(r.sim_cycles) / secs, double(p.macs) / secs / 1e6);
  return bad == 0 && !sim.AssertionFailed() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tpu_gemm: {}\n", e.what());
    return 2;
  }
}
