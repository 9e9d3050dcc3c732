// SPDX-License-Identifier: Apache-2.0
// The HBM subsystem (tpu_hbm_subsys, one channel = two pseudo-channels) against a shadow memory,
// with the C++ device model checking every command against the JEDEC rules: directed
// read-after-write (from the write queue and from the memory), partial writes, every SLVERR case,
// random traffic on both ports with random back-pressure, refresh under full load, and the age
// cap (an RTL assertion fails a test if a request waits past it).
// Fast tier: four builds: the 2.0 Gb/s bin with all-bank refresh, open page, address map 0; the
// checker-test timing with per-bank refresh, close page, address map 1; the 2.4 Gb/s bin with
// per-bank refresh and the adaptive page policy (these three with 8-entry queues, so they fill);
// and the RTL's defaults.
#include "Vhbm_ch1.h"
#include "Vhbm_ch1_2400.h"
#include "Vhbm_ch1_def.h"
#include "Vhbm_ch1_pb.h"
#include "hbm_suite.h"

namespace tpu {
namespace {

struct HbmCh1 {
  using Model = Vhbm_ch1;
  static constexpr const char* kName = "hbm_ch1";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Hbm2_2000(); }
  static constexpr bool kPerBank = false;
  static constexpr int kAgeCap = 256;
};
struct HbmCh1Pb {
  using Model = Vhbm_ch1_pb;
  static constexpr const char* kName = "hbm_ch1_pb";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 1}; }
  static hbm::Timing Timing() { return hbm::Timing::CheckerTest(); }
  static constexpr bool kPerBank = true;
  static constexpr int kAgeCap = 256;
};

// The 2.4 Gb/s bin with the default (adaptive) page policy and per-bank refresh.
struct HbmCh1At2400 {
  using Model = Vhbm_ch1_2400;
  static constexpr const char* kName = "hbm_ch1_2400";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Hbm2_2400(); }
  static constexpr bool kPerBank = true;
  static constexpr int kAgeCap = 256;
};

// The RTL's defaults: 16 + 16 queues, 64-slot return buffers, adaptive page, all-bank refresh,
// age cap 1024.
struct HbmCh1Defaults {
  using Model = Vhbm_ch1_def;
  static constexpr const char* kName = "hbm_ch1_def";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Hbm2_2000(); }
  static constexpr bool kPerBank = false;
  static constexpr int kAgeCap = 1024;
};

using SmallConfigs = ::testing::Types<HbmCh1, HbmCh1Pb, HbmCh1At2400, HbmCh1Defaults>;

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Small, HbmTest, SmallConfigs, HbmConfigNames);

}  // namespace tpu
