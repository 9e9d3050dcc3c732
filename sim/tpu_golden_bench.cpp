// SPDX-License-Identifier: Apache-2.0
// tpu_golden_bench (`make bench-golden`, and part of `make bench`): the golden GEMM's speed on
// one thread, in MACs per second, for every kernel this CPU has, in both modes, on one square
// GEMM (default 1024³; the exact kernel, num::Mac per MAC, on a smaller one, its rate being
// flat in the size), with the speed-up over the exact kernel measured in the same run. Every
// fast kernel's result is compared bit for bit with the exact kernel's on a checked shape first
// (a mismatch exits 1).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tpu/gemm.h"
#include "tpu/tb/gemm_data.h"

namespace {

using namespace tpu;
using Clock = std::chrono::steady_clock;

// Best of `reps` runs, in MACs per second.
double Rate(const gemm::Shape& s, const tb::GemmOperands& ops, num::Mode mode, int reps) {
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    const std::vector<uint32_t> c = gemm::Gemm(s, ops.a, ops.b, ops.c0, mode);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (c.empty()) std::abort();
    best = std::max(best, double(s.m) * s.k * s.n / dt);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Golden GEMM speed per kernel (one thread)"};
  int size = 1024, exact_size = 192, reps = 3;
  uint64_t seed = 1;
  std::string csv;
  app.add_option("--size", size, "M = K = N of the measured GEMM")->check(CLI::Range(1, 8192));
  app.add_option("--exact-size", exact_size, "M = K = N for the exact kernel")
      ->check(CLI::Range(1, 2048));
  app.add_option("--reps", reps, "runs per kernel and mode (the best counts)")
      ->check(CLI::Range(1, 100));
  app.add_option("--seed", seed, "operand seed");
  app.add_option("--csv", csv, "also write the table to this CSV file");
  CLI11_PARSE(app, argc, argv);

  tb::Rng rng(seed);
  const gemm::Shape big{size, size, size}, small{exact_size, exact_size, exact_size};
  const tb::GemmOperands ops = tb::RandomGemm(rng, big, tb::GemmData::kModerate, false);
  const tb::GemmOperands ops_small = tb::RandomGemm(rng, small, tb::GemmData::kModerate, false);
  // The check: every kernel against the exact one on specials-laden data, both modes.
  const gemm::Shape chk{67, 131, 97};
  const tb::GemmOperands ops_chk = tb::RandomGemm(rng, chk, tb::GemmData::kSpecials, true);
  const num::Mode modes[] = {num::Mode::kIeee, num::Mode::kFtz};
  for (num::Mode mode : modes) {
    gemm::SetKernel(gemm::Kernel::kExact);
    const auto want = gemm::Gemm(chk, ops_chk.a, ops_chk.b, ops_chk.c0, mode);
    for (gemm::Kernel k : gemm::AvailableKernels()) {
      gemm::SetKernel(k);
      if (gemm::Gemm(chk, ops_chk.a, ops_chk.b, ops_chk.c0, mode) != want) {
        fmt::print(stderr, "tpu_golden_bench: kernel {} differs from the exact one ({} mode)\n",
                   gemm::KernelName(k), num::ModeName(mode));
        return 1;
      }
    }
  }
  fmt::print(
      "golden GEMM, one thread, seed {} (every kernel bit-exact with num::Mac on {}x{}x{}"
      " with specials, both modes)\n",
      seed, chk.m, chk.k, chk.n);
  fmt::print("{:<8} {:<5} {:>14} {:>12} {:>10}\n", "kernel", "mode", "shape", "M MACs/s",
             "vs exact");
  std::string table = "kernel,mode,m,k,n,macs_per_s,vs_exact\n";
  for (num::Mode mode : modes) {
    double exact = 0;
    for (gemm::Kernel k : gemm::AvailableKernels()) {
      gemm::SetKernel(k);
      const bool is_exact = k == gemm::Kernel::kExact;
      const gemm::Shape& s = is_exact ? small : big;
      const double r = Rate(s, is_exact ? ops_small : ops, mode, is_exact ? 1 : reps);
      if (is_exact) exact = r;
      const std::string shape = fmt::format("{}x{}x{}", s.m, s.k, s.n);
      fmt::print("{:<8} {:<5} {:>14} {:>12.1f} {:>9.1f}x\n", gemm::KernelName(k),
                 num::ModeName(mode), shape, r / 1e6, r / exact);
      table += fmt::format("{},{},{},{},{},{:.0f},{:.2f}\n", gemm::KernelName(k),
                           num::ModeName(mode), s.m, s.k, s.n, r, r / exact);
    }
  }
  gemm::SetKernel(gemm::Kernel::kAuto);
  if (!csv.empty()) {
    std::ofstream f(csv);
    f << table;
    if (!f) {
      fmt::print(stderr, "tpu_golden_bench: cannot write {}\n", csv);
      return 1;
    }
  }
  return 0;
}
