// SPDX-License-Identifier: Apache-2.0
// The accelerator's performance counters (register COUNTERS + 8*i; the list is rtl/accel/isa.json,
// as tpu_isa_pkg::Cnt*): while busy, every cycle counts once in CntCycles and once in one stall
// class (busy, weight, input, accumulator hazard, store, idle), DMA beats read and written count
// 32 bytes each, instructions consumed count overall and per module. The useful MACs are the
// matrix unit's own counter. Cleared by start (perf_clear_i).
module tpu_accel_counters #(
  parameter int unsigned Lanes = 1,  // DMA beats a cycle each way
  parameter int unsigned Clients = 3,  // the DMA's read clients
  localparam int unsigned NCnt  = tpu_isa_pkg::NumCounters,
  localparam int unsigned LCntW = $clog2(Lanes + 1)
) (
  input  logic               clk_i,
  input  logic               rst_ni,
  input  logic               clear_i,
  input  logic               busy_i,
  // The stall class: the matrix unit's class of this cycle (tpu_pkg::MxuClass*), else why the
  // compute module is not feeding it.
  input  logic [2:0]         mxu_class_i,
  input  logic               wait_store_i,   // the compute head waits for a store->compute token
  input  logic               wait_load_i,    // ... for a load->compute token
  input  logic               head_loadw_i,   // ... and it is a GEMM that loads weights
  input  logic               acc_load_i,     // a LOAD to the accumulators is running
  // Events of this cycle.
  input  logic [Clients*LCntW-1:0] r_take_i, // beats each read client takes
  input  logic               w_fire_i,
  input  logic [LCntW-1:0]   w_count_i,      // beats written
  input  logic               instr_i,        // the command processor consumed an instruction
  input  logic [2:0]         pop_i,          // a module took an instruction from its queue
  input  logic               vop_busy_i,     // a VOP runs in the vector unit
  input  logic [63:0]        macs_i,         // the matrix unit's useful MACs
  output logic [NCnt*64-1:0] counters_o      // counter i at [64*i +: 64]
);

  // Counter i's 64 bits.
  function automatic int unsigned cnt_lsb(input int unsigned i);
    cnt_lsb = 64 * i;
  endfunction

  // The stall class of a busy cycle (a counter index, tpu_isa_pkg::CntBusy .. CntIdle).
  logic [2:0] cls;
  always_comb begin
    case (mxu_class_i)
      tpu_pkg::MxuClassBusy:       cls = 3'(tpu_isa_pkg::CntBusy);
      tpu_pkg::MxuClassWeightLoad: cls = 3'(tpu_isa_pkg::CntWeightStall);
      tpu_pkg::MxuClassStarved:    cls = 3'(tpu_isa_pkg::CntInputStall);
      tpu_pkg::MxuClassHazard:     cls = 3'(tpu_isa_pkg::CntAccHazard);
      default: begin  // inactive or draining
        if (wait_store_i)     cls = 3'(tpu_isa_pkg::CntStoreStall);
        else if (wait_load_i) cls = head_loadw_i ? 3'(tpu_isa_pkg::CntWeightStall)
                                                 : 3'(tpu_isa_pkg::CntInputStall);
        else if (acc_load_i)  cls = 3'(tpu_isa_pkg::CntInputStall);
        else                  cls = 3'(tpu_isa_pkg::CntIdle);
      end
    endcase
  end

  // Beats the clients take this cycle (one client at a time: the oldest burst's).
  logic [LCntW-1:0] r_taken;
  always_comb begin
    r_taken = '0;
    for (int unsigned c = 0; c < Clients; c++) r_taken = r_taken | r_take_i[c*LCntW +: LCntW];
  end

  logic [NCnt*64-1:0] cnt_q, cnt_d;
  always_comb begin
    cnt_d = cnt_q;
    if (clear_i) begin
      cnt_d = '0;
    end else if (busy_i) begin
      cnt_d[cnt_lsb(tpu_isa_pkg::CntCycles) +: 64] =
          cnt_q[cnt_lsb(tpu_isa_pkg::CntCycles) +: 64] + 64'd1;
      cnt_d[cnt_lsb(32'(cls)) +: 64] = cnt_q[cnt_lsb(32'(cls)) +: 64] + 64'd1;
      cnt_d[cnt_lsb(tpu_isa_pkg::CntReadBytes) +: 64] =
          cnt_q[cnt_lsb(tpu_isa_pkg::CntReadBytes) +: 64] + 64'(r_taken) * 64'd32;
      if (w_fire_i) begin
        cnt_d[cnt_lsb(tpu_isa_pkg::CntWriteBytes) +: 64] =
            cnt_q[cnt_lsb(tpu_isa_pkg::CntWriteBytes) +: 64] + 64'(w_count_i) * 64'd32;
      end
      if (instr_i) begin
        cnt_d[cnt_lsb(tpu_isa_pkg::CntInstructions) +: 64] =
            cnt_q[cnt_lsb(tpu_isa_pkg::CntInstructions) +: 64] + 64'd1;
      end
      if (vop_busy_i) begin
        cnt_d[cnt_lsb(tpu_isa_pkg::CntVectorBusy) +: 64] =
            cnt_q[cnt_lsb(tpu_isa_pkg::CntVectorBusy) +: 64] + 64'd1;
      end
      // The instructions each module takes from its queue (END included).
      for (int unsigned m = 0; m < 3; m++) begin
        if (pop_i[m]) begin
          cnt_d[cnt_lsb(tpu_isa_pkg::CntLoadInstructions + m) +: 64] =
              cnt_q[cnt_lsb(tpu_isa_pkg::CntLoadInstructions + m) +: 64] + 64'd1;
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) cnt_q <= '0;
    else         cnt_q <= cnt_d;
  end

  always_comb begin
    counters_o = cnt_q;
    counters_o[cnt_lsb(tpu_isa_pkg::CntMacs) +: 64] = macs_i;
  end

  logic unused;  // the MACs are the matrix unit's count
  assign unused = ^cnt_q[cnt_lsb(tpu_isa_pkg::CntMacs) +: 64];

endmodule
