// SPDX-License-Identifier: Apache-2.0
// Golden GEMM: C = A·B + C0 with the order of accumulation the numerics contract fixes
// (c = C0; for k = 0..K-1 in order: c = mac(A[m][k], B[k][n], c)). Row-major matrices of raw
// bits: A is M×K bf16, B is K×N bf16, C0 and the result are M×N fp32.
#pragma once

#include <cstdint>
#include <vector>

#include "tpu/numerics.h"

namespace tpu::gemm {

struct Shape {
  int m = 0;
  int k = 0;
  int n = 0;
};

// Throws std::invalid_argument naming the problem when a dimension is < 1 or a matrix has the
// wrong number of elements. An empty c0 means overwrite mode (start from +0).
std::vector<uint32_t> Gemm(const Shape& s, const std::vector<uint16_t>& a,
                           const std::vector<uint16_t>& b, const std::vector<uint32_t>& c0,
                           num::Mode mode);

}  // namespace tpu::gemm
