// SPDX-License-Identifier: Apache-2.0
// The host's independent oracles for the numerics contract (see docs/numerics.md):
// std::fmaf and Eigen::bfloat16 in the default floating-point environment, with the contract's
// daz/flush wrappers for FTZ mode. Comparison rules: NaN-ness against the host, bits otherwise.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "tpu/numerics.h"

namespace tpu::tb {

inline float AsFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}
inline uint32_t AsBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  return x;
}

// IEEE: fmaf(float(a), float(b), c); FTZ: flush(fmaf(daz(a), daz(b), daz(c))).
inline uint32_t HostMac(uint16_t a, uint16_t b, uint32_t c, num::Mode mode) {
  if (mode == num::Mode::kIeee) {
    return AsBits(std::fmaf(AsFloat(num::Bf16ToFp32(a)), AsFloat(num::Bf16ToFp32(b)), AsFloat(c)));
  }
  const float r = std::fmaf(AsFloat(num::Flush32(num::Bf16ToFp32(a))),
                            AsFloat(num::Flush32(num::Bf16ToFp32(b))), AsFloat(num::Flush32(c)));
  return num::Flush32(AsBits(r));
}

// The vector unit's fp32 FMA, the same way: IEEE fmaf(a, b, c); FTZ flush(fmaf(daz(a), daz(b),
// daz(c))).
inline uint32_t HostFma32(uint32_t a, uint32_t b, uint32_t c, num::Mode mode) {
  if (mode == num::Mode::kIeee) return AsBits(std::fmaf(AsFloat(a), AsFloat(b), AsFloat(c)));
  const float r =
      std::fmaf(AsFloat(num::Flush32(a)), AsFloat(num::Flush32(b)), AsFloat(num::Flush32(c)));
  return num::Flush32(AsBits(r));
}

// IEEE: Eigen::bfloat16(x); FTZ: flush16(Eigen::bfloat16(flush32(x))).
inline uint16_t HostFp32ToBf16(uint32_t x, num::Mode mode) {
  if (mode == num::Mode::kIeee) {
    return Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(AsFloat(x)));
  }
  return num::Flush16(Eigen::numext::bit_cast<uint16_t>(Eigen::bfloat16(AsFloat(num::Flush32(x)))));
}

// Host NaNs keep payloads and signs; the contract's are canonical: compare NaN-ness there.
inline bool MacMatchesHost(uint32_t golden, uint32_t host) {
  return num::IsNaN32(host) ? golden == num::kFp32CanonicalNaN : golden == host;
}
inline bool CvtMatchesHost(uint16_t golden, uint16_t host) {
  return num::IsNaN16(host) ? golden == num::kBf16CanonicalNaN : golden == host;
}

}  // namespace tpu::tb
