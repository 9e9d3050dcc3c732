// SPDX-License-Identifier: Apache-2.0
// Seeds and a small, fast, reproducible PRNG for stimulus.
#pragma once

#include <cstdint>
#include <string>

namespace tpu::tb {

// splitmix64: one 64-bit state, good statistical quality, a few cycles per draw.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t U32() { return static_cast<uint32_t>(Next() >> 32); }
  uint16_t U16() { return static_cast<uint16_t>(Next() >> 48); }
  // Uniform in [lo, hi] (inclusive), for small ranges.
  int Range(int lo, int hi) {
    return lo + static_cast<int>((Next() >> 33) % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Bit() { return (Next() >> 63) != 0; }

 private:
  uint64_t state_;
};

// The seed for a test or a run: --seed=N / TPU_SEED=N if given, else a fresh random one.
// Printed by the caller so that every random run can be reproduced.
uint64_t ChooseSeed();
// Set by --seed=N on a test or program command line (overrides TPU_SEED).
void SetSeedOverride(uint64_t seed);

// A stable per-stream seed derived from a run seed and a label (so that streams are independent
// and a test's vectors do not depend on which other tests ran).
uint64_t DeriveSeed(uint64_t seed, const std::string& label);

}  // namespace tpu::tb
