// SPDX-License-Identifier: Apache-2.0
// main() of every test binary. Flags besides GoogleTest's:
//   --seed=N            run seed (also TPU_SEED=N); each test derives its own from it and its name
//   --trace             write waves/<Suite>_<Test>.fst (models built by `make waves`)
//   --trace-from=C --trace-to=C   limit the dump to a window of cycles
//   --trace-scope=S     dump only the module subtree S, relative to the top module (e.g.
//                       u_mxu.u_array of tpu_accel); a scope that is not in the design fails the
//                       test
//   --trace-depth=D     hierarchy levels to dump: 1 = the signals of the scope (or top) itself
// Environment: TPU_TEST_SCALE=k multiplies the number of random vectors.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <xmmintrin.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "test_support.h"

namespace tpu::test {
namespace {
uint64_t g_run_seed = 0;
bool g_trace = false;
uint64_t g_trace_from = 0;
uint64_t g_trace_to = UINT64_MAX;
std::string g_trace_scope;
int g_trace_depth = tb::TraceOptions::kAllLevels;
bool g_trace_limits = false;  // a --trace-* option was given
}  // namespace

uint64_t TestSeed() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = fmt::format("{}.{}", info->test_suite_name(), info->name());
  const uint64_t seed = tb::DeriveSeed(g_run_seed, name);
  fmt::print("[   SEED   ] {} run seed {} (reproduce: --gtest_filter={} --seed={})\n", name,
             g_run_seed, name, g_run_seed);
  ::testing::Test::RecordProperty("run_seed", std::to_string(g_run_seed));
  return seed;
}

tb::TraceOptions TestTrace() {
  tb::TraceOptions t;
  if (!g_trace) return t;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string file = fmt::format("{}_{}.fst", info->test_suite_name(), info->name());
  for (char& ch : file) {
    if (ch == '/') ch = '_';  // parameterised names: Modes/MacTest.Cancellations/IEEE
  }
  t.path = fmt::format("{}/{}", TPU_WAVES_DIR, file);
  t.from_cycle = g_trace_from;
  t.to_cycle = g_trace_to;
  t.scope = g_trace_scope;
  t.depth = g_trace_depth;
  fmt::print("[  WAVES   ] {}{}{}\n", t.path,
             g_trace_scope.empty() ? std::string() : fmt::format(" (scope {})", g_trace_scope),
             g_trace_depth == tb::TraceOptions::kAllLevels
                 ? std::string()
                 : fmt::format(" (depth {})", g_trace_depth));
  return t;
}

uint64_t Scaled(uint64_t base) {
  const char* s = std::getenv("TPU_TEST_SCALE");
  const double k = (s != nullptr && *s != '\0') ? std::strtod(s, nullptr) : 1.0;
  return static_cast<uint64_t>(static_cast<double>(base) * (k > 0 ? k : 1.0));
}

}  // namespace tpu::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strncmp(a, "--seed=", 7) == 0) {
      tpu::tb::SetSeedOverride(std::strtoull(a + 7, nullptr, 0));
    } else if (std::strcmp(a, "--trace") == 0) {
      tpu::test::g_trace = true;
    } else if (std::strncmp(a, "--trace-from=", 13) == 0) {
      tpu::test::g_trace_from = std::strtoull(a + 13, nullptr, 0);
      tpu::test::g_trace_limits = true;
    } else if (std::strncmp(a, "--trace-to=", 11) == 0) {
      tpu::test::g_trace_to = std::strtoull(a + 11, nullptr, 0);
      tpu::test::g_trace_limits = true;
    } else if (std::strncmp(a, "--trace-scope=", 14) == 0) {
      tpu::test::g_trace_scope = a + 14;
      tpu::test::g_trace_limits = true;
    } else if (std::strncmp(a, "--trace-depth=", 14) == 0) {
      tpu::test::g_trace_limits = true;
      tpu::test::g_trace_depth = std::atoi(a + 14);
      if (tpu::test::g_trace_depth < 1) {
        fmt::print(stderr, "--trace-depth must be at least 1, got '{}'\n", a + 14);
        return 2;
      }
    } else {
      fmt::print(stderr, "unknown argument '{}'\n", a);
      return 2;
    }
  }
  if (tpu::test::g_trace_limits && !tpu::test::g_trace) {
    fmt::print(stderr, "--trace-from/--trace-to/--trace-scope/--trace-depth need --trace\n");
    return 2;
  }
  if (tpu::test::g_trace_from > tpu::test::g_trace_to) {
    fmt::print(stderr, "--trace-from={} is after --trace-to={}: the window is empty\n",
               tpu::test::g_trace_from, tpu::test::g_trace_to);
    return 2;
  }
  tpu::test::g_run_seed = tpu::tb::ChooseSeed();

  // The host FPU is an oracle only in the default environment: round to nearest, no FTZ/DAZ.
  const unsigned csr = _mm_getcsr();
  if ((csr & 0x8040u) != 0 || (csr & 0x6000u) != 0) {
    fmt::print(stderr,
               "MXCSR is 0x{:04X}: FTZ/DAZ or a non-default rounding mode is set; "
               "the host oracle would be wrong (was this built with -ffast-math?)\n",
               csr);
    return 1;
  }
  return RUN_ALL_TESTS();
}
