// SPDX-License-Identifier: Apache-2.0
// The project's one round-robin arbiter: grants the first requester at or after its pointer
// (idx_o; valid_o when any requests), and when the grant is taken (take_i) the pointer moves to
// the requester after the granted one, so every requester is served within N grants.
// With Sticky = 1 a grant that was not taken stays with its requester in the next cycle (an
// AXI request must hold until its handshake); with Sticky = 0 the choice is made every cycle.
`include "tpu_ff.svh"
module tpu_rr_arbiter #(
  parameter int unsigned N      = 2,
  parameter bit          Sticky = 1'b0,
  localparam int unsigned IdxW  = (N > 1) ? $clog2(N) : 1
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic [N-1:0]    req_i,
  input  logic            take_i,   // the granted requester's request is served this cycle
  output logic [IdxW-1:0] idx_o,    // the granted requester (the pointer when none requests)
  output logic            valid_o   // some requester requests
);

  if (N < 1) begin : gen_bad_n
    $error("tpu_rr_arbiter: N must be at least 1 (got %0d)", N);
  end

  logic [IdxW-1:0] ptr_q, ptr_d, held_q, pick;
  logic            hold_q;
  logic [IdxW:0]   cand;   // pointer + offset < 2N, wrapped by one subtraction (no divider)

  // The first requester at or after the pointer (scanned from the far end, the last match wins).
  always_comb begin
    pick = ptr_q;
    for (int unsigned k = 0; k < N; k++) begin
      cand = (IdxW + 1)'(ptr_q) + (IdxW + 1)'(N - 1 - k);
      if (cand >= (IdxW + 1)'(N)) cand = cand - (IdxW + 1)'(N);
      if (req_i[cand[IdxW-1:0]]) pick = cand[IdxW-1:0];
    end
  end

  assign valid_o = |req_i;
  assign idx_o   = (Sticky && hold_q) ? held_q : pick;

  assign ptr_d = (32'(idx_o) == N - 1) ? '0 : idx_o + 1'b1;
  `TPU_FFL(ptr_q, ptr_d, take_i, '0)
  `TPU_FF(held_q, idx_o, '0)
  `TPU_FF(hold_q, valid_o && !take_i, 1'b0)

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  a_take_granted: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                   take_i |-> req_i[idx_o])
    else $error("tpu_rr_arbiter: grant %0d taken without its request (requests %b)", idx_o,
                req_i);
  a_pointer_in_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                       32'(ptr_q) < N)
    else $error("tpu_rr_arbiter: pointer %0d of %0d requesters", ptr_q, N);
  // Sticky: a grant not taken stays with its requester while that one still requests, whoever
  // else asks meanwhile (the pointer's first requester may change under it).
  if (Sticky) begin : gen_sticky_assert
    a_sticky_hold: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                    valid_o && !take_i
                                    |=> !req_i[$past(idx_o)] || idx_o == $past(idx_o))
      else $error("tpu_rr_arbiter: a waiting grant moved from %0d to %0d (requests %b)",
                  $past(idx_o), idx_o, req_i);
  end
`endif

endmodule
