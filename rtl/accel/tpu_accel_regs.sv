// SPDX-License-Identifier: Apache-2.0
// The host's AXI4-Lite register port (32-bit registers, byte address in 12 bits). One write and
// one read at a time; writes take effect when both AW and W have arrived. Reads of undefined
// addresses return 0; writes to read-only registers are ignored (OKAY either way).
//
// The register map (addresses, bits, meaning) is rtl/accel/isa.json, here as tpu_isa_pkg::Reg*;
// docs/accel.md has its table: MAGIC, VERSION, SHAPE, CHANNELS, CTRL, STATUS, ERR_CODE, ERR_PC,
// PROG_LO, PROG_HI, PROG_LEN, and performance counter i at COUNTERS + 8*i (+4: the high word).
`include "tpu_axi.svh"
`include "tpu_ff.svh"
module tpu_accel_regs #(
  parameter int unsigned Rows     = 16,
  parameter int unsigned Cols     = 16,
  parameter int unsigned Channels = 1,
  parameter int unsigned NCnt     = tpu_isa_pkg::NumCounters
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  `TPU_AXIL_SLAVE_PORTS(),  // the host (tpu_axi.svh)
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
  input  logic [31:0]        tokens_i,
  input  logic [NCnt*64-1:0] counters_i
);

  logic        b_pend_q, b_pend_d, r_pend_q, r_pend_d, wr;
  logic [31:0] rdata_q, rdata_d, rd;
  logic        ftz_q, ftz_d;
  logic [63:0] prog_q, prog_d;
  logic [31:0] len_q, len_d;

  // A write completes when AW and W are both there and no response is waiting.
  assign wr         = aw_valid_i && w_valid_i && !b_pend_q;
  assign aw_ready_o = wr;
  assign w_ready_o  = wr;
  assign b_valid_o  = b_pend_q;
  assign ar_ready_o = !r_pend_q;
  assign r_valid_o  = r_pend_q;
  assign r_data_o   = rdata_q;

  logic ctrl_wr;
  assign ctrl_wr      = wr && aw_addr_i == tpu_isa_pkg::RegCtrl;
  assign start_o      = ctrl_wr && w_data_i[tpu_isa_pkg::CtrlStartBit] && !busy_i;
  assign perf_clear_o = (ctrl_wr && w_data_i[tpu_isa_pkg::CtrlClearBit]) || start_o;
  assign ftz_o        = ftz_q;
  assign prog_addr_o  = prog_q;
  assign prog_len_o   = len_q;

  always_comb begin
    rd = 32'd0;
    case (ar_addr_i)
      tpu_isa_pkg::RegMagic:    rd = tpu_isa_pkg::Magic;
      tpu_isa_pkg::RegVersion:  rd = {{tpu_isa_pkg::VersionMajor, tpu_isa_pkg::VersionMinor}};
      tpu_isa_pkg::RegShape:    rd = {{16'(Cols), 16'(Rows)}};
      tpu_isa_pkg::RegChannels: rd = 32'(Channels);
      tpu_isa_pkg::RegCtrl:     rd = 32'(ftz_q) << tpu_isa_pkg::CtrlFtzBit;
      tpu_isa_pkg::RegStatus: begin
        rd = (32'(busy_i) << tpu_isa_pkg::StatusBusyBit) |
             (32'(done_i) << tpu_isa_pkg::StatusDoneBit) |
             (32'(done_i && err_code_i != tpu_isa_pkg::ErrOk) << tpu_isa_pkg::StatusErrorBit);
      end
      tpu_isa_pkg::RegErrCode:  rd = 32'(err_code_i);
      tpu_isa_pkg::RegErrPc:    rd = err_pc_i;
      tpu_isa_pkg::RegProgLo:   rd = prog_q[31:0];
      tpu_isa_pkg::RegProgHi:   rd = prog_q[63:32];
      tpu_isa_pkg::RegProgLen:  rd = len_q;
      tpu_isa_pkg::RegTokens:   rd = tokens_i;
      default: begin
        for (int unsigned i = 0; i < NCnt; i++) begin
          if (ar_addr_i == tpu_isa_pkg::RegCounters + 12'(8 * i)) rd = counters_i[64*i +: 32];
          if (ar_addr_i == tpu_isa_pkg::RegCounters + 12'(8 * i + 4)) begin
            rd = counters_i[64*i+32 +: 32];
          end
        end
      end
    endcase
  end

  always_comb begin
    b_pend_d = b_pend_q;
    r_pend_d = r_pend_q;
    rdata_d  = rdata_q;
    ftz_d    = ftz_q;
    prog_d   = prog_q;
    len_d    = len_q;
    if (wr) begin
      b_pend_d = 1'b1;
      case (aw_addr_i)
        tpu_isa_pkg::RegCtrl:    if (!busy_i) ftz_d = w_data_i[tpu_isa_pkg::CtrlFtzBit];
        tpu_isa_pkg::RegProgLo:  prog_d[31:0]  = w_data_i;
        tpu_isa_pkg::RegProgHi:  prog_d[63:32] = w_data_i;
        tpu_isa_pkg::RegProgLen: len_d = w_data_i;
        default: ;
      endcase
    end else if (b_ready_i) begin
      b_pend_d = 1'b0;
    end
    if (ar_valid_i && ar_ready_o) begin
      r_pend_d = 1'b1;
      rdata_d  = rd;
    end else if (r_ready_i) begin
      r_pend_d = 1'b0;
    end
  end
  `TPU_FF(b_pend_q, b_pend_d, 1'b0)
  `TPU_FF(r_pend_q, r_pend_d, 1'b0)
  `TPU_FF(rdata_q, rdata_d, '0)
  `TPU_FF(ftz_q, ftz_d, 1'b0)
  `TPU_FF(prog_q, prog_d, '0)
  `TPU_FF(len_q, len_d, '0)

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // AXI4-Lite: a response holds until taken, and the host holds its requests while they wait.
  a_b_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             b_valid_o && !b_ready_i |=> b_valid_o)
    else $error("tpu_accel_regs: B dropped while waiting");
  a_r_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                             r_valid_o && !r_ready_i |=> r_valid_o && $stable(r_data_o))
    else $error("tpu_accel_regs: R changed while waiting");
  a_aw_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                              aw_valid_i && !aw_ready_o |=> aw_valid_i && $stable(aw_addr_i))
    else $error("tpu_accel_regs: the host changed AW while waiting");
  a_ar_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                              ar_valid_i && !ar_ready_o |=> ar_valid_i && $stable(ar_addr_i))
    else $error("tpu_accel_regs: the host changed AR while waiting");
`endif

endmodule
