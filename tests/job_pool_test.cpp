// SPDX-License-Identifier: Apache-2.0
// Process-level parallelism (tpu/tb/job_pool.h) on the golden model back end:
//  * the split: random jobs of every kind (GEMMs plain and with either operand transposed, with a
//    bias or C0, relu, bf16 outputs; convolutions) split into 1..5 parts on arrays 4, 8 and 16
//    wide, run part by part and put back together, bit-identical to the whole job; where each
//    split falls (columns, rows or images; whole column tiles; every unit in exactly one part);
//  * the pool: 1, 2 and 3 processes give the same outputs and count the parts' programs; a
//    worker that dies or cannot start is an error naming the part, never a hang; bad input in a
//    part is the net::Error RunAccelJob gives.
// tests/accel_test.cpp runs pools of RTL engines (AccelJobPoolTest).
#include "tpu/tb/job_pool.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpu/numerics.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"
#include "tpu/tb/rng.h"

namespace {

using namespace tpu;
using tb::accel::Config;
using tb::accel::JobPool;
using tb::accel::JobSplit;
using tb::accel::ModelSim;
using tb::accel::NetStepStats;

std::vector<uint16_t> RandomBf16(tb::Rng& rng, size_t n) {
  std::vector<uint16_t> v(n);
  for (auto& e : v) {
    const float f = rng.Range(0, 19) == 0 ? 0.0f : float(rng.Range(-1000, 1000)) / 256.0f;
    uint32_t u;
    std::memcpy(&u, &f, 4);
    e = num::Fp32ToBf16(u, num::Mode::kIeee);
  }
  return v;
}

std::vector<uint32_t> RandomFp32(tb::Rng& rng, size_t n) {
  std::vector<uint32_t> v(n);
  for (auto& e : v) {
    const float f = float(rng.Range(-1000, 1000)) / 64.0f;
    std::memcpy(&e, &f, 4);
  }
  return v;
}

// A random job of any kind the planner and the trainer send.
net::AccelJob RandomJob(tb::Rng& rng) {
  net::AccelJob j;
  j.relu = rng.Range(0, 1) == 1;
  j.out = rng.Range(0, 1) == 1 ? host::OutFormat::kBf16 : host::OutFormat::kFp32;
  if (rng.Range(0, 3) == 0) {
    j.kind = net::AccelJob::Kind::kConv;
    auto& c = j.conv;
    c.n = rng.Range(1, 4);
    c.kh = rng.Range(1, 3);
    c.kw = rng.Range(1, 3);
    c.h = rng.Range(c.kh, 7);
    c.w = rng.Range(c.kw, 7);
    c.cin = rng.Range(1, 9);
    c.cout = rng.Range(1, 40);
    c.stride = rng.Range(1, 2);
    c.pad = rng.Range(0, 1);
    j.m = c.M();
    j.k = c.K();
    j.n = c.cout;
    j.a = RandomBf16(rng, size_t(c.n) * size_t(c.h) * size_t(c.w) * size_t(c.cin));
    j.b = RandomBf16(rng, size_t(j.k) * size_t(j.n));
    if (rng.Range(0, 1) == 1) j.bias = RandomFp32(rng, size_t(j.n));
    // A residual add in the accumulators (ISA 1.5): split with the output's rows or columns.
    if (rng.Range(0, 1) == 1) j.residual = RandomFp32(rng, size_t(j.m) * size_t(j.n));
    return j;
  }
  if (rng.Range(0, 4) == 0) {  // a chain of dense layers (one program): split by rows
    j.kind = net::AccelJob::Kind::kMlp;
    j.m = rng.Range(1, 40);
    j.sizes = {rng.Range(1, 30), rng.Range(1, 30), rng.Range(1, 30)};
    if (rng.Range(0, 1) == 1) j.sizes.push_back(rng.Range(1, 30));
    j.k = j.sizes.front();
    j.n = j.sizes.back();
    j.a = RandomBf16(rng, size_t(j.m) * size_t(j.k));
    const bool bias = rng.Range(0, 1) == 1;
    for (size_t i = 0; i + 1 < j.sizes.size(); ++i) {
      j.layers_b.push_back(RandomBf16(rng, size_t(j.sizes[i]) * size_t(j.sizes[i + 1])));
      j.layers_bias.push_back(bias ? RandomFp32(rng, size_t(j.sizes[i + 1]))
                                   : std::vector<uint32_t>{});
    }
    return j;
  }
  j.kind = net::AccelJob::Kind::kGemm;
  j.m = rng.Range(1, 40);
  j.k = rng.Range(1, 40);
  j.n = rng.Range(1, 40);
  j.a = RandomBf16(rng, size_t(j.m) * size_t(j.k));
  j.b = RandomBf16(rng, size_t(j.k) * size_t(j.n));
  switch (rng.Range(0, 2)) {
    case 0:  // operands given transposed (training's gradients), no bias
      j.trans.a = rng.Range(0, 1) == 1;
      j.trans.b = !j.trans.a || rng.Range(0, 1) == 1;
      break;
    case 1:
      j.bias = RandomFp32(rng, size_t(j.n));
      if (rng.Range(0, 1) == 1) j.residual = RandomFp32(rng, size_t(j.m) * size_t(j.n));
      break;
    default:
      if (rng.Range(0, 1) == 1) j.c0 = RandomFp32(rng, size_t(j.m) * size_t(j.n));
  }
  return j;
}

Config Cfg(int cols) {
  return tb::accel::ResolveConfig(fmt::format("8x{}_1ch", cols));
}

std::vector<uint32_t> Whole(ModelSim& sim, const net::AccelJob& job) {
  NetStepStats st;
  return tb::accel::RunAccelJob(sim, job, false, {}, "whole", &st);
}

TEST(JobSplitTest, PartsPutTogetherAreTheWholeJob) {
  tb::Rng rng(test::TestSeed());
  for (int cols : {4, 8, 16}) {
    ModelSim sim(Cfg(cols));
    for (uint64_t t = 0; t < test::Scaled(40); ++t) {
      const net::AccelJob job = RandomJob(rng);
      SCOPED_TRACE(fmt::format("array {} wide, job {}: {}", cols, t, job.Describe()));
      const std::vector<uint32_t> want = Whole(sim, job);
      for (int parts = 1; parts <= 5; ++parts) {
        const JobSplit s = tb::accel::PlanSplit(job, parts, cols);
        ASSERT_LE(s.Parts(), parts);
        std::vector<uint32_t> got;
        for (int i = 0; i < s.Parts(); ++i) {
          NetStepStats st;
          const net::AccelJob p = tb::accel::JobPart(job, s, i);
          tb::accel::PutPart(job, s, i, tb::accel::RunAccelJob(sim, p, false, {}, "part", &st),
                             &got);
        }
        ASSERT_EQ(got.size(), want.size()) << parts << " parts";
        for (size_t e = 0; e < want.size(); ++e) {
          ASSERT_EQ(got[e], want[e])
              << parts << " parts, element " << e << " (row " << e / size_t(job.n) << ", column "
              << e % size_t(job.n) << ")";
        }
      }
    }
  }
}

// Where the split falls: the larger operand is not repeated; columns in whole tiles; every row,
// image or column in exactly one part; no part empty.
TEST(JobSplitTest, SplitsTheLargerOperandInWholeTiles) {
  net::AccelJob g;
  g.kind = net::AccelJob::Kind::kGemm;
  g.m = 10, g.k = 3, g.n = 100;  // N > M: columns (A repeated, B split)
  JobSplit s = tb::accel::PlanSplit(g, 3, 16);
  EXPECT_EQ(s.dim, JobSplit::Dim::kCols);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 32, 64, 100}));  // 7 tiles of 16: 2, 2, 3
  s = tb::accel::PlanSplit(g, 8, 16);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 16, 32, 48, 64, 80, 96, 100}));  // one part a tile
  g.m = 100, g.n = 40;                                                      // M > N: rows
  s = tb::accel::PlanSplit(g, 3, 16);
  EXPECT_EQ(s.dim, JobSplit::Dim::kRows);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 33, 66, 100}));
  g.m = 1, g.n = 40;  // one row: columns whatever their count
  EXPECT_EQ(tb::accel::PlanSplit(g, 2, 16).dim, JobSplit::Dim::kCols);
  g.m = 40, g.n = 16;  // one column tile: rows
  EXPECT_EQ(tb::accel::PlanSplit(g, 2, 16).dim, JobSplit::Dim::kRows);
  g.m = 1;  // neither: whole
  EXPECT_EQ(tb::accel::PlanSplit(g, 4, 16).dim, JobSplit::Dim::kNone);
  EXPECT_EQ(tb::accel::PlanSplit(g, 4, 16).Parts(), 1);
  g.m = 100, g.n = 100;
  EXPECT_EQ(tb::accel::PlanSplit(g, 1, 16).Parts(), 1);  // one process: whole
  // The vector unit's jobs carry their data in va / vb, which the parts do not: whole.
  for (const auto kind : {net::AccelJob::Kind::kVector, net::AccelJob::Kind::kPool,
                          net::AccelJob::Kind::kDepthwise, net::AccelJob::Kind::kSoftmax}) {
    net::AccelJob v = g;
    v.kind = kind;
    v.k = 0;
    EXPECT_EQ(tb::accel::PlanSplit(v, 4, 16).dim, JobSplit::Dim::kNone);
  }
  net::AccelJob c;
  c.kind = net::AccelJob::Kind::kConv;
  c.conv.n = 3, c.conv.h = c.conv.w = 8, c.conv.cin = 4, c.conv.cout = 8;
  c.m = c.conv.M(), c.k = c.conv.K(), c.n = 8;
  s = tb::accel::PlanSplit(c, 2, 16);  // a convolution's rows: whole images
  EXPECT_EQ(s.dim, JobSplit::Dim::kImages);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(tb::accel::PlanSplit(c, 5, 16).Parts(), 3);  // at most one part an image
  c.conv.n = 1, c.m = c.conv.M();
  EXPECT_EQ(tb::accel::PlanSplit(c, 2, 16).dim, JobSplit::Dim::kNone);
  c.conv.cout = c.n = 64;  // one image, four column tiles
  s = tb::accel::PlanSplit(c, 2, 16);
  EXPECT_EQ(s.dim, JobSplit::Dim::kCols);
  EXPECT_EQ(s.bounds, (std::vector<int>{0, 32, 64}));
}

// The pool: the same outputs for 1, 2 and 3 processes; jobs counted once, programs per part.
TEST(JobPoolTest, ProcessesGiveTheSameOutputs) {
  const uint64_t seed = test::TestSeed();
  const Config cfg = Cfg(8);
  std::vector<net::AccelJob> jobs;
  {
    tb::Rng rng(seed);
    for (uint64_t t = 0; t < test::Scaled(20); ++t) jobs.push_back(RandomJob(rng));
  }
  std::vector<std::vector<uint32_t>> want;
  {
    ModelSim sim(cfg);
    for (const auto& j : jobs) want.push_back(Whole(sim, j));
  }
  for (int n : {1, 2, 3}) {
    SCOPED_TRACE(fmt::format("{} processes", n));
    JobPool pool(
        n, [&cfg] { return std::make_unique<ModelSim>(cfg); }, true);
    EXPECT_EQ(pool.processes(), n);
    NetStepStats st;
    int programs = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      ASSERT_EQ(pool.Run(jobs[i], fmt::format("job {}", i), &st), want[i])
          << "job " << i << ": " << jobs[i].Describe();
      programs += tb::accel::PlanSplit(jobs[i], n, cfg.machine.c).Parts();
    }
    EXPECT_EQ(st.jobs, int(jobs.size()));
    EXPECT_EQ(st.programs, programs);
    EXPECT_EQ(st.checked, 0u);  // the golden model back end is not checked against itself
    uint64_t macs = 0;
    for (const auto& j : jobs) macs += j.Macs();
    EXPECT_EQ(st.perf.macs, macs);
  }
}

// A back end that ends its process in a worker at its first run (a crash of the simulator).
class DyingSim : public ModelSim {
 public:
  DyingSim(const Config& cfg, pid_t parent) : ModelSim(cfg), parent_(parent) {}
  tb::accel::Result Run(uint64_t prog_addr, uint32_t count,
                        const tb::accel::RunOptions& opt) override {
    if (getpid() != parent_) raise(SIGKILL);
    return ModelSim::Run(prog_addr, count, opt);
  }

 private:
  pid_t parent_;
};

net::AccelJob TallGemm() {
  tb::Rng rng(7);
  net::AccelJob j;
  j.m = 30, j.k = 5, j.n = 4;
  j.a = RandomBf16(rng, 150);
  j.b = RandomBf16(rng, 20);
  return j;
}

TEST(JobPoolTest, AWorkerThatDiesIsAnErrorNamingThePart) {
  const Config cfg = Cfg(8);
  const pid_t parent = getpid();
  JobPool pool(
      3, [&] { return std::make_unique<DyingSim>(cfg, parent); }, false);
  NetStepStats st;
  try {
    pool.Run(TallGemm(), "step 4", &st);
    FAIL() << "no error";
  } catch (const tb::accel::NetFailure& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("step 4, part 2 of 3 (rows 10..19): engine process"), std::string::npos) << m;
    EXPECT_NE(m.find("killed by signal 9"), std::string::npos) << m;
  }
  // The pool is spent: later jobs fail at once (no hang on a dead worker), whole jobs still run.
  EXPECT_THROW(pool.Run(TallGemm(), "step 5", &st), tb::accel::NetFailure);
  net::AccelJob one = TallGemm();
  one.m = 1;
  one.a.resize(5);
  EXPECT_EQ(pool.Run(one, "step 6", &st).size(), 4u);  // one row, one tile: this process alone
}

TEST(JobPoolTest, AWorkerThatCannotStartIsAnError) {
  const Config cfg = Cfg(8);
  const pid_t parent = getpid();
  JobPool pool(
      2,
      [&]() -> std::unique_ptr<tb::accel::Sim> {
        if (getpid() != parent) throw std::runtime_error("no engine here");
        return std::make_unique<ModelSim>(cfg);
      },
      false);
  NetStepStats st;
  try {
    pool.Run(TallGemm(), "step 1", &st);
    FAIL() << "no error";
  } catch (const tb::accel::NetFailure& e) {
    EXPECT_NE(std::string(e.what()).find("part 2 of 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exited with status 1"), std::string::npos) << e.what();
  }
}

// Bad input in the parts is RunAccelJob's net::Error, from the first part.
TEST(JobPoolTest, BadInputInAPartIsTheJobsError) {
  Config cfg = Cfg(8);
  cfg.machine.hbm_bytes = 4096;  // too small for the job's operands
  JobPool pool(
      2, [&cfg] { return std::make_unique<ModelSim>(cfg); }, false);
  net::AccelJob j = TallGemm();
  j.m = 300, j.k = 40;
  j.a.assign(size_t(j.m) * size_t(j.k), 0x3f80);
  j.b.assign(size_t(j.k) * size_t(j.n), 0x3f80);
  NetStepStats st;
  try {
    pool.Run(j, "step 2", &st);
    FAIL() << "no error";
  } catch (const net::Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 2, part 1 of 2 (rows 0..149)"), std::string::npos)
        << e.what();
  }
  // The worker is still there: the next job runs split.
  NetStepStats st2;
  EXPECT_EQ(pool.Run(TallGemm(), "step 3", &st2).size(), 120u);
  EXPECT_EQ(st2.programs, 2);
}

// Workers started by a command (RemoteLaunch, `--launcher slurm`): a command that ends before its
// workers connect, one whose workers never come, and a stranger on the port without the key are
// errors that name the command and quote what it printed, at once (tests/slurm_test.py runs real
// workers through Slurm).
std::string RemoteError(const std::vector<std::string>& cmd, int processes, double timeout) {
  const Config cfg = Cfg(8);
  tb::accel::RemoteLaunch launch{cmd, timeout};
  try {
    JobPool pool(
        processes, launch, [&cfg] { return std::make_unique<ModelSim>(cfg); }, false);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(JobPoolTest, RemoteLaunchFailuresAreErrors) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(RemoteError({"sh", "-c", "echo no nodes here >&2; exit 3"}, 3, 60),
            "the workers' launch command (sh ...) ended (exit status 3) with 0 of 2 workers "
            "connected; it printed: no nodes here");
  EXPECT_EQ(RemoteError({"sleep", "30"}, 2, 0.3),
            "the workers' launch command (sleep ...): 0 of 1 workers connected in 0 s; it "
            "printed: (it printed nothing)");
  // A connection with the wrong key is not a worker (the pool would wait for one).
  const std::string stranger =
      "a={addr}; r=${a#*:}; exec 3<>/dev/tcp/127.0.0.1/${r%%:*}; "
      "printf '\\x10\\0\\0\\0\\0\\0\\0\\0wrongkeyworker 1' >&3; sleep 1; "
      "echo stranger done; exit 4";
  EXPECT_EQ(RemoteError({"bash", "-c", stranger}, 2, 60),
            "the workers' launch command (bash ...) ended (exit status 4) with 0 of 1 workers "
            "connected; it printed: stranger done");
  // A silent connection (2 s, then dropped) and an HTTP request (a "length" of 6e18 bytes).
  const std::string http =
      "a={addr}; r=${a#*:}; p=${r%%:*}; exec 3<>/dev/tcp/127.0.0.1/$p; "
      "exec 4<>/dev/tcp/127.0.0.1/$p; printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&4; sleep 3; "
      "echo http done; exit 5";
  EXPECT_EQ(RemoteError({"bash", "-c", http}, 2, 60),
            "the workers' launch command (bash ...) ended (exit status 5) with 0 of 1 workers "
            "connected; it printed: http done");
  // The right key from another build (another protocol tag): refused by name.
  const std::string other =
      "a={addr}; r=${a#*:}; k=${a##*:}; exec 3<>/dev/tcp/127.0.0.1/${r%%:*}; "
      "b=''; for i in 14 12 10 8 6 4 2 0; do b=\"$b\\\\x${k:$i:2}\"; done; "
      "printf '\\x1c\\0\\0\\0\\0\\0\\0\\0' >&3; printf \"$b\" >&3; "
      "printf 'tpusim-jobs/0 1 2 3 9 on x' >&3; sleep 5";
  const std::string got = RemoteError({"bash", "-c", other}, 2, 60);
  EXPECT_NE(got.find("a worker of another build connected ('tpusim-jobs/0 1"), std::string::npos)
      << got;
  EXPECT_EQ(RemoteError({"/no/such/launcher"}, 2, 60),
            "the workers' launch command (/no/such/launcher ...) ended (exit status 127) with 0 "
            "of 1 workers connected; it printed: cannot run /no/such/launcher: No such file or "
            "directory");
  // Each returned at once (not after the 60 s the workers were given; the stranger's 1 s sleep).
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
}

// Data that do not match the job's shape: the job runs whole, for RunAccelJob's error (never an
// out-of-range slice).
TEST(JobPoolTest, DataThatDoNotMatchTheShapeAreAnError) {
  const Config cfg = Cfg(8);
  JobPool pool(
      2, [&cfg] { return std::make_unique<ModelSim>(cfg); }, false);
  net::AccelJob j = TallGemm();
  j.a.resize(j.a.size() - 1);
  NetStepStats st;
  EXPECT_THROW(pool.Run(j, "short A", &st), net::Error);
  j = TallGemm();
  j.c0.assign(7, 0);
  EXPECT_THROW(pool.Run(j, "short C0", &st), net::Error);
  EXPECT_EQ(st.programs, 0);
  EXPECT_EQ(pool.Run(TallGemm(), "good", &st).size(), 120u);  // the pool still works
  EXPECT_EQ(st.programs, 2);
}

TEST(JobPoolTest, RejectsNoProcesses) {
  const Config cfg = Cfg(8);
  EXPECT_THROW(JobPool(
                   0, [&cfg] { return std::make_unique<ModelSim>(cfg); }, false),
               std::invalid_argument);
}

}  // namespace
