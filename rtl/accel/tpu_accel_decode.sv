// SPDX-License-Identifier: Apache-2.0
// Decodes and checks one 32-byte instruction (docs/isa.md) against the machine, in the order the
// golden model (tpu::isa::Decode, tpu::isa::Check) does, so that both report the same error code:
// the HEADER-at-pc-0 rule, opcode, reserved bits and bytes, dependency flags, then the rules of
// the kind, fields before HBM addresses, each in the order of the layout. Purely combinational.
// With VmemDepth > 0 the machine has the vector unit (version 1.4's VOP, LOAD into the vector
// memory, STORE from it: docs/vpu.md); with 0 it decodes as version 1.3.
module tpu_accel_decode #(
  parameter int unsigned Rows        = 16,
  parameter int unsigned Cols        = 16,
  parameter int unsigned ActDepth    = 2048,
  parameter int unsigned WgtDepth    = 2048,
  parameter int unsigned AccDepth    = 4096,
  parameter int unsigned VmemDepth   = 0,     // 0: no vector unit
  parameter int unsigned HbmAddrBits = 31     // HbmBytes = 2^HbmAddrBits
) (
  input  logic [255:0] instr_i,
  input  logic         pc_zero_i,      // the instruction is instruction 0
  input  logic [31:0]  count_i,        // the program length the host wrote
  input  logic         w_loaded_i,     // an earlier GEMM loaded weights ...
  input  logic [15:0]  w_kv_i,         // ... with this kv and nv
  input  logic [15:0]  w_nv_i,
  output logic [3:0]   err_o,          // tpu::isa::ErrorCode, 0 when the instruction is legal
  output logic [1:0]   unit_o          // 0 load, 1 compute, 2 store, 3 command (HEADER) / all (END)
);

  // Field names, opcodes and error codes: tpu_isa_pkg (generated from rtl/accel/isa.json).
  localparam logic [3:0] ErrOk     = tpu_isa_pkg::ErrOk;
  localparam logic [3:0] ErrOpcode = tpu_isa_pkg::ErrOpcode;
  localparam logic [3:0] ErrResvd  = tpu_isa_pkg::ErrReserved;
  localparam logic [3:0] ErrHeader = tpu_isa_pkg::ErrHeader;
  localparam logic [3:0] ErrShape  = tpu_isa_pkg::ErrShape;
  localparam logic [3:0] ErrField  = tpu_isa_pkg::ErrField;
  localparam logic [3:0] ErrHbm    = tpu_isa_pkg::ErrHbm;
  localparam logic [3:0] ErrWindow = tpu_isa_pkg::ErrWindow;

  localparam bit Vec = VmemDepth > 0;

  logic [7:0]  op, flags;
  logic [31:0] used, nonzero;
  logic        pop_prev, pop_next, push_prev, push_next;

  assign op        = tpu_isa_pkg::instr_opcode(instr_i);
  assign flags     = tpu_isa_pkg::instr_flags(instr_i);
  assign pop_prev  = instr_i[tpu_isa_pkg::FlagPopPrev];
  assign pop_next  = instr_i[tpu_isa_pkg::FlagPopNext];
  assign push_prev = instr_i[tpu_isa_pkg::FlagPushPrev];
  assign push_next = instr_i[tpu_isa_pkg::FlagPushNext];

  // The fields each rule reads, by opcode.
  logic [7:0]  load_buffer, load_mode, store_format, store_activation, gemm_mode;
  logic [15:0] load_dst, load_rows, load_elems, store_acc, store_rows, store_elems, store_col;
  logic [15:0] gemm_act, gemm_wgt, gemm_acc, gemm_rows, gemm_kv, gemm_nv;
  logic [63:0] load_addr, store_addr;
  logic [31:0] load_stride, store_stride;
  assign load_buffer      = tpu_isa_pkg::load_buffer(instr_i);
  assign load_mode        = tpu_isa_pkg::load_mode(instr_i);
  assign load_addr        = tpu_isa_pkg::load_hbm_addr(instr_i);
  assign load_stride      = tpu_isa_pkg::load_hbm_stride(instr_i);
  assign load_dst         = tpu_isa_pkg::load_dst(instr_i);
  assign load_rows        = tpu_isa_pkg::load_rows(instr_i);
  assign load_elems       = tpu_isa_pkg::load_elems(instr_i);
  assign gemm_act         = tpu_isa_pkg::gemm_act(instr_i);
  assign gemm_wgt         = tpu_isa_pkg::gemm_wgt(instr_i);
  assign gemm_acc         = tpu_isa_pkg::gemm_acc(instr_i);
  assign gemm_rows        = tpu_isa_pkg::gemm_rows(instr_i);
  assign gemm_kv          = tpu_isa_pkg::gemm_kv(instr_i);
  assign gemm_nv          = tpu_isa_pkg::gemm_nv(instr_i);
  assign gemm_mode        = tpu_isa_pkg::gemm_mode(instr_i);
  assign store_format     = tpu_isa_pkg::store_format(instr_i);
  assign store_activation = tpu_isa_pkg::store_activation(instr_i);
  assign store_addr       = tpu_isa_pkg::store_hbm_addr(instr_i);
  assign store_stride     = tpu_isa_pkg::store_hbm_stride(instr_i);
  assign store_acc        = tpu_isa_pkg::store_acc(instr_i);
  assign store_rows       = tpu_isa_pkg::store_rows(instr_i);
  assign store_elems      = tpu_isa_pkg::store_elems(instr_i);
  assign store_col        = tpu_isa_pkg::store_col(instr_i);

  // Version 1.4 (the vector unit): LOAD buffer 3, STORE's source, VOP.
  logic        load_vmem, store_vmem, vop_bvmem, vop_scalar, vop_reads_b;
  logic [7:0]  load_format, store_source, vop_op, vop_spaces;
  logic [15:0] vop_n, vop_m;
  assign load_vmem    = Vec && load_buffer == tpu_isa_pkg::BufVmem;
  assign load_format  = tpu_isa_pkg::load_format(instr_i);
  assign store_source = tpu_isa_pkg::store_source(instr_i);
  assign store_vmem   = Vec && store_source == tpu_isa_pkg::SrcVmem;
  assign vop_op       = tpu_isa_pkg::vop_op(instr_i);
  assign vop_spaces   = tpu_isa_pkg::vop_spaces(instr_i);
  assign vop_bvmem    = instr_i[tpu_isa_pkg::VopBVmemBit];
  assign vop_scalar   = instr_i[tpu_isa_pkg::VopBScalarBit];
  assign vop_n        = tpu_isa_pkg::vop_n(instr_i);
  assign vop_m        = tpu_isa_pkg::vop_m(instr_i);
  assign vop_reads_b  = vop_op < 8'(tpu_isa_pkg::NumVectorOps) &&
                        tpu_isa_pkg::VopReadsB[5'(vop_op)];

  // The last row an operand of a VOP addresses: base + (m - 1)·outer + (n - 1)·inner.
  function automatic logic [33:0] vop_last(input logic [15:0] base, input logic [15:0] inner,
                                           input logic [15:0] outer, input logic [15:0] n,
                                           input logic [15:0] m);
    vop_last = 34'(base) + (34'(m) - 34'd1) * 34'(outer) + (34'(n) - 34'd1) * 34'(inner);
  endfunction
  // (Constant 0 without the vector unit: the rules below never apply there, and the products
  // fold away.)
  logic [33:0] vop_last_a, vop_last_b, vop_last_d;
  assign vop_last_a = !Vec ? '0 : vop_last(tpu_isa_pkg::vop_a(instr_i),
                                           tpu_isa_pkg::vop_asi(instr_i),
                                           tpu_isa_pkg::vop_aso(instr_i), vop_n, vop_m);
  assign vop_last_b = !Vec ? '0 : vop_last(tpu_isa_pkg::vop_b(instr_i),
                                           tpu_isa_pkg::vop_bsi(instr_i),
                                           tpu_isa_pkg::vop_bso(instr_i), vop_n, vop_m);
  assign vop_last_d = !Vec ? '0 : vop_last(tpu_isa_pkg::vop_d(instr_i),
                                           tpu_isa_pkg::vop_dsi(instr_i),
                                           tpu_isa_pkg::vop_dso(instr_i), vop_n, vop_m);
  logic [33:0] vop_depth_a, vop_depth_b, vop_depth_d;
  assign vop_depth_d = 34'(VmemDepth);
  assign vop_depth_a = instr_i[tpu_isa_pkg::VopAVmemBit] ? 34'(VmemDepth) : 34'(AccDepth);
  assign vop_depth_b = vop_bvmem ? 34'(VmemDepth) : 34'(AccDepth);

  for (genvar i = 0; i < 32; i++) begin : gen_nz
    assign nonzero[i] = instr_i[8*i +: 8] != 8'd0;
  end

  // The bytes each opcode names (bytes 0 and 1 always).
  always_comb begin
    used = tpu_isa_pkg::UsedEnd;
    case (op)
      tpu_isa_pkg::OpHeader: used = tpu_isa_pkg::UsedHeader;
      tpu_isa_pkg::OpLoad:   used = load_vmem ? tpu_isa_pkg::UsedLoadVector
                                          : tpu_isa_pkg::UsedLoad;
      tpu_isa_pkg::OpGemm:   used = tpu_isa_pkg::UsedGemm;
      tpu_isa_pkg::OpStore:  used = Vec ? tpu_isa_pkg::UsedStoreVector : tpu_isa_pkg::UsedStore;
      tpu_isa_pkg::OpVop:    used = Vec ? tpu_isa_pkg::UsedVop : tpu_isa_pkg::UsedEnd;
      default:               used = tpu_isa_pkg::UsedEnd;
    endcase
  end

  // Which module executes the instruction (a LOAD to the accumulators is the compute module's,
  // one to the vector memory and VOP the store module's).
  always_comb begin
    unit_o = 2'd3;
    case (op)
      tpu_isa_pkg::OpLoad:  unit_o = load_vmem ? 2'd2 :
                                     (load_buffer == tpu_isa_pkg::BufAcc) ? 2'd1 : 2'd0;
      tpu_isa_pkg::OpVop:   unit_o = Vec ? 2'd2 : 2'd3;
      tpu_isa_pkg::OpGemm:  unit_o = 2'd1;
      tpu_isa_pkg::OpStore: unit_o = 2'd2;
      default:              unit_o = 2'd3;
    endcase
  end

  // HBM range: rows-1 strides plus one row of row_bytes from addr, below 2^HbmAddrBits.
  function automatic logic hbm_bad(input logic [63:0] a, input logic [31:0] s,
                                   input logic [15:0] rows, input logic [17:0] row_bytes);
    logic [65:0] span, last;
    span = (66'(rows) - 66'd1) * 66'(s) + 66'(row_bytes);
    last = 66'(a) + span;
    hbm_bad = (a[4:0] != 5'd0) || (s[4:0] != 5'd0) || (66'(a) >= (66'd1 << HbmAddrBits)) ||
              (last > (66'd1 << HbmAddrBits));
  endfunction
  // The order within hbm_bad (alignment of addr, of stride, range) gives one code either way.

  logic [17:0] ld_row_bytes, st_row_bytes;
  logic [16:0] ld_depth, ld_max;
  assign ld_row_bytes = (load_buffer == tpu_isa_pkg::BufAcc ||
                        (load_vmem && load_format != tpu_isa_pkg::FmtBf16))
                       ? 18'(load_elems) * 18'd4 : 18'(load_elems) * 18'd2;
  assign st_row_bytes = (store_format == tpu_isa_pkg::FmtBf16) ? 18'(store_elems) * 18'd2
                                                               : 18'(store_elems) * 18'd4;
  always_comb begin
    ld_depth = 17'(ActDepth);
    ld_max   = 17'(Rows);
    if (load_buffer == tpu_isa_pkg::BufWgt) begin
      ld_depth = 17'(WgtDepth);
      ld_max   = 17'(Cols);
    end else if (load_buffer == tpu_isa_pkg::BufAcc) begin
      ld_depth = 17'(AccDepth);
      ld_max   = 17'(Cols);
    end else if (load_vmem) begin
      ld_depth = 17'(VmemDepth);
      ld_max   = 17'(Cols);
    end
  end

  // A transposing LOAD (version 1.3): rows up to the buffer's width, elems up to the
  // transposer's side max(R, C), dst + elems rows written.
  localparam int unsigned Side = (Rows > Cols) ? Rows : Cols;
  logic        load_tr;
  logic [15:0] ld_span;
  assign load_tr = instr_i[tpu_isa_pkg::LoadTransposeBit];
  assign ld_span = load_tr ? load_elems : load_rows;
  // Residual adds (version 1.5): hold and add, for the accumulators only, not both; hold: 1 row.
  logic load_hold, load_add;
  assign load_hold = instr_i[tpu_isa_pkg::LoadHoldBit];
  assign load_add  = instr_i[tpu_isa_pkg::LoadAddBit];

  logic gemm_mode_bad, gemm_win, gemm_bc, bc_bad;
  logic [15:0] gemm_init_row;
  assign gemm_win      = instr_i[tpu_isa_pkg::GemmWindowBit];
  assign gemm_bc       = instr_i[tpu_isa_pkg::GemmBroadcastBit];
  assign gemm_init_row = tpu_isa_pkg::gemm_init_row(instr_i);
  assign gemm_mode_bad = (gemm_mode & ~tpu_isa_pkg::GemmModeDefined) != 8'd0 ||
                         (!gemm_win && (nonzero & tpu_isa_pkg::GemmWindowBytes) != 32'd0) ||
                         (!gemm_bc && (nonzero & tpu_isa_pkg::GemmBroadcastBytes) != 32'd0);
  // The broadcast rules (version 1.2): not with accumulate, init_row inside the accumulators and
  // outside the GEMM's own rows acc .. acc + rows - 1.
  assign bc_bad = instr_i[tpu_isa_pkg::GemmAccumulateBit] || 32'(gemm_init_row) >= AccDepth ||
                  (gemm_init_row >= gemm_acc &&
                   17'(gemm_init_row) < 17'(gemm_acc) + 17'(gemm_rows));

  // The window rules (version 1.1), in the order of docs/isa.md.
  logic        win_bad;
  logic [15:0] w_band_rows, w_width, w_out_width;
  assign w_band_rows = tpu_isa_pkg::gemm_band_rows(instr_i);
  assign w_width     = tpu_isa_pkg::gemm_width(instr_i);
  assign w_out_width = tpu_isa_pkg::gemm_out_width(instr_i);
  assign win_bad = tpu_isa_pkg::gemm_stride(instr_i) == 8'd0 || w_width == 16'd0 ||
                   w_out_width == 16'd0 || w_band_rows == 16'd0 ||
                   tpu_isa_pkg::gemm_out_col(instr_i) >= w_out_width ||
                   33'(gemm_act) + 33'(w_band_rows) * 33'(w_width) > 33'(ActDepth);

  always_comb begin
    err_o = ErrOk;
    if (pc_zero_i && op != tpu_isa_pkg::OpHeader) begin
      err_o = ErrHeader;
    end else if (op < tpu_isa_pkg::OpHeader || op > tpu_isa_pkg::OpVop ||
                 (op == tpu_isa_pkg::OpVop && !Vec)) begin
      err_o = ErrOpcode;
    end else if (flags[7:4] != 4'd0 || (nonzero & ~used) != 32'd0 ||
                 (op == tpu_isa_pkg::OpVop &&
                  ((vop_spaces & ~tpu_isa_pkg::VopSpacesDefined) != 8'd0 ||
                   (!vop_scalar && (nonzero & tpu_isa_pkg::VopBScalarBytes) != 32'd0))) ||
                 (op == tpu_isa_pkg::OpGemm && gemm_mode_bad) ||
                 (op == tpu_isa_pkg::OpLoad &&
                  (load_mode & ~tpu_isa_pkg::LoadModeDefined) != 8'd0) ||
                 ((op == tpu_isa_pkg::OpHeader || op == tpu_isa_pkg::OpEnd) &&
                  flags[3:0] != 4'd0) ||
                 (unit_o == 2'd0 && (pop_prev || push_prev)) ||
                 (unit_o == 2'd2 && (pop_next || push_next))) begin
      err_o = ErrResvd;
    end else begin
      case (op)
        tpu_isa_pkg::OpHeader: begin
          if (!pc_zero_i)                                           err_o = ErrHeader;
          else if (tpu_isa_pkg::header_magic(instr_i) != tpu_isa_pkg::Magic) err_o = ErrHeader;
          else if (tpu_isa_pkg::header_major(instr_i) != tpu_isa_pkg::VersionMajor)
            err_o = ErrHeader;
          else if (tpu_isa_pkg::header_count(instr_i) != count_i)   err_o = ErrHeader;
          else if (32'(tpu_isa_pkg::header_rows(instr_i)) != Rows ||
                   32'(tpu_isa_pkg::header_cols(instr_i)) != Cols)  err_o = ErrShape;
        end
        tpu_isa_pkg::OpLoad: if (load_vmem) begin
          if (load_tr || load_hold || load_add)                     err_o = ErrField;
          else if (load_format > tpu_isa_pkg::FmtBf16)              err_o = ErrField;
          else if (load_rows == 16'd0)                              err_o = ErrField;
          else if (load_elems == 16'd0 || 32'(load_elems) > Cols)   err_o = ErrField;
          else if (32'(load_dst) + 32'(load_rows) > VmemDepth)      err_o = ErrField;
          else if (hbm_bad(load_addr, load_stride, load_rows, ld_row_bytes)) err_o = ErrHbm;
        end else begin
          if (load_buffer > tpu_isa_pkg::BufAcc)                    err_o = ErrField;
          else if (load_tr && load_buffer == tpu_isa_pkg::BufAcc)   err_o = ErrField;
          else if ((load_hold || load_add) && load_buffer != tpu_isa_pkg::BufAcc)
            err_o = ErrField;
          else if (load_hold && load_add)                           err_o = ErrField;
          else if (load_rows == 16'd0)                              err_o = ErrField;
          else if (load_hold && load_rows != 16'd1)                 err_o = ErrField;
          else if (load_tr && 17'(load_rows) > ld_max)              err_o = ErrField;
          else if (load_elems == 16'd0 ||
                   17'(load_elems) > (load_tr ? 17'(Side) : ld_max)) err_o = ErrField;
          else if (17'(load_dst) + 17'(ld_span) > ld_depth)         err_o = ErrField;
          else if (hbm_bad(load_addr, load_stride, load_rows, ld_row_bytes)) err_o = ErrHbm;
        end
        tpu_isa_pkg::OpGemm: begin
          if (gemm_rows == 16'd0)                                   err_o = ErrField;
          else if (gemm_kv == 16'd0 || 32'(gemm_kv) > Rows)         err_o = ErrField;
          else if (gemm_nv == 16'd0 || 32'(gemm_nv) > Cols)         err_o = ErrField;
          else if (!gemm_win && 32'(gemm_act) + 32'(gemm_rows) > ActDepth)
            err_o = ErrField;
          else if (32'(gemm_wgt) + 32'(gemm_kv) > WgtDepth)         err_o = ErrField;
          else if (32'(gemm_acc) + 32'(gemm_rows) > AccDepth)       err_o = ErrField;
          else if (!instr_i[tpu_isa_pkg::GemmLoadWeightsBit] &&
                   (!w_loaded_i || gemm_kv != w_kv_i || gemm_nv != w_nv_i)) err_o = ErrField;
          else if (gemm_bc && bc_bad)                               err_o = ErrField;
          else if (gemm_win && win_bad)                             err_o = ErrWindow;
        end
        tpu_isa_pkg::OpStore: begin
          if (store_format > tpu_isa_pkg::FmtBf16)                  err_o = ErrField;
          else if (Vec && store_source > tpu_isa_pkg::SrcVmem)      err_o = ErrField;
          else if (store_activation > 8'd1)                         err_o = ErrField;
          else if (store_rows == 16'd0)                             err_o = ErrField;
          else if (store_elems == 16'd0 || 32'(store_elems) > Cols) err_o = ErrField;
          // Version 1.6: col's bytes a multiple of 32, col + elems within the row.
          else if ((store_format == tpu_isa_pkg::FmtBf16 ? store_col[3:0] != 4'd0
                                                         : store_col[2:0] != 3'd0) ||
                   32'(store_col) + 32'(store_elems) > Cols)       err_o = ErrField;
          else if (32'(store_acc) + 32'(store_rows) >
                   (store_vmem ? VmemDepth : AccDepth))             err_o = ErrField;
          else if (store_stride < 32'(st_row_bytes))                err_o = ErrField;
          else if (hbm_bad(store_addr, store_stride, store_rows, st_row_bytes)) err_o = ErrHbm;
        end
        tpu_isa_pkg::OpVop: begin
          if (vop_op >= 8'(tpu_isa_pkg::NumVectorOps))              err_o = ErrField;
          else if (vop_bvmem && vop_scalar)                         err_o = ErrField;
          else if (vop_n == 16'd0 || vop_m == 16'd0)                err_o = ErrField;
          else if (vop_last_a >= vop_depth_a)                       err_o = ErrField;
          else if (vop_reads_b && !vop_scalar && vop_last_b >= vop_depth_b) err_o = ErrField;
          else if (vop_last_d + 34'd1 > vop_depth_d)                err_o = ErrField;
        end
        default: err_o = ErrOk;  // END
      endcase
    end
  end

endmodule
