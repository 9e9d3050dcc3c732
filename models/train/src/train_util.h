// SPDX-License-Identifier: Apache-2.0
// Helpers of the training library's two trainers (train.cpp, network.cpp).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tpu/net.h"
#include "tpu/numerics.h"

namespace tpu::train::detail {

inline uint32_t Bits(float f) {
  return net::F32Bits(f);
}
inline float FromBits(uint32_t u) {
  return net::F32FromBits(u);
}
// Every NaN a host step makes is the canonical one (the accelerator's).
inline float Canon(float f) {
  return std::isnan(f) ? FromBits(num::kFp32CanonicalNaN) : f;
}
inline uint64_t SplitMix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// Uniform in [0, 1): the top 53 bits.
inline double Uniform(uint64_t& s) {
  return double(SplitMix64(s) >> 11) * 0x1.0p-53;
}
// The initial weights' stream (docs/training.md): seed ^ "tputran1".
inline uint64_t WeightStream(uint64_t seed) {
  return seed ^ 0x7470757472616E31ull;
}
// A graph node that training does not take, and its attributes.
[[noreturn]] inline void Fail(const net::Node& n, const std::string& why) {
  throw net::Error(fmt::format("node '{}' ({}): {}", n.name, n.op, why));
}

inline int64_t IntAttr(const net::Node& n, const char* name, int64_t def) {
  const auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.i;
}
inline float FloatAttr(const net::Node& n, const char* name, float def) {
  const auto it = n.attrs.find(name);
  return it == n.attrs.end() ? def : it->second.f;
}
inline std::vector<int64_t> IntsAttr(const net::Node& n, const char* name) {
  const auto it = n.attrs.find(name);
  return it == n.attrs.end() ? std::vector<int64_t>{} : it->second.ints;
}

// fp32 bit patterns (an accelerator job's output) as floats.
inline std::vector<float> Floats(const std::vector<uint32_t>& bits) {
  std::vector<float> r(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) r[i] = FromBits(bits[i]);
  return r;
}
// A bias gradient: the column sums of a rows × cols bf16 matrix, in binary32 from +0, rows in
// order (docs/numerics.md, "Training").
inline std::vector<float> ColumnSums(const std::vector<uint16_t>& g, int rows, int cols) {
  std::vector<float> r(static_cast<size_t>(cols));
  for (int j = 0; j < cols; ++j) {
    float s = 0.0f;
    for (int i = 0; i < rows; ++i) s = s + FromBits(num::Bf16ToFp32(g[size_t(i) * cols + j]));
    r[size_t(j)] = Canon(s);
  }
  return r;
}
inline std::vector<uint16_t> ToBf16(const std::vector<float>& v, num::Mode mode) {
  std::vector<uint16_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = num::Fp32ToBf16(Bits(v[i]), mode);
  return r;
}

}  // namespace tpu::train::detail
