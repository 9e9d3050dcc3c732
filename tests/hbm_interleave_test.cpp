// SPDX-License-Identifier: Apache-2.0
// The single-port HBM subsystem (tpu_hbm_single: tpu_hbm_interleave in front of a one-channel
// tpu_hbm_subsys, shallow queues) through its one AXI4 port with global addresses, against a
// shadow memory, with the C++ device model checking every command against the JEDEC rules:
// read-back of random bursts (1-32 beats, partial strobes, several IDs) spread over both
// pseudo-channels, read after write, every SLVERR case, random concurrent traffic with random
// back-pressure and valid gaps, and the bandwidth of a sequential read stream. The master checks
// that every R beat and every B belongs to the oldest outstanding burst (the interleaver answers
// in order), that RLAST closes each burst and that no B comes before the burst's last W beat.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "Vhbm_single.h"
#include "test_support.h"
#include "tpu/tb/fcov.h"
#include "tpu/tb/hbm_harness.h"

namespace tpu {
namespace {

using tb::GetBits;
using tb::hbm::AddressMap;
using tb::hbm::AxiTxn;

constexpr int kOkay = 0;
constexpr int kSlvErr = 2;

// The configuration of the vl_hbm_single build (rtl/builds.json): one channel, Preset 0.
AddressMap Map() {
  return {1, 16, 5, 0};
}

// A single-port AXI4 master on tpu_hbm_single and the device models on its memory side. Bursts
// are driven in submission order (AR, and AW with its W beats, independently); valid may wait
// (random gaps) but, once up, holds until taken. `AxiTxn::addr` is the global byte address.
class SingleHarness {
 public:
  using V = Vhbm_single;
  struct Options {
    AddressMap map = Map();
    hbm::Timing timing = hbm::Timing::Preset2000();
    uint64_t max_cycles = 10'000'000;
    tb::TraceOptions trace;
    int r_ready_pct = 100;  // chance per cycle that the master takes an R beat (B: likewise)
    int b_ready_pct = 100;
    int valid_pct = 100;  // chance per cycle that a waiting AR, AW or W beat is offered
    uint64_t seed = 1;
  };

  SingleHarness(std::string name, const Options& o)
      : o_(o), sim_(std::move(name), o.max_cycles, o.trace), rng_(o.seed), mem_(o.map, o.timing) {
    auto& d = sim_.dut();
    d.aw_valid_i = 0;
    d.w_valid_i = 0;
    d.ar_valid_i = 0;
    d.r_ready_i = 0;
    d.b_ready_i = 0;
    d.rdata_valid_i = 0;
    sim_.Reset();
  }

  hbm::Channel& device(int c) { return mem_.device(c); }
  uint64_t cycle() const { return t_; }
  uint64_t outstanding() const { return outstanding_; }
  uint64_t r_beats() const { return r_beats_; }
  uint64_t first_r_cycle() const { return first_r_; }
  uint64_t last_r_cycle() const { return last_r_; }
  std::string Violations() const { return mem_.Violations(); }
  size_t ViolationCount() const { return mem_.ViolationCount(); }

  // Called when a burst completes (last R beat, or B), with the transaction filled in.
  std::function<void(AxiTxn&)> on_done;

  void Submit(std::unique_ptr<AxiTxn> t) {
    ++outstanding_;
    if (t->write) {
      if (t->strb.empty()) t->strb.assign(t->beats(), ~0u);
      for (int b = 0; b < t->beats(); ++b) w_.push_back({t.get(), b});
      aw_.push_back(std::move(t));
    } else {
      ar_.push_back(std::move(t));
    }
  }
  // Reads (writes) offered but not yet accepted.
  size_t waiting_reads() const { return ar_.size(); }
  size_t waiting_writes() const { return aw_.size(); }

  // One clock cycle. The inputs are settled (Eval) before the rising edge: the interleaver's
  // ready and valid outputs towards the subsystem depend combinationally on this port's inputs
  // (R and B ready, W valid), and Verilator 5.006 samples the values its assertions see at the
  // edge before propagating input changes made just before it.
  void Step() {
    sim_.FallingEdge();
    mem_.Step(sim_.dut(), t_);
    Master();
    sim_.Eval();
    sim_.RisingEdge();
    ++t_;
  }
  // Steps until every submitted burst completed; throws (naming what is stuck) after `budget`
  // cycles without a completion.
  void Drain(uint64_t budget = 100'000) {
    uint64_t last = t_, done = completed_;
    while (outstanding_ > 0) {
      Step();
      if (completed_ != done) {
        done = completed_;
        last = t_;
      } else if (t_ - last > budget) {
        throw tb::WatchdogError(fmt::format("{}: no burst completed for {} cycles; {}", sim_.name(),
                                            budget, StuckReport()));
      }
    }
  }
  // Drain, then step until the controllers' queues are empty and the posted writes are in memory.
  void Quiesce(uint64_t budget = 200'000) {
    Drain();
    const uint64_t start = t_;
    auto busy = [&] {
      const auto& d = sim_.dut();
      for (int p = 0; p < o_.map.ports(); ++p) {
        if (GetBits(d.rq_count_o, p * 8, 8) || GetBits(d.wq_count_o, p * 8, 8)) return true;
      }
      return false;
    };
    while (busy()) {
      Step();
      if (t_ - start > budget) {
        throw tb::WatchdogError(
            fmt::format("{}: queues not empty after {} cycles", sim_.name(), budget));
      }
    }
    for (int i = 0; i < 64; ++i) Step();
  }
  std::string StuckReport() const {
    auto name = [](const AxiTxn& t) {
      return fmt::format("{} id {} addr {:#x} len {} (accepted at cycle {})",
                         t.write ? "write" : "read", t.id, t.addr, t.len, t.accept_cycle);
    };
    std::string s;
    if (!ar_.empty()) s += fmt::format("AR waits: {}; ", name(*ar_.front()));
    if (!aw_.empty()) s += fmt::format("AW waits: {}; ", name(*aw_.front()));
    if (!w_.empty())
      s += fmt::format("W beat {} of {} waits; ", w_.front().beat, name(*w_.front().t));
    if (!r_pend_.empty()) s += fmt::format("R of {} outstanding; ", name(*r_pend_.front()));
    if (!b_pend_.empty()) s += fmt::format("B of {} outstanding; ", name(*b_pend_.front()));
    return s.empty() ? "nothing outstanding" : s;
  }

 private:
  struct WBeat {
    AxiTxn* t;
    int beat;
  };

  bool Chance(int pct) { return pct >= 100 || rng_.Range(0, 99) < pct; }

  void Master() {
    auto& d = sim_.dut();
    // Answers first: they belong to bursts accepted in earlier cycles.
    const bool r_ready = Chance(o_.r_ready_pct);
    d.r_ready_i = r_ready;
    tb::fcov::Handshake(cov_, tb::fcov::kAxiR, d.r_valid_o, r_ready);
    if (r_ready && d.r_valid_o) TakeR();
    const bool b_ready = Chance(o_.b_ready_pct);
    d.b_ready_i = b_ready;
    tb::fcov::Handshake(cov_, tb::fcov::kAxiB, d.b_valid_o, b_ready);
    if (b_ready && d.b_valid_o) TakeB();
    // AR.
    if (!ar_on_) ar_on_ = !ar_.empty() && Chance(o_.valid_pct);
    d.ar_valid_i = ar_on_;
    if (ar_on_) {
      AxiTxn* t = ar_.front().get();
      d.ar_id_i = t->id;
      d.ar_addr_i = t->addr;
      d.ar_len_i = t->len;
      d.ar_size_i = t->size;
      d.ar_burst_i = t->burst;
      tb::fcov::Handshake(cov_, tb::fcov::kAxiAr, true, d.ar_ready_o);
      if (d.ar_ready_o) {
        t->accept_cycle = t_;
        r_pend_.push_back(std::move(ar_.front()));
        ar_.pop_front();
        ar_on_ = false;
      }
    }
    // AW.
    if (!aw_on_) aw_on_ = !aw_.empty() && Chance(o_.valid_pct);
    d.aw_valid_i = aw_on_;
    if (aw_on_) {
      AxiTxn* t = aw_.front().get();
      d.aw_id_i = t->id;
      d.aw_addr_i = t->addr;
      d.aw_len_i = t->len;
      d.aw_size_i = t->size;
      d.aw_burst_i = t->burst;
      tb::fcov::Handshake(cov_, tb::fcov::kAxiAw, true, d.aw_ready_o);
      if (d.aw_ready_o) {
        t->accept_cycle = t_;
        b_pend_.push_back(std::move(aw_.front()));
        aw_.pop_front();
        aw_on_ = false;
      }
    }
    // W: beats of the bursts in AW order (they may run ahead of their AW).
    if (!w_on_) w_on_ = !w_.empty() && Chance(o_.valid_pct);
    d.w_valid_i = w_on_;
    if (w_on_) {
      const WBeat wb = w_.front();
      tb::SetBeat32(d.w_data_i, 0, wb.t->data.data() + 32 * wb.beat);
      d.w_strb_i = wb.t->strb[wb.beat];
      d.w_last_i = wb.t->wlast_early ? wb.beat == 0 : wb.beat == wb.t->len;
      tb::fcov::Handshake(cov_, tb::fcov::kAxiW, true, d.w_ready_o);
      if (d.w_ready_o) {
        w_.pop_front();
        w_on_ = false;
      }
    }
  }

  void TakeR() {
    auto& d = sim_.dut();
    const uint32_t id = d.r_id_o;
    if (r_pend_.empty()) {
      throw std::runtime_error(fmt::format(
          "{}: cycle {}: R beat (id {}) but no read is outstanding", sim_.name(), t_, id));
    }
    AxiTxn* t = r_pend_.front().get();
    if (id != t->id) {
      throw std::runtime_error(fmt::format(
          "{}: cycle {}: R beat with id {}, but the oldest read (addr {:#x}, len {}) has id {}",
          sim_.name(), t_, id, t->addr, t->len, t->id));
    }
    if (t->data.size() < static_cast<size_t>(32 * t->beats())) t->data.assign(32 * t->beats(), 0);
    tb::GetBeat32(d.r_data_o, 0, t->data.data() + 32 * r_beat_);
    t->resp.push_back(d.r_resp_o);
    const bool last = d.r_last_o;
    if (r_beats_++ == 0) first_r_ = t_;
    last_r_ = t_;
    if (last != (r_beat_ == t->len)) {
      throw std::runtime_error(
          fmt::format("{}: cycle {}: RLAST {} on beat {} of a {}-beat read (id {}, addr {:#x})",
                      sim_.name(), t_, last, r_beat_, t->beats(), id, t->addr));
    }
    if (!last) {
      ++r_beat_;
      return;
    }
    r_beat_ = 0;
    t->done_cycle = t_;
    std::unique_ptr<AxiTxn> own = std::move(r_pend_.front());
    r_pend_.pop_front();
    Complete(*own);
  }

  void TakeB() {
    auto& d = sim_.dut();
    const uint32_t id = d.b_id_o;
    if (b_pend_.empty()) {
      throw std::runtime_error(
          fmt::format("{}: cycle {}: B (id {}) but no write is outstanding", sim_.name(), t_, id));
    }
    AxiTxn* t = b_pend_.front().get();
    if (id != t->id) {
      throw std::runtime_error(fmt::format(
          "{}: cycle {}: B with id {}, but the oldest write (addr {:#x}, len {}) has id {}",
          sim_.name(), t_, id, t->addr, t->len, t->id));
    }
    for (const WBeat& wb : w_) {
      if (wb.t == t) {
        throw std::runtime_error(
            fmt::format("{}: cycle {}: B of the write at {:#x} before its last W beat", sim_.name(),
                        t_, t->addr));
      }
    }
    std::unique_ptr<AxiTxn> own = std::move(b_pend_.front());
    b_pend_.pop_front();
    own->resp.push_back(d.b_resp_o);
    own->done_cycle = t_;
    Complete(*own);
  }

  void Complete(AxiTxn& t) {
    --outstanding_;
    ++completed_;
    if (on_done) on_done(t);
  }

  Options o_;
  const tb::fcov::Group& cov_ =
      tb::fcov::AxiPort("hbm_single.axi", "AXI4 channels of tpu_hbm_single's port");
  tb::SimCtrl<V> sim_;
  tb::Rng rng_;
  tb::hbm::HbmMemory mem_;
  std::deque<std::unique_ptr<AxiTxn>> ar_, aw_, r_pend_, b_pend_;
  std::deque<WBeat> w_;
  bool ar_on_ = false, aw_on_ = false, w_on_ = false;  // valid is up and must hold
  int r_beat_ = 0;
  uint64_t t_ = 0, outstanding_ = 0, completed_ = 0;
  uint64_t r_beats_ = 0, first_r_ = 0, last_r_ = 0;
};

// Byte-addressed shadow of the global memory; never-written bytes read as the device model's
// background pattern at the port and port-local address the global address maps to.
class Shadow {
 public:
  explicit Shadow(const AddressMap& m) : map_(m) {}
  uint8_t Get(uint64_t global) const {
    auto it = bytes_.find(global);
    if (it != bytes_.end()) return it->second;
    const int port = map_.Port(global);
    const uint64_t local = map_.Local(global);
    const hbm::Command c = map_.Decode(local);
    uint8_t bg[32];
    hbm::Channel::Background(port / 2, port % 2, c.bank, c.row, c.col, bg);
    return bg[local & 31];
  }
  void Set(uint64_t global, uint8_t v) { bytes_[global] = v; }
  void Apply(const AxiTxn& t) {
    for (int b = 0; b < t.beats(); ++b) {
      for (int i = 0; i < 32; ++i) {
        if ((t.strb[b] >> i) & 1) Set(t.addr + 32 * b + i, t.data[32 * b + i]);
      }
    }
  }
  std::vector<uint8_t> Expect(uint64_t addr, int beats) const {
    std::vector<uint8_t> e(32 * beats);
    for (int i = 0; i < 32 * beats; ++i) e[i] = Get(addr + i);
    return e;
  }
  const std::map<uint64_t, uint8_t>& bytes() const { return bytes_; }

 private:
  AddressMap map_;
  std::map<uint64_t, uint8_t> bytes_;
};

class HbmInterleaveTest : public ::testing::Test {
 protected:
  std::unique_ptr<SingleHarness> Make(uint64_t seed, int r_ready_pct = 100, int b_ready_pct = 100,
                                      int valid_pct = 100) {
    SingleHarness::Options o;
    o.trace = test::TestTrace();
    o.r_ready_pct = r_ready_pct;
    o.b_ready_pct = b_ready_pct;
    o.valid_pct = valid_pct;
    o.seed = seed;
    auto h = std::make_unique<SingleHarness>("hbm_single", o);
    h->on_done = [this](AxiTxn& t) { done_.push_back(t); };
    return h;
  }
  static std::unique_ptr<AxiTxn> Read(uint64_t addr, int beats, uint32_t id = 0) {
    auto t = std::make_unique<AxiTxn>();
    t->id = id;
    t->addr = addr;
    t->len = beats - 1;
    return t;
  }
  static std::unique_ptr<AxiTxn> Write(uint64_t addr, const std::vector<uint8_t>& data,
                                       std::vector<uint32_t> strb = {}, uint32_t id = 0) {
    auto t = std::make_unique<AxiTxn>();
    t->write = true;
    t->id = id;
    t->addr = addr;
    t->len = static_cast<int>(data.size() / 32) - 1;
    t->data = data;
    t->strb = strb.empty() ? std::vector<uint32_t>(data.size() / 32, ~0u) : std::move(strb);
    return t;
  }
  static std::vector<uint8_t> RandomData(tb::Rng& rng, int beats) {
    std::vector<uint8_t> d(32 * beats);
    for (auto& b : d) b = static_cast<uint8_t>(rng.Next());
    return d;
  }
  // Strobes: mostly full, some random, some empty, some half.
  static std::vector<uint32_t> RandomStrobes(tb::Rng& rng, int beats) {
    std::vector<uint32_t> s(beats);
    for (auto& x : s) {
      const int k = rng.Range(0, 9);
      x = k < 6 ? ~0u : k < 8 ? rng.U32() : k == 8 ? 0u : 0xFFFF0000u;
    }
    return s;
  }
  // A random 32-byte aligned burst start anywhere below `limit` whose burst stays in its 4 KB page.
  static uint64_t RandomAddr(tb::Rng& rng, uint64_t limit, int beats) {
    uint64_t a = (rng.Next() % limit) & ~uint64_t{31};
    while ((a & 0xFFF) + 32ull * beats > 0x1000) a -= 32;
    return a;
  }
  // The first mismatching byte of a completed read against `want`, or "".
  static std::string Compare(const AxiTxn& t, const std::vector<uint8_t>& want) {
    for (size_t i = 0; i < want.size(); ++i) {
      if (t.data.at(i) != want[i]) {
        return fmt::format(
            "read id {} addr {:#x} len {}: byte {} (address {:#x}, port {}) is {:#04x}, expected "
            "{:#04x}",
            t.id, t.addr, t.len, i, t.addr + i, Map().Port(t.addr + i), t.data[i], want[i]);
      }
    }
    return "";
  }
  static void ExpectNoViolations(const SingleHarness& h) {
    EXPECT_EQ(h.ViolationCount(), 0u) << "timing violations:\n" << h.Violations();
  }
  // The memory holds exactly the shadow (backdoor read of every byte ever written).
  static void ExpectMemory(SingleHarness& h, const Shadow& s, uint64_t seed) {
    h.Quiesce();
    const AddressMap m = Map();
    for (const auto& [global, v] : s.bytes()) {
      const int port = m.Port(global);
      const uint64_t local = m.Local(global);
      const hbm::Command c = m.Decode(local);
      uint8_t buf[32];
      h.device(port / 2).Peek(port % 2, c.bank, c.row, c.col, buf);
      ASSERT_EQ(buf[local & 31], v) << "memory at global address " << global << " (port " << port
                                    << ", local " << local << "), seed " << seed;
    }
  }

  std::vector<AxiTxn> done_;
};

// Random bursts of 1-32 beats at random global addresses (over the whole 2 GB, and packed into
// 64 KB so that bursts share blocks), with partial strobes and several IDs, are written and read
// back under random back-pressure and valid gaps; never-written memory reads as the background.
TEST_F(HbmInterleaveTest, ReadBackRandomBursts) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = Make(seed, 60, 60, 70);
  Shadow s(Map());
  const int kBursts = static_cast<int>(test::Scaled(150));
  struct Burst {
    uint64_t addr;
    int beats;
  };
  std::vector<Burst> bursts;
  for (int i = 0; i < kBursts; ++i) {
    const int beats = rng.Range(1, 32);
    const uint64_t limit = rng.Bit() ? Map().total_bytes() : 0x10000;
    bursts.push_back({RandomAddr(rng, limit, beats), beats});
  }
  // Writes (overlaps between them land in AW order, as B does), then every burst read back, and
  // as many reads of memory nothing wrote.
  for (const Burst& b : bursts) {
    h->Submit(Write(b.addr, RandomData(rng, b.beats), RandomStrobes(rng, b.beats),
                    static_cast<uint32_t>(rng.Range(0, 7))));
  }
  h->Drain();
  for (const AxiTxn& t : done_) {
    ASSERT_EQ(t.resp.at(0), kOkay) << "write addr " << t.addr << " len " << t.len;
    s.Apply(t);
  }
  done_.clear();
  std::map<uint64_t, std::vector<uint8_t>> expect;  // by tag
  uint64_t tag = 0;
  for (const Burst& b : bursts) {
    for (int pass = 0; pass < 2; ++pass) {
      // Pass 1: the same size anywhere (almost surely memory nothing wrote).
      const uint64_t addr = pass == 0 ? b.addr : RandomAddr(rng, Map().total_bytes(), b.beats);
      auto r = Read(addr, b.beats, static_cast<uint32_t>(rng.Range(0, 7)));
      r->tag = tag;
      expect[tag++] = s.Expect(addr, b.beats);
      h->Submit(std::move(r));
    }
  }
  h->Drain();
  ASSERT_EQ(done_.size(), expect.size());
  for (const AxiTxn& t : done_) {
    for (int r : t.resp) ASSERT_EQ(r, kOkay) << "read addr " << t.addr << " len " << t.len;
    const std::string e = Compare(t, expect.at(t.tag));
    ASSERT_TRUE(e.empty()) << e << " (seed " << seed << ")";
  }
  ExpectMemory(*h, s, seed);
  ExpectNoViolations(*h);
}

// Directed shapes: every start parity and length around the 64-byte pieces, bursts ending at a
// 4 KB boundary, partial strobes merged with earlier data, the highest block of each port.
TEST_F(HbmInterleaveTest, PieceShapesAndPartialStrobes) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = Make(seed);
  Shadow s(Map());
  const uint64_t top = Map().total_bytes();
  struct Case {
    uint64_t addr;
    int beats;
  };
  const Case cases[] = {{0x0, 1},    {0x20, 1},   {0x20, 2},       {0x20, 3},      {0x40, 2},
                        {0x60, 4},   {0x80, 5},   {0x1000, 32},    {0x1020, 31},   {0x1FE0, 1},
                        {0x1F00, 8}, {0x3F20, 7}, {top - 0x80, 4}, {top - 0x20, 1}};
  for (const Case& c : cases) {
    // Full write, then a partial one over it, then the read of both.
    h->Submit(Write(c.addr, RandomData(rng, c.beats)));
    h->Submit(Write(c.addr, RandomData(rng, c.beats), RandomStrobes(rng, c.beats), 3));
    h->Drain();
    for (const AxiTxn& t : done_) {
      ASSERT_EQ(t.resp.at(0), kOkay) << "write " << t.addr;
      s.Apply(t);
    }
    done_.clear();
    const auto want = s.Expect(c.addr, c.beats);
    h->Submit(Read(c.addr, c.beats, 5));
    h->Drain();
    ASSERT_EQ(done_.size(), 1u);
    for (int r : done_[0].resp) ASSERT_EQ(r, kOkay);
    EXPECT_EQ(Compare(done_[0], want), "") << "seed " << seed;
    done_.clear();
  }
  ExpectMemory(*h, s, seed);
  ExpectNoViolations(*h);
}

// A read accepted right after a write's B sees the write, on every port the write touched
// (the write is still in the controllers' queues then).
TEST_F(HbmInterleaveTest, ReadAfterWrite) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = Make(seed);
  Shadow s(Map());
  for (int i = 0; i < 40; ++i) {
    const int beats = rng.Range(1, 32);
    const uint64_t addr = RandomAddr(rng, 0x40000, beats);
    h->Submit(Write(addr, RandomData(rng, beats), RandomStrobes(rng, beats), 1));
    while (done_.empty()) h->Step();
    ASSERT_EQ(done_[0].resp.at(0), kOkay);
    s.Apply(done_[0]);
    done_.clear();
    const auto want = s.Expect(addr, beats);
    h->Submit(Read(addr, beats, 2));  // offered in the cycle after B
    h->Drain();
    ASSERT_EQ(done_.size(), 1u);
    EXPECT_EQ(Compare(done_[0], want), "") << "seed " << seed;
    done_.clear();
  }
  ExpectNoViolations(*h);
}

// Every burst a port would refuse gets SLVERR (every R beat; B for writes) without reaching a
// port, in order with good bursts around it; a write whose WLAST comes early is written as
// counted and answered SLVERR; the memory under the refused bursts is untouched.
TEST_F(HbmInterleaveTest, UnsupportedBurstsGetSlverr) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = Make(seed, 70, 70, 80);
  Shadow s(Map());
  const uint64_t cap = Map().total_bytes();
  struct Bad {
    const char* what;
    uint64_t addr;
    int beats, size, burst;
  };
  const Bad bad[] = {
      {"WRAP burst", 0x100, 4, 5, 2},
      {"FIXED burst", 0x100, 2, 5, 0},
      {"narrow (16-byte) beats", 0x100, 2, 4, 1},
      {"unaligned start", 0x104, 2, 5, 1},
      {"4 KB crossing", 0xFC0, 4, 5, 1},
      {"beyond the capacity", cap, 2, 5, 1},
      {"far beyond the capacity", (uint64_t{1} << 40) - 0x40, 2, 5, 1},
      {"beyond the capacity (local address 0 if cut to 32 bits)", uint64_t{1} << 39, 2, 5, 1},
      {"long WRAP burst", 0x2000, 256, 5, 2}};
  constexpr uint64_t kGood = 1000;
  int n = 0;
  for (const Bad& b : bad) {
    auto w = Write(b.addr, RandomData(rng, b.beats), {}, 9);
    w->size = b.size;
    w->burst = b.burst;
    w->tag = n;
    h->Submit(std::move(w));
    auto r = Read(b.addr, b.beats, 9);
    r->size = b.size;
    r->burst = b.burst;
    r->tag = n++;
    h->Submit(std::move(r));
    // A good burst after each: answered OKAY, in order.
    auto gw = Write(0x8000 + 0x400 * n, RandomData(rng, 3), {}, 4);
    gw->tag = kGood;
    h->Submit(std::move(gw));
    auto gr = Read(0x8000 + 0x400 * n, 3, 4);
    gr->tag = kGood;
    h->Submit(std::move(gr));
  }
  auto wl = Write(0x3000, RandomData(rng, 4));
  wl->wlast_early = true;
  wl->tag = 100;
  h->Submit(std::move(wl));
  h->Drain();
  for (const AxiTxn& t : done_) {
    SCOPED_TRACE(t.tag == kGood ? "good burst" : t.tag < 100 ? bad[t.tag].what : "early WLAST");
    const int want = t.tag == kGood ? kOkay : kSlvErr;
    if (t.write) {
      EXPECT_EQ(t.resp.at(0), want);
      if (t.tag == 100) s.Apply(t);  // written as counted
    } else {
      ASSERT_EQ(static_cast<int>(t.resp.size()), t.beats());
      for (int r : t.resp) EXPECT_EQ(r, want);
      if (t.tag != kGood) {
        for (uint8_t b : t.data) ASSERT_EQ(b, 0) << "refused reads return zero data";
      }
    }
  }
  // Nothing was written by the refused bursts: their in-range addresses (and address 0, which an
  // address cut to the port's width would hit) read as background; the early-WLAST write is all
  // there.
  done_.clear();
  const std::vector<std::pair<uint64_t, int>> checks = {
      {0x0, 2}, {0x100, 8}, {0xFC0, 2}, {0x2000, 32}, {0x3000, 4}};
  std::vector<std::vector<uint8_t>> want;
  for (const auto& [a, beats] : checks) {
    want.push_back(s.Expect(a, beats));
    h->Submit(Read(a, beats));
  }
  h->Drain();
  ASSERT_EQ(done_.size(), checks.size());
  for (size_t i = 0; i < checks.size(); ++i) EXPECT_EQ(Compare(done_[i], want[i]), "");
  ExpectNoViolations(*h);
}

// Random concurrent traffic: bursts of 1-32 beats, partial strobes, IDs 0-3, reads and writes
// interleaved with up to 24 in flight, random R/B back-pressure and valid gaps. Every read is
// checked against the shadow under the ordering rule (a read sees every write whose B came before
// it was submitted; no read overlaps a write in flight, no write a read in flight); at the end the
// memory holds the shadow and the device model saw no timing violation.
TEST_F(HbmInterleaveTest, RandomTraffic) {
  const uint64_t seed = test::TestSeed();
  tb::Rng rng(seed);
  auto h = Make(seed, rng.Range(40, 100), rng.Range(40, 100), rng.Range(50, 100));
  Shadow s(Map());
  const int kBursts = static_cast<int>(test::Scaled(1200));
  std::multiset<uint64_t> w_flight, r_flight;  // 64-byte blocks (global) with bursts in flight
  auto blocks = [](const AxiTxn& t) {
    std::vector<uint64_t> v;
    for (uint64_t b = t.addr >> 6; b <= (t.addr + 32ull * t.beats() - 1) >> 6; ++b) v.push_back(b);
    return v;
  };
  int submitted = 0, checked = 0;
  std::string first_error;
  std::map<uint64_t, std::vector<uint8_t>> expect;  // by tag: read data fixed at submission
  h->on_done = [&](AxiTxn& t) {
    for (uint64_t b : blocks(t)) {
      auto& set = t.write ? w_flight : r_flight;
      set.erase(set.find(b));
    }
    for (int r : t.resp) {
      if (r != kOkay && first_error.empty()) {
        first_error = fmt::format("{} addr {:#x} got SLVERR", t.write ? "write" : "read", t.addr);
      }
    }
    if (t.write) {
      s.Apply(t);
      return;
    }
    const std::string e = Compare(t, expect.at(t.tag));
    if (!e.empty() && first_error.empty()) first_error = e + fmt::format(" (cycle {})", h->cycle());
    expect.erase(t.tag);
    ++checked;
  };
  while (submitted < kBursts || h->outstanding() > 0) {
    if (submitted < kBursts && h->outstanding() < 24 && rng.Range(0, 1) == 0) {
      const int beats = rng.Range(0, 2) == 0 ? rng.Range(3, 32) : rng.Range(1, 2);
      const bool write = rng.Range(0, 2) == 0;
      // Mostly a 64 KB window (shared blocks, row hits and conflicts), sometimes anywhere.
      const uint64_t limit = rng.Range(0, 7) == 0 ? Map().total_bytes() : 0x10000;
      const uint64_t addr = RandomAddr(rng, limit, beats);
      const uint32_t id = static_cast<uint32_t>(rng.Range(0, 3));
      auto t = write ? Write(addr, RandomData(rng, beats), RandomStrobes(rng, beats), id)
                     : Read(addr, beats, id);
      bool clash = false;
      for (uint64_t b : blocks(*t)) {
        if (w_flight.count(b) || (write && r_flight.count(b))) clash = true;
      }
      if (!clash) {
        for (uint64_t b : blocks(*t)) (write ? w_flight : r_flight).insert(b);
        t->tag = static_cast<uint64_t>(submitted);
        if (!write) expect[t->tag] = s.Expect(addr, beats);
        h->Submit(std::move(t));
        ++submitted;
      }
    }
    h->Step();
    ASSERT_LT(h->cycle(), 3'000'000u) << "no progress: " << h->StuckReport();
  }
  EXPECT_EQ(first_error, "") << "seed " << seed;
  EXPECT_GT(checked, kBursts / 3);
  ExpectMemory(*h, s, seed);
  ExpectNoViolations(*h);
}

// Bandwidth: a long sequential INCR read stream (32-beat bursts, 1 KB each, always offered)
// through the single port spreads over both pseudo-channels and must reach 80% of the channel's
// peak of 32 bytes per cycle (one beat per cycle), refresh included. The data is checked too.
// A sequential write stream's figure is printed for information.
TEST_F(HbmInterleaveTest, SequentialReadBandwidth) {
  const uint64_t seed = test::TestSeed();
  auto h = Make(seed);
  Shadow s(Map());
  const uint64_t kBursts = test::Scaled(1200);  // 1.2 MB, about 10 refresh intervals
  uint64_t next = 0, submitted = 0, bad = 0;
  std::string first_error;
  h->on_done = [&](AxiTxn& t) {
    for (int r : t.resp) bad += r != kOkay;
    if (first_error.empty()) first_error = Compare(t, s.Expect(t.addr, t.beats()));
  };
  while (submitted < kBursts) {
    if (h->waiting_reads() < 2) {
      h->Submit(Read(next, 32, static_cast<uint32_t>(submitted % 4)));
      next += 1024;
      ++submitted;
    }
    h->Step();
  }
  h->Drain();
  const uint64_t cycles = h->last_r_cycle() - h->first_r_cycle() + 1;
  const double frac = static_cast<double>(h->r_beats()) / static_cast<double>(cycles);
  fmt::print(
      "[  BW      ] sequential read: {} beats in {} cycles = {:.1f} B/cycle, {:.1f}% of the "
      "channel's 32 B/cycle\n",
      h->r_beats(), cycles, 32 * frac, 100 * frac);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(first_error, "");
  EXPECT_EQ(h->r_beats(), 32 * kBursts);
  EXPECT_GE(frac, 0.80) << "sequential read bandwidth below 80% of peak";

  // Writes, for information: from the first AW to the last B.
  tb::Rng rng(seed);
  const uint64_t w_start = h->cycle();
  done_.clear();
  h->on_done = [this](AxiTxn& t) { done_.push_back(t); };
  const uint64_t kWrites = kBursts / 4;
  next = 0x100000;
  for (uint64_t i = 0; i < kWrites;) {
    if (h->waiting_writes() < 2) {
      h->Submit(Write(next, RandomData(rng, 32)));
      next += 1024;
      ++i;
    }
    h->Step();
  }
  h->Drain();
  const double wfrac =
      32.0 * static_cast<double>(kWrites) / static_cast<double>(h->cycle() - w_start);
  fmt::print("[  BW      ] sequential write: {} beats in {} cycles = {:.1f}% of 32 B/cycle\n",
             32 * kWrites, h->cycle() - w_start, 100 * wfrac);
  for (const AxiTxn& t : done_) ASSERT_EQ(t.resp.at(0), kOkay);
  ExpectNoViolations(*h);
}

}  // namespace
}  // namespace tpu
