// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/job_pool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <type_traits>

namespace tpu::tb::accel {
namespace {

using net::AccelJob;

// ---------------------------------------------------------------------------------------------
// Splitting

// Splits [0, units) into `parts` nearly equal ranges, scaled by `scale` and clipped to `limit`.
std::vector<int> Bounds(int units, int parts, int scale, int limit) {
  std::vector<int> b;
  for (int i = 0; i <= parts; ++i) {
    b.push_back(std::min(limit, int(int64_t(units) * i / parts) * scale));
  }
  return b;
}

}  // namespace

JobSplit PlanSplit(const AccelJob& job, int parts, int array_cols) {
  JobSplit s;
  // The vector unit's jobs (elementwise, pooling) run whole.
  if (parts <= 1 || array_cols < 1 || job.kind == AccelJob::Kind::kVector ||
      job.kind == AccelJob::Kind::kPool || job.kind == AccelJob::Kind::kDepthwise ||
      job.kind == AccelJob::Kind::kSoftmax) {
    return s;
  }
  const bool conv = job.kind == AccelJob::Kind::kConv;
  const int tiles = (job.n + array_cols - 1) / array_cols;
  const int rows = conv ? job.conv.n : job.m;  // a convolution splits by whole images
  // An MLP's layers run in one program: it splits by rows only.
  const bool mlp = job.kind == AccelJob::Kind::kMlp;
  const bool by_rows = rows >= 2, by_cols = tiles >= 2 && !mlp;
  if (!by_rows && !by_cols) return s;
  // Rows repeat B (K x N) in every part, columns repeat A (M x K): split the larger operand.
  if (by_rows && (!by_cols || job.n <= job.m)) {
    const int p = std::min(parts, rows);
    s.dim = conv ? JobSplit::Dim::kImages : JobSplit::Dim::kRows;
    s.bounds = Bounds(rows, p, 1, rows);
  } else {
    const int p = std::min(parts, tiles);
    s.dim = JobSplit::Dim::kCols;
    s.bounds = Bounds(tiles, p, array_cols, job.n);
  }
  return s;
}

AccelJob JobPart(const AccelJob& job, const JobSplit& s, int i) {
  if (s.dim == JobSplit::Dim::kNone) return job;
  const int lo = s.bounds.at(size_t(i)), hi = s.bounds.at(size_t(i) + 1);
  const int w = hi - lo;
  const size_t K = size_t(job.k), N = size_t(job.n), M = size_t(job.m);
  AccelJob p;
  p.kind = job.kind;
  p.conv = job.conv;
  p.trans = job.trans;
  p.relu = job.relu;
  p.out = job.out;
  p.m = job.m;
  p.k = job.k;
  p.n = job.n;
  p.sizes = job.sizes;  // an MLP's layers (split by rows: A's rows)
  p.layers_b = job.layers_b;
  p.layers_bias = job.layers_bias;
  switch (s.dim) {
    case JobSplit::Dim::kCols: {
      p.n = w;
      p.conv.cout = w;
      p.a = job.a;
      // B: K x N (its columns lo..hi), or N x K given transposed (its rows).
      if (job.trans.b) {
        p.b.assign(job.b.begin() + ptrdiff_t(size_t(lo) * K),
                   job.b.begin() + ptrdiff_t(size_t(hi) * K));
      } else {
        p.b.reserve(K * size_t(w));
        for (size_t k = 0; k < K; ++k) {
          const auto row = job.b.begin() + ptrdiff_t(k * N);
          p.b.insert(p.b.end(), row + lo, row + hi);
        }
      }
      if (!job.bias.empty()) p.bias.assign(job.bias.begin() + lo, job.bias.begin() + hi);
      if (!job.c0.empty()) {
        p.c0.reserve(M * size_t(w));
        for (size_t m = 0; m < M; ++m) {
          const auto row = job.c0.begin() + ptrdiff_t(m * N);
          p.c0.insert(p.c0.end(), row + lo, row + hi);
        }
      }
      if (!job.residual.empty()) {
        p.residual.reserve(M * size_t(w));
        for (size_t m = 0; m < M; ++m) {
          const auto row = job.residual.begin() + ptrdiff_t(m * N);
          p.residual.insert(p.residual.end(), row + lo, row + hi);
        }
      }
      break;
    }
    case JobSplit::Dim::kRows: {
      p.m = w;
      p.b = job.b;
      p.bias = job.bias;
      // A: M x K (its rows lo..hi), or K x M given transposed (its columns).
      if (job.trans.a) {
        p.a.reserve(K * size_t(w));
        for (size_t k = 0; k < K; ++k) {
          const auto row = job.a.begin() + ptrdiff_t(k * M);
          p.a.insert(p.a.end(), row + lo, row + hi);
        }
      } else {
        p.a.assign(job.a.begin() + ptrdiff_t(size_t(lo) * K),
                   job.a.begin() + ptrdiff_t(size_t(hi) * K));
      }
      if (!job.c0.empty()) {
        p.c0.assign(job.c0.begin() + ptrdiff_t(size_t(lo) * N),
                    job.c0.begin() + ptrdiff_t(size_t(hi) * N));
      }
      if (!job.residual.empty()) {
        p.residual.assign(job.residual.begin() + ptrdiff_t(size_t(lo) * N),
                          job.residual.begin() + ptrdiff_t(size_t(hi) * N));
      }
      break;
    }
    case JobSplit::Dim::kImages: {
      const size_t image = size_t(job.conv.h) * size_t(job.conv.w) * size_t(job.conv.cin);
      p.conv.n = w;
      p.m = p.conv.M();
      p.b = job.b;
      p.bias = job.bias;
      p.a.assign(job.a.begin() + ptrdiff_t(size_t(lo) * image),
                 job.a.begin() + ptrdiff_t(size_t(hi) * image));
      if (!job.residual.empty()) {  // the images' output rows
        const size_t out = size_t(job.conv.OutH()) * size_t(job.conv.OutW()) * N;
        p.residual.assign(job.residual.begin() + ptrdiff_t(size_t(lo) * out),
                          job.residual.begin() + ptrdiff_t(size_t(hi) * out));
      }
      break;
    }
    case JobSplit::Dim::kNone: break;
  }
  return p;
}

void PutPart(const AccelJob& job, const JobSplit& s, int i, const std::vector<uint32_t>& part,
             std::vector<uint32_t>* out) {
  const size_t N = size_t(job.n);
  out->resize(size_t(job.m) * N);
  if (s.dim == JobSplit::Dim::kNone) {
    *out = part;
    return;
  }
  const int lo = s.bounds.at(size_t(i)), hi = s.bounds.at(size_t(i) + 1);
  size_t first = 0;  // the part's first output row
  if (s.dim == JobSplit::Dim::kCols) {
    const size_t w = size_t(hi - lo), rows = size_t(job.m);
    if (part.size() != rows * w) throw std::logic_error("PutPart: part output of the wrong size");
    for (size_t m = 0; m < rows; ++m) {
      std::copy(part.begin() + ptrdiff_t(m * w), part.begin() + ptrdiff_t((m + 1) * w),
                out->begin() + ptrdiff_t(m * N + size_t(lo)));
    }
    return;
  }
  const size_t per = s.dim == JobSplit::Dim::kRows
                         ? 1
                         : size_t(job.conv.OutH()) * size_t(job.conv.OutW());  // rows an image
  first = size_t(lo) * per;
  if (part.size() != size_t(hi - lo) * per * N || first * N + part.size() > out->size()) {
    throw std::logic_error("PutPart: part output of the wrong size");
  }
  std::copy(part.begin(), part.end(), out->begin() + ptrdiff_t(first * N));
}

// ---------------------------------------------------------------------------------------------
// The wire between the processes: length-prefixed messages over pipes.

namespace {

class Writer {
 public:
  template <typename T>
  void Put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    buf_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  void Vec(const std::vector<T>& v) {
    Put(uint64_t(v.size()));
    buf_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void Str(const std::string& s) {
    Put(uint64_t(s.size()));
    buf_ += s;
  }
  const std::string& buf() const { return buf_; }

 private:
  std::string buf_;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  template <typename T>
  T Get() {
    T v;
    Take(&v, sizeof v);
    return v;
  }
  template <typename T>
  std::vector<T> Vec() {
    const auto n = Get<uint64_t>();
    if (n > (b_.size() - at_) / sizeof(T)) throw std::runtime_error("a truncated message");
    std::vector<T> v(static_cast<size_t>(n));
    Take(v.data(), size_t(n) * sizeof(T));
    return v;
  }
  std::string Str() {
    const auto v = Vec<char>();
    return std::string(v.begin(), v.end());
  }

 private:
  void Take(void* p, size_t n) {
    if (n > b_.size() - at_) throw std::runtime_error("a truncated message");
    if (n != 0) std::memcpy(p, b_.data() + at_, n);
    at_ += n;
  }
  const std::string& b_;
  size_t at_ = 0;
};

void PutJob(Writer& w, const AccelJob& j) {
  w.Put(j.kind);
  w.Put(j.m);
  w.Put(j.k);
  w.Put(j.n);
  w.Put(j.conv);
  w.Vec(j.a);
  w.Vec(j.b);
  w.Put(j.trans);
  w.Vec(j.bias);
  w.Vec(j.c0);
  w.Vec(j.residual);
  w.Put(j.relu);
  w.Put(j.out);
  w.Vec(j.sizes);
  w.Put(uint64_t(j.layers_b.size()));
  for (size_t i = 0; i < j.layers_b.size(); ++i) {
    w.Vec(j.layers_b[i]);
    w.Vec(j.layers_bias.at(i));
  }
}

AccelJob GetJob(Reader& r) {
  AccelJob j;
  j.kind = r.Get<AccelJob::Kind>();
  j.m = r.Get<int>();
  j.k = r.Get<int>();
  j.n = r.Get<int>();
  j.conv = r.Get<host::ConvShape>();
  j.a = r.Vec<uint16_t>();
  j.b = r.Vec<uint16_t>();
  j.trans = r.Get<host::GemmTranspose>();
  j.bias = r.Vec<uint32_t>();
  j.c0 = r.Vec<uint32_t>();
  j.residual = r.Vec<uint32_t>();
  j.relu = r.Get<bool>();
  j.out = r.Get<host::OutFormat>();
  j.sizes = r.Vec<int>();
  const auto layers = r.Get<uint64_t>();
  for (uint64_t i = 0; i < layers; ++i) {
    j.layers_b.push_back(r.Vec<uint16_t>());
    j.layers_bias.push_back(r.Vec<uint32_t>());
  }
  return j;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= size_t(k);
  }
  return true;
}

bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= size_t(k);
  }
  return true;
}

bool Send(int fd, const std::string& msg) {
  const uint64_t n = msg.size();
  return WriteAll(fd, reinterpret_cast<const char*>(&n), sizeof n) &&
         WriteAll(fd, msg.data(), msg.size());
}

// False at the end of the stream (the other process is gone).
bool Receive(int fd, std::string* msg) {
  uint64_t n = 0;
  if (!ReadAll(fd, reinterpret_cast<char*>(&n), sizeof n)) return false;
  msg->resize(size_t(n));
  return ReadAll(fd, msg->data(), msg->size());
}

// A reply's status.
enum : uint8_t { kOk = 0, kNetFailure = 1, kNetError = 2, kOther = 3 };

// What a remote worker says first: the run's key, then this tag (the protocol and the sizes of
// the raw structures it sends: a worker of another build is refused), then its name.
std::string HelloTag() {
  return fmt::format("tpusim-jobs/1 {} {} {}", sizeof(NetStepStats), sizeof(host::ConvShape),
                     sizeof(host::GemmTranspose));
}

// Reads one message of at most `max` bytes within `ms` milliseconds (a stranger on the port may
// send anything, or nothing); false otherwise.
bool ReceiveSmall(int fd, std::string* msg, size_t max, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  auto read_some = [&](char* p, size_t n) {
    while (n > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            end - std::chrono::steady_clock::now())
                            .count();
      pollfd q{fd, POLLIN, 0};
      if (left <= 0 || poll(&q, 1, int(left)) <= 0) return false;
      const ssize_t k = read(fd, p, n);
      if (k <= 0) return false;
      p += k;
      n -= size_t(k);
    }
    return true;
  };
  uint64_t n = 0;
  if (!read_some(reinterpret_cast<char*>(&n), sizeof n) || n > max) return false;
  msg->resize(size_t(n));
  return read_some(msg->data(), msg->size());
}

// A connection to a remote peer: a dead peer or network is noticed in about two minutes of
// silence (jobs themselves may take hours: no read timeout).
void KeepAlive(int fd) {
  int on = 1, idle = 60, intvl = 10, cnt = 6;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

// In a forked child: closes every descriptor but stdin, stdout, stderr and `a` and `b` (other
// pools' pipes, sockets, files of the embedding program).
void CloseAllBut(int a, int b) {
  const int lo = std::min(a, b), hi = std::max(a, b);
  if (lo > 3) close_range(3, unsigned(lo - 1), 0);
  if (hi > lo + 1) close_range(unsigned(lo + 1), unsigned(hi - 1), 0);
  close_range(unsigned(hi + 1), ~0U, 0);
}

static_assert(std::is_trivially_copyable_v<NetStepStats>);

// A worker's life: make the back end, then run the jobs that come until the pipe closes.
[[noreturn]] void WorkerMain(int from, int to, const JobPool::MakeSim& make_sim, bool check,
                             RunOptions opt) {
  opt.progress = nullptr;  // the parent reports progress
  int code = 0;
  try {
    std::unique_ptr<Sim> sim = make_sim();
    std::string msg;
    while (Receive(from, &msg)) {
      Reader r(msg);
      const std::string where = r.Str();
      const AccelJob job = GetJob(r);
      NetStepStats st;
      Writer w;
      uint8_t status = kOk;
      std::string text;
      std::vector<uint32_t> out;
      try {
        out = RunAccelJob(*sim, job, check, opt, where, &st);
      } catch (const NetFailure& e) {
        status = kNetFailure;
        text = e.what();
      } catch (const net::Error& e) {
        status = kNetError;
        text = e.what();
      } catch (const std::exception& e) {
        status = kOther;
        text = fmt::format("{}: {}", where, e.what());
      }
      w.Put(status);
      w.Str(text);
      w.Vec(out);
      w.Put(st);
      if (!Send(to, w.buf())) break;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "tpusim: engine process {}: {}\n", getpid(), e.what());
    code = 1;
  } catch (...) {
    fmt::print(stderr, "tpusim: engine process {}: an unknown exception\n", getpid());
    code = 1;
  }
  _exit(code);
}

// Why a worker's pipe ended: it has exited (its pipes close as it ends), so wait for it, a few
// seconds at most, and say how it ended. Clears *pid once the process is reaped.
std::string ExitText(pid_t* pid) {
  int status = 0;
  for (int i = 0; i < 500 && *pid > 0; ++i) {
    const pid_t r = waitpid(*pid, &status, WNOHANG);
    if (r == *pid) {
      *pid = -1;
      if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
      if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
      break;
    }
    if (r < 0 && errno != EINTR) break;
    usleep(10'000);
  }
  return "closed its pipe";
}

// Adds a part's counters (its program; not its job or its times, which the caller counts).
void Add(NetStepStats& a, const NetStepStats& b) {
  const NetStepStats keep = a;
  a = Sum({a, b});
  a.jobs = keep.jobs;
  a.sim_seconds = keep.sim_seconds;
  a.check_seconds = keep.check_seconds;
  a.step_seconds = keep.step_seconds;
}

}  // namespace

JobPool::JobPool(Sim& dut, bool check, RunOptions opt)
    : dut_(&dut), check_(check), opt_(std::move(opt)) {}

JobPool::JobPool(int processes, const MakeSim& make_sim, bool check, RunOptions opt)
    : check_(check), opt_(std::move(opt)) {
  if (processes < 1) {
    throw std::invalid_argument(fmt::format("jobs must be at least 1 (got {})", processes));
  }
  if (processes > 1) signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe: an error, not a signal
  for (int i = 1; i < processes; ++i) {
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) {
      const std::string err = std::strerror(errno);
      Stop();
      throw std::runtime_error(fmt::format("pipe: {}", err));
    }
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      const std::string err = std::strerror(errno);
      for (int fd : {down[0], down[1], up[0], up[1]}) close(fd);
      Stop();
      throw std::runtime_error(fmt::format("fork: {}", err));
    }
    if (pid == 0) {  // the earlier workers' pipes and anything else open belong to the parent
      CloseAllBut(down[0], up[1]);
      WorkerMain(down[0], up[1], make_sim, check, opt_);
    }
    close(down[0]);
    close(up[1]);
    workers_.push_back(Worker{pid, down[1], up[0], false, fmt::format("engine process {}", pid)});
  }
  try {
    own_ = make_sim();
  } catch (...) {
    Stop();
    throw;
  }
  dut_ = own_.get();
}

namespace {

// The last lines of a file (a launch command's output), for error messages.
std::string Tail(const std::string& path, size_t lines) {
  std::ifstream f(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(f, l);) {
    if (!l.empty()) v.push_back(l);
  }
  std::string r;
  for (size_t i = v.size() > lines ? v.size() - lines : 0; i < v.size(); ++i) {
    r += (r.empty() ? "" : " | ") + v[i];
  }
  return r.empty() ? "(it printed nothing)" : r;
}

// Waits until fd is readable or `ms` pass; false on a timeout.
bool Readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int r = poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

}  // namespace

JobPool::JobPool(int processes, const RemoteLaunch& launch, const MakeSim& make_sim, bool check,
                 RunOptions opt)
    : check_(check), opt_(std::move(opt)) {
  if (processes < 1) {
    throw std::invalid_argument(fmt::format("jobs must be at least 1 (got {})", processes));
  }
  if (launch.command.empty()) throw std::invalid_argument("RemoteLaunch: no command");
  signal(SIGPIPE, SIG_IGN);
  const int want = processes - 1;
  int lfd = -1;
  std::string log;
  auto fail = [&](const std::string& msg) {
    if (lfd >= 0) close(lfd);
    if (launcher_ > 0) kill(launcher_, SIGTERM);  // a start that failed: cancel the rest at once
    Stop();
    if (!log.empty()) unlink(log.c_str());
    throw std::runtime_error(msg);
  };
  if (want > 0) {
    // A listening socket on every interface, a port the kernel picks, and a key the workers must
    // present (another program that finds the port is turned away).
    // IPv6 with IPv4-mapped clients, or IPv4 alone where the host has no IPv6.
    sockaddr_storage ss{};
    socklen_t len = 0;
    lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd >= 0) {
      int off = 0;
      setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
      auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
      a6->sin6_family = AF_INET6;
      a6->sin6_addr = in6addr_any;
      len = sizeof(sockaddr_in6);
    } else {
      lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (lfd < 0) fail(fmt::format("socket: {}", std::strerror(errno)));
      auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
      a4->sin_family = AF_INET;
      a4->sin_addr.s_addr = htonl(INADDR_ANY);
      len = sizeof(sockaddr_in);
    }
    if (bind(lfd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(lfd, 64) != 0 ||
        getsockname(lfd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
      fail(fmt::format("listening for the workers: {}", std::strerror(errno)));
    }
    const uint16_t port = ss.ss_family == AF_INET6
                              ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                              : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const uint64_t key = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    const std::string addr = fmt::format("{}:{}:{:016x}", host, port, key);
    std::vector<std::string> cmd = launch.command;
    for (auto& c : cmd) {
      for (size_t at; (at = c.find("{addr}")) != std::string::npos;) c.replace(at, 6, addr);
    }
    char tmpl[] = "/tmp/tpusim_launch_XXXXXX";
    const int out = mkstemp(tmpl);
    if (out < 0) fail(fmt::format("mkstemp: {}", std::strerror(errno)));
    log = tmpl;
    std::fflush(nullptr);
    launcher_ = fork();
    if (launcher_ < 0) fail(fmt::format("fork: {}", std::strerror(errno)));
    if (launcher_ == 0) {
      dup2(out, 1);
      dup2(out, 2);
      std::vector<char*> argv;
      for (auto& c : cmd) argv.push_back(c.data());
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      fmt::print(stderr, "cannot run {}: {}\n", cmd[0], std::strerror(errno));
      _exit(127);
    }
    close(out);
    const std::string what = fmt::format("the workers' launch command ({} ...)", cmd[0]);
    const auto t0 = std::chrono::steady_clock::now();
    while (int(workers_.size()) < want) {
      const double left =
          launch.connect_timeout_s -
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (left <= 0) {
        fail(fmt::format("{}: {} of {} workers connected in {:.0f} s; it printed: {}", what,
                         workers_.size(), want, launch.connect_timeout_s, Tail(log, 3)));
      }
      int status = 0;
      if (waitpid(launcher_, &status, WNOHANG) == launcher_) {
        launcher_ = -1;
        fail(fmt::format("{} ended ({}) with {} of {} workers connected; it printed: {}", what,
                         WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                           : fmt::format("signal {}", WTERMSIG(status)),
                         workers_.size(), want, Tail(log, 3)));
      }
      if (!Readable(lfd, 100)) continue;
      const int c = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      // The hello, within 2 s and 512 bytes: the key, the tag, the worker's name.
      std::string hello;
      const std::string tag = HelloTag();
      if (!ReceiveSmall(c, &hello, 512, 2000) || hello.size() < 8) {
        close(c);
        continue;
      }
      uint64_t got = 0;
      std::memcpy(&got, hello.data(), 8);
      if (got != key) {
        close(c);
        continue;
      }
      if (hello.compare(8, tag.size() + 1, tag + " ") != 0) {
        close(c);
        fail(fmt::format("{}: a worker of another build connected ('{}', expected '{}')", what,
                         hello.substr(8, tag.size()), tag));
      }
      KeepAlive(c);
      workers_.push_back(
          Worker{-1, c, c, false, "engine process " + hello.substr(8 + tag.size() + 1)});
    }
    close(lfd);
    lfd = -1;
    unlink(log.c_str());
    log.clear();
  }
  try {
    own_ = make_sim();
  } catch (...) {
    Stop();
    throw;
  }
  dut_ = own_.get();
}

void ServeJobs(const std::string& addr, const JobPool::MakeSim& make_sim, bool check,
               RunOptions opt) {
  const size_t k = addr.rfind(':');
  const size_t p = k == std::string::npos || k == 0 ? std::string::npos : addr.rfind(':', k - 1);
  if (p == std::string::npos) {
    fmt::print(stderr, "tpusim: worker: '{}' is not HOST:PORT:KEY\n", addr);
    _exit(1);
  }
  const std::string host = addr.substr(0, p), port = addr.substr(p + 1, k - p - 1);
  uint64_t key = 0;
  try {
    key = std::stoull(addr.substr(k + 1), nullptr, 16);
  } catch (const std::exception&) {
    fmt::print(stderr, "tpusim: worker: '{}' is not HOST:PORT:KEY\n", addr);
    _exit(1);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int fd = -1;
  // The parent listens before it starts the command: a few tries cover a slow name service.
  for (int attempt = 0; attempt < 50 && fd < 0; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) continue;
    for (addrinfo* r = res; r && fd < 0; r = r->ai_next) {
      fd = socket(r->ai_family, r->ai_socktype | SOCK_CLOEXEC, r->ai_protocol);
      if (fd >= 0 && connect(fd, r->ai_addr, r->ai_addrlen) != 0) {
        close(fd);
        fd = -1;
      }
    }
    freeaddrinfo(res);
  }
  if (fd < 0) {
    fmt::print(stderr, "tpusim: worker: cannot connect to {}:{}\n", host, port);
    _exit(1);
  }
  signal(SIGPIPE, SIG_IGN);
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string hello(reinterpret_cast<const char*>(&key), 8);
  hello += fmt::format("{} {} on {}", HelloTag(), getpid(), name);
  if (!Send(fd, hello)) _exit(1);
  KeepAlive(fd);
  WorkerMain(fd, fd, make_sim, check, std::move(opt));
}

JobPool::~JobPool() {
  Stop();
}

void JobPool::Stop() {
  for (Worker& w : workers_) {
    // A worker still running a job (this process gave up waiting on an error) is not waited for.
    if (w.waiting && w.pid > 0) kill(w.pid, SIGKILL);
    close(w.to);  // the end of its input: it exits
    if (w.from != w.to) close(w.from);
  }
  for (Worker& w : workers_) {
    while (w.pid > 0 && waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  workers_.clear();
  if (launcher_ > 0) {  // the launch command ends when its workers have: 10 s, then a signal
    bool done = false;
    for (int i = 0; i < 1000 && !done; ++i) {
      done = waitpid(launcher_, nullptr, WNOHANG) != 0;
      if (!done) usleep(10'000);
    }
    if (!done) {
      kill(launcher_, SIGTERM);
      for (int i = 0; i < 500 && !done; ++i) {
        done = waitpid(launcher_, nullptr, WNOHANG) != 0;
        if (!done) usleep(10'000);
      }
      if (!done) {
        kill(launcher_, SIGKILL);
        while (waitpid(launcher_, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
    }
    launcher_ = -1;
  }
}

std::vector<uint32_t> JobPool::Run(const AccelJob& job, const std::string& where,
                                   NetStepStats* st) {
  // A job whose data do not match its shape runs whole: RunAccelJob names what is wrong.
  const bool conv = job.kind == AccelJob::Kind::kConv;
  const size_t m = size_t(std::max(job.m, 0)), k = size_t(std::max(job.k, 0)),
               n = size_t(std::max(job.n, 0));
  const bool mlp = job.kind == AccelJob::Kind::kMlp;
  const bool consistent = (mlp ? job.layers_b.size() + 1 == job.sizes.size() &&
                                     job.layers_bias.size() == job.layers_b.size()
                               : job.b.size() == k * n) &&
                          (job.bias.empty() || job.bias.size() == n) &&
                          (job.c0.empty() || job.c0.size() == m * n) &&
                          (job.residual.empty() || job.residual.size() == m * n) &&
                          (conv ? job.conv.n >= 1 && job.conv.cout == job.n &&
                                      job.conv.M() == job.m && job.conv.K() == job.k &&
                                      job.a.size() == size_t(job.conv.n) * size_t(job.conv.h) *
                                                          size_t(job.conv.w) * size_t(job.conv.cin)
                                : job.a.size() == m * k);
  const JobSplit s =
      consistent ? PlanSplit(job, processes(), dut_->config().machine.c) : JobSplit{};
  const int parts = s.Parts();
  if (parts <= 1) return RunAccelJob(*dut_, job, check_, opt_, where, st);
  if (broken_) {
    throw NetFailure(fmt::format("{}: an engine process ended earlier in this run", where));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const char* dim = s.dim == JobSplit::Dim::kCols   ? "columns"
                    : s.dim == JobSplit::Dim::kRows ? "rows"
                                                    : "images";
  auto part_where = [&](int i) {
    return fmt::format("{}, part {} of {} ({} {}..{})", where, i + 1, parts, dim,
                       s.bounds[size_t(i)], s.bounds[size_t(i) + 1] - 1);
  };
  // Parts 1.. to the workers, part 0 here, then the workers' replies in order.
  std::vector<std::string> errors(static_cast<size_t>(parts));
  std::vector<int> error_kind(static_cast<size_t>(parts), kOk);
  for (int i = 1; i < parts; ++i) {
    Worker& w = workers_[size_t(i - 1)];
    Writer msg;
    msg.Str(part_where(i));
    PutJob(msg, JobPart(job, s, i));
    if (!Send(w.to, msg.buf())) {
      broken_ = true;
      errors[size_t(i)] = fmt::format("{}: {} {}", part_where(i), w.name,
                                      w.to == w.from ? "closed its connection" : ExitText(&w.pid));
      error_kind[size_t(i)] = kNetFailure;
      continue;
    }
    w.waiting = true;
  }
  std::vector<uint32_t> out(size_t(job.m) * size_t(job.n));
  NetStepStats mine;
  try {
    PutPart(job, s, 0, RunAccelJob(*dut_, JobPart(job, s, 0), check_, opt_, part_where(0), &mine),
            &out);
  } catch (const NetFailure& e) {
    errors[0] = e.what();
    error_kind[0] = kNetFailure;
  } catch (const net::Error& e) {
    errors[0] = e.what();
    error_kind[0] = kNetError;
  } catch (const std::exception& e) {
    errors[0] = fmt::format("{}: {}", part_where(0), e.what());
    error_kind[0] = kOther;
  }
  ++st->jobs;
  Add(*st, mine);
  st->check_seconds += mine.check_seconds;
  for (int i = 1; i < parts; ++i) {
    Worker& w = workers_[size_t(i - 1)];
    if (!w.waiting) continue;
    std::string reply;
    if (!Receive(w.from, &reply)) {
      w.waiting = false;
      broken_ = true;
      errors[size_t(i)] = fmt::format("{}: {} {}", part_where(i), w.name,
                                      w.to == w.from ? "closed its connection" : ExitText(&w.pid));
      error_kind[size_t(i)] = kNetFailure;
      continue;
    }
    w.waiting = false;
    try {
      Reader r(reply);
      const auto status = r.Get<uint8_t>();
      const std::string text = r.Str();
      const auto got = r.Vec<uint32_t>();
      const auto part_st = r.Get<NetStepStats>();
      Add(*st, part_st);
      if (status != kOk) {
        errors[size_t(i)] = text;
        error_kind[size_t(i)] = status;
        continue;
      }
      PutPart(job, s, i, got, &out);
    } catch (const std::exception& e) {  // a malformed reply: this pool is not to be trusted
      broken_ = true;
      errors[size_t(i)] = fmt::format("{}: {}'s reply: {}", part_where(i), w.name, e.what());
      error_kind[size_t(i)] = kNetFailure;
    }
  }
  // The parts' wall time, less this process's wait for its own part's check (counted as the
  // check's).
  st->sim_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() -
                     mine.check_seconds;
  for (int i = 0; i < parts; ++i) {  // the first part's error
    switch (error_kind[size_t(i)]) {
      case kOk: continue;
      case kNetError: throw net::Error(errors[size_t(i)]);
      case kNetFailure: throw NetFailure(errors[size_t(i)]);
      default: throw std::runtime_error(errors[size_t(i)]);
    }
  }
  return out;
}

}  // namespace tpu::tb::accel
