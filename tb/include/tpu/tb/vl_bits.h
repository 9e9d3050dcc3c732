// SPDX-License-Identifier: Apache-2.0
// Lanes of Verilated ports: a port is an integer (up to 64 bits) or a VlWide (wider). Lanes
// are at most 32 bits wide and never straddle a 32-bit word (lane widths 16 and 32 here).
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
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

namespace tpu::tb {

// A field of up to 64 bits anywhere in a port (it may straddle 32-bit words).
template <class T>
inline void SetBits(T& port, int lo, int width, uint64_t v) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t mask = (width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1)) << lo;
    port = static_cast<T>((static_cast<uint64_t>(port) & ~mask) | ((v << lo) & mask));
  } else {
    while (width > 0) {
      const int off = lo % 32, take = std::min(width, 32 - off);
      const uint32_t mask = (take == 32 ? ~0u : ((1u << take) - 1)) << off;
      port[lo / 32] = (port[lo / 32] & ~mask) | ((static_cast<uint32_t>(v) << off) & mask);
      v >>= take;
      lo += take;
      width -= take;
    }
  }
}

template <class T>
inline uint64_t GetBits(const T& port, int lo, int width) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    return (static_cast<uint64_t>(port) >> lo) & mask;
  } else {
    uint64_t v = 0;
    int got = 0;
    while (got < width) {
      const int off = lo % 32, take = std::min(width - got, 32 - off);
      const uint32_t w = (port[lo / 32] >> off) & (take == 32 ? ~0u : ((1u << take) - 1));
      v |= static_cast<uint64_t>(w) << got;
      got += take;
      lo += take;
    }
    return v;
  }
}

}  // namespace tpu::tb

namespace tpu::tb {

// A 32-byte data beat in a port, byte i at bits [lo + 8i + 7 : lo + 8i] (lo a multiple of 32):
// AXI and HBM data lanes.
template <class T>
inline void GetBeat32(const T& port, int lo, uint8_t* out) {
  for (int w = 0; w < 8; ++w) {
    const uint32_t word = GetLane(port, lo + 32 * w, 32);
    for (int k = 0; k < 4; ++k) out[4 * w + k] = static_cast<uint8_t>(word >> (8 * k));
  }
}

template <class T>
inline void SetBeat32(T& port, int lo, const uint8_t* in) {
  for (int w = 0; w < 8; ++w) {
    uint32_t word = 0;
    for (int k = 0; k < 4; ++k) word |= static_cast<uint32_t>(in[4 * w + k]) << (8 * k);
    SetLane(port, lo + 32 * w, 32, word);
  }
}

}  // namespace tpu::tb

namespace tpu::tb {

// The field widths of channel S at the widths w, each 1..64 bits (a field is a uint64_t):
// std::invalid_argument naming the field otherwise.
template <class S>
auto ChannelFieldWidths(const typename S::Widths& w) {
  const auto widths = S::FieldWidths(w);
  for (int i = 0; i < S::kNumFields; ++i) {
    if (widths[i] < 1 || widths[i] > 64) {
      throw std::invalid_argument(std::string(S::kName) + "." + S::FieldNames()[i] + " is " +
                                  std::to_string(widths[i]) +
                                  " bits wide: a C++ channel field holds 1 to 64");
    }
  }
  return widths;
}

// A channel struct of tpu/tb/channels.h (S) onto a Verilated port and back: every field in
// order, the first the most significant, at the widths S::FieldWidths(w) gives.
template <class S, class P>
void PackChannel(const S& s, const typename S::Widths& w, P& port) {
  const auto fields = S::Fields();
  const auto widths = ChannelFieldWidths<S>(w);
  int lsb = 0;
  for (int i = S::kNumFields - 1; i >= 0; --i) {
    const uint64_t v = s.*fields[i];
    if (widths[i] < 64 && (v >> widths[i]) != 0) {
      throw std::invalid_argument(std::string(S::kName) + "." + S::FieldNames()[i] + " = " +
                                  std::to_string(v) + " does not fit its " +
                                  std::to_string(widths[i]) + " bits");
    }
    SetBits(port, lsb, widths[i], v);
    lsb += widths[i];
  }
}

template <class S, class P>
S UnpackChannel(const typename S::Widths& w, const P& port) {
  const auto fields = S::Fields();
  const auto widths = ChannelFieldWidths<S>(w);
  S s;
  int lsb = 0;
  for (int i = S::kNumFields - 1; i >= 0; --i) {
    s.*fields[i] = GetBits(port, lsb, widths[i]);
    lsb += widths[i];
  }
  return s;
}

// A channel's width in bits.
template <class S>
int ChannelWidth(const typename S::Widths& w) {
  int sum = 0;
  for (int v : S::FieldWidths(w)) sum += v;
  return sum;
}

}  // namespace tpu::tb
