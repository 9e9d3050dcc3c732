// SPDX-License-Identifier: Apache-2.0
// The weight-stationary systolic array: Rows × Cols tpu_pe, with the input skews.
//
// Timing (t = the cycle an input appears on this module's ports):
//   the activation row on act_*_i    reaches PE(r, c) at t + r·P + c   (row skew r·P, then east)
//   the weight write on w_*_i        reaches PE(r, c) at t + c + r·P   (column skew c, then south)
//   column c's partial sum psum_i[c] must arrive together with row 0's activation there: the
//   accumulators present it at t + c; the result leaves the bottom on psum_*_o[c] at t + c + R·P.
// Activations and weight writes thus reach every PE in the order they entered, which is all the
// controller needs to double-buffer the weights without a bubble.
module tpu_systolic_array #(
  parameter int unsigned Rows       = 16,
  parameter int unsigned Cols       = 16,
  parameter int unsigned PipeRegs   = 1,
  parameter int unsigned ModeSel    = tpu_pkg::ModeRuntime,
  parameter int unsigned ExpBits    = tpu_pkg::Bf16ExpBits,
  parameter int unsigned InManBits  = tpu_pkg::Bf16ManBits,
  parameter int unsigned AccManBits = tpu_pkg::Fp32ManBits,
  localparam int unsigned InW       = 1 + ExpBits + InManBits,
  localparam int unsigned AccW      = 1 + ExpBits + AccManBits,
  localparam int unsigned RowW      = (Rows > 1) ? $clog2(Rows) : 1
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 ftz_i,
  // One row of A (element r for array row r), unskewed
  input  logic                 act_valid_i,
  input  logic                 act_tag_i,
  input  logic [Rows*InW-1:0]  act_i,
  // One row of a weight tile (element c for column c), unskewed
  input  logic                 w_valid_i,
  input  logic                 w_bank_i,
  input  logic [RowW-1:0]      w_row_i,
  input  logic [Cols*InW-1:0]  w_i,
  // Partial sums into the top of each column (already skewed by column)
  input  logic [Cols-1:0]      psum_valid_i,
  input  logic [Cols*AccW-1:0] psum_i,
  // Results out of the bottom of each column (skewed by column)
  output logic [Cols-1:0]      psum_valid_o,
  output logic [Cols*AccW-1:0] psum_o
);

  if (Rows < 1 || Cols < 1) begin : gen_bad_shape
    $error("tpu_systolic_array: Rows and Cols must be at least 1");
  end

  // Horizontal links: act_*[r*(Cols+1) + c] enters PE(r, c) from the west.
  localparam int unsigned HL = Rows * (Cols + 1);
  logic [HL-1:0]     h_valid, h_tag;
  logic [HL*InW-1:0] h_act;
  // Vertical links: index r*Cols + c enters PE(r, c) from the north ((Rows+1)·Cols of them).
  localparam int unsigned VL = (Rows + 1) * Cols;
  logic [VL-1:0]      v_valid, v_wvalid, v_wbank;
  logic [VL*AccW-1:0] v_psum;
  logic [VL*RowW-1:0] v_wrow;
  logic [VL*InW-1:0]  v_w;

  // ---------------------------------------------------------------------------------------------
  // Input skews
  // ---------------------------------------------------------------------------------------------
  for (genvar r = 0; r < Rows; r++) begin : gen_row_skew
    localparam int unsigned H0 = r * (Cols + 1);
    tpu_delay #(.Width(1 + InW), .Depth(r * PipeRegs)) u_skew (
      .clk_i  (clk_i),
      .rst_ni (rst_ni),
      .valid_i(act_valid_i),
      .data_i ({act_tag_i, act_i[r*InW +: InW]}),
      .valid_o(h_valid[H0]),
      .data_o ({h_tag[H0], h_act[H0*InW +: InW]})
    );
  end

  for (genvar c = 0; c < Cols; c++) begin : gen_col_skew
    tpu_delay #(.Width(1 + RowW + InW), .Depth(c)) u_skew (
      .clk_i  (clk_i),
      .rst_ni (rst_ni),
      .valid_i(w_valid_i),
      .data_i ({w_bank_i, w_row_i, w_i[c*InW +: InW]}),
      .valid_o(v_wvalid[c]),
      .data_o ({v_wbank[c], v_wrow[c*RowW +: RowW], v_w[c*InW +: InW]})
    );
    assign v_valid[c]             = psum_valid_i[c];
    assign v_psum[c*AccW +: AccW] = psum_i[c*AccW +: AccW];
  end

  // ---------------------------------------------------------------------------------------------
  // The PE grid
  // ---------------------------------------------------------------------------------------------
  for (genvar r = 0; r < Rows; r++) begin : gen_row
    for (genvar c = 0; c < Cols; c++) begin : gen_col
      localparam int unsigned H  = r * (Cols + 1) + c;   // west input of PE(r, c)
      localparam int unsigned VN = r * Cols + c;         // north input
      localparam int unsigned VS = (r + 1) * Cols + c;   // south output
      tpu_pe #(
        .ExpBits   (ExpBits),
        .InManBits (InManBits),
        .AccManBits(AccManBits),
        .PipeRegs  (PipeRegs),
        .ModeSel   (ModeSel),
        .RowW      (RowW)
      ) u_pe (
        .clk_i       (clk_i),
        .rst_ni      (rst_ni),
        .ftz_i       (ftz_i),
        .row_i       (RowW'(r)),
        .act_valid_i (h_valid[H]),
        .act_tag_i   (h_tag[H]),
        .act_i       (h_act[H*InW +: InW]),
        .act_valid_o (h_valid[H+1]),
        .act_tag_o   (h_tag[H+1]),
        .act_o       (h_act[(H+1)*InW +: InW]),
        .psum_valid_i(v_valid[VN]),
        .psum_i      (v_psum[VN*AccW +: AccW]),
        .psum_valid_o(v_valid[VS]),
        .psum_o      (v_psum[VS*AccW +: AccW]),
        .w_valid_i   (v_wvalid[VN]),
        .w_bank_i    (v_wbank[VN]),
        .w_row_i     (v_wrow[VN*RowW +: RowW]),
        .w_i         (v_w[VN*InW +: InW]),
        .w_valid_o   (v_wvalid[VS]),
        .w_bank_o    (v_wbank[VS]),
        .w_row_o     (v_wrow[VS*RowW +: RowW]),
        .w_o         (v_w[VS*InW +: InW])
      );
    end
  end

  assign psum_valid_o = v_valid[Rows*Cols +: Cols];
  assign psum_o       = v_psum[Rows*Cols*AccW +: Cols*AccW];

  // The east edge's activations and the south edge's weight writes leave the array unused.
  logic unused_edges;
  for (genvar r = 0; r < Rows; r++) begin : gen_east
    localparam int unsigned HE = r * (Cols + 1) + Cols;
    logic unused_east;
    assign unused_east = ^{h_valid[HE], h_tag[HE], h_act[HE*InW +: InW]};
  end
  assign unused_edges = ^{v_wvalid[Rows*Cols +: Cols], v_wbank[Rows*Cols +: Cols],
                          v_wrow[Rows*Cols*RowW +: Cols*RowW], v_w[Rows*Cols*InW +: Cols*InW]};

endmodule
