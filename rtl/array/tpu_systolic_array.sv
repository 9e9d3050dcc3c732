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
//
// The PEs are grouped in tiles of up to TileRows × TileCols (tpu_pe_tile; the last tile row and
// column take what is left). Tiles add no logic: the array is the same whatever their size.
module tpu_systolic_array #(
  parameter int unsigned Rows       = 16,
  parameter int unsigned Cols       = 16,
  parameter int unsigned PipeRegs   = 1,
  parameter int unsigned ModeSel    = tpu_pkg::ModeRuntime,
  parameter int unsigned ExpBits    = tpu_pkg::Bf16ExpBits,
  parameter int unsigned InManBits  = tpu_pkg::Bf16ManBits,
  parameter int unsigned AccManBits = tpu_pkg::Fp32ManBits,
  parameter int unsigned TileRows   = 16,
  parameter int unsigned TileCols   = 16,
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
  if (TileRows < 1 || TileCols < 1) begin : gen_bad_tile
    $error("tpu_systolic_array: TileRows and TileCols must be at least 1");
  end

  localparam int unsigned NTR = (Rows + TileRows - 1) / TileRows;   // tile rows
  localparam int unsigned NTC = (Cols + TileCols - 1) / TileCols;   // tile columns

  // Horizontal links between tiles: row r's activation at [r*(NTC+1) + t] enters tile column t
  // from the west ([r*(NTC+1) + NTC] leaves the east edge).
  localparam int unsigned HL = Rows * (NTC + 1);
  logic [HL-1:0]     h_valid, h_tag;
  logic [HL*InW-1:0] h_act;
  // Vertical links between tiles: column c's at [t*Cols + c] enters tile row t from the north
  // ([NTR*Cols + c] leaves the south edge).
  localparam int unsigned VL = (NTR + 1) * Cols;
  logic [VL-1:0]      v_valid, v_wvalid, v_wbank;
  logic [VL*AccW-1:0] v_psum;
  logic [VL*RowW-1:0] v_wrow;
  logic [VL*InW-1:0]  v_w;

  // ---------------------------------------------------------------------------------------------
  // Input skews
  // ---------------------------------------------------------------------------------------------
  for (genvar r = 0; r < Rows; r++) begin : gen_row_skew
    localparam int unsigned H0 = r * (NTC + 1);
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
  // The grid of tiles
  // ---------------------------------------------------------------------------------------------
  for (genvar tr = 0; tr < NTR; tr++) begin : gen_tile_row
    localparam int unsigned R0 = tr * TileRows;                                  // first row
    localparam int unsigned TR = (Rows - R0 < TileRows) ? Rows - R0 : TileRows;  // its rows
    for (genvar tc = 0; tc < NTC; tc++) begin : gen_tile_col
      localparam int unsigned C0 = tc * TileCols;
      localparam int unsigned TC = (Cols - C0 < TileCols) ? Cols - C0 : TileCols;
      localparam int unsigned VN = tr * Cols + C0;         // north links of the tile
      localparam int unsigned VS = (tr + 1) * Cols + C0;   // south links
      logic [TR-1:0]     w_valid, w_tag, e_valid, e_tag;
      logic [TR*InW-1:0] w_act, e_act;
      for (genvar r = 0; r < TR; r++) begin : gen_link
        localparam int unsigned HW = (R0 + r) * (NTC + 1) + tc;   // west link of row R0 + r
        assign w_valid[r]               = h_valid[HW];
        assign w_tag[r]                 = h_tag[HW];
        assign w_act[r*InW +: InW]      = h_act[HW*InW +: InW];
        assign h_valid[HW+1]            = e_valid[r];
        assign h_tag[HW+1]              = e_tag[r];
        assign h_act[(HW+1)*InW +: InW] = e_act[r*InW +: InW];
      end
      tpu_pe_tile #(
        .TileRows  (TR),
        .TileCols  (TC),
        .PipeRegs  (PipeRegs),
        .ModeSel   (ModeSel),
        .ExpBits   (ExpBits),
        .InManBits (InManBits),
        .AccManBits(AccManBits),
        .RowW      (RowW)
      ) u_tile (
        .clk_i       (clk_i),
        .rst_ni      (rst_ni),
        .ftz_i       (ftz_i),
        .row0_i      (RowW'(R0)),
        .act_valid_i (w_valid),
        .act_tag_i   (w_tag),
        .act_i       (w_act),
        .act_valid_o (e_valid),
        .act_tag_o   (e_tag),
        .act_o       (e_act),
        .psum_valid_i(v_valid[VN +: TC]),
        .psum_i      (v_psum[VN*AccW +: TC*AccW]),
        .psum_valid_o(v_valid[VS +: TC]),
        .psum_o      (v_psum[VS*AccW +: TC*AccW]),
        .w_valid_i   (v_wvalid[VN +: TC]),
        .w_bank_i    (v_wbank[VN +: TC]),
        .w_row_i     (v_wrow[VN*RowW +: TC*RowW]),
        .w_i         (v_w[VN*InW +: TC*InW]),
        .w_valid_o   (v_wvalid[VS +: TC]),
        .w_bank_o    (v_wbank[VS +: TC]),
        .w_row_o     (v_wrow[VS*RowW +: TC*RowW]),
        .w_o         (v_w[VS*InW +: TC*InW])
      );
    end
  end

  assign psum_valid_o = v_valid[NTR*Cols +: Cols];
  assign psum_o       = v_psum[NTR*Cols*AccW +: Cols*AccW];

  // The east edge's activations and the south edge's weight writes leave the array unused.
  logic unused_edges;
  for (genvar r = 0; r < Rows; r++) begin : gen_east
    localparam int unsigned HE = r * (NTC + 1) + NTC;
    logic unused_east;
    assign unused_east = ^{h_valid[HE], h_tag[HE], h_act[HE*InW +: InW]};
  end
  assign unused_edges = ^{v_wvalid[NTR*Cols +: Cols], v_wbank[NTR*Cols +: Cols],
                          v_wrow[NTR*Cols*RowW +: Cols*RowW], v_w[NTR*Cols*InW +: Cols*InW]};

endmodule
