// SPDX-License-Identifier: Apache-2.0
#include "tpu/gemm.h"

#include <fmt/format.h>

#include <stdexcept>

namespace tpu::gemm {

std::vector<uint32_t> Gemm(const Shape& s, const std::vector<uint16_t>& a,
                           const std::vector<uint16_t>& b, const std::vector<uint32_t>& c0,
                           num::Mode mode) {
  if (s.m < 1 || s.k < 1 || s.n < 1) {
    throw std::invalid_argument(
        fmt::format("gemm: dimensions must be at least 1, got M={} K={} N={}", s.m, s.k, s.n));
  }
  const size_t mk = size_t(s.m) * s.k, kn = size_t(s.k) * s.n, mn = size_t(s.m) * s.n;
  if (a.size() != mk || b.size() != kn || (!c0.empty() && c0.size() != mn)) {
    throw std::invalid_argument(fmt::format(
        "gemm: matrix sizes A={} B={} C0={} do not match M={} K={} N={} (want {}, {}, {} or 0)",
        a.size(), b.size(), c0.size(), s.m, s.k, s.n, mk, kn, mn));
  }
  std::vector<uint32_t> c = c0.empty() ? std::vector<uint32_t>(mn, 0u) : c0;
  for (int m = 0; m < s.m; ++m) {
    for (int k = 0; k < s.k; ++k) {
      const uint16_t am = a[size_t(m) * s.k + k];
      const uint16_t* brow = &b[size_t(k) * s.n];
      uint32_t* crow = &c[size_t(m) * s.n];
      for (int n = 0; n < s.n; ++n) crow[n] = num::Mac(am, brow[n], crow[n], mode);
    }
  }
  return c;
}

}  // namespace tpu::gemm
