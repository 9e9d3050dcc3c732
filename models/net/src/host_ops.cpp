// SPDX-License-Identifier: Apache-2.0
// The host operators' numerics (docs/numerics.md, "Host operators"): IEEE 754 binary32 and
// binary64 operations in a fixed order. This file is compiled with -ffp-contract=off (no fused
// multiply-adds the source does not write) and never with -ffast-math, so every operation below
// is one correctly rounded IEEE operation on every conforming machine; only Softmax's exp comes
// from the C library.
#include "host_ops.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tpu::net {

namespace {
const float kNaN = F32FromBits(num::kFp32CanonicalNaN);
}  // namespace

float HostAdd(float a, float b) {
  const float r = a + b;
  return std::isnan(r) ? kNaN : r;
}

float HostMul(float a, float b) {
  const float r = a * b;
  return std::isnan(r) ? kNaN : r;
}

float HostDiv(float a, float b) {
  const float r = a / b;
  return std::isnan(r) ? kNaN : r;
}

float HostRelu(float x) {
  return F32FromBits(num::Relu(F32Bits(x)));
}

double BnScale(float gamma, float var, float eps) {
  return double(gamma) / std::sqrt(double(var) + double(eps));
}

float BnApply(float x, float mean, float beta, double s) {
  const double t = double(x) - double(mean);
  const double u = t * s;
  const float r = float(u + double(beta));
  return std::isnan(r) ? kNaN : r;
}

float BnWeight(float w, double s) {
  const float r = float(double(w) * s);
  return std::isnan(r) ? kNaN : r;
}

float MaxOf(const float* x, const int64_t* idx, int n) {
  // The first element, replaced by every later one that is greater; a NaN anywhere gives NaN.
  float m = x[idx[0]];
  bool nan = std::isnan(m);
  for (int i = 1; i < n; ++i) {
    const float v = x[idx[i]];
    if (std::isnan(v)) nan = true;
    if (v > m) m = v;
  }
  return nan ? kNaN : m;
}

float SumOf(const float* x, const int64_t* idx, int n) {
  // In the given order, starting from the first element (not from +0).
  float s = x[idx[0]];
  for (int i = 1; i < n; ++i) s = s + x[idx[i]];
  return std::isnan(s) ? kNaN : s;
}

namespace {

// Softmax and log-softmax of a slice in binary64 (docs/numerics.md): m the largest element (a
// NaN gives a slice of NaNs), the sum of exp(x_i - m) in index order, then y_i = f(x_i - m, sum).
template <typename F>
void SliceInBinary64(const float* x, float* y, int64_t n, int64_t stride, F f) {
  float m = x[0];
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i * stride];
    if (std::isnan(v)) nan = true;
    if (v > m) m = v;
  }
  if (nan) {
    for (int64_t i = 0; i < n; ++i) y[i * stride] = kNaN;
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(double(x[i * stride]) - double(m));
  for (int64_t i = 0; i < n; ++i) {
    const float r = float(f(double(x[i * stride]) - double(m), sum));
    y[i * stride] = std::isnan(r) ? kNaN : r;
  }
}

}  // namespace

void SoftmaxSlice(const float* x, float* y, int64_t n, int64_t stride) {
  SliceInBinary64(x, y, n, stride, [](double d, double sum) { return std::exp(d) / sum; });
}

void LogSoftmaxSlice(const float* x, float* y, int64_t n, int64_t stride) {
  SliceInBinary64(x, y, n, stride, [](double d, double sum) { return d - std::log(sum); });
}

}  // namespace tpu::net
