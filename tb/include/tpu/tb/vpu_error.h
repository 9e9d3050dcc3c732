// SPDX-License-Identifier: Apache-2.0
// The error of a vector-unit result against the exact function, in units in the last place of
// fp32 (docs/numerics.md, "The vector unit"): the binade's ulp of the exact value, 2^-149 below
// 2^-126. The exact value is the host's binary64 function (glibc, within an ulp of binary64, i.e.
// 2^-29 of an fp32 ulp), so the error is exact to far better than the bounds it is checked
// against.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "tpu/numerics.h"
#include "tpu/tb/oracles.h"

namespace tpu::tb {

// |y - e| in fp32 ulps of e, for a finite e; an infinite y against a finite e (or the reverse) is
// +inf.
inline double UlpError(uint32_t y, double e) {
  const double yd = static_cast<double>(AsFloat(y));
  if (std::isinf(yd) || std::isinf(e)) {
    return std::isinf(yd) && std::isinf(e) && (yd > 0) == (e > 0)
               ? 0.0
               : std::numeric_limits<double>::infinity();
  }
  const double mag = std::fabs(e);
  const int exp = mag >= 0x1p-126 ? std::ilogb(mag) : -126;
  return std::fabs(yd - e) / std::ldexp(1.0, exp - 23);
}

// y's error against the exact value e, where an e beyond FLT_MAX's rounding boundary must give an
// infinity of its sign.
inline double ResultError(uint32_t y, double e) {
  if (!std::isinf(e) && std::fabs(e) >= 0x1.ffffffp127) {  // FLT_MAX + half an ulp and beyond
    return y == (e > 0 ? 0x7F800000u : 0xFF800000u) ? 0.0 : INFINITY;
  }
  return UlpError(y, e);
}

// The vector unit's functions' errors at x (not a NaN), against the host's binary64 value.
inline double ExpUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, std::exp(static_cast<double>(AsFloat(x))));
}
inline double RecipUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, 1.0 / static_cast<double>(AsFloat(x)));
}
inline double RsqrtUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, 1.0 / std::sqrt(static_cast<double>(AsFloat(x))));
}
inline double SigmoidUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, 1.0 / (1.0 + std::exp(-static_cast<double>(AsFloat(x)))));
}
inline double TanhUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, std::tanh(static_cast<double>(AsFloat(x))));
}
inline double ErfUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, std::erf(static_cast<double>(AsFloat(x))));
}
inline double LogUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, std::log(static_cast<double>(AsFloat(x))));
}
inline double SqrtUlpError(uint32_t x, uint32_t y) {
  return ResultError(y, std::sqrt(static_cast<double>(AsFloat(x))));
}

}  // namespace tpu::tb
