// SPDX-License-Identifier: Apache-2.0
#include "tpu/gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define TPU_GEMM_X86 1
#endif

#include "gemm_kernels.h"

namespace tpu::gemm {
namespace {

// Rows of A widened per block (the packed block stays in the caches beside B's panel).
constexpr int kRowBlock = 96;

bool CpuHas(Kernel k) {
#ifdef TPU_GEMM_X86
  switch (k) {
    case Kernel::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Kernel::kAvx512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    default: return true;
  }
#else
  return k != Kernel::kAvx2 && k != Kernel::kAvx512;
#endif
}

Kernel Fastest() {
  if (CpuHas(Kernel::kAvx512)) return Kernel::kAvx512;
  if (CpuHas(Kernel::kAvx2)) return Kernel::kAvx2;
  return Kernel::kScalar;
}

Kernel Default() {
  const char* env = std::getenv("TPU_GEMM_KERNEL");
  if (env == nullptr || *env == '\0') return Fastest();
  const Kernel k = ParseKernel(env);  // throws on a bad name
  if (k == Kernel::kAuto) return Fastest();
  if (!CpuHas(k)) {
    throw std::invalid_argument(
        fmt::format("TPU_GEMM_KERNEL={}: this CPU cannot run that kernel", env));
  }
  return k;
}

std::atomic<Kernel>& Active() {
  static std::atomic<Kernel> k{Default()};
  return k;
}

// The FPU's default control word for the call (round to nearest, no FTZ/DAZ, exceptions
// masked), whatever the caller had set; restored on return.
class DefaultFpu {
 public:
#ifdef TPU_GEMM_X86
  DefaultFpu() : saved_(_mm_getcsr()) {
    _mm_setcsr(0x1F80);
  }
  ~DefaultFpu() {
    _mm_setcsr(saved_);
  }

 private:
  unsigned saved_;
#endif
};

// bf16 operand -> fp32 as the kernels read it: exact widening, and in FTZ mode a subnormal read
// as a zero of its sign.
inline float Widen(uint16_t x, bool ftz) {
  const uint32_t bits = num::Bf16ToFp32(ftz ? num::Flush16(x) : x);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// B widened into panels of `width` columns, each k × width, zero past column n.
std::vector<float> PackB(int k, int n, const uint16_t* b, size_t ldb, int width, bool ftz) {
  const int panels = (n + width - 1) / width;
  std::vector<float> out(size_t(panels) * k * width, 0.0f);
  for (int p = 0; p < panels; ++p) {
    const int n0 = p * width, w = std::min(width, n - n0);
    float* dst = out.data() + size_t(p) * k * width;
    for (int kk = 0; kk < k; ++kk) {
      const uint16_t* src = b + size_t(kk) * ldb + n0;
      for (int j = 0; j < w; ++j) dst[size_t(kk) * width + j] = Widen(src[j], ftz);
    }
  }
  return out;
}

// The portable kernel: std::fma (IEEE fusedMultiplyAdd on binary32), one row at a time.
void KernelScalar(int rows, int k, int n, const float* ap, const float* bp, uint32_t* const* c_rows,
                  bool ftz) {
  std::vector<float> c(static_cast<size_t>(n));
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < n; ++j) {
      const uint32_t bits = ftz ? num::Flush32(c_rows[i][j]) : c_rows[i][j];
      std::memcpy(&c[size_t(j)], &bits, 4);
    }
    for (int kk = 0; kk < k; ++kk) {
      const float a = ap[size_t(i) * k + kk];
      const float* b = bp + size_t(kk) * n;
      for (int j = 0; j < n; ++j) {
        c[size_t(j)] = std::fma(a, b[j], c[size_t(j)]);
        if (ftz) {
          uint32_t bits;
          std::memcpy(&bits, &c[size_t(j)], 4);
          if (num::IsSubnormal32(bits)) c[size_t(j)] = std::signbit(c[size_t(j)]) ? -0.0f : 0.0f;
        }
      }
    }
    for (int j = 0; j < n; ++j) {
      uint32_t bits;
      std::memcpy(&bits, &c[size_t(j)], 4);
      c_rows[i][j] = num::IsNaN32(bits) ? num::kFp32CanonicalNaN : bits;
    }
  }
}

}  // namespace

const char* KernelName(Kernel k) {
  switch (k) {
    case Kernel::kAuto: return "auto";
    case Kernel::kExact: return "exact";
    case Kernel::kScalar: return "scalar";
    case Kernel::kAvx2: return "avx2";
    case Kernel::kAvx512: return "avx512";
  }
  return "?";
}

Kernel ParseKernel(const std::string& name) {
  for (Kernel k : {Kernel::kAuto, Kernel::kExact, Kernel::kScalar, Kernel::kAvx2, Kernel::kAvx512})
    if (name == KernelName(k)) return k;
  throw std::invalid_argument(
      fmt::format("unknown GEMM kernel '{}' (auto, exact, scalar, avx2 or avx512)", name));
}

bool KernelAvailable(Kernel k) {
  return CpuHas(k);
}

std::vector<Kernel> AvailableKernels() {
  std::vector<Kernel> out{Kernel::kExact, Kernel::kScalar};
  for (Kernel k : {Kernel::kAvx2, Kernel::kAvx512})
    if (CpuHas(k)) out.push_back(k);
  return out;
}

Kernel ActiveKernel() {
  return Active().load();
}

void SetKernel(Kernel k) {
  if (!CpuHas(k)) {
    throw std::invalid_argument(
        fmt::format("GEMM kernel {}: this CPU cannot run it", KernelName(k)));
  }
  Active().store(k == Kernel::kAuto ? Fastest() : k);
}

void MacRows(int rows, int k, int n, const uint16_t* const* a_rows, const uint16_t* b, size_t ldb,
             uint32_t* const* c_rows, num::Mode mode) {
  if (rows <= 0 || k <= 0 || n <= 0) return;
  const Kernel kernel = ActiveKernel();
  if (kernel == Kernel::kExact) {
    for (int i = 0; i < rows; ++i) {
      uint32_t* c = c_rows[i];
      for (int kk = 0; kk < k; ++kk) {
        const uint16_t a = a_rows[i] ? a_rows[i][kk] : uint16_t{0};
        const uint16_t* brow = b + size_t(kk) * ldb;
        for (int j = 0; j < n; ++j) c[j] = num::Mac(a, brow[j], c[j], mode);
      }
    }
    return;
  }
  const bool ftz = mode == num::Mode::kFtz;
  const int width = kernel == Kernel::kAvx512 ? detail::kAvx512Width
                    : kernel == Kernel::kAvx2 ? detail::kAvx2Width
                                              : n;
  const std::vector<float> bp = PackB(k, n, b, ldb, width, ftz);
  std::vector<float> ap(size_t(std::min(rows, kRowBlock)) * k);
  DefaultFpu fpu;
  for (int i0 = 0; i0 < rows; i0 += kRowBlock) {
    const int nr = std::min(kRowBlock, rows - i0);
    for (int i = 0; i < nr; ++i) {
      const uint16_t* a = a_rows[i0 + i];
      float* dst = ap.data() + size_t(i) * k;
      for (int kk = 0; kk < k; ++kk) dst[kk] = a ? Widen(a[kk], ftz) : 0.0f;
    }
    uint32_t* const* c = c_rows + i0;
    switch (kernel) {
#ifdef TPU_GEMM_X86
      case Kernel::kAvx512: detail::KernelAvx512(nr, k, n, ap.data(), bp.data(), c, ftz); break;
      case Kernel::kAvx2: detail::KernelAvx2(nr, k, n, ap.data(), bp.data(), c, ftz); break;
#endif
      default: KernelScalar(nr, k, n, ap.data(), bp.data(), c, ftz); break;
    }
  }
}

std::vector<uint32_t> Gemm(const Shape& s, const std::vector<uint16_t>& a,
                           const std::vector<uint16_t>& b, const std::vector<uint32_t>& c0,
                           num::Mode mode) {
  if (s.m < 1 || s.k < 1 || s.n < 1) {
    throw std::invalid_argument(
        fmt::format("gemm: dimensions must be at least 1, got M={} K={} N={}", s.m, s.k, s.n));
  }
  const size_t mk = size_t(s.m) * s.k, kn = size_t(s.k) * s.n, mn = size_t(s.m) * s.n;
  if (a.size() != mk || b.size() != kn || (!c0.empty() && c0.size() != mn)) {
    throw std::invalid_argument(fmt::format(
        "gemm: matrix sizes A={} B={} C0={} do not match M={} K={} N={} (want {}, {}, {} or 0)",
        a.size(), b.size(), c0.size(), s.m, s.k, s.n, mk, kn, mn));
  }
  std::vector<uint32_t> c = c0.empty() ? std::vector<uint32_t>(mn, 0u) : c0;
  std::vector<const uint16_t*> a_rows(size_t(s.m));
  std::vector<uint32_t*> c_rows(size_t(s.m));
  for (int m = 0; m < s.m; ++m) {
    a_rows[size_t(m)] = &a[size_t(m) * s.k];
    c_rows[size_t(m)] = &c[size_t(m) * s.n];
  }
  MacRows(s.m, s.k, s.n, a_rows.data(), b.data(), size_t(s.n), c_rows.data(), mode);
  return c;
}

}  // namespace tpu::gemm
