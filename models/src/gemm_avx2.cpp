// SPDX-License-Identifier: Apache-2.0
// The AVX2 GEMM kernel (compiled with -mavx2 -mfma; called only when the CPU has them). Blocks
// of 3 rows × 32 columns: 12 accumulators of 8 fp32 lanes, each k three broadcasts of A and four
// loads of the packed B panel, each B vector used by the three rows. See gemm_kernels.h.
#include <immintrin.h>

#include <cstddef>

#include "gemm_kernels.h"

namespace tpu::gemm::detail {
namespace {

constexpr int kLanes = 8, kVecs = kAvx2Width / kLanes;

inline __m256i Flush(__m256i v, __m256i exp, __m256i sign) {
  const __m256i sub = _mm256_cmpeq_epi32(_mm256_and_si256(v, exp), _mm256_setzero_si256());
  return _mm256_blendv_epi8(v, _mm256_and_si256(v, sign), sub);
}

template <int R, bool Ftz>
inline void Block(int k, const float* ap, const float* panel, uint32_t* const* c_rows, int n0,
                  const __m256i* mask) {
  const __m256i exp = _mm256_set1_epi32(0x7F800000), sign = _mm256_set1_epi32(int(0x80000000u));
  __m256 acc[R][kVecs];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < kVecs; ++j) {
      __m256i v =
          _mm256_maskload_epi32(reinterpret_cast<const int*>(c_rows[r] + n0 + j * kLanes), mask[j]);
      if (Ftz) v = Flush(v, exp, sign);
      acc[r][j] = _mm256_castsi256_ps(v);
    }
  }
  for (int kk = 0; kk < k; ++kk) {
    __m256 a[R];
    for (int r = 0; r < R; ++r) a[r] = _mm256_broadcast_ss(ap + size_t(r) * k + kk);
    for (int j = 0; j < kVecs; ++j) {
      const __m256 b = _mm256_loadu_ps(panel + size_t(kk) * kAvx2Width + j * kLanes);
      for (int r = 0; r < R; ++r) {
        acc[r][j] = _mm256_fmadd_ps(a[r], b, acc[r][j]);
        if (Ftz) acc[r][j] = _mm256_castsi256_ps(Flush(_mm256_castps_si256(acc[r][j]), exp, sign));
      }
    }
  }
  const __m256i nan = _mm256_set1_epi32(0x7FC00000);
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < kVecs; ++j) {
      const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(acc[r][j], acc[r][j], _CMP_UNORD_Q));
      const __m256i v = _mm256_blendv_epi8(_mm256_castps_si256(acc[r][j]), nan, is_nan);
      _mm256_maskstore_epi32(reinterpret_cast<int*>(c_rows[r] + n0 + j * kLanes), mask[j], v);
    }
  }
}

template <bool Ftz>
void Run(int rows, int k, int n, const float* ap, const float* bp, uint32_t* const* c_rows) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int n0 = 0, p = 0; n0 < n; n0 += kAvx2Width, ++p) {
    __m256i mask[kVecs];
    for (int j = 0; j < kVecs; ++j)
      mask[j] = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - n0 - j * kLanes), lane);
    const float* panel = bp + size_t(p) * k * kAvx2Width;
    int i = 0;
    for (; i + 3 <= rows; i += 3) Block<3, Ftz>(k, ap + size_t(i) * k, panel, c_rows + i, n0, mask);
    const float* a = ap + size_t(i) * k;
    switch (rows - i) {
      case 2: Block<2, Ftz>(k, a, panel, c_rows + i, n0, mask); break;
      case 1: Block<1, Ftz>(k, a, panel, c_rows + i, n0, mask); break;
      default: break;
    }
  }
}

}  // namespace

void KernelAvx2(int rows, int k, int n, const float* ap, const float* bp, uint32_t* const* c_rows,
                bool ftz) {
  if (ftz) {
    Run<true>(rows, k, n, ap, bp, c_rows);
  } else {
    Run<false>(rows, k, n, ap, bp, c_rows);
  }
}

}  // namespace tpu::gemm::detail
