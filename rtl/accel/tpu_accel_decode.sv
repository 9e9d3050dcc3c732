// SPDX-License-Identifier: Apache-2.0
// Decodes and checks one 32-byte instruction (docs/isa.md) against the machine, in the order the
// golden model (tpu::isa::Decode, tpu::isa::Check) does, so that both report the same error code:
// the HEADER-at-pc-0 rule, opcode, reserved bits and bytes, dependency flags, then the rules of
// the kind, fields before HBM addresses, each in the order of the layout. Purely combinational.
module tpu_accel_decode #(
  parameter int unsigned Rows        = 16,
  parameter int unsigned Cols        = 16,
  parameter int unsigned ActDepth    = 2048,
  parameter int unsigned WgtDepth    = 2048,
  parameter int unsigned AccDepth    = 4096,
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

  localparam logic [3:0] ErrOpcode = 4'd1, ErrReserved = 4'd2, ErrHeader = 4'd3,
                         ErrShape = 4'd4, ErrField = 4'd5, ErrHbm = 4'd6;
  localparam logic [7:0] OpHeader = 8'h01, OpLoad = 8'h02, OpGemm = 8'h03, OpStore = 8'h04,
                         OpEnd = 8'h05;

  logic [7:0]  op, flags;
  logic [31:0] used, nonzero;
  logic [15:0] f4, f6, f8, f10, f12, f14, f20, f22, f24;
  logic [63:0] addr;
  logic [31:0] stride;
  logic [7:0]  b4, b5, b16;
  logic        pop_prev, pop_next, push_prev, push_next;

  assign op        = instr_i[7:0];
  assign flags     = instr_i[15:8];
  assign pop_prev  = flags[0];
  assign pop_next  = flags[1];
  assign push_prev = flags[2];
  assign push_next = flags[3];
  assign b4        = instr_i[39:32];
  assign b5        = instr_i[47:40];
  assign b16       = instr_i[135:128];
  assign f4        = instr_i[47:32];
  assign f6        = instr_i[63:48];
  assign f8        = instr_i[79:64];
  assign f10       = instr_i[95:80];
  assign f12       = instr_i[111:96];
  assign f14       = instr_i[127:112];
  assign f20       = instr_i[175:160];
  assign f22       = instr_i[191:176];
  assign f24       = instr_i[207:192];
  assign addr      = instr_i[127:64];
  assign stride    = instr_i[159:128];

  for (genvar i = 0; i < 32; i++) begin : gen_nz
    assign nonzero[i] = instr_i[8*i +: 8] != 8'd0;
  end

  // The bytes each opcode names (bytes 0 and 1 always).
  always_comb begin
    used = 32'h0000_0003;
    case (op)
      OpHeader: used = 32'h000F_FFF3;   // bytes 4..19
      OpLoad:   used = 32'h03FF_FF13;   // byte 4, bytes 8..25
      OpGemm:   used = 32'h0001_FFF3;   // bytes 4..16
      OpStore:  used = 32'h03FF_FF33;   // bytes 4, 5, 8..25
      default:  used = 32'h0000_0003;
    endcase
  end

  // Which module executes the instruction (LOAD by buffer: 2 is the compute module's).
  always_comb begin
    unit_o = 2'd3;
    case (op)
      OpLoad:  unit_o = (b4 == 8'd2) ? 2'd1 : 2'd0;
      OpGemm:  unit_o = 2'd1;
      OpStore: unit_o = 2'd2;
      default: unit_o = 2'd3;
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
  assign ld_row_bytes = (b4 == 8'd2) ? 18'(f24) * 18'd4 : 18'(f24) * 18'd2;
  assign st_row_bytes = (b4 == 8'd1) ? 18'(f24) * 18'd2 : 18'(f24) * 18'd4;
  always_comb begin
    ld_depth = 17'(ActDepth);
    ld_max   = 17'(Rows);
    if (b4 == 8'd1) begin
      ld_depth = 17'(WgtDepth);
      ld_max   = 17'(Cols);
    end else if (b4 == 8'd2) begin
      ld_depth = 17'(AccDepth);
      ld_max   = 17'(Cols);
    end
  end

  always_comb begin
    err_o = 4'd0;
    if (pc_zero_i && op != OpHeader) begin
      err_o = ErrHeader;
    end else if (op < OpHeader || op > OpEnd) begin
      err_o = ErrOpcode;
    end else if (flags[7:4] != 4'd0 || (nonzero & ~used) != 32'd0 ||
                 (op == OpGemm && b16[7:2] != 6'd0) ||
                 ((op == OpHeader || op == OpEnd) && flags[3:0] != 4'd0) ||
                 (unit_o == 2'd0 && (pop_prev || push_prev)) ||
                 (unit_o == 2'd2 && (pop_next || push_next))) begin
      err_o = ErrReserved;
    end else begin
      case (op)
        OpHeader: begin
          if (!pc_zero_i)                                  err_o = ErrHeader;
          else if (instr_i[63:32] != 32'h3155_5054)        err_o = ErrHeader;  // "TPU1"
          else if (instr_i[79:64] != 16'd1)                err_o = ErrHeader;  // major
          else if (instr_i[159:128] != count_i)            err_o = ErrHeader;
          else if (32'(instr_i[111:96]) != Rows ||
                   32'(instr_i[127:112]) != Cols)          err_o = ErrShape;
        end
        OpLoad: begin
          if (b4 > 8'd2)                                    err_o = ErrField;
          else if (f22 == 16'd0)                            err_o = ErrField;
          else if (f24 == 16'd0 || 17'(f24) > ld_max)       err_o = ErrField;
          else if (17'(f20) + 17'(f22) > ld_depth)          err_o = ErrField;
          else if (hbm_bad(addr, stride, f22, ld_row_bytes)) err_o = ErrHbm;
        end
        OpGemm: begin
          if (f10 == 16'd0)                                 err_o = ErrField;
          else if (f12 == 16'd0 || 32'(f12) > Rows)         err_o = ErrField;
          else if (f14 == 16'd0 || 32'(f14) > Cols)         err_o = ErrField;
          else if (32'(f4) + 32'(f10) > ActDepth)           err_o = ErrField;
          else if (32'(f6) + 32'(f12) > WgtDepth)           err_o = ErrField;
          else if (32'(f8) + 32'(f10) > AccDepth)           err_o = ErrField;
          else if (!b16[1] && (!w_loaded_i || f12 != w_kv_i || f14 != w_nv_i)) err_o = ErrField;
        end
        OpStore: begin
          if (b4 > 8'd1)                                    err_o = ErrField;
          else if (b5 > 8'd1)                               err_o = ErrField;
          else if (f22 == 16'd0)                            err_o = ErrField;
          else if (f24 == 16'd0 || 32'(f24) > Cols)         err_o = ErrField;
          else if (32'(f20) + 32'(f22) > AccDepth)          err_o = ErrField;
          else if (stride < 32'(st_row_bytes))              err_o = ErrField;
          else if (hbm_bad(addr, stride, f22, st_row_bytes)) err_o = ErrHbm;
        end
        default: err_o = 4'd0;  // END
      endcase
    end
  end

endmodule
