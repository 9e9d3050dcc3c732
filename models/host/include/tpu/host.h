// SPDX-License-Identifier: Apache-2.0
// The host library: compiles workloads (GEMM, dense layer, MLP, convolution) into
// programs of the instruction set (docs/isa.md) for a given machine, with a plan of where every
// tensor lives in HBM, and moves row-major host tensors into and out of the HBM image.
//
// HBM layouts (every row starts on a 32-byte boundary, as LOAD and STORE require):
//  * TiledMatrix, used for A (bf16 activations), C0 / outputs (fp32 or bf16) and biases (fp32, one
//    row): a rows × cols matrix cut into column tiles of `tile` columns (the last one ragged).
//    Tile t holds columns [t·tile, min(cols, (t+1)·tile)) of every row; row r of tile t starts at
//    base + (t·rows + r)·pitch with pitch = round_up(tile · elem_bytes, 32). A is stored
//    K-tile-major (tile = the K-tile width), outputs N-tile-major (tile = the N-tile width), so one
//    LOAD or STORE with hbm_stride = pitch moves any range of rows of one tile.
//  * WeightTiles, used for B (K × N bf16): (kt, nt) weight tiles of ktile × ntile; row i of tile
//    (kt, nt) starts at base + ((kt·NT + nt)·ktile + i)·pitch, pitch = round_up(ntile · 2, 32).
//  Bytes past a row's valid elements (padding) are never read nor written by the programs.
//
// MLP chaining: a hidden layer's output is stored bf16 N-tile-major with N-tile width T and the
// next layer reads it as its A, K-tile-major with K-tile width T. With the same rows, tile width
// and element size the two layouts are the same bytes, so no re-layout is needed: the compiler
// uses T = min(R, C, the K-tile width the weight buffer allows) at every hidden boundary (when
// R ≠ C the wider dimension is only partly used there; the first layer's K-tiles and the last
// layer's N-tiles use the full array).
//
// Tiling (all compilers share one GEMM emitter):
//  * K-tile width kt_w = min(R, max(1, WgtDepth / 2)); N-tile width C (T at hidden MLP
//    boundaries). S = min(WgtDepth / kt_w, 64) weight slots of kt_w rows (at least 2 when
//    WgtDepth ≥ 2): GEMM g of a layer loads its weight tile into slot g mod S, so the load module
//    can fetch up to S tiles ahead of the array (HBM latency hiding for weight-bound GEMMs).
//  * Activation slots and output blocks (PlanLayer): Sa activation slots of ActDepth / Sa rows
//    (K-group a, in program order, uses slot a mod Sa), blocks of mb rows × nb N-tiles with
//    mb = min(M, ActDepth / Sa, AccDepth / 2), with ActDepth / Sa rounded down to a multiple of 16
//    when Sa > 2 and it is at least 16, and nb·mb ≤ AccDepth / 2 (two accumulator halves; one when
//    AccDepth = 1): nb_max = min(NT, (AccDepth / 2) / mb) N-tiles fit, and the ⌈NT / nb_max⌉
//    N-groups are balanced, nb = ⌈NT / ⌈NT / nb_max⌉⌉ (the last N-group takes the rest). Sa = 2 (1
//    when ActDepth = 1), except when M > ActDepth / 2 (the activation buffer, not M, sets mb) and
//    ActDepth ≥ 3: then Sa = 3 if its plan has a larger D than the 2-slot plan (on a tie the taller
//    2-slot blocks win). So large-M shapes trade block height for prefetch depth, e.g. 4096×256×64
//    on a 16×16 array with 2048-row buffers: Sa = 3, mb = 672, nb = 2, D = 5 instead of Sa = 2,
//    mb = 1024, nb = 2, D = 3. (Four slots, 512 × 4 blocks, D = 13, ran that GEMM faster on the
//    RTL but a biased convolution slower: its per-block bias LOADs stalled the array.) With the
//    DMA's bandwidth known (the workloads' plans), mb is halved (down to 2R) while an estimate of
//    the cycles drops: max(compute, bytes / (0.75 × bandwidth)) + the pipeline's fill (∝ mb) +
//    2% of the bytes' time, so compute-bound plans move the fewest bytes (1024³ on 16×16: blocks of
//    128 rows × 16 N-tiles; without the bytes' share 32 rows, the weights read 32 times, 97.2%
//    instead of 99.1% of the array). Blocks run M-block-major, then groups of N-tiles.
//  * Within a block, K-tiles in increasing k; per K-tile one LOAD of the block's A rows into the
//    activation slot, then per N-tile one LOAD of the weight tile into a weight slot and one GEMM
//    (load_weights, accumulate unless it is the first K-tile in overwrite mode). So for every
//    output the MACs run k = 0 .. K-1 in order, starting from +0, C0 or the bias (the contract).
//  * N-tile-major blocks (LayerPlan::n_outer): when the DMA's bandwidth is known
//    (MachineConfig::dma_bytes_per_cycle, set by the workloads), a block's whole A (mb rows ×
//    K-tiles) fits its slot and a weight tile has at least kMinNOuterWeightTile bytes (smaller
//    tiles, read out of HBM order, stream slowly), the block runs tile by tile instead: per N-tile,
//    its K-tiles in increasing k (the same order per output), A's K-tile kt loaded with tile 0's
//    GEMM on it into row kt·mb of the block's slot (block b in slot b mod Sa). Each tile's STOREs
//    then follow its last GEMM, spread over the block, where K-tile-major they all come in the last
//    K pass and, fp32, need twice the stack's bandwidth (1024³ fp32 on 128x128_8ch: 87% -> 95%).
//    D's activation bound becomes KT·((Sa - 1)·(the fewest N-tiles of a block) + 1).
//  * Initial values: LOADs to the accumulators (compute module) before the block's first GEMM:
//    C0 rows with hbm_stride = pitch. They are emitted among the previous block's K-tiles (from
//    K-tile KT/2, when KT ≥ 2 and the plan is K-tile-major), into the other accumulator half: the
//    machine writes them beside that block's GEMMs (the accumulators' two banks, docs/accel.md)
//    instead of holding the array for the whole LOAD; the first block's come at its start. They
//    are spread over those GEMM groups, one LOAD (a residual's hold and add) every groups / LOADs
//    groups, starting earlier than KT/2 (not before K-tile 1) when each LOAD's ~300 cycles of HBM
//    latency need more room: the machine runs one accumulator LOAD at a time, and in a row the
//    next one held the GEMMs behind it in the compute queue for the latency of the one before
//    (C0 of 32 N-tiles in 49-row blocks on 16x16_1ch: 535,131 -> 418,426 cycles). A bias
//    (version 1.2): one row per N-tile after the block's rows (row acc_base + nb·mb + j, one LOAD
//    for the block's tiles of full width), which the first K-tile's GEMMs read through their
//    `broadcast` mode; when those rows do not fit the accumulator half, a LOAD with hbm_stride = 0
//    writes the bias to every row instead. (Before the two banks the LOAD waited for the array to
//    drain and then wrote a row a cycle through the accumulators' one write port: on every row it
//    cost M·N-tiles cycles, a quarter of a K = 512 layer's compute.)
//  * After the block's last K-tile, one STORE per N-tile (relu / bf16 per the request).
//
// Dependency tokens (race-free by construction, a queue never holds more than D tokens):
//  * Load steps: step g = the LOADs feeding GEMM g. Each step ends with push_next; the step's first
//    LOAD pops a compute→load token for g ≥ D, the one GEMM g−D pushed (push_prev) after it ran.
//    So the load module runs at most D GEMMs ahead: when step g runs, GEMMs g−D+1 .. g−1 may
//    still be reading their slots. D (per layer, PlanLayer) is the largest value that is
//    race-free for both buffers, capped by the machine:
//      D = max(1, min(S, A, QueueDepth, 255)),
//    - weights: step g writes slot g mod S, which GEMM g−S read last, so D ≤ S;
//    - activations (Sa slots, K-group a in slot a mod Sa, loaded in the group's first step g_a):
//      K-group a−Sa ends at GEMM g_a − W(a) − 1, with W(a) the GEMMs of K-groups a−Sa+1 .. a−1
//      (each has its block's N-tiles: nb, or the last N-group's), so D ≤ W(a) + 1 for every
//      a ≥ Sa: A = 1 + the smallest W(a) over a = Sa .. groups − 1 (no bound with at most Sa
//      K-groups; with uniform N-groups A = 1 + (Sa − 1)·nb); with one slot (Sa = 1, W = 0) A = 1
//      once there are 2 K-groups;
//    - QueueDepth: the load module can only run ahead by what the dispatcher has let into the
//      compute queue; 255: the token queues' capacity.
//    Every pop takes a token pushed earlier in program order, so no QueueDepth can deadlock.
//  * Program order: load step g comes before GEMM g - L and what follows it (its block's STOREs,
//    the next block's accumulator LOADs), L = min(D - 1, 2) (0 with block-boundary tokens): the
//    dispatcher fills the modules' queues in program order, so where a step is many GEMMs (a
//    windowed convolution's, one per image) that fill the compute queue, the LOADs behind them
//    reached the load module only as the array finished the step before, and the next block's
//    bands came after it had run dry (make run's 3x3 convolution on 4x4 images: 173,460 ->
//    154,540 cycles). Load step g pops GEMM g - D's token, which comes before it (L < D).
//  * Accumulator halves: block b uses half b mod 2. Its nts N tiles are stored in groups of
//    ⌈nts / 64⌉ (one tile per group up to 64 tiles): the last K tile's GEMM of a group's last tile
//    pushes to store and the group's first STORE pops it, so tiles are stored while the block's
//    next tiles compute (only the last group waits after the last GEMM; at most 128 such tokens
//    wait over two blocks); its last STORE pushes to compute when block b+2 exists, and block b+2's
//    first accumulator write (its C0/bias LOAD or its first GEMM) pops it. So stores of block b
//    overlap the compute of block b+1.
//  * Layers chained through HBM (MLP): a barrier between layers, a 1-row accumulator LOAD (compute)
//    that pops the token the previous layer's last STORE pushed and pushes a token the next
//    layer's first LOAD pops: the next layer reads its A only after it has been written.
//  * In-place accumulate (C += A·B, output = C0's memory) is race-free: each block's C0 LOADs run
//    before the block's GEMMs (in the previous block's, into the other half), and its STOREs
//    after them; blocks touch disjoint rows.
//
// Convolutions through GEMM windows (docs/isa.md, version 1.1; CompileConv): the input stays NHWC
// in HBM as a TiledMatrix of N·H·W pixel rows × Cin with tile kc = min(Cin, K-tile width), and
// the weights are WeightTiles with kseg = Cin (one K-tile per tap and channel chunk, taps in
// order). Blocks of mb consecutive output pixels × nb N-tiles (PlanConvWindow): a block's bands
// (the input rows its pixels' taps read, per image and chunk; one LOAD per chunk and run of images
// whose bands follow each other in HBM, whole images, in the block's first
// load step) fill one of Sa = 2 activation slots or the whole buffer (Sa = 1; im2col when not
// even one pixel's bands fit it); HBM bytes: bands once per N-group, weights once per M-block;
// mb·nb ≤ AccDepth / 2, whole output rows preferred, then the fewest blocks. Kernel-row split
// (LayerPlan::k_groups = kh): a block's K-tiles run per kernel row, each run with only its taps'
// input rows as bands, loaded in the run's first load step into the next slot; taps stay in order,
// so each output's MACs run in the contract's order. Per-tap split with a stride s > 1
// (LayerPlan::phases, k_groups = kh·kw): tap (i, j), dh = i − pad = qh·s + a, dw = j − pad = qw·s +
// c, reads only the input's phase of rows ≡ a and columns ≡ c (mod s), so its run's bands are that
// phase's rows (one LOAD per phase row: ⌈(W − c) / s⌉ pixels with hbm_stride = s · pitch), read
// through windows of stride 1 with offsets qh, qw: s² times fewer bytes per tap than whole rows,
// so taller blocks fit and the weights are read fewer times (ResNet-50's conv5_x strided 3×3 on a
// 16×16 array: 2 blocks instead of 4). Sa, mb, nb and the split are weighed by an
// estimate of their cycles when the DMA's bandwidth is known (PlanLayer's: max(compute, bytes /
// (0.75 × bandwidth)), plus one slot's band loads), else by their bytes with two slots first.
// (ResNet's 7×7×512 3×3 layers on a 16×16 array with 2048-row buffers and one channel: two blocks
// with bands per kernel row, the weights read twice, instead of four blocks: 99.1% of the array
// instead of 64%.) Per K-tile and N-tile one weight LOAD and one GEMM per image segment of the
// block (the first loads the weights, the others reuse them; the first pops the load→compute token,
// the last pushes the tokens): a GEMM group. D counts groups; block b's bands overwrite the slot
// block b − Sa read, and the blocks between hold k_tiles groups per N tile, so D ≤ 1 + k_tiles·(the
// fewest N tiles of a block) with two slots (with the kernel-row split the same holds per run:
// k_tiles / kh in place of k_tiles, run boundaries as block boundaries). With one slot (the bands
// of a block fill more than half the buffer) block b's bands overwrite block b − 1's, so its first
// load step must wait for block b − 1's last group; instead of D = 1 for the whole layer
// (LayerPlan::boundary_wait): D ≤ the fewest groups of a block, the D − 1 groups before each block
// boundary push no token and the boundary's last group does, the boundary's band LOAD pops that one
// (all earlier groups are then done), and the D − 1 load steps after it pop nothing (their tokens
// were never pushed): so the load module still runs D groups ahead inside a block. (ResNet-50's
// stride-2 3×3 layers on a 16×16 array: D = 1 left them 5–35× slower.) A 1×1 convolution without
// padding (ConvProgram::pointwise) is the GEMM emitter on the NHWC input as A (no window: its
// K-tiles load per K-group, as for any GEMM); with a stride s, A's row (n, oh, ow) is input pixel
// (n, s·oh, s·ow), and a block's K-tile comes in by one LOAD per output row it spans (hbm_stride
// = s · the pixel pitch), where windows would read every pixel of the rows (s² times the bytes)
// and hold one output row's bands per block (ResNet-50's stride-2 shortcuts). im2col (written by
// the host, then the GEMM emitter) where windows cannot express the shape or would take more than
// twice im2col's passes over the array (few channels: a window K-tile holds one tap);
// ConvProgram::host_im2col_reason says which.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tpu/isa.h"
#include "tpu/isa_model.h"

namespace tpu::host {

inline constexpr uint64_t kAlign = isa::kHbmAlign;
inline uint64_t RoundUp32(uint64_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

struct TiledMatrix {
  uint64_t base = 0;
  int rows = 0;
  int cols = 0;
  int tile = 0;        // columns per tile
  int elem_bytes = 2;  // 2 bf16, 4 fp32
  int Tiles() const { return (cols + tile - 1) / tile; }
  uint64_t Pitch() const { return RoundUp32(uint64_t(tile) * elem_bytes); }
  uint64_t Bytes() const { return uint64_t(Tiles()) * rows * Pitch(); }
  uint64_t RowAddr(int t, int r) const { return base + (uint64_t(t) * rows + r) * Pitch(); }
  int TileCols(int t) const { return std::min(tile, cols - t * tile); }
};

struct WeightTiles {
  uint64_t base = 0;
  int k = 0;
  int n = 0;
  int ktile = 0;
  int ntile = 0;
  // 0, or K is made of k / kseg segments of kseg rows (a convolution's taps, kseg = Cin), each cut
  // into K-tiles of ktile rows on its own (the last one of a segment ragged): K-tile kt holds rows
  // KTileStart(kt) .. + KTileRows(kt) - 1.
  int kseg = 0;
  int TilesPerSeg() const { return (kseg + ktile - 1) / ktile; }
  int KTiles() const { return kseg ? k / kseg * TilesPerSeg() : (k + ktile - 1) / ktile; }
  int KTileStart(int kt) const {
    return kseg ? kt / TilesPerSeg() * kseg + kt % TilesPerSeg() * ktile : kt * ktile;
  }
  int KTileRows(int kt) const {
    return kseg ? std::min(ktile, kseg - kt % TilesPerSeg() * ktile)
                : std::min(ktile, k - kt * ktile);
  }
  int NTiles() const { return (n + ntile - 1) / ntile; }
  uint64_t Pitch() const { return RoundUp32(uint64_t(ntile) * 2); }
  uint64_t Bytes() const { return uint64_t(KTiles()) * NTiles() * ktile * Pitch(); }
  uint64_t RowAddr(int kt, int nt, int i) const {
    return base + ((uint64_t(kt) * NTiles() + nt) * ktile + i) * Pitch();
  }
};

// Row-major host tensors <-> the HBM image. Throw std::invalid_argument when the vector's size or
// the element type does not match the layout.
void WriteMatrix(isa::Machine& m, const TiledMatrix& l, const std::vector<uint16_t>& bf16);
void WriteMatrix(isa::Machine& m, const TiledMatrix& l, const std::vector<uint32_t>& fp32);
void WriteWeights(isa::Machine& m, const WeightTiles& l, const std::vector<uint16_t>& kxn);
std::vector<uint16_t> ReadMatrixBf16(const isa::Machine& m, const TiledMatrix& l);
std::vector<uint32_t> ReadMatrixFp32(const isa::Machine& m, const TiledMatrix& l);

// A program under construction: instructions (HEADER first, END last) and a bump allocator for
// the tensors (32-byte aligned, from `data_base`). Finish() places the program itself after the
// tensors and checks that everything fits in HbmBytes (std::invalid_argument otherwise).
class Program {
 public:
  explicit Program(const isa::MachineConfig& cfg, uint64_t data_base = 0);
  const isa::MachineConfig& config() const { return cfg_; }
  uint64_t Alloc(uint64_t bytes, const std::string& what);
  TiledMatrix AllocMatrix(int rows, int cols, int tile, int elem_bytes, const std::string& what);
  WeightTiles AllocWeights(int k, int n, int ktile, int ntile, const std::string& what);
  void Emit(const isa::Instr& in) { body_.push_back(in); }
  // Emits a LOAD whose data nobody uses (a barrier's accumulator LOAD): Finish() points it at
  // the program's HEADER, bytes the host always writes (a LOAD of bytes never written reads a
  // device's background: the golden model counts them, RunResult::unwritten_bytes_read).
  void EmitDataless(const isa::Load& l) {
    dataless_.push_back(body_.size());
    body_.push_back(l);
  }
  struct Built {
    std::vector<isa::Instr> instrs;  // HEADER ... END, count filled in
    uint64_t addr = 0;               // where the program goes in HBM
    uint64_t hbm_end = 0;            // first byte past the program (and every tensor)
  };
  Built Finish() const;

 private:
  isa::MachineConfig cfg_;
  uint64_t next_;
  std::vector<isa::Instr> body_;
  std::vector<size_t> dataless_;  // indices into body_ of EmitDataless's LOADs
};

// How the compilers cut the work (see the header comment).
inline constexpr int kMaxWeightSlots = 64;
inline constexpr int kMaxActSlots = 3;
// N-tile-major blocks only with weight tiles of at least this many bytes (PlanLayer).
inline constexpr uint64_t kMinNOuterWeightTile = 4096;

struct Tiling {
  int kt_w = 0;           // K-tile width (first layer's)
  int nt_w = 0;           // N-tile width (last layer's)
  int max_act_slots = 0;  // min(ActDepth, 3): the most activation slots a layer may use
  int wgt_slots = 0;      // S = min(WgtDepth / kt_w, 64), at least 1; a slot holds kt_w rows
  int acc_halves = 0;     // 1 or 2
  int acc_half_rows = 0;
  int depth = 0;  // the machine's bound on D: min(S, QueueDepth, 255); a layer's D may be lower
};
Tiling PlanTiling(const isa::MachineConfig& cfg);

// One layer (one GEMM M×K×N) cut as the emitter cuts it: Sa activation slots, blocks of mb rows ×
// nb N-tiles, and D.
struct LayerPlan {
  int kt_w = 0, nt_w = 0;  // this layer's K- and N-tile widths
  int k_tiles = 0, n_tiles = 0;
  int act_slots = 0;      // Sa: K-group a (in program order) uses slot a mod Sa
  int act_slot_rows = 0;  // ActDepth / Sa: slot j starts at row j·act_slot_rows
  int mb = 0;             // rows per block
  int nb = 0;             // N-tiles per block (the last block of an M-block may have fewer)
  int m_blocks = 0, n_blocks = 0;
  uint64_t gemms = 0;
  int act_bound = 0;  // A: the activation slots' bound on D (INT_MAX when there is none)
  int depth = 0;      // D: how many GEMMs the load module may run ahead (header comment)
  // N-tile-major blocks (header comment): every K-tile of a block's A stays in its slot, and the
  // block runs tile by tile, so each tile's STOREs follow its last GEMM instead of all of them.
  bool n_outer = false;
  // One activation slot with several blocks (windowed convolutions): the block-boundary tokens of
  // the header comment, so D is not 1.
  bool boundary_wait = false;
  // Windowed convolutions: a block's K-tiles in k_groups runs (1, or kh: one per kernel row, its
  // taps' K-tiles, or kh·kw with `phases`), each with its own bands, loaded with the run's first
  // GEMM group into the next activation slot (run r of block b: slot (b·k_groups + r) mod Sa).
  int k_groups = 1;
  // stride > 1, k_groups = kh·kw: run t's bands are tap t's phase (the input rows ≡ a and columns
  // ≡ c mod stride it reads; one LOAD of a phase row's pixels with hbm_stride = stride · pitch),
  // read through windows of stride 1 (header comment).
  bool phases = false;
};
// Throws std::invalid_argument for a dimension < 1 or a tile width beyond the plan's. m_align:
// blocks of a multiple of m_align rows (or one block), for an A stored transposed.
LayerPlan PlanLayer(const isa::MachineConfig& cfg, int m, int k, int n, int kt_w, int nt_w,
                    int m_align = 1);

// What a compiled program does, for checking against the machine's counters.
struct Stats {
  uint64_t macs = 0;
  uint64_t gemms = 0;
  uint64_t loads = 0;      // LOADs to the activation / weight buffers (load module)
  uint64_t acc_loads = 0;  // LOADs to the accumulators (compute module), barriers included
  uint64_t barriers = 0;   // of which barriers between layers
  uint64_t stores = 0;
  uint64_t vector_loads = 0;  // LOADs to the vector memory (store module, version 1.4)
  uint64_t vops = 0;          // VOPs (store module)
  uint64_t blocks = 0;
  uint64_t bytes_written = 0;
};

struct Compiled {
  isa::MachineConfig cfg;
  std::vector<isa::Instr> instrs;
  uint64_t addr = 0;
  uint64_t hbm_end = 0;
  Stats stats;
  uint32_t count() const { return uint32_t(instrs.size()); }
};
// Writes the program into the machine's HBM and runs it.
isa::RunResult Run(isa::Machine& m, const Compiled& p);

enum class Init : uint8_t {
  kOverwrite,   // C = A·B
  kPreload,     // C = C0 + A·B, C0 read from its own tensor
  kAccumulate,  // C += A·B in place: the output is C0's tensor (fp32 output only)
};
enum class OutFormat : uint8_t { kFp32, kBf16 };

struct GemmProgram {
  Compiled prog;
  TiledMatrix a;    // M × K bf16, K-tile-major
  WeightTiles b;    // K × N bf16
  TiledMatrix c0;   // M × N fp32, N-tile-major (rows = 0 when init is overwrite)
  TiledMatrix out;  // M × N, N-tile-major (== c0 for kAccumulate)
};
// Throws std::invalid_argument naming the problem (a dimension < 1, tensors beyond HbmBytes,
// accumulate with a bf16 output, a bad machine configuration).
GemmProgram CompileGemm(const isa::MachineConfig& cfg, int m, int k, int n, Init init,
                        OutFormat out = OutFormat::kFp32, bool relu = false,
                        uint64_t data_base = 0);

// Transposes in hardware (ISA 1.3): C = op(A)·op(B) (+ C0), with op(A) = Aᵀ when `a` and
// op(B) = Bᵀ when `b`, the stored tensor read by transposing LOADs, never copied by the host.
//  * a: GemmProgram::a holds Aᵀ, K × M, as a TiledMatrix in column tiles of the K-tile width
//    (the layout of an M' × K' activation, so a weight gradient reads a forward input as Xᵀ).
//    One transposing LOAD per (K-tile, column tile); blocks start on a column tile.
//  * b: GemmProgram::b holds Bᵀ, N × K, as WeightTiles of C × K-tile-width tiles (a layer's
//    weights when R = C, so an input gradient reads them as Wᵀ): one transposing LOAD per tile.
struct GemmTranspose {
  bool a = false;
  bool b = false;
};
GemmProgram CompileGemm(const isa::MachineConfig& cfg, int m, int k, int n, GemmTranspose trans,
                        Init init, OutFormat out = OutFormat::kFp32, bool relu = false,
                        uint64_t data_base = 0);

struct DenseProgram {
  Compiled prog;
  TiledMatrix a;
  WeightTiles b;
  TiledMatrix bias;      // 1 × N fp32 (rows = 0 without bias)
  TiledMatrix residual;  // M × N fp32 (rows = 0 without a residual)
  TiledMatrix out;
  TiledMatrix out_bf16;  // also_bf16: the output again, bf16 (rows = 0 without)
};
// out = act(A·B + bias): the bias broadcast over rows (LOAD to the accumulators, hbm_stride 0).
// `also_bf16` (with an fp32 output): every STORE twice, the second bf16 into out_bf16 (a
// network's value that both fp32 and bf16 readers take, docs/onnx.md "One program per network").
// `residual` (version 1.5, docs/numerics.md "Residual adds in the accumulators"): the MACs start
// from R ⊕ bias (R, M × N fp32, element by element, one fp32 add; R alone without a bias):
// per block and N-tile, a LOAD with hold of the tile's bias row and a LOAD with add of R's rows
// (a residual add fused into the layer before it, out = act(R + bias + A·B)).
DenseProgram CompileDense(const isa::MachineConfig& cfg, int m, int k, int n, bool bias, bool relu,
                          OutFormat out, uint64_t data_base = 0, bool also_bf16 = false,
                          bool residual = false);

struct MlpProgram {
  Compiled prog;
  TiledMatrix input;                // M × sizes[0] bf16
  std::vector<WeightTiles> w;       // layer i: sizes[i] × sizes[i+1]
  std::vector<TiledMatrix> bias;    // layer i: 1 × sizes[i+1] (rows = 0 without bias)
  std::vector<TiledMatrix> output;  // layer i's output; hidden ones bf16 (the next layer's A)
};
// sizes = {in, hidden..., out} (at least 2 entries). Hidden layers: bf16 outputs, relu if asked;
// the last layer: `out` format, no relu.
MlpProgram CompileMlp(const isa::MachineConfig& cfg, int m, const std::vector<int>& sizes,
                      bool bias, bool relu, OutFormat out, uint64_t data_base = 0);

struct ConvShape {
  int n = 1, h = 1, w = 1, cin = 1, cout = 1;
  int kh = 1, kw = 1, stride = 1, pad = 0;
  int OutH() const { return (h + 2 * pad - kh) / stride + 1; }
  int OutW() const { return (w + 2 * pad - kw) / stride + 1; }
  int M() const { return n * OutH() * OutW(); }
  int K() const { return kh * kw * cin; }
};
// The numerics contract's im2col: row m = (n·OH + oh)·OW + ow, column k = (i·kw + j)·Cin + c;
// taps in the padding are +0. `nhwc` is N×H×W×Cin bf16 row-major.
std::vector<uint16_t> Im2col(const ConvShape& s, const std::vector<uint16_t>& nhwc);

struct ConvProgram {
  Compiled prog;
  ConvShape shape;
  // Through GEMM windows (version 1.1): `a` is the NHWC input itself, N·H·W pixel rows × Cin
  // (tile: the channel chunk), read once per N-group of a block. Else (host_im2col_reason says
  // why) `a` is the im2col patch matrix, M × K, written by the host.
  bool window = false;
  // 1×1, no padding: `a` is the NHWC input itself (K-tile-major), the GEMM's A (with a stride,
  // every stride-th pixel of every stride-th row of it, header comment).
  bool pointwise = false;
  std::string host_im2col_reason;  // empty through windows or pointwise
  LayerPlan plan;                  // the windowed plan (blocks of plan.mb output pixels)
  TiledMatrix a;
  WeightTiles b;         // weights HWIO = [kh][kw][Cin][Cout] row-major = K × Cout (kseg = Cin)
  TiledMatrix bias;      // 1 × Cout (rows = 0 without bias)
  TiledMatrix residual;  // M × Cout fp32, NHWC like out (rows = 0 without: CompileDense's)
  TiledMatrix out;       // M × Cout = NHWC output (N × OH × OW × Cout) once read back row-major
  TiledMatrix out_bf16;  // also_bf16 (CompileDense's)
};
// `windows`: through windows wherever the machine can express them, even where im2col would take
// fewer passes over the array (a whole-network program reads its input where it was stored).
// `residual`: CompileDense's (the MACs start from residual ⊕ bias).
ConvProgram CompileConv(const isa::MachineConfig& cfg, const ConvShape& s, bool bias = false,
                        bool relu = false, OutFormat out = OutFormat::kFp32, uint64_t data_base = 0,
                        bool also_bf16 = false, bool windows = false, bool residual = false);
// The NHWC input into p.a (through Im2col when the program is neither windowed nor pointwise).
void WriteConvInput(isa::Machine& m, const ConvProgram& p, const std::vector<uint16_t>& nhwc);

// Elementwise work on the vector unit (version 1.4, docs/vpu.md): out = the stages applied in
// order to an M × N fp32 tensor A, each stage one vector op (isa::ApplyVectorOp, the numerics
// contract's operation) whose second operand is the stage's `b`:
//   kNone    none (a unary op: relu, exp, ...), kScalar  the stage's fp32 scalar,
//   kTensor  the program's B, M × N fp32,        kRow     the program's B, 1 × N fp32, the same
//                                                          row for every row of A (a bias).
// A stage's result is its next stage's A; every stage with a B reads the same B.
enum class VectorB : uint8_t { kNone, kScalar, kTensor, kRow };
struct VectorStage {
  isa::VectorOp op = isa::VectorOp::kCopy;
  VectorB b = VectorB::kNone;
  uint32_t scalar = 0;  // kScalar: an fp32 pattern
};
struct VectorProgram {
  Compiled prog;
  TiledMatrix a;         // M × N fp32, tiles of C columns
  TiledMatrix b;         // M × N or 1 × N fp32 (rows = 0 when no stage reads B)
  TiledMatrix out;       // M × N fp32
  TiledMatrix out_bf16;  // also_bf16: the output again, bf16 (a second STORE of each block)
};
// Per column tile of C and block of rows (as many as the vector memory holds beside B's rows):
// LOADs of A (and B) into the vector memory, one VOP per stage on the block in place, a STORE
// from the vector memory (in IEEE mode a last relu stage is the STORE's relu: the same bits).
// Throws std::invalid_argument for a machine without the vector unit, a dimension < 1, no stage, a
// stage op that reads the destination (mac, select), or stages that disagree on B's shape.
VectorProgram CompileVector(const isa::MachineConfig& cfg, int m, int n,
                            const std::vector<VectorStage>& stages, uint64_t data_base = 0,
                            bool also_bf16 = false);
// The bits CompileVector's program stores, computed on the host (a machine without the vector
// unit computes a vector step with it): each stage's isa::ApplyVectorOp in `mode`, element by
// element. `a` M × N fp32 bits, `b` as the stages read it (M × N, 1 × N, or empty). Throws
// std::invalid_argument for operands of the wrong size.
std::vector<uint32_t> VectorOnHost(int m, int n, const std::vector<VectorStage>& stages,
                                   std::vector<uint32_t> a, const std::vector<uint32_t>& b,
                                   num::Mode mode);

// Pooling on the vector unit (version 1.4, docs/vpu.md "Pooling"): max or average pooling of an
// N × H × W × C fp32 NHWC tensor (pixel rows of C channels; C cut into column tiles of the
// array's C lanes) over kh × kw windows with strides, dilations and pads on each side, into
// N × OH × OW × C (OH, OW given: the caller's ceil_mode). The numerics contract's vector
// pooling: per output pixel, in window order (row-major) over the taps inside the input,
//  * max: m = -inf, then m = max(m, x) (the vector unit's max, IEEE 754-2019 maximum);
//  * average: s = -0, then s = s + x (the vector unit's add); then for the count n (the taps
//    inside the input, or the window positions inside the padded input with
//    count_include_pad) and y = fp32(1/n): q0 = s·y, r = fma(q0, -n, s), r' = r where |r| > 0
//    (neither a zero nor a NaN), else -0, q = fma(r', y, q0); a window with no tap inside the
//    input gives +0.
// (In IEEE mode q is s / n correctly rounded wherever the quotient is normal or zero, and ±inf
// for an infinite sum: the host's AveragePool bits,
// HostTest.PoolAverageDivisionIsCorrectlyRounded.)
struct PoolShape {
  int n = 1, h = 1, w = 1, c = 1;
  int kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int pt = 0, pl = 0, pb = 0, pr = 0;  // pads: top, left, bottom, right
  int oh = 1, ow = 1;
  bool max = true;
  bool count_include_pad = false;  // average: divide by the window positions in the padding too
  // The average's divisor at output (oh, ow) and the taps inside the input there.
  int Taps(int oh, int ow) const;
  int Divisor(int oh, int ow) const;
};
struct PoolProgram {
  Compiled prog;
  PoolShape shape;
  int tile_h = 0, tile_w = 0, tap_chunk = 0;  // output pixels per vector-memory tile; taps a pass
  bool band = false;     // a tile's input rows in one LOAD (else segments per kernel row)
  TiledMatrix in;        // N·H·W × C fp32 (depthwise: bf16), tiles of the array's C lanes
  TiledMatrix w;         // depthwise: kh·kw × C bf16 (tap (i, j) is row i·kw + j)
  TiledMatrix bias;      // depthwise: 1 × C fp32 (rows = 0 without bias)
  TiledMatrix out;       // N·OH·OW × C fp32 (depthwise: or bf16)
  TiledMatrix out_bf16;  // also_bf16 with an fp32 output: the output again, bf16
};
struct DepthwiseOptions {  // CompileDepthwise
  bool bias = false;
  bool relu = false;
  OutFormat out = OutFormat::kFp32;
  // fp32 input and weights (a per-channel affine map: BatchNormalization on the vector unit,
  // y = fma32(x, a, b) with a 1x1 window) instead of bf16.
  bool fp32 = false;
  bool also_bf16 = false;  // CompilePool's
};
// Per channel tile, image and tile of output pixels (as many as the vector memory holds with the
// input rows they read): an initial value from a constant row, then per kernel row the input
// row segments LOADed and one VOP per tap over every output pixel it reaches, the average's
// division (6 VOPs per rectangle of equal divisors), and STOREs. Throws std::invalid_argument for a
// machine without the vector unit or too small a vector memory (max: 3 rows, average: 5), a
// dimension < 1, negative pads, a window position that starts past the padded input.
// `also_bf16`: every STORE twice, the second bf16 into out_bf16.
PoolProgram CompilePool(const isa::MachineConfig& cfg, const PoolShape& s, uint64_t data_base = 0,
                        bool also_bf16 = false);

// A depthwise convolution on the vector unit (`s`'s window; `max` and `count_include_pad`
// unused): channel c of the output is channel c of the bf16 NHWC input convolved with its own
// kh × kw bf16 weights, from the fp32 bias (or +0), with the store path's relu and format. The
// contract's convolution, bit for bit: per output, the taps in (i, j) order as the vector unit's
// mac of the bf16 values widened (fma32 of them is the MAC: numerics.h), a tap in the padding
// with a +0 operand (as the MXU's windows and im2col give it). The tiles of CompilePool, with
// the kh·kw weight rows and the bias row beside the constant row (a +0).
PoolProgram CompileDepthwise(const isa::MachineConfig& cfg, const PoolShape& s,
                             const DepthwiseOptions& o, uint64_t data_base = 0);

// Softmax (or log-softmax) on the vector unit (version 1.4), the numerics contract's vector
// softmax: `slices` independent slices of `len` elements, stored L × S fp32 (row i holds element
// i of every slice: the slices are the lanes, C to a column tile). Per slice, in index order:
//   m = max of the x_i (the vector unit's max), d_i = x_i - m, e_i = exp(d_i),
//   s = -0, then s = s + e_i;
//   softmax: r = recip(s), q0 = e_i·r, t = fma(q0, -s, e_i), y_i = fma(t, r, q0) (e_i is in
//            [0, 1] and s in [1, L], so t is finite unless the slice holds a NaN);
//   log-softmax: y_i = d_i - log(s).
// Per column tile: the L rows in one LOAD, the max and the sum as accumulating VOPs (one row a
// batch), the rest over all rows (the division in chunks of the rows left). Throws
// std::invalid_argument without the vector unit or when the vector memory holds fewer than
// L + 6 rows (SoftmaxRows).
struct SoftmaxProgram {
  Compiled prog;
  TiledMatrix in;   // L × S fp32, tiles of C lanes
  TiledMatrix out;  // L × S fp32
  int chunk = 0;    // rows a division pass
};
inline int SoftmaxRows(int len) {
  return len + 6;
}
SoftmaxProgram CompileSoftmax(const isa::MachineConfig& cfg, int len, int slices, bool log,
                              uint64_t data_base = 0);
// The bits CompileSoftmax's program stores, computed on the host in the order above (L × S fp32
// bits in and out). Throws std::invalid_argument for `x` of the wrong size.
std::vector<uint32_t> SoftmaxOnHost(int len, int slices, bool log, const std::vector<uint32_t>& x,
                                    num::Mode mode);

// Linking (whole networks as one program, docs/accel.md "Programs of several layers"): programs
// compiled for one machine, each with its tensors in its own HBM range (compile part i with
// data_base = part i−1's Compiled::addr), become one program. A part's input may be bound to an
// earlier part's output: every LOAD of the part that reads the input's bytes reads the output
// instead (the same rows, columns, tiles and element size; the pitch may differ: the LOAD's
// address and stride follow it). Between two parts, when the later one has a LOAD or GEMM in the
// load or compute module, a barrier: the last store-module instruction before it pushes
// store → compute, a 1-row accumulator LOAD pops that token and pushes compute → load, and the
// later part's first LOAD to the activation or weight buffer pops it; so the later part's buffer
// and accumulator writes and its HBM reads come after everything before it. A part of the store
// module alone (the vector unit's jobs) needs none: that module runs in program order and starts
// a vector LOAD only when no STORE is in flight (docs/vpu.md). Throws std::invalid_argument when
// a part leaves tokens in a queue (every part must pop every token it pushes), a binding's
// layouts differ, a LOAD reads a bound input with a stride that is not a multiple of its pitch
// (every k-th row, as a strided 1×1 convolution reads its pixels, follows `to`'s pitch k times),
// or a part writes a bound input.
struct LinkBind {
  TiledMatrix from;  // the part's input, as it was compiled
  TiledMatrix to;    // an earlier part's output
  // > 1: from's row i is to's rows i·group .. i·group + group − 1 side by side (a dense layer
  // reading a channels-last value's pixels as one row: BindableGrouped).
  int group = 1;
};
// An output placed into another tensor (a Concat as address arithmetic): the part's STOREs to
// `from` write its columns to columns col0 .. col0 + from.cols − 1 of `to` instead (the same rows
// and element size; each of from's column tiles starting at a 32-byte boundary of one of to's
// rows; one that reaches into to's next tiles is stored in parts, one STORE per tile of `to`,
// each from its first column: STORE's `col`, version 1.6, so to's tiles must be whole 32 bytes).
struct LinkPlace {
  TiledMatrix from;
  TiledMatrix to;
  int col0 = 0;
};
struct LinkPart {
  Compiled prog;
  std::vector<LinkBind> binds;
  std::vector<LinkPlace> places;
};
Compiled Link(const isa::MachineConfig& cfg, const std::vector<LinkPart>& parts);
// Whether Link can bind `from` to `to`: the same rows, columns, element size and column tiles.
bool Bindable(const TiledMatrix& from, const TiledMatrix& to);
// Whether Link can bind `from` (R rows × g·C) to `to` (R·g rows × C) with group g: each of
// from's column tiles within one pixel's C columns and starting at one of to's tiles, no wider.
bool BindableGrouped(const TiledMatrix& from, const TiledMatrix& to, int group);
// Whether Link can place output `from` at column col0 of `to` (LinkPlace).
bool Placeable(const TiledMatrix& from, const TiledMatrix& to, int col0);

}  // namespace tpu::host
