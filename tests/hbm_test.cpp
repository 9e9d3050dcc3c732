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
#include "tpu/tb/fcov.h"

namespace tpu {
namespace {

struct HbmCh1 {
  using Model = Vhbm_ch1;
  static constexpr const char* kName = "hbm_ch1";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Preset2000(); }
  static constexpr bool kPerBank = false;
  static constexpr int kAgeCap = 256;
};
struct HbmCh1Pb {
  using Model = Vhbm_ch1_pb;
  static constexpr const char* kName = "hbm_ch1_pb";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 1}; }
  static hbm::Timing Timing() { return hbm::Timing::PresetTest(); }
  static constexpr bool kPerBank = true;
  static constexpr int kAgeCap = 256;
};

// The 2.4 Gb/s bin with the default (adaptive) page policy and per-bank refresh.
struct HbmCh1At2400 {
  using Model = Vhbm_ch1_2400;
  static constexpr const char* kName = "hbm_ch1_2400";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Preset2400(); }
  static constexpr bool kPerBank = true;
  static constexpr int kAgeCap = 256;
};

// The RTL's defaults: 16 + 16 queues, 64-slot return buffers, adaptive page, all-bank refresh,
// age cap 1024.
struct HbmCh1Defaults {
  using Model = Vhbm_ch1_def;
  static constexpr const char* kName = "hbm_ch1_def";
  static tb::hbm::AddressMap Map() { return {1, 16, 5, 0}; }
  static hbm::Timing Timing() { return hbm::Timing::Preset2000(); }
  static constexpr bool kPerBank = false;
  static constexpr int kAgeCap = 1024;
};

using SmallConfigs = ::testing::Types<HbmCh1, HbmCh1Pb, HbmCh1At2400, HbmCh1Defaults>;

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Small, HbmTest, SmallConfigs, HbmConfigNames);

}  // namespace tpu

namespace tpu {
namespace {

// Functional coverage (tpu/tb/fcov.h, hbm.cmd / PREA.one_open): an all-bank refresh that finds
// exactly one bank of its pseudo-channel open closes it with PREA first. One read opens one row
// of PC 0 (open page keeps it open); then the ports stay idle past nREFI, when the controller
// refreshes both PCs (PC 1, all banks idle, with REFab alone). The read data must be the
// background pattern, every command legal, and the PREA must have found one bank open.
TEST(HbmRefreshTest, PrechargeAllWithOneBankOpen) {
  using H = tb::hbm::HbmHarness<HbmCh1::Model>;
  H::Options o;
  o.map = HbmCh1::Map();
  o.timing = HbmCh1::Timing();
  o.trace = test::TestTrace();
  o.seed = test::TestSeed();
  H h(HbmCh1::kName, o);
  const tb::fcov::Group& g = *tb::fcov::Groups().hbm_cmd;
  const uint64_t before = g.Hits(tb::fcov::kPreaOneOpen);
  std::vector<AxiTxn> done;
  h.on_done = [&](AxiTxn& t) { done.push_back(t); };
  auto t = std::make_unique<AxiTxn>();
  t->port = 0;
  t->addr = 0x12340;
  t->len = 1;
  h.Submit(std::move(t));
  h.Drain();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(h.device(0).OpenBanks(0), 1) << "open page: the row stays open after the read";
  EXPECT_EQ(h.device(0).OpenBanks(1), 0);
  while (h.cycle() < uint64_t(o.timing.refi) + 1000) h.Step();
  for (int pc = 0; pc < 2; ++pc) {
    EXPECT_EQ(h.device(0).OpenBanks(pc), 0) << "pc " << pc;
    EXPECT_GE(h.device(0).stats(pc).refab, 1u) << "pc " << pc;
  }
  EXPECT_EQ(h.device(0).stats(0).prea, 1u);
  EXPECT_EQ(h.device(0).stats(1).prea, 0u) << "PREA with every bank idle";
  EXPECT_EQ(g.Hits(tb::fcov::kPreaOneOpen) - before, 1u);
  Shadow s(o.map);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(done[0].data.at(i), s.Get(0, 0x12340 + i)) << "byte " << i;
  }
  EXPECT_EQ(h.ViolationCount(), 0u) << h.Violations();
}

}  // namespace
}  // namespace tpu
