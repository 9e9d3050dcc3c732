// SPDX-License-Identifier: Apache-2.0
// The vector unit's core in RTL (tpu_vpu: lanes, the sequencer, the micro-program ROM) against
// the golden model, bit for bit, in both modes: every program on batches of rows, the functions
// on fp32 patterns spread over every binade, the elementwise operations on operands drawn to
// matter, the specials everywhere; in two configurations (2 lanes of 4 slots with 3-stage FMAs,
// and 3 lanes of one slot with combinational ones), with the batch's cycles checked.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "Vvpu_l2.h"
#include "Vvpu_l3_p0.h"
#include "test_support.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/sim_ctrl.h"
#include "tpu/tb/vpu_ops.h"
#include "tpu/tb/vpu_ucode_rom.h"
#include "tpu/vpu.h"

namespace tpu {
namespace {

using num::Mode;

// Drives one tpu_vpu model: a batch of rows in, the program run, the results out.
template <class M>
class VpuRig {
 public:
  VpuRig(const char* name, int lanes, int slots, int pipe)
      : sim_(name, 100'000'000, test::TestTrace()), lanes_(lanes), slots_(slots), pipe_(pipe) {
    sim_.Reset();
  }
  int rows() const { return lanes_ * slots_; }

  // Runs program `prog` (its index in the ROM's table) on rows() elements; returns the results
  // and checks the batch's cycles (length * slots + pipe + 2 from the start's edge to done).
  std::vector<uint32_t> Run(int prog, const std::vector<uint32_t>& a,
                            const std::vector<uint32_t>& b, const std::vector<uint32_t>& c,
                            Mode mode) {
    M& m = sim_.dut();
    for (int i = 0; i < rows(); ++i) {
      m.a_i[i] = a[i];
      m.b_i[i] = b[i];
      m.c_i[i] = c[i];
    }
    m.prog_i = static_cast<uint8_t>(prog);
    m.ftz_i = mode == Mode::kFtz;
    m.start_i = 1;
    sim_.RisingEdge();
    sim_.FallingEdge();
    m.start_i = 0;
    uint64_t cycles = 0;
    while (!m.done_o) {
      sim_.RisingEdge();
      sim_.FallingEdge();
      ++cycles;
    }
    const uint64_t want =
        static_cast<uint64_t>(tb::ucode::kPrograms[prog].length) * slots_ + pipe_ + 1;
    EXPECT_EQ(cycles, want) << tb::ucode::kPrograms[prog].name;
    std::vector<uint32_t> out(rows());
    for (int i = 0; i < rows(); ++i) out[i] = m.res_o[i];
    sim_.RisingEdge();
    sim_.FallingEdge();
    EXPECT_FALSE(m.busy_o);
    return out;
  }
  bool AssertionFailed() const { return sim_.AssertionFailed(); }

 private:
  tb::SimCtrl<M> sim_;
  int lanes_, slots_, pipe_;
};

// Every program against its golden operation on `batches` batches per mode (rows() elements
// each), then the specials.
template <class M>
void CheckAllPrograms(VpuRig<M>& rig, uint64_t batches) {
  tb::Rng rng(test::TestSeed());
  const int n = rig.rows();
  const std::vector<uint32_t>& sp = tb::Fp32Specials();
  for (int prog = 0; prog < static_cast<int>(std::size(tb::ucode::kPrograms)); ++prog) {
    const std::string name = tb::ucode::kPrograms[prog].name;
    const tb::ucode::Golden golden = tb::ucode::GoldenOf(name);
    uint64_t bad = 0, checked = 0;
    for (Mode mode : {Mode::kIeee, Mode::kFtz}) {
      for (uint64_t batch = 0; batch < batches + sp.size(); ++batch) {
        std::vector<uint32_t> a(n), b(n), c(n);
        for (int i = 0; i < n; ++i) {
          if (batch >= batches) {  // the specials: a cycles through them against random B, C
            a[i] = sp[batch - batches];
            b[i] = sp[(batch + i) % sp.size()];
            c[i] = sp[(batch + 2 * i + 1) % sp.size()];
          } else if (tb::ucode::Unary(name)) {
            a[i] = rng.U32();
          } else {
            const int center = 1 + static_cast<int>(rng.U32() % 254);
            a[i] = tb::DrawFp32(rng, center);
            b[i] = i % 5 == 0 ? a[i] : tb::DrawFp32(rng, center);
            c[i] = i % 3 == 0 ? a[i] : tb::DrawFp32(rng, center);
          }
        }
        const std::vector<uint32_t> got = rig.Run(prog, a, b, c, mode);
        for (int i = 0; i < n; ++i) {
          ++checked;
          const uint32_t want = golden(a[i], b[i], c[i], mode);
          if (got[i] != want && bad++ < 5) {
            ADD_FAILURE() << fmt::format(
                "{}({:#010x}, {:#010x}, {:#010x}) {} row {}: RTL "
                "{:#010x}, golden {:#010x}",
                name, a[i], b[i], c[i], num::ModeName(mode), i, got[i], want);
          }
        }
      }
    }
    fmt::print("{}: {} rows checked\n", name, checked);
    EXPECT_EQ(bad, 0u) << name << ": " << checked << " checked";
  }
  EXPECT_FALSE(rig.AssertionFailed());
}

TEST(VpuRtlTest, TwoLanesFourSlotsPipelined) {
  VpuRig<Vvpu_l2> rig("vpu_l2", 2, 4, 3);
  CheckAllPrograms(rig, test::Scaled(3000));
}

TEST(VpuRtlTest, ThreeLanesOneSlotCombinational) {
  VpuRig<Vvpu_l3_p0> rig("vpu_l3_p0", 3, 1, 0);
  CheckAllPrograms(rig, test::Scaled(3000));
}

}  // namespace
}  // namespace tpu
