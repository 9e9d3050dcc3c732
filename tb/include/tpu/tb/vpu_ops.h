// SPDX-License-Identifier: Apache-2.0
// The golden meaning of each vector-unit micro-program (rtl/vpu/ucode.json), by name: the
// operation of tpu/vpu.h on A, B (or the scalar) and the destination's old value C. The
// interpreter's test (vpu_ucode_test) and the RTL's (vpu_rtl_test) check every program against it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "tpu/numerics.h"
#include "tpu/vpu.h"

namespace tpu::tb::ucode {

using num::Mode;
using Golden = std::function<uint32_t(uint32_t a, uint32_t b, uint32_t c, Mode m)>;

inline uint32_t Fma(uint32_t a, uint32_t b, uint32_t c, Mode m) {
  return num::Fma32(a, b, c, m);
}

// The golden operation of each program.
inline const std::map<std::string, Golden>& Goldens() {
  static const std::map<std::string, Golden> g = {
      {"copy", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Operand(a, m); }},
      {"add", [](uint32_t a, uint32_t b, uint32_t, Mode m) { return Fma(a, vpu::kOne, b, m); }},
      {"sub",
       [](uint32_t a, uint32_t b, uint32_t, Mode m) { return Fma(b, vpu::kMinusOne, a, m); }},
      {"mul",
       [](uint32_t a, uint32_t b, uint32_t, Mode m) { return Fma(a, b, vpu::kMinusZero, m); }},
      {"mac", [](uint32_t a, uint32_t b, uint32_t c, Mode m) { return Fma(a, b, c, m); }},
      {"max", [](uint32_t a, uint32_t b, uint32_t, Mode m) { return vpu::Max(a, b, m); }},
      {"min", [](uint32_t a, uint32_t b, uint32_t, Mode m) { return vpu::Min(a, b, m); }},
      {"gt", [](uint32_t a, uint32_t b, uint32_t, Mode m) { return vpu::Gt(a, b, m); }},
      {"ge", [](uint32_t a, uint32_t b, uint32_t, Mode m) { return vpu::Ge(a, b, m); }},
      {"eq", [](uint32_t a, uint32_t b, uint32_t, Mode m) { return vpu::Eq(a, b, m); }},
      {"select", [](uint32_t a, uint32_t b, uint32_t c,
                    Mode m) { return vpu::Operand(vpu::Select(c, a, b, m), m); }},
      {"relu", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Relu(a, m); }},
      {"leaky_relu",
       [](uint32_t a, uint32_t b, uint32_t, Mode m) { return vpu::LeakyRelu(a, b, m); }},
      {"exp", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Exp(a, m); }},
      {"recip", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Recip(a, m); }},
      {"rsqrt", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Rsqrt(a, m); }},
      {"sqrt", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Sqrt(a, m); }},
      {"sigmoid", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Sigmoid(a, m); }},
      {"tanh", [](uint32_t a, uint32_t, uint32_t, Mode m) { return vpu::Tanh(a, m); }},
  };
  return g;
}

// Programs of one operand (A): sampled over fp32 patterns rather than drawn in pairs.
inline bool Unary(const std::string& name) {
  return name == "copy" || name == "relu" || name == "exp" || name == "recip" || name == "rsqrt" ||
         name == "sqrt" || name == "sigmoid" || name == "tanh";
}

}  // namespace tpu::tb::ucode
