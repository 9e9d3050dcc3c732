// SPDX-License-Identifier: Apache-2.0
// A tile of the systolic array: TileRows × TileCols tpu_pe, connected as in the full array
// (activations west → east, partial sums and weight writes north → south). tpu_systolic_array
// is a grid of these tiles.
//
// A tile is only a unit of structure: it adds no register and no logic, so the array's timing
// and gates are the same whatever the tile size (only the numerics mode's register is repeated
// per tile). It exists for the simulator: every tile of an
// array is the same module (the row of its top PE is a port, not a parameter), so a model can
// build one tile and instantiate it many times (Verilator's hierarchical blocks; docs/mxu.md,
// "Large arrays"). A tile's inputs feed flip-flops only (every PE registers what enters it), so
// no combinational path crosses a tile boundary and a simulator evaluates a tile's logic once per
// clock edge, whatever the order in which the tiles' inputs are updated.
module tpu_pe_tile #(
  parameter int unsigned TileRows   = 16,
  parameter int unsigned TileCols   = 16,
  parameter int unsigned PipeRegs   = 1,
  parameter int unsigned ModeSel    = tpu_pkg::ModeRuntime,
  parameter int unsigned ExpBits    = tpu_pkg::Bf16ExpBits,
  parameter int unsigned InManBits  = tpu_pkg::Bf16ManBits,
  parameter int unsigned AccManBits = tpu_pkg::Fp32ManBits,
  parameter int unsigned RowW       = 4,   // width of a weight write's row index (the array's)
  localparam int unsigned InW       = 1 + ExpBits + InManBits,
  localparam int unsigned AccW      = 1 + ExpBits + AccManBits
) (
  input  logic                     clk_i,
  input  logic                     rst_ni,
  input  logic                     ftz_i,
  input  logic [RowW-1:0]          row0_i,   // the array row of this tile's row 0 (a constant)
  // Activations: row r enters from the west at [r], leaves east at [r]
  input  logic [TileRows-1:0]      act_valid_i,
  input  logic [TileRows-1:0]      act_tag_i,
  input  logic [TileRows*InW-1:0]  act_i,
  output logic [TileRows-1:0]      act_valid_o,
  output logic [TileRows-1:0]      act_tag_o,
  output logic [TileRows*InW-1:0]  act_o,
  // Partial sums: column c enters from the north at [c], leaves south at [c]
  input  logic [TileCols-1:0]      psum_valid_i,
  input  logic [TileCols*AccW-1:0] psum_i,
  output logic [TileCols-1:0]      psum_valid_o,
  output logic [TileCols*AccW-1:0] psum_o,
  // Weight writes: column c enters from the north at [c], leaves south at [c]
  input  logic [TileCols-1:0]      w_valid_i,
  input  logic [TileCols-1:0]      w_bank_i,
  input  logic [TileCols*RowW-1:0] w_row_i,
  input  logic [TileCols*InW-1:0]  w_i,
  output logic [TileCols-1:0]      w_valid_o,
  output logic [TileCols-1:0]      w_bank_o,
  output logic [TileCols*RowW-1:0] w_row_o,
  output logic [TileCols*InW-1:0]  w_o
);

  if (TileRows < 1 || TileCols < 1) begin : gen_bad_shape
    $error("tpu_pe_tile: TileRows and TileCols must be at least 1");
  end

  // Horizontal links: [r*(TileCols+1) + c] enters PE(r, c) from the west.
  localparam int unsigned HL = TileRows * (TileCols + 1);
  logic [HL-1:0]     h_valid, h_tag;
  logic [HL*InW-1:0] h_act;
  // Vertical links: [r*TileCols + c] enters PE(r, c) from the north.
  localparam int unsigned VL = (TileRows + 1) * TileCols;
  logic [VL-1:0]      v_valid, v_wvalid, v_wbank;
  logic [VL*AccW-1:0] v_psum;
  logic [VL*RowW-1:0] v_wrow;
  logic [VL*InW-1:0]  v_w;

  for (genvar r = 0; r < TileRows; r++) begin : gen_west
    localparam int unsigned HW = r * (TileCols + 1);
    localparam int unsigned HE = r * (TileCols + 1) + TileCols;
    assign h_valid[HW]               = act_valid_i[r];
    assign h_tag[HW]                 = act_tag_i[r];
    assign h_act[HW*InW +: InW]      = act_i[r*InW +: InW];
    assign act_valid_o[r]            = h_valid[HE];
    assign act_tag_o[r]              = h_tag[HE];
    assign act_o[r*InW +: InW]       = h_act[HE*InW +: InW];
  end

  localparam int unsigned VS0 = TileRows * TileCols;   // first south-edge link
  assign v_valid[TileCols-1:0]         = psum_valid_i;
  assign v_psum[TileCols*AccW-1:0]     = psum_i;
  assign v_wvalid[TileCols-1:0]        = w_valid_i;
  assign v_wbank[TileCols-1:0]         = w_bank_i;
  assign v_wrow[TileCols*RowW-1:0]     = w_row_i;
  assign v_w[TileCols*InW-1:0]         = w_i;
  assign psum_valid_o                  = v_valid[VS0 +: TileCols];
  assign psum_o                        = v_psum[VS0*AccW +: TileCols*AccW];
  assign w_valid_o                     = v_wvalid[VS0 +: TileCols];
  assign w_bank_o                      = v_wbank[VS0 +: TileCols];
  assign w_row_o                       = v_wrow[VS0*RowW +: TileCols*RowW];
  assign w_o                           = v_w[VS0*InW +: TileCols*InW];

  // The numerics mode, registered here so that it reaches the MACs from a flip-flop (a tile's
  // inputs feed flip-flops only; tpu_mxu's ftz_i is documented as registered).
  logic ftz_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ftz_q <= 1'b0;
    else         ftz_q <= ftz_i;
  end

  // The row base, registered too: it is a constant, but a simulator that evaluates the tile as a
  // block of its own re-runs whatever an input feeds at every evaluation (the PEs' rows: 13-15%
  // of the 128x128 model's time). Synthesis removes these flip-flops (constant input, no reset).
  logic [RowW-1:0] row0_q;
  always_ff @(posedge clk_i) row0_q <= row0_i;

  for (genvar r = 0; r < TileRows; r++) begin : gen_row
    for (genvar c = 0; c < TileCols; c++) begin : gen_col
      localparam int unsigned H  = r * (TileCols + 1) + c;   // west input of PE(r, c)
      localparam int unsigned VN = r * TileCols + c;         // north input
      localparam int unsigned VS = (r + 1) * TileCols + c;   // south output
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
        .ftz_i       (ftz_q),
        .row_i       (row0_q + RowW'(r)),
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

endmodule
