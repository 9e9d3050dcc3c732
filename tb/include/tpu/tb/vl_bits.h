// SPDX-License-Identifier: Apache-2.0
// Lanes of Verilated ports: a port is an integer (up to 64 bits) or a VlWide (wider). Lanes
// are at most 32 bits wide and never straddle a 32-bit word (lane widths 16 and 32 here).
#pragma once

#include <verilated.h>

#include <cstdint>
#include <type_traits>

namespace tpu::tb {

template <class T>
inline void SetLane(T& port, int lo, int width, uint32_t v) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t mask = ((uint64_t{1} << width) - 1) << lo;
    port = static_cast<T>((static_cast<uint64_t>(port) & ~mask) |
                          ((static_cast<uint64_t>(v) << lo) & mask));
  } else {
    const int w = lo / 32, off = lo % 32;
    const uint32_t mask = (width == 32 ? ~0u : ((1u << width) - 1)) << off;
    port[w] = (port[w] & ~mask) | ((v << off) & mask);
  }
}

template <class T>
inline uint32_t GetLane(const T& port, int lo, int width) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint32_t>((static_cast<uint64_t>(port) >> lo) &
                                 ((uint64_t{1} << width) - 1));
  } else {
    const uint32_t word = port[lo / 32] >> (lo % 32);
    return width == 32 ? word : word & ((1u << width) - 1);
  }
}

}  // namespace tpu::tb
