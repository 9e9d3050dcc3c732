// SPDX-License-Identifier: Apache-2.0
// The host's AXI4-Lite register port (32-bit registers, byte address in 12 bits). One write and
// one read at a time; writes take effect when both AW and W have arrived. Reads of undefined
// addresses return 0; writes to read-only registers are ignored (OKAY either way).
//
//   0x000 MAGIC      RO  0x31555054 ("TPU1" in memory order)
//   0x004 VERSION    RO  {major, minor} of the instruction set (0x0001_0000)
//   0x008 SHAPE      RO  {Cols, Rows}
//   0x00C CHANNELS   RO  HBM channels behind the port
//   0x010 CTRL       W   bit 0 start (ignored while busy), bit 1 FTZ mode (read back), bit 2
//                        clear the performance counters (also done by start)
//   0x014 STATUS     RO  bit 0 busy, bit 1 done (since the last start), bit 2 error
//   0x018 ERR_CODE   RO  tpu::isa::ErrorCode of the last run (0 OK)
//   0x01C ERR_PC     RO  the offending instruction's index
//   0x020 PROG_LO    RW  program address, bits 31:0
//   0x024 PROG_HI    RW  program address, bits 63:32
//   0x028 PROG_LEN   RW  program length in instructions
//   0x040 + 8*i      RO  performance counter i, low word; +4 the high word (see tpu_accel)
module tpu_accel_regs #(
  parameter int unsigned Rows     = 16,
  parameter int unsigned Cols     = 16,
  parameter int unsigned Channels = 1,
  parameter int unsigned NCnt     = 12
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               aw_valid_i,
  output logic               aw_ready_o,
  input  logic [11:0]        aw_addr_i,
  input  logic               w_valid_i,
  output logic               w_ready_o,
  input  logic [31:0]        w_data_i,
  output logic               b_valid_o,
  input  logic               b_ready_i,
  input  logic               ar_valid_i,
  output logic               ar_ready_o,
  input  logic [11:0]        ar_addr_i,
  output logic               r_valid_o,
  input  logic               r_ready_i,
  output logic [31:0]        r_data_o,
  // To the machine
  output logic               start_o,
  output logic               ftz_o,
  output logic               perf_clear_o,
  output logic [63:0]        prog_addr_o,
  output logic [31:0]        prog_len_o,
  input  logic               busy_i,
  input  logic               done_i,
  input  logic [3:0]         err_code_i,
  input  logic [31:0]        err_pc_i,
  input  logic [NCnt*64-1:0] counters_i
);

  logic        b_pend_q, r_pend_q, wr;
  logic [31:0] rdata_q, rd;
  logic        ftz_q;
  logic [63:0] prog_q;
  logic [31:0] len_q;

  // A write completes when AW and W are both there and no response is waiting.
  assign wr         = aw_valid_i && w_valid_i && !b_pend_q;
  assign aw_ready_o = wr;
  assign w_ready_o  = wr;
  assign b_valid_o  = b_pend_q;
  assign ar_ready_o = !r_pend_q;
  assign r_valid_o  = r_pend_q;
  assign r_data_o   = rdata_q;

  assign start_o      = wr && aw_addr_i == 12'h010 && w_data_i[0] && !busy_i;
  assign perf_clear_o = (wr && aw_addr_i == 12'h010 && w_data_i[2]) || start_o;
  assign ftz_o        = ftz_q;
  assign prog_addr_o  = prog_q;
  assign prog_len_o   = len_q;

  always_comb begin
    rd = 32'd0;
    case (ar_addr_i)
      12'h000: rd = 32'h3155_5054;
      12'h004: rd = 32'h0001_0000;
      12'h008: rd = {16'(Cols), 16'(Rows)};
      12'h00C: rd = 32'(Channels);
      12'h010: rd = {30'd0, ftz_q, 1'b0};
      12'h014: rd = {29'd0, done_i && err_code_i != 4'd0, done_i, busy_i};
      12'h018: rd = 32'(err_code_i);
      12'h01C: rd = err_pc_i;
      12'h020: rd = prog_q[31:0];
      12'h024: rd = prog_q[63:32];
      12'h028: rd = len_q;
      default: begin
        for (int unsigned i = 0; i < NCnt; i++) begin
          if (ar_addr_i == 12'(32'h040 + 8 * i)) rd = counters_i[64*i +: 32];
          if (ar_addr_i == 12'(32'h044 + 8 * i)) rd = counters_i[64*i+32 +: 32];
        end
      end
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      b_pend_q <= 1'b0;
      r_pend_q <= 1'b0;
      rdata_q  <= '0;
      ftz_q    <= 1'b0;
      prog_q   <= '0;
      len_q    <= '0;
    end else begin
      if (wr) begin
        b_pend_q <= 1'b1;
        case (aw_addr_i)
          12'h010: if (!busy_i) ftz_q <= w_data_i[1];
          12'h020: prog_q[31:0]  <= w_data_i;
          12'h024: prog_q[63:32] <= w_data_i;
          12'h028: len_q <= w_data_i;
          default: ;
        endcase
      end else if (b_ready_i) begin
        b_pend_q <= 1'b0;
      end
      if (ar_valid_i && ar_ready_o) begin
        r_pend_q <= 1'b1;
        rdata_q  <= rd;
      end else if (r_ready_i) begin
        r_pend_q <= 1'b0;
      end
    end
  end

endmodule
