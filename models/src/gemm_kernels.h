// SPDX-License-Identifier: Apache-2.0
// The fast GEMM kernels behind gemm::MacRows (gemm.cpp packs and dispatches). Each computes, for
// rows i < rows and columns n < n, c_rows[i][n] = chain over k of fma(a, b, c) in k order, on
// operands already widened to fp32 (and, in FTZ mode, flushed): `ap` is rows × k floats,
// row-major; `bp` is B cut into panels of `Width` columns, each panel k × Width floats,
// row-major, zero past column n. With `ftz` the kernel flushes C on entry and every result
// after its rounding; it makes every NaN 0x7FC00000 before storing. The FPU's control word is
// the caller's business (gemm.cpp sets the default). These files include no standard-library
// templates: code compiled for AVX must not be shared (ODR-merged) with the portable code.
#pragma once

#include <cstdint>

namespace tpu::gemm::detail {

inline constexpr int kAvx512Width = 64;  // 4 × 16 lanes
inline constexpr int kAvx2Width = 32;    // 4 × 8 lanes

void KernelAvx512(int rows, int k, int n, const float* ap, const float* bp, uint32_t* const* c_rows,
                  bool ftz);
void KernelAvx2(int rows, int k, int n, const float* ap, const float* bp, uint32_t* const* c_rows,
                bool ftz);

}  // namespace tpu::gemm::detail
