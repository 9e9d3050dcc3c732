// SPDX-License-Identifier: Apache-2.0
// tpu_bench (`make bench`): MAC evaluations per second for the RTL models and the golden model
// (single thread), the projected time of a 2^32 sweep on this machine's cores, and the cold
// Verilator build time of the MAC.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "Vcvt.h"
#include "Vmac_p0.h"
#include "Vmac_p3.h"
#include "tpu/numerics.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/oracles.h"

namespace {

using tpu::num::Mode;
using Clock = std::chrono::steady_clock;

struct Row {
  std::string what;
  double per_second;
};

// Runs `batch(n)` with growing n until it takes at least `seconds`; returns items per second.
template <class F>
double Rate(double seconds, F batch) {
  uint64_t n = 1 << 16;
  for (;;) {
    const auto t0 = Clock::now();
    batch(n);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (dt >= seconds) return static_cast<double>(n) / dt;
    n = static_cast<uint64_t>(static_cast<double>(n) *
                              std::max(2.0, 1.2 * seconds / std::max(dt, 1e-3)));
  }
}

// Pre-drawn vectors so that stimulus generation is not what gets measured.
std::vector<tpu::tb::MacVector> Vectors(size_t n) {
  tpu::tb::Rng rng(12345);
  std::vector<tpu::tb::MacVector> v(n);
  for (auto& x : v) {
    x.a = rng.U16();
    x.b = rng.U16();
    x.c = tpu::tb::DrawC(rng, x.a, x.b, tpu::tb::CPolicy::kMatter);
  }
  return v;
}

volatile uint32_t g_sink;  // keeps results alive

double BuildSeconds(const std::string& name, const std::string& param) {
  const std::string dir = fmt::format("/tmp/tpu_bench_build_{}", name);
  const std::string cmd = fmt::format(
      "rm -rf {0} && mkdir -p {0} && CCACHE_DISABLE=1 {1}/scripts/verilate.sh {2} tpu_mac {0}/m "
      "{3} > /dev/null && rm -rf {0}",
      dir, TPU_SOURCE_DIR, name, param);
  const auto t0 = Clock::now();
  if (std::system(cmd.c_str()) != 0) return -1;
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MAC throughput and build-time benchmark (make bench)"};
  double seconds = 1.0;
  bool skip_build = false;
  app.add_option("--seconds", seconds, "minimum measuring time per row")
      ->check(CLI::Range(0.05, 60.0));
  app.add_flag("--no-build", skip_build, "skip the cold Verilator build measurement");
  CLI11_PARSE(app, argc, argv);

  const auto vs = Vectors(1 << 20);
  const size_t mask = vs.size() - 1;
  // Items per second of f(vector, index) -> bits over the pre-drawn vectors.
  const auto per_vector = [&](auto f) {
    return Rate(seconds, [&](uint64_t n) {
      uint32_t acc = 0;
      for (uint64_t i = 0; i < n; ++i) acc ^= f(vs[i & mask], i);
      g_sink = acc;
    });
  };
  using tpu::tb::MacVector;
  std::vector<Row> rows;
  rows.push_back({"golden model Mac (IEEE)", per_vector([](const MacVector& v, uint64_t) {
                    return tpu::num::Mac(v.a, v.b, v.c, Mode::kIeee);
                  })});
  rows.push_back({"golden model Mac (FTZ)", per_vector([](const MacVector& v, uint64_t) {
                    return tpu::num::Mac(v.a, v.b, v.c, Mode::kFtz);
                  })});
  rows.push_back({"host std::fmaf oracle", per_vector([](const MacVector& v, uint64_t) {
                    return tpu::tb::HostMac(v.a, v.b, v.c, Mode::kIeee);
                  })});

  tpu::tb::SimCtrl<Vmac_p0> comb("mac_p0", 1);
  rows.push_back({"RTL MAC, combinational (eval)", per_vector([&](const MacVector& v, uint64_t) {
                    return tpu::tb::EvalMac(comb, v.a, v.b, v.c, Mode::kIeee);
                  })});
  const double checked = per_vector([&](const MacVector& v, uint64_t) -> uint32_t {
    return tpu::tb::EvalMac(comb, v.a, v.b, v.c, Mode::kIeee) !=
           tpu::num::Mac(v.a, v.b, v.c, Mode::kIeee);
  });
  rows.push_back({"RTL MAC vs golden, checked", checked});

  tpu::tb::SimCtrl<Vmac_p3> pipe("mac_p3", UINT64_MAX);
  pipe.Reset();
  pipe.dut().in_valid_i = 1;
  rows.push_back({"RTL MAC, 3-stage, one per cycle", per_vector([&](const MacVector& v, uint64_t) {
                    auto& m = pipe.dut();
                    m.a_i = v.a;
                    m.b_i = v.b;
                    m.c_i = v.c;
                    pipe.RisingEdge();
                    const uint32_t r = m.res_o;
                    pipe.FallingEdge();
                    return r;
                  })});

  tpu::tb::SimCtrl<Vcvt> cvt("cvt", 1);
  rows.push_back(
      {"RTL fp32->bf16 converter (eval)", per_vector([&](const MacVector& v, uint64_t i) {
         return uint32_t{tpu::tb::EvalCvt(cvt, v.c, (i & 1) != 0, Mode::kIeee)};
       })});

  fmt::print("{:<34} {:>14}\n", "single thread", "evals/s");
  for (const auto& r : rows) fmt::print("{:<34} {:>14.3g}\n", r.what, r.per_second);

  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double sweep = 4294967296.0 / (checked * cores);
  fmt::print(
      "\nprojected 2^32 RTL MAC sweep (vs golden) on {} cores: {:.0f} s ({:.1f} min); "
      "goal <= 5 min, stretch <= 2 min\n",
      cores, sweep, sweep / 60);

  if (!skip_build) {
    fmt::print("\ncold Verilator build of the MAC (ccache off):\n");
    for (const auto& [name, param] : {std::pair<std::string, std::string>{"mac_p0", "-GPipeRegs=0"},
                                      {"mac_p3", "-GPipeRegs=3"}}) {
      const double s = BuildSeconds("bench_" + name, param);
      if (s < 0) {
        fmt::print("  {}: build FAILED\n", name);
        return 1;
      }
      fmt::print("  {:<8} {:.1f} s\n", name, s);
    }
  }
  return 0;
}
