// SPDX-License-Identifier: Apache-2.0
// The golden GEMM's fast kernel (the default, gemm::ActiveKernel) against num::Mac over 10^10
// MACs (long tier): GEMMs of a few hundred rows, columns and depth on moderate, specials-laden and
// tiny data, with C0, in both modes, bit for bit. The exact results are computed with num::Mac on
// every core. (The fast tier's FastGemmTest covers every kernel and every edge; the 2^32 sweeps
// of make verify-exhaustive every single (a, b) pair.)
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "test_support.h"
#include "tpu/gemm.h"
#include "tpu/tb/gemm_data.h"

namespace tpu {
namespace {

// C = C0 + A·B with num::Mac per MAC in the contract's order, rows split over the cores.
std::vector<uint32_t> Exact(const tb::GemmOperands& g, num::Mode mode) {
  const gemm::Shape& s = g.shape;
  std::vector<uint32_t> c = g.c0;
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) {
    pool.emplace_back([&, t] {
      for (int m = int(t); m < s.m; m += int(n)) {
        uint32_t* crow = &c[size_t(m) * s.n];
        for (int k = 0; k < s.k; ++k) {
          const uint16_t a = g.a[size_t(m) * s.k + k];
          const uint16_t* brow = &g.b[size_t(k) * s.n];
          for (int j = 0; j < s.n; ++j) crow[j] = num::Mac(a, brow[j], crow[j], mode);
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  return c;
}

TEST(FastGemmLongTest, TenToTheTenMacs) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  const tb::GemmData kinds[] = {tb::GemmData::kModerate, tb::GemmData::kSpecials,
                                tb::GemmData::kTiny};
  const double target = 1e10 * double(test::Scaled(1));
  double macs = 0;
  int gemms = 0;
  while (macs < target) {
    const gemm::Shape s{rng.Range(200, 700), rng.Range(200, 700), rng.Range(200, 700)};
    const tb::GemmOperands g = tb::RandomGemm(rng, s, kinds[gemms % 3], true);
    const num::Mode mode = (gemms / 3) % 2 ? num::Mode::kFtz : num::Mode::kIeee;
    const std::vector<uint32_t> fast = gemm::Gemm(s, g.a, g.b, g.c0, mode);
    const std::vector<uint32_t> exact = Exact(g, mode);
    size_t bad = 0;
    for (size_t i = 0; i < fast.size(); ++i) bad += fast[i] != exact[i];
    ASSERT_EQ(bad, 0u) << fmt::format(
        "GEMM {} ({} {}, {} data, kernel {}, seed {}): {} elements "
        "differ from num::Mac's",
        gemms, tb::ShapeName(s), num::ModeName(mode), tb::GemmDataName(kinds[gemms % 3]),
        gemm::KernelName(gemm::ActiveKernel()), seed, bad);
    macs += double(s.m) * s.k * s.n;
    ++gemms;
  }
  fmt::print("[  GEMMS   ] {} GEMMs, {:.3g} MACs, kernel {}, all bit-exact\n", gemms, macs,
             gemm::KernelName(gemm::ActiveKernel()));
}

}  // namespace
}  // namespace tpu
