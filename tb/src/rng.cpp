// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/rng.h"

#include <cstdlib>
#include <optional>
#include <random>

namespace tpu::tb {
namespace {
std::optional<uint64_t>& Override() {
  static std::optional<uint64_t> seed;
  return seed;
}
}  // namespace

void SetSeedOverride(uint64_t seed) {
  Override() = seed;
}

uint64_t ChooseSeed() {
  if (Override()) return *Override();
  if (const char* env = std::getenv("TPU_SEED"); env != nullptr && *env != '\0') {
    return std::strtoull(env, nullptr, 0);
  }
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32 | rd()) & 0xFFFFFFFFFFFFull;  // short to type
}

uint64_t DeriveSeed(uint64_t seed, const std::string& label) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a over the label
  for (unsigned char ch : label) h = (h ^ ch) * 0x100000001B3ull;
  Rng r(seed ^ h);
  return r.Next();
}

}  // namespace tpu::tb
