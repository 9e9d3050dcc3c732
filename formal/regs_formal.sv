// SPDX-License-Identifier: Apache-2.0
// Formal only (make formal, docs/formal.md): the accelerator's AXI4-Lite register port
// (rtl/accel/tpu_accel_regs.sv) from reset, for any host that keeps the AXI rules (its AW, W and
// AR held and stable until taken; B and R ready free) and any machine status (busy, done, error,
// counters all free inputs).
//   handshake  B and R held until taken, R data stable meanwhile
//   count      exactly one B per write (AW and W counted on their own) and one R per read, at
//              most one of each outstanding (the design's promise); none without a request
//   progress   a complete write (AW and W) is taken whenever no B waits; a read whenever no R waits
//   data       reads return what was written (PROG_LO/HI/LEN, CTRL.ftz), MAGIC and the constant
//              registers; the outputs to the machine follow the writes; start only on a CTRL
//              write with the start bit while idle
module regs_formal #(
  parameter int unsigned Rows     = 4,
  parameter int unsigned Cols     = 4,
  parameter int unsigned Channels = 2,
  parameter int unsigned NCnt     = 2
) (
  input logic               clk_i,
  input logic               rst_ni,
  input logic               aw_valid_i,
  input logic [11:0]        aw_addr_i,
  input logic               w_valid_i,
  input logic [31:0]        w_data_i,
  input logic               b_ready_i,
  input logic               ar_valid_i,
  input logic [11:0]        ar_addr_i,
  input logic               r_ready_i,
  input logic               busy_i,
  input logic               done_i,
  input logic [3:0]         err_code_i,
  input logic [31:0]        err_pc_i,
  input logic [NCnt*64-1:0] counters_i
);
  logic        aw_ready, w_ready, b_valid, ar_ready, r_valid;
  logic [31:0] r_data;
  logic        start, ftz, perf_clear;
  logic [63:0] prog_addr;
  logic [31:0] prog_len;

  tpu_accel_regs #(.Rows(Rows), .Cols(Cols), .Channels(Channels), .NCnt(NCnt)) u_dut (
    .clk_i, .rst_ni,
    .aw_valid_i, .aw_ready_o(aw_ready), .aw_addr_i,
    .w_valid_i, .w_ready_o(w_ready), .w_data_i,
    .b_valid_o(b_valid), .b_ready_i,
    .ar_valid_i, .ar_ready_o(ar_ready), .ar_addr_i,
    .r_valid_o(r_valid), .r_ready_i, .r_data_o(r_data),
    .start_o(start), .ftz_o(ftz), .perf_clear_o(perf_clear), .prog_addr_o(prog_addr),
    .prog_len_o(prog_len), .busy_i, .done_i, .err_code_i, .err_pc_i, .counters_i
  );

  // Reset in the first cycle only.
  logic init_q = 1'b1;
  always_ff @(posedge clk_i) init_q <= 1'b0;
  always_comb m_reset: assume (rst_ni == !init_q);

  // The host's channels (assumed) and the port's (asserted).
  tpu_vr_check #(.W(12), .Assume(1)) u_aw (.clk_i, .rst_ni, .valid_i(aw_valid_i),
                                           .ready_i(aw_ready), .data_i(aw_addr_i));
  tpu_vr_check #(.W(32), .Assume(1)) u_w (.clk_i, .rst_ni, .valid_i(w_valid_i),
                                          .ready_i(w_ready), .data_i(w_data_i));
  tpu_vr_check #(.W(12), .Assume(1)) u_ar (.clk_i, .rst_ni, .valid_i(ar_valid_i),
                                           .ready_i(ar_ready), .data_i(ar_addr_i));
  tpu_vr_check #(.W(1), .Assume(0)) u_b (.clk_i, .rst_ni, .valid_i(b_valid),
                                         .ready_i(b_ready_i), .data_i(1'b0));
  tpu_vr_check #(.W(32), .Assume(0)) u_r (.clk_i, .rst_ni, .valid_i(r_valid),
                                          .ready_i(r_ready_i), .data_i(r_data));

  // Outstanding requests: taken minus answered, per channel.
  logic aw_fire, w_fire, b_fire, ar_fire, r_fire;
  assign aw_fire = aw_valid_i && aw_ready;
  assign w_fire  = w_valid_i && w_ready;
  assign b_fire  = b_valid && b_ready_i;
  assign ar_fire = ar_valid_i && ar_ready;
  assign r_fire  = r_valid && r_ready_i;
  logic [1:0] aw_out_q, w_out_q, ar_out_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      aw_out_q <= '0;
      w_out_q  <= '0;
      ar_out_q <= '0;
    end else begin
      aw_out_q <= aw_out_q + 2'(aw_fire) - 2'(b_fire);
      w_out_q  <= w_out_q + 2'(w_fire) - 2'(b_fire);
      ar_out_q <= ar_out_q + 2'(ar_fire) - 2'(r_fire);
    end
  end

  // The registers as the host wrote them.
  logic [63:0] prog_q;
  logic [31:0] len_q;
  logic        ftz_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      prog_q <= '0;
      len_q  <= '0;
      ftz_q  <= 1'b0;
    end else if (aw_fire && w_fire) begin
      case (aw_addr_i)
        tpu_isa_pkg::RegProgLo:  prog_q[31:0] <= w_data_i;
        tpu_isa_pkg::RegProgHi:  prog_q[63:32] <= w_data_i;
        tpu_isa_pkg::RegProgLen: len_q <= w_data_i;
        tpu_isa_pkg::RegCtrl:    if (!busy_i) ftz_q <= w_data_i[tpu_isa_pkg::CtrlFtzBit];
        default: ;
      endcase
    end
  end

  // What a read taken now must return (known only for these addresses).
  logic        exp_known;
  logic [31:0] exp_data;
  always_comb begin
    exp_known = 1'b1;
    exp_data  = '0;
    case (ar_addr_i)
      tpu_isa_pkg::RegMagic:    exp_data = tpu_isa_pkg::Magic;
      tpu_isa_pkg::RegShape:    exp_data = {16'(Cols), 16'(Rows)};
      tpu_isa_pkg::RegChannels: exp_data = 32'(Channels);
      tpu_isa_pkg::RegCtrl:     exp_data = 32'(ftz_q) << tpu_isa_pkg::CtrlFtzBit;
      tpu_isa_pkg::RegErrPc:    exp_data = err_pc_i;
      tpu_isa_pkg::RegProgLo:   exp_data = prog_q[31:0];
      tpu_isa_pkg::RegProgHi:   exp_data = prog_q[63:32];
      tpu_isa_pkg::RegProgLen:  exp_data = len_q;
      tpu_isa_pkg::RegCounters: exp_data = counters_i[31:0];
      12'hffc:                  exp_data = '0;  // undefined
      default:                  exp_known = 1'b0;
    endcase
  end
  logic        rexp_known_q;
  logic [31:0] rexp_q;
  always_ff @(posedge clk_i) begin
    if (!rst_ni) begin
      rexp_known_q <= 1'b0;
      rexp_q       <= '0;
    end else if (ar_fire) begin
      rexp_known_q <= exp_known;
      rexp_q       <= exp_data;
    end
  end

  always_comb begin
    if (rst_ni) begin
      // count
      a_one_b_per_aw: assert (aw_out_q == 2'(b_valid));
      a_one_b_per_w: assert (w_out_q == 2'(b_valid));
      a_one_r_per_ar: assert (ar_out_q == 2'(r_valid));
      // progress
      a_write_taken: assert (!(aw_valid_i && w_valid_i && !b_valid) || (aw_ready && w_ready));
      a_read_taken: assert (!(ar_valid_i && !r_valid) || ar_ready);
      // data
      if (r_valid && rexp_known_q) a_read_data: assert (r_data == rexp_q);
      a_prog_out: assert (prog_addr == prog_q && prog_len == len_q && ftz == ftz_q);
      a_start: assert (start == (aw_fire && w_fire && aw_addr_i == tpu_isa_pkg::RegCtrl &&
                                 w_data_i[tpu_isa_pkg::CtrlStartBit] && !busy_i));
      a_clear: assert (perf_clear == (start || (aw_fire && w_fire &&
                                      aw_addr_i == tpu_isa_pkg::RegCtrl &&
                                      w_data_i[tpu_isa_pkg::CtrlClearBit])));
    end
  end
endmodule
