// SPDX-License-Identifier: Apache-2.0
// The AVX-512 GEMM kernel (compiled with -mavx512f -mfma; called only when the CPU has them).
// Blocks of 4 rows × 64 columns: 16 accumulators of 16 fp32 lanes, each k one broadcast of A per
// row and four loads of the packed B panel. See gemm_kernels.h.
#include <immintrin.h>

#include <cstddef>

#include "gemm_kernels.h"

namespace tpu::gemm::detail {
namespace {

constexpr int kLanes = 16, kVecs = kAvx512Width / kLanes;

template <int R, bool Ftz>
inline void Block(int k, const float* ap, const float* panel, uint32_t* const* c_rows, int n0,
                  const __mmask16* mask) {
  const __m512i exp = _mm512_set1_epi32(0x7F800000), sign = _mm512_set1_epi32(int(0x80000000u));
  __m512 acc[R][kVecs];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < kVecs; ++j) {
      __m512i v = _mm512_maskz_loadu_epi32(mask[j], c_rows[r] + n0 + j * kLanes);
      if (Ftz) v = _mm512_mask_and_epi32(v, _mm512_testn_epi32_mask(v, exp), v, sign);
      acc[r][j] = _mm512_castsi512_ps(v);
    }
  }
  for (int kk = 0; kk < k; ++kk) {
    __m512 b[kVecs];
    for (int j = 0; j < kVecs; ++j)
      b[j] = _mm512_loadu_ps(panel + size_t(kk) * kAvx512Width + j * kLanes);
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(ap[size_t(r) * k + kk]);
      for (int j = 0; j < kVecs; ++j) {
        acc[r][j] = _mm512_fmadd_ps(a, b[j], acc[r][j]);
        if (Ftz) {
          const __m512i v = _mm512_castps_si512(acc[r][j]);
          acc[r][j] = _mm512_castsi512_ps(
              _mm512_mask_and_epi32(v, _mm512_testn_epi32_mask(v, exp), v, sign));
        }
      }
    }
  }
  const __m512i nan = _mm512_set1_epi32(0x7FC00000);
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < kVecs; ++j) {
      const __mmask16 is_nan = _mm512_cmp_ps_mask(acc[r][j], acc[r][j], _CMP_UNORD_Q);
      const __m512i v = _mm512_mask_mov_epi32(_mm512_castps_si512(acc[r][j]), is_nan, nan);
      _mm512_mask_storeu_epi32(c_rows[r] + n0 + j * kLanes, mask[j], v);
    }
  }
}

template <bool Ftz>
void Run(int rows, int k, int n, const float* ap, const float* bp, uint32_t* const* c_rows) {
  for (int n0 = 0, p = 0; n0 < n; n0 += kAvx512Width, ++p) {
    __mmask16 mask[kVecs];
    for (int j = 0; j < kVecs; ++j) {
      const int left = n - n0 - j * kLanes;
      mask[j] = left >= kLanes ? __mmask16(0xFFFF)
                : left <= 0    ? __mmask16(0)
                               : __mmask16((1u << left) - 1);
    }
    const float* panel = bp + size_t(p) * k * kAvx512Width;
    int i = 0;
    for (; i + 4 <= rows; i += 4) Block<4, Ftz>(k, ap + size_t(i) * k, panel, c_rows + i, n0, mask);
    const float* a = ap + size_t(i) * k;
    switch (rows - i) {
      case 3: Block<3, Ftz>(k, a, panel, c_rows + i, n0, mask); break;
      case 2: Block<2, Ftz>(k, a, panel, c_rows + i, n0, mask); break;
      case 1: Block<1, Ftz>(k, a, panel, c_rows + i, n0, mask); break;
      default: break;
    }
  }
}

}  // namespace

void KernelAvx512(int rows, int k, int n, const float* ap, const float* bp, uint32_t* const* c_rows,
                  bool ftz) {
  if (ftz) {
    Run<true>(rows, k, n, ap, bp, c_rows);
  } else {
    Run<false>(rows, k, n, ap, bp, c_rows);
  }
}

}  // namespace tpu::gemm::detail
