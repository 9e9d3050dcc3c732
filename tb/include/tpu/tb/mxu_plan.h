// SPDX-License-Identifier: Apache-2.0
// Tiling a GEMM M×K×N into the matrix unit's tile operations (rtl/array/tpu_mxu.sv).
//
// The output is cut into blocks that fit half of the accumulators (so that one block's results
// can be stored while the next block fills the other half). Within a block the K-tiles run in
// increasing k (the numerics contract's order) and, for each K-tile, every N-tile in turn: a
// K-tile's partial sums are then written M·⌈N/C⌉ cycles before the next K-tile reads them, which
// hides the accumulator round trip whenever that product exceeds R·P + 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpu/gemm.h"

namespace tpu::tb {

struct ArrayConfig {
  int rows = 16;
  int cols = 16;
  int pipe = 1;          // MAC pipeline depth P
  int acc_depth = 4096;  // accumulator rows per column
  std::string Name() const;
};

// One command of the matrix unit, with where its data comes from.
struct TileOp {
  int rows = 0;                // activation rows (beats)
  int kv = 0;                  // valid weight rows (1..R); rows beyond get −0 × +0
  int nv = 0;                  // valid weight columns (1..C); results beyond are not written
  int addr = 0;                // first accumulator row
  bool acc = false;            // accumulate onto the stored value (else start from +0)
  bool load_w = false;         // load a new weight tile first (kv beats), else reuse the last one
  int m0 = 0, k0 = 0, n0 = 0;  // the GEMM coordinates of the tile's first element
  bool bcast = false;          // start every row from accumulator row src (a bias) instead
  int src = 0;
};

// A block: output rows [m0, m0+rows) × columns [n0, n0+cols) live in accumulator rows
// base + (n_tile − first n_tile)·rows + (m − m0) while its operations run.
struct Block {
  int m0 = 0, rows = 0, n0 = 0, cols = 0;
  int base = 0;
  std::vector<TileOp> ops;
};

// Where the results start from (the numerics contract's C0).
enum class Init : uint8_t {
  kOverwrite,   // +0: the first K-tile runs in overwrite mode
  kPreload,     // a C0 matrix, written into the accumulators through the load port
  kAccumulate,  // whatever the accumulators hold (the previous call's results): one block only
  kBias,        // a bias row (C0 is 1 × N): one accumulator row per N-tile of a block, after the
                // block's rows, loaded through the load port; the first K-tile's commands start
                // every row from it (broadcast)
};

struct Plan {
  gemm::Shape shape;
  ArrayConfig array;
  Init init = Init::kOverwrite;
  std::vector<Block> blocks;
  size_t NumOps() const;
};

// Throws std::invalid_argument naming the problem for a shape or configuration it cannot run.
Plan PlanGemm(const gemm::Shape& shape, const ArrayConfig& array, Init init = Init::kOverwrite);

}  // namespace tpu::tb

namespace tpu::tb {

// Cycle references for one GEMM on a Rows × Cols array with MAC depth P, F = ⌈K/R⌉·⌈N/C⌉ folds:
// the fully pipelined limit R + F·M + (F−1)·max(0, R−M) + P·R + C − 2, and the figure the
// SCALE-Sim simulator reports for a conventional weight-stationary array, F·(2R + C + M − 2) − 1.
uint64_t PipelinedLimit(const gemm::Shape& s, const ArrayConfig& a);
uint64_t ScaleSimCycles(const gemm::Shape& s, const ArrayConfig& a);

}  // namespace tpu::tb
