// SPDX-License-Identifier: Apache-2.0
// The HBM subsystem's test suite (tpu_hbm_subsys against a shadow memory, with the C++ device
// model checking every command against the JEDEC rules), typed over configurations: the fast
// tier instantiates it on one-channel builds (hbm_test.cpp), the long tier on the full stack
// (hbm_long_test.cpp). A configuration provides Model, kName, Map(), Timing(), kPerBank, kAgeCap.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpu/tb/hbm_harness.h"

namespace tpu {

using tb::hbm::AxiTxn;

inline constexpr int kOkay = 0;
inline constexpr int kSlvErr = 2;

// Byte-addressed shadow of the whole (port-local) memory of every port; never-written bytes read
// as the device model's background pattern.
class Shadow {
 public:
  explicit Shadow(const tb::hbm::AddressMap& m) : map_(m) {}
  uint8_t Get(int port, uint64_t local) const {
    auto it = bytes_.find(Key(port, local));
    if (it != bytes_.end()) return it->second;
    const hbm::Command c = map_.Decode(local);
    uint8_t bg[32];
    hbm::Channel::Background(port / 2, port % 2, c.bank, c.row, c.col, bg);
    return bg[local & 31];
  }
  void Set(int port, uint64_t local, uint8_t v) { bytes_[Key(port, local)] = v; }
  const std::map<std::pair<int, uint64_t>, uint8_t>& bytes() const { return bytes_; }

 private:
  static std::pair<int, uint64_t> Key(int port, uint64_t local) { return {port, local}; }
  tb::hbm::AddressMap map_;
  std::map<std::pair<int, uint64_t>, uint8_t> bytes_;
};

template <class Cfg>
class HbmTest : public ::testing::Test {
 protected:
  using H = tb::hbm::HbmHarness<typename Cfg::Model>;

  std::unique_ptr<H> Make(int r_ready_pct = 100, int b_ready_pct = 100) {
    typename H::Options o;
    o.map = Cfg::Map();
    o.timing = Cfg::Timing();
    o.trace = test::TestTrace();
    o.r_ready_pct = r_ready_pct;
    o.b_ready_pct = b_ready_pct;
    o.seed = test::TestSeed();
    auto h = std::make_unique<H>(Cfg::kName, o);
    h->on_done = [this](AxiTxn& t) { done_.push_back(t); };
    return h;
  }

  static std::unique_ptr<AxiTxn> Read(int port, uint64_t addr, int beats, uint32_t id = 0) {
    auto t = std::make_unique<AxiTxn>();
    t->port = port;
    t->id = id;
    t->addr = addr;
    t->len = beats - 1;
    return t;
  }
  static std::unique_ptr<AxiTxn> Write(int port, uint64_t addr, const std::vector<uint8_t>& data,
                                       std::vector<uint32_t> strb = {}, uint32_t id = 0) {
    auto t = std::make_unique<AxiTxn>();
    t->write = true;
    t->port = port;
    t->id = id;
    t->addr = addr;
    t->len = static_cast<int>(data.size() / 32) - 1;
    t->data = data;
    t->strb = strb.empty() ? std::vector<uint32_t>(data.size() / 32, ~0u) : strb;
    return t;
  }
  // Applies a completed write to the shadow.
  static void Apply(Shadow& s, const AxiTxn& t) {
    for (int b = 0; b < t.beats(); ++b) {
      for (int i = 0; i < 32; ++i) {
        if ((t.strb[b] >> i) & 1) s.Set(t.port, t.addr + 32 * b + i, t.data[32 * b + i]);
      }
    }
  }
  // The first mismatching byte of a read against the shadow, or "" when it matches.
  static std::string Compare(const Shadow& s, const AxiTxn& t) {
    for (int i = 0; i < 32 * t.beats(); ++i) {
      const uint8_t want = s.Get(t.port, t.addr + i);
      if (t.data.at(i) != want) {
        return fmt::format(
            "read port {} id {} addr {:#x} len {}: byte {} (address {:#x}) is "
            "{:#04x}, expected {:#04x}",
            t.port, t.id, t.addr, t.len, i, t.addr + i, t.data[i], want);
      }
    }
    return "";
  }
  void ExpectNoViolations(const H& h) {
    EXPECT_EQ(h.ViolationCount(), 0u) << "timing violations:\n" << h.Violations();
  }
  std::vector<uint8_t> RandomData(tb::Rng& rng, int beats) {
    std::vector<uint8_t> d(32 * beats);
    for (auto& b : d) b = static_cast<uint8_t>(rng.Next());
    return d;
  }

  std::vector<AxiTxn> done_;
};

struct HbmConfigNames {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};

TYPED_TEST_SUITE_P(HbmTest);

// A write is read back on both ports; never-written memory reads as the background pattern;
// 1-beat bursts on either half of a block and long bursts over many blocks.
TYPED_TEST_P(HbmTest, ReadBackAndBackground) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = this->Make();
  Shadow s(TypeParam::Map());
  struct Case {
    uint64_t addr;
    int beats;
  };
  const Case cases[] = {{0, 2}, {0x40, 1}, {0x60, 1}, {0x1000, 16}, {0x2020, 7}, {0x7000, 128}};
  for (int port = 0; port < 2; ++port) {
    for (const Case& c : cases) {
      h->Submit(this->Read(port, c.addr + 0x100000, c.beats));  // never written
      h->Submit(this->Write(port, c.addr, this->RandomData(rng, c.beats)));
      h->Drain();
      h->Submit(this->Read(port, c.addr, c.beats));
      h->Drain();
    }
  }
  for (const AxiTxn& t : this->done_) {
    if (t.write) {
      ASSERT_EQ(t.resp.at(0), kOkay) << "write " << t.addr;
      this->Apply(s, t);
    } else {
      for (int r : t.resp) ASSERT_EQ(r, kOkay) << "read " << t.addr;
      const std::string e = this->Compare(s, t);
      EXPECT_TRUE(e.empty()) << e << " (seed " << seed << ")";
    }
  }
  this->ExpectNoViolations(*h);
}

// Read after write while the write still waits in the queue: a write covering every byte the
// read asks for answers it (no RD reaches the memory); a partial write makes the read wait for
// it to reach the memory, which then returns the merged bytes.
TYPED_TEST_P(HbmTest, ReadAfterWriteFromQueueAndMemory) {
  tb::Rng rng(test::TestSeed());
  auto h = this->Make();
  Shadow s(TypeParam::Map());
  // Full block write, then a read of it right after B (the write is still queued: the queue
  // drains only when idle or above the watermark, and the read is issued the cycle after B).
  const auto full = this->RandomData(rng, 2);
  h->Submit(this->Write(0, 0x8000, full));
  while (this->done_.empty()) h->Step();
  h->Submit(this->Read(0, 0x8000, 2));
  h->Submit(this->Read(0, 0x8020, 1));
  h->Drain();
  const uint64_t rd_before = h->device(0).stats(0).rd;
  ASSERT_EQ(this->done_.size(), 3u);
  this->Apply(s, this->done_[0]);
  EXPECT_EQ(this->Compare(s, this->done_[1]), "");
  EXPECT_EQ(this->Compare(s, this->done_[2]), "");
  // Partial: strobes on half the bytes of beat 0, none on beat 1; read both beats at once.
  const auto part = this->RandomData(rng, 2);
  h->Submit(this->Write(0, 0xA000, part, {0x0F0F0F0Fu, 0u}));
  while (this->done_.size() < 4) h->Step();
  h->Submit(this->Read(0, 0xA000, 2));
  h->Drain();
  this->Apply(s, this->done_[3]);
  EXPECT_EQ(this->Compare(s, this->done_[4]), "");
  // A burst whose strobes are all clear is not sent to the memory (the data mask covers partial
  // bursts, and a block with one empty half costs one WR, not two).
  const uint64_t wr_before = h->device(0).stats(0).wr;
  h->Submit(this->Write(0, 0xC000, this->RandomData(rng, 2), {0u, ~0u}));
  h->Quiesce();
  EXPECT_EQ(h->device(0).stats(0).wr, wr_before + 1) << "a burst with no strobe set was written";
  // The forwarded reads above sent no RD for 0x8000 (only the partial case did).
  EXPECT_GE(h->device(0).stats(0).rd, rd_before + 2) << "the partial-write read must reach memory";
  this->ExpectNoViolations(*h);
}

// Every unsupported burst gets SLVERR on every beat (reads) or in B (writes), the memory is not
// touched, and the port goes on working.
TYPED_TEST_P(HbmTest, UnsupportedBurstsGetSlverr) {
  tb::Rng rng(test::TestSeed());
  auto h = this->Make(70, 70);
  Shadow s(TypeParam::Map());
  const uint64_t cap = TypeParam::Map().port_bytes();
  struct Bad {
    const char* what;
    uint64_t addr;
    int beats, size, burst;
  };
  const Bad bad[] = {{"WRAP burst", 0x100, 4, 5, 2},
                     {"FIXED burst", 0x100, 2, 5, 0},
                     {"narrow (16-byte) beats", 0x100, 2, 4, 1},
                     {"unaligned start", 0x104, 2, 5, 1},
                     {"4 KB crossing", 0xFC0, 4, 5, 1},
                     {"4 KB crossing by one beat", 0xFE0, 2, 5, 1},
                     {"beyond the capacity", cap, 2, 5, 1},
                     {"far beyond the capacity", 0xFFFFFFC0u, 2, 5, 1}};
  int n = 0;
  for (const Bad& b : bad) {
    auto w = this->Write(1, b.addr, this->RandomData(rng, b.beats));
    w->size = b.size;
    w->burst = b.burst;
    w->tag = n;
    h->Submit(std::move(w));
    auto r = this->Read(1, b.addr, b.beats);
    r->size = b.size;
    r->burst = b.burst;
    r->tag = n++;
    h->Submit(std::move(r));
  }
  // WLAST on the wrong beat: written as counted, answered with SLVERR.
  auto wl = this->Write(1, 0x3000, this->RandomData(rng, 2));
  wl->wlast_early = true;
  wl->tag = 100;
  h->Submit(std::move(wl));
  h->Drain();
  for (const AxiTxn& t : this->done_) {
    SCOPED_TRACE(t.tag < 100 ? bad[t.tag].what : "WLAST on the wrong beat");
    if (t.write) {
      EXPECT_EQ(t.resp.at(0), kSlvErr);
    } else {
      ASSERT_EQ(static_cast<int>(t.resp.size()), t.beats());
      for (int r : t.resp) EXPECT_EQ(r, kSlvErr);
    }
  }
  // Nothing was written by the refused bursts: their (in-range) addresses read as background.
  // A burst that ends exactly at a 4 KB boundary is legal.
  this->done_.clear();
  h->Submit(this->Read(1, 0x100, 8));
  h->Submit(this->Read(1, 0xFC0, 2));
  h->Submit(this->Read(1, 0xFE0, 1));
  h->Drain();
  ASSERT_EQ(this->done_.size(), 3u);
  for (const AxiTxn& t : this->done_) {
    for (int r : t.resp) EXPECT_EQ(r, kOkay) << "read at " << t.addr;
    EXPECT_EQ(this->Compare(s, t), "");
  }
  this->ExpectNoViolations(*h);
}

// Random bursts (1-16 beats, partial strobes, several IDs) on both ports with random R and B
// back-pressure; every read is checked against the shadow memory under the ordering rule (a
// read sees every write whose B came before its AR), the memory is compared at the end, and the
// device model saw no timing violation.
TYPED_TEST_P(HbmTest, RandomTraffic) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = this->Make(rng.Range(40, 100), rng.Range(40, 100));
  Shadow s(TypeParam::Map());
  const int kBursts = static_cast<int>(test::Scaled(3000));
  // Addresses: a few rows of every bank (row hits, misses and conflicts), 64 KB windows.
  auto pick_addr = [&](int beats) {
    const hbm::Command c{hbm::Cmd::kAct, 0, rng.Range(0, 15),
                         static_cast<uint32_t>(rng.Range(0, 3)), 0};
    uint64_t a = TypeParam::Map().Encode(c.bank, c.row, rng.Range(0, 15)) + 32 * rng.Range(0, 1);
    // Keep the burst inside its 4 KB page.
    while ((a & 0xFFF) + 32ull * beats > 0x1000) a -= 32;
    return a;
  };
  // Blocks with a write in flight (a read must not overlap one: its data would be either), and
  // blocks with a read in flight (a write must not overlap one).
  std::multiset<std::pair<int, uint64_t>> w_flight, r_flight;
  auto blocks = [](const AxiTxn& t) {
    std::vector<uint64_t> v;
    for (uint64_t b = t.addr >> 6; b <= (t.addr + 32ull * t.beats() - 1) >> 6; ++b) v.push_back(b);
    return v;
  };
  int submitted = 0, checked = 0;
  std::string first_error;
  std::map<const AxiTxn*, std::vector<uint8_t>> expect;  // read data fixed at submission
  h->on_done = [&](AxiTxn& t) {
    for (uint64_t b : blocks(t)) {
      auto& set = t.write ? w_flight : r_flight;
      set.erase(set.find({t.port, b}));
    }
    for (int r : t.resp) {
      if (r != kOkay && first_error.empty()) {
        first_error = fmt::format("{} port {} addr {:#x} got SLVERR", t.write ? "write" : "read",
                                  t.port, t.addr);
      }
    }
    if (t.write) {
      this->Apply(s, t);
      return;
    }
    const std::vector<uint8_t>& want = expect.at(&t);
    for (size_t i = 0; i < t.data.size() && first_error.empty(); ++i) {
      if (t.data[i] != want[i]) {
        first_error = fmt::format(
            "read port {} id {} addr {:#x} len {}: byte {} is {:#04x}, "
            "expected {:#04x} (cycle {})",
            t.port, t.id, t.addr, t.len, i, t.data[i], want[i], h->cycle());
      }
    }
    expect.erase(&t);
    ++checked;
  };
  while (submitted < kBursts || h->outstanding() > 0) {
    if (submitted < kBursts && h->outstanding() < 24 && rng.Range(0, 2) == 0) {
      const int port = rng.Range(0, TypeParam::Map().ports() - 1);
      const int beats = rng.Range(0, 3) == 0 ? rng.Range(3, 16) : rng.Range(1, 2);
      const bool write = rng.Range(0, 2) == 0;
      const uint64_t addr = pick_addr(beats);
      std::unique_ptr<AxiTxn> t;
      if (write) {
        std::vector<uint32_t> strb(beats);
        for (auto& x : strb) {
          const int k = rng.Range(0, 9);
          x = k < 6 ? ~0u : k < 8 ? rng.U32() : k == 8 ? 0u : 0xFFFF0000u;
        }
        t = this->Write(port, addr, this->RandomData(rng, beats), strb, rng.Range(0, 3));
      } else {
        t = this->Read(port, addr, beats, rng.Range(0, 3));
      }
      bool clash = false;
      for (uint64_t b : blocks(*t)) {
        if (w_flight.count({port, b}) || (write && r_flight.count({port, b}))) clash = true;
      }
      if (!clash) {
        for (uint64_t b : blocks(*t)) (write ? w_flight : r_flight).insert({port, b});
        if (!write) {
          std::vector<uint8_t> e(32 * beats);
          for (int i = 0; i < 32 * beats; ++i) e[i] = s.Get(port, addr + i);
          expect[t.get()] = e;
        }
        h->Submit(std::move(t));
        ++submitted;
      }
    }
    h->Step();
    ASSERT_LT(h->cycle(), 2'000'000u) << "no progress: " << h->StuckReport();
  }
  EXPECT_EQ(first_error, "") << "seed " << seed;
  EXPECT_GT(checked, kBursts / 4);
  // The memory holds exactly the shadow (backdoor read of every byte ever written), once the
  // posted writes have drained.
  h->Quiesce();
  for (const auto& [key, v] : s.bytes()) {
    const auto [port, local] = key;
    const hbm::Command c = TypeParam::Map().Decode(local);
    uint8_t buf[32];
    h->device(port / 2).Peek(port % 2, c.bank, c.row, c.col, buf);
    ASSERT_EQ(buf[local & 31], v) << "memory at port " << port << " address " << local << " (seed "
                                  << seed << ")";
  }
  this->ExpectNoViolations(*h);
}

// Refresh under full load: reads saturate both pseudo-channels for 12 refresh intervals; the
// device model checks the refresh debt every cycle (within [-8, +8]), and the refresh count is
// what the mode asks for.
TYPED_TEST_P(HbmTest, RefreshUnderFullLoad) {
  auto h = this->Make();
  const hbm::Timing t = TypeParam::Timing();
  const uint64_t cycles = 12ull * t.refi;
  uint64_t next[2] = {0, 0};
  while (h->cycle() < cycles) {
    for (int port = 0; port < 2; ++port) {
      if (h->CanAcceptRead(port)) {
        h->Submit(this->Read(port, next[port] % (1u << 22), 2));
        next[port] += 64;
      }
    }
    h->Step();
  }
  h->Drain();
  // The controller refreshes when the debt reaches RefUrgent = 2 under load, so it is never
  // more than 2 behind what is due (16 REFpb per nREFI per PC, or one REFab).
  const uint64_t due = TypeParam::kPerBank ? cycles * 16 / t.refi : cycles / t.refi;
  for (int pc = 0; pc < 2; ++pc) {
    const auto& st = h->device(0).stats(pc);
    const uint64_t done = TypeParam::kPerBank ? st.refpb : st.refab;
    EXPECT_EQ(TypeParam::kPerBank ? st.refab : st.refpb, 0u) << "pc " << pc << ": the other mode";
    EXPECT_GE(done + 2, due) << "pc " << pc << ": refreshes behind";
    EXPECT_LE(done, due + 1) << "pc " << pc << ": refreshes ahead";
    // Saturated: the port moved data most of the time (at least 70% of peak).
    EXPECT_GT(h->stats(pc).read_beats * 2, cycles * 7 / 10) << "pc " << pc;
  }
  this->ExpectNoViolations(*h);
}

// Heavy back-pressure: the master takes an R beat or a B in 5% of the cycles, so the return
// buffers, the B queues and then the request queues fill; short bursts keep coming on both
// ports. Everything must still complete, in order, with the right data.
TYPED_TEST_P(HbmTest, BackPressureFillsEveryBuffer) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = this->Make(5, 5);
  Shadow s(TypeParam::Map());
  // Distinct blocks per burst, so no read overlaps a write in flight.
  for (int i = 0; i < 200; ++i) {
    const int port = i % 2;
    const uint64_t addr = 0x20000 + 64 * static_cast<uint64_t>(i);
    h->Submit(this->Write(port, addr, this->RandomData(rng, 2), {}, rng.Range(0, 3)));
    h->Submit(this->Read(port, addr + 0x100000, rng.Range(1, 2), rng.Range(0, 3)));
  }
  h->Drain(400'000);
  ASSERT_EQ(this->done_.size(), 400u);
  // The reads of this phase are of never-written blocks, so the order does not matter here.
  for (const AxiTxn& t : this->done_) {
    for (int r : t.resp) ASSERT_EQ(r, kOkay);
    if (t.write) {
      this->Apply(s, t);
    } else {
      EXPECT_EQ(this->Compare(s, t), "") << "seed " << seed;
    }
  }
  this->done_.clear();
  for (int i = 0; i < 200; ++i) {
    h->Submit(this->Read(i % 2, 0x20000 + 64 * static_cast<uint64_t>(i), 2));
  }
  h->Drain(400'000);
  // Now the reads see the writes.
  ASSERT_EQ(this->done_.size(), 200u);
  for (const AxiTxn& t : this->done_) EXPECT_EQ(this->Compare(s, t), "") << "seed " << seed;
  this->ExpectNoViolations(*h);
}

// The age cap: a stream of writes that hit one open row of a bank, and one write to another row
// of that bank. FR-FCFS alone would serve the hits for as long as they come (a precharge waits
// while hits are queued); the cap must get the lone write to memory soon after it reaches the
// cap (the RTL also asserts that no request waits long past the cap).
TYPED_TEST_P(HbmTest, AgeCapStopsStarvation) {
  auto h = this->Make();
  const auto m = TypeParam::Map();
  tb::Rng rng(test::TestSeed());
  int blk = 0;
  for (int i = 0; i < 8; ++i)
    h->Submit(this->Write(0, m.Encode(5, 3, blk++ % 16), this->RandomData(rng, 2)));
  const auto victim = this->RandomData(rng, 2);
  h->Submit(this->Write(0, m.Encode(5, 7, 0), victim));
  uint64_t submitted_at = h->cycle(), landed_at = 0;
  const hbm::Command loc = m.Decode(m.Encode(5, 7, 0));
  while (h->cycle() < 6000) {
    if (h->CanAcceptWrite(0)) {
      h->Submit(this->Write(0, m.Encode(5, 3, blk++ % 16), this->RandomData(rng, 2)));
    }
    h->Step();
    uint8_t buf[32];
    h->device(0).Peek(0, loc.bank, loc.row, loc.col, buf);
    if (landed_at == 0 && std::memcmp(buf, victim.data(), 32) == 0) landed_at = h->cycle();
  }
  h->Drain();
  ASSERT_NE(landed_at, 0u) << "the lone row miss never reached memory while the hits came";
  EXPECT_LT(landed_at - submitted_at, static_cast<uint64_t>(TypeParam::kAgeCap) + 600)
      << "the lone row miss waited far past the age cap";
  EXPECT_GT(blk, 200) << "the hit stream was not sustained";
  this->ExpectNoViolations(*h);
}

// The scheduler holds no row open for the inactive queue. A read opens row 3 of bank 5 on port 0,
// a write to that row waits in the write queue (one write: no watermark reached, reads queued, so
// the controller stays in read mode) and a read to row 7 of bank 5 follows. Only the active
// queue's hits may keep a row open: the second read's PRE, ACT and RD come as the timing rules
// allow, within max(tRC, tRAS + tRP) + tRCDRD + CL + 2 BL (and 24 cycles of pipeline) of its
// acceptance. A scheduler that counted the waiting write's hit would hold row 3 until the read's
// age reached the cap (kAgeCap, more than the bound). The write must still be queued when the
// read is done.
TYPED_TEST_P(HbmTest, InactiveQueueHoldsNoRow) {
  auto h = this->Make();
  const auto m = TypeParam::Map();
  const hbm::Timing t = TypeParam::Timing();
  tb::Rng rng(test::TestSeed());
  auto r1 = this->Read(0, m.Encode(5, 3, 0), 2);
  r1->tag = 1;
  auto r2 = this->Read(0, m.Encode(5, 7, 0), 2);
  r2->tag = 2;
  h->Submit(std::move(r1));
  h->Submit(this->Write(0, m.Encode(5, 3, 2), this->RandomData(rng, 2)));
  h->Submit(std::move(r2));
  uint64_t writes_when_done = ~uint64_t{0};
  while (h->outstanding() > 0 && h->cycle() < 20'000) {
    h->Step();
    for (const AxiTxn& d : this->done_)
      if (d.tag == 2 && writes_when_done == ~uint64_t{0})
        writes_when_done = h->device(0).stats(0).wr;
  }
  h->Drain();
  const AxiTxn* second = nullptr;
  for (const AxiTxn& d : this->done_)
    if (d.tag == 2) second = &d;
  ASSERT_NE(second, nullptr);
  const uint64_t latency = second->done_cycle - second->accept_cycle;
  const uint64_t bound = uint64_t(std::max(t.rc, t.ras + t.rp) + t.rcdrd + t.cl + 2 * t.bl) + 24;
  ASSERT_LT(bound, uint64_t(TypeParam::kAgeCap)) << "the bound must tell the two apart";
  EXPECT_LE(latency, bound) << "the read to another row of the bank waited for the write queue's "
                               "hit (the inactive queue) to keep the row open";
  EXPECT_EQ(writes_when_done, 0u) << "the write left the queue before the read: no test";
  fmt::print(
      "[ SCHEDULE ] {}: the read behind the inactive queue's hit took {} cycles (bound {})\n",
      TypeParam::kName, latency, bound);
  this->ExpectNoViolations(*h);
}

// A slow pseudo-channel does not stop the other one of its channel (they share the command
// buses). Port 1 reads 4 KB in 2-beat bursts, sequentially (row hits after the first pass over
// the banks); once alone, once while port 0 reads 2-beat bursts each from another row, the banks
// in turn (a row miss each: PRE and ACT on the shared row bus, slow). Port 1's stream must take at
// most 10% (+ 16 cycles) longer beside the slow port than alone.
TYPED_TEST_P(HbmTest, SlowPortDoesNotStopTheOther) {
  const auto m = TypeParam::Map();
  auto stream = [&](bool beside_slow) {
    auto h = this->Make();
    this->done_.clear();
    if (beside_slow) {
      for (int i = 0; i < 160; ++i) {
        auto r = this->Read(0, m.Encode(i % 16, uint32_t(100 + i), i % 4), 2);
        r->tag = 0;
        h->Submit(std::move(r));
      }
    }
    const uint64_t start = h->cycle();
    for (int i = 0; i < 64; ++i) {
      auto r = this->Read(1, uint64_t(i) * 64, 2);
      r->tag = 1;
      h->Submit(std::move(r));
    }
    uint64_t end = 0;
    int fast_done = 0;
    while (fast_done < 64 && h->cycle() < 100'000) {
      h->Step();
      fast_done = 0;
      for (const AxiTxn& d : this->done_) {
        if (d.tag == 1) {
          ++fast_done;
          end = std::max(end, d.done_cycle);
        }
      }
    }
    const int slow_done = int(std::count_if(this->done_.begin(), this->done_.end(),
                                            [](const AxiTxn& d) { return d.tag == 0; }));
    h->Drain();
    this->ExpectNoViolations(*h);
    EXPECT_EQ(fast_done, 64);
    if (beside_slow) EXPECT_LT(slow_done, 160) << "the slow port ran out before the stream ended";
    return end - start;
  };
  const uint64_t alone = stream(false), beside = stream(true);
  fmt::print(
      "[ PORTS    ] {}: port 1's 4 KB stream took {} cycles alone, {} beside port 0's "
      "row misses\n",
      TypeParam::kName, alone, beside);
  EXPECT_LE(beside, alone + alone / 10 + 16) << "the slow port held the other one back";
}

REGISTER_TYPED_TEST_SUITE_P(HbmTest, ReadBackAndBackground, ReadAfterWriteFromQueueAndMemory,
                            UnsupportedBurstsGetSlverr, RandomTraffic, RefreshUnderFullLoad,
                            BackPressureFillsEveryBuffer, AgeCapStopsStarvation,
                            InactiveQueueHoldsNoRow, SlowPortDoesNotStopTheOther);

}  // namespace tpu
