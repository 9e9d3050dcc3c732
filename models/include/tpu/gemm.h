// SPDX-License-Identifier: Apache-2.0
// Golden GEMM: C = A·B + C0 with the order of accumulation the numerics contract fixes
// (c = C0; for k = 0..K-1 in order: c = mac(A[m][k], B[k][n], c)). Row-major matrices of raw
// bits: A is M×K bf16, B is K×N bf16, C0 and the result are M×N fp32.
//
// Two ways to compute the same bits. The exact kernel calls num::Mac (integer arithmetic, the
// independent oracle) per MAC. The fast kernels use the host's fused multiply-add, which is the
// contract's MAC in IEEE mode (docs/numerics.md: IEEE fusedMultiplyAdd, one rounding), with the
// contract's departures from the FPU done in integer lanes around it: every NaN made canonical
// (0x7FC00000) at the end of a chain (a NaN stays NaN through every later MAC), and in FTZ mode
// subnormal operands read as zeros of their sign and every result flushed after its IEEE rounding
// (not x86's FTZ, which decides before rounding). The FPU runs with its default control word
// (round to nearest, no FTZ/DAZ) for the call, whatever the caller had set. The vector kernels
// (AVX-512, AVX2+FMA) are chosen at run time by what the CPU has; the tests run every kernel the
// CPU has against the exact one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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

// The contract's MACs in place: for each of `rows` rows i, each n < N, for k = 0..K-1 in order,
// c_rows[i][n] = mac(a_rows[i][k], b[k * ldb + n], c_rows[i][n]). A null a_rows[i] is a row of
// +0. The c rows must not overlap each other, A or B. K = 0 leaves C as it is.
void MacRows(int rows, int k, int n, const uint16_t* const* a_rows, const uint16_t* b, size_t ldb,
             uint32_t* const* c_rows, num::Mode mode);

// The kernels. kAuto is the fastest the CPU has (or TPU_GEMM_KERNEL's choice: exact, scalar,
// avx2, avx512).
enum class Kernel : uint8_t { kAuto, kExact, kScalar, kAvx2, kAvx512 };
const char* KernelName(Kernel k);        // "exact", "scalar", "avx2", "avx512" ("auto" for kAuto)
bool KernelAvailable(Kernel k);          // the CPU can run it (kAuto, kExact and kScalar always)
std::vector<Kernel> AvailableKernels();  // kExact, kScalar, then the vector ones the CPU has
// Which kernel MacRows and Gemm use now (never kAuto). SetKernel throws std::invalid_argument for
// a kernel the CPU cannot run; kAuto goes back to the default. Process-wide (tests and benches).
Kernel ActiveKernel();
void SetKernel(Kernel k);
// Parses a kernel name as KernelName writes it (and "auto"); throws naming the valid names.
Kernel ParseKernel(const std::string& name);

}  // namespace tpu::gemm
