// SPDX-License-Identifier: Apache-2.0
// The command processor: fetches the program from HBM (AXI4 read client, ID "fetch"), decodes and
// checks every instruction in program order (tpu_accel_decode) and dispatches it into the queue
// of its module (END into all three); HEADER is checked, not dispatched. docs/isa.md has the
// rules; this module makes the machine report what the golden model reports:
//  * a decode/check error stops dispatch at once, with that instruction's code and pc;
//  * ERR_NO_END when the fetch passes the program's length without END (pc = the length);
//  * runtime errors (a token queue overflow, a deadlock of the modules and the dispatcher, a
//    memory error) are held as pending while the dispatcher checks the rest of the program
//    without dispatching (check-only): a decode error or ERR_NO_END found there wins, as in the
//    golden model, which checks the whole program first;
//  * a deadlock is detected when the dispatcher is blocked on a full queue (or has dispatched
//    END) and every module has nothing in flight and cannot start its head; the pc is the lowest
//    head blocked on a token.
// After an error the modules start nothing new (halt); when nothing is in flight the machine
// flushes its queues and tokens and reports done with the error.
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel_cmd #(
  parameter int unsigned Rows        = 16,
  parameter int unsigned Cols        = 16,
  parameter int unsigned ActDepth    = 2048,
  parameter int unsigned WgtDepth    = 2048,
  parameter int unsigned AccDepth    = 4096,
  parameter int unsigned VmemDepth   = 0,     // 0: no vector unit
  parameter int unsigned HbmAddrBits = 31,
  parameter int unsigned FetchDepth  = 128,
  localparam int unsigned FCntW      = $clog2(FetchDepth + 1),
  localparam int unsigned ArW        = `TPU_DMA_BURST_W(HbmAddrBits)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  // Control and status
  input  logic                   start_i,
  input  logic [63:0]            prog_addr_i,
  input  logic [31:0]            count_i,
  output logic                   busy_o,
  output logic                   done_o,        // sticky until the next start
  output logic [3:0]             err_code_o,
  output logic [31:0]            err_pc_o,
  output logic                   halt_o,
  output logic                   flush_o,
  output logic                   instr_o,       // an instruction was consumed (counter)
  // AXI4 read client (program fetch)
  output logic                   ar_valid_o,
  input  logic                   ar_ready_i,
  output logic [ArW-1:0]         ar_o,        // dma_burst (rtl/channels.json)
  input  logic                   r_valid_i,
  input  logic [255:0]           r_data_i,
  input  logic                   r_resp_err_i,
  // Dispatch: queue 0 load, 1 compute, 2 store
  output logic [2:0]             queue_push_o,
  output logic [287:0]           queue_data_o,      // {pc, instruction}
  input  logic [2:0]             queue_full_i,
  // Module status
  input  logic [2:0]             fin_i,
  input  logic [2:0]             stuck_i,
  input  logic [2:0]             blocked_i,
  input  logic [95:0]            head_pc_i,
  // Runtime errors (token overflow, memory error), already reduced to one
  input  logic                   rt_err_i,
  input  logic [3:0]             rt_code_i,
  input  logic [31:0]            rt_pc_i
);

  // Error codes: tpu_isa_pkg (generated from rtl/accel/isa.json).
  localparam logic [3:0] ErrOk       = tpu_isa_pkg::ErrOk;
  localparam logic [3:0] ErrHeader   = tpu_isa_pkg::ErrHeader;
  localparam logic [3:0] ErrHbm      = tpu_isa_pkg::ErrHbm;
  localparam logic [3:0] ErrDeadlock = tpu_isa_pkg::ErrDeadlock;
  localparam logic [3:0] ErrNoEnd    = tpu_isa_pkg::ErrNoEnd;
  typedef enum logic [1:0] {SIdle, SRun, SFinish} state_e;

  state_e      state_q, state_d;
  logic [63:0] addr_q, addr_d;
  logic [31:0] count_q, count_d;
  logic        done_q, done_d;
  logic        final_q, final_d, pend_q, pend_d, ended_q, ended_d;
  logic [3:0]  code_q, code_d, pcode_q, pcode_d;
  logic [31:0] pc_q, pc_d, ppc_q, ppc_d;

  // ---------------------------------------------------------------------------------------------
  // Fetch
  // ---------------------------------------------------------------------------------------------
  logic [32:0]      fpc_q, fpc_d;          // next instruction to request
  logic             beyond_q, beyond_d;       // the next instruction lies beyond HbmBytes
  logic [FCntW-1:0] ob_q, ob_d, f_cnt;    // beats requested and not yet returned; beats queued
  logic [65:0]      faddr;
  logic [8:0]       to_4k, flen;
  logic [32:0]      f_left;
  logic [65:0]      f_room;
  logic             f_stop, f_can, ar_fire;

  assign faddr  = 66'(addr_q) + {28'd0, fpc_q, 5'd0};
  assign to_4k  = 9'((13'd4096 - 13'(faddr[11:0])) >> 5);
  assign f_left = 33'(count_q) - fpc_q;
  assign f_room = (66'd1 << HbmAddrBits) - faddr;     // valid while faddr is in range
  always_comb begin
    flen = (FetchDepth < 16) ? 9'(FetchDepth) : 9'd16;
    if (33'(flen) > f_left) flen = 9'(f_left);
    if (flen > to_4k) flen = to_4k;
    // Coverage waiver: unreachable, HBM's size is a multiple of 4 KB so the line above binds first.
    /*verilator coverage_off*/
    if (66'(flen) > (f_room >> 5)) flen = 9'(f_room >> 5);
    /*verilator coverage_on*/
  end
  assign f_stop = final_q || ended_q || beyond_q || fpc_q >= 33'(count_q);
  assign f_can  = 32'(ob_q) + 32'(f_cnt) + 32'(flen) <= FetchDepth;
  // A request, once up, holds until it is taken (AXI), whatever happens meanwhile.
  logic ar_hold_q;
  assign ar_valid_o = ar_hold_q || (state_q == SRun && !f_stop && f_can && flen != 9'd0 &&
                                    faddr < (66'd1 << HbmAddrBits));
  typedef `TPU_DMA_BURST_T(HbmAddrBits) dma_burst_t;
  dma_burst_t ar;
  assign ar.addr    = faddr[HbmAddrBits-1:0];
  assign ar.len     = 8'(flen - 9'd1);
  assign ar_o       = ar;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ar_hold_q <= 1'b0;
    else         ar_hold_q <= ar_valid_o && !ar_ready_i;
  end
  assign ar_fire    = ar_valid_o && ar_ready_i;

  logic [256:0] fhead;
  logic         f_empty, consume;
  tpu_fifo #(.Width(257), .Depth(FetchDepth)) u_fetch (
    .clk_i, .rst_ni, .flush_i(flush_o),
    .push_i(r_valid_i), .data_i({r_resp_err_i, r_data_i}), .full_o(),
    .pop_i (consume), .data_o(fhead), .empty_o(f_empty), .count_o(f_cnt)
  );

  // ---------------------------------------------------------------------------------------------
  // Decode, check, dispatch
  // ---------------------------------------------------------------------------------------------
  logic [31:0] dpc_q, dpc_d;       // the instruction at the head
  logic        w_loaded_q, w_loaded_d;
  logic [15:0] w_kv_q, w_kv_d, w_nv_q, w_nv_d;
  logic [3:0]  derr;
  logic [1:0]  unit;
  logic        checking, head_valid, is_end, is_gemm, room, disp_blocked;

  tpu_accel_decode #(
    .Rows(Rows), .Cols(Cols), .ActDepth(ActDepth), .WgtDepth(WgtDepth), .AccDepth(AccDepth),
    .VmemDepth(VmemDepth), .HbmAddrBits(HbmAddrBits)
  ) u_decode (
    .instr_i(fhead[255:0]), .pc_zero_i(dpc_q == 32'd0), .count_i(count_q),
    .w_loaded_i(w_loaded_q), .w_kv_i(w_kv_q), .w_nv_i(w_nv_q),
    .err_o(derr), .unit_o(unit)
  );

  assign checking   = state_q == SRun && !final_q && !ended_q;
  assign head_valid = checking && !f_empty && 33'(dpc_q) < 33'(count_q);
  assign is_end     = tpu_isa_pkg::instr_opcode(fhead[255:0]) == tpu_isa_pkg::OpEnd;
  assign is_gemm    = tpu_isa_pkg::instr_opcode(fhead[255:0]) == tpu_isa_pkg::OpGemm;
  assign room       = is_end ? (queue_full_i == 3'b000)
                    : (unit == 2'd3) || !queue_full_i[unit];

  // The head is good (no fetch or decode error) and may be consumed: always in check-only mode,
  // when its queue has room otherwise.
  logic good, dispatch;
  assign good         = head_valid && !fhead[256] && derr == ErrOk;
  assign consume      = good && (pend_q || room);
  assign dispatch     = consume && !pend_q;
  assign disp_blocked = good && !pend_q && !room;
  assign instr_o      = consume;

  assign queue_data_o = {dpc_q, fhead[255:0]};
  always_comb begin
    queue_push_o = 3'b000;
    if (dispatch) begin
      if (is_end)              queue_push_o = 3'b111;
      else if (unit != 2'd3)   queue_push_o[unit] = 1'b1;
    end
  end

  // Deadlock: the dispatcher cannot go on (blocked on a full queue, or past END) and no module
  // can make progress, one of them waiting on a token.
  logic        deadlock;
  logic [31:0] dl_pc;
  assign deadlock = state_q == SRun && !final_q && !pend_q && (disp_blocked || ended_q) &&
                    (stuck_i == 3'b111) && (blocked_i != 3'b000);
  always_comb begin
    dl_pc = 32'hFFFF_FFFF;
    for (int unsigned m = 0; m < 3; m++) begin
      if (blocked_i[m] && head_pc_i[32*m +: 32] < dl_pc) dl_pc = head_pc_i[32*m +: 32];
    end
  end

  // A final error found by the dispatcher this cycle (beats pending runtime errors).
  logic        dfail;
  logic [3:0]  dcode;
  logic [31:0] dpc;
  always_comb begin
    dfail = 1'b0;
    dcode = ErrOk;
    dpc   = dpc_q;
    if (checking) begin
      if (33'(dpc_q) >= 33'(count_q)) begin
        dfail = 1'b1;
        dcode = ErrNoEnd;
      end else if (beyond_q && f_empty && ob_q == '0 && fpc_q == 33'(dpc_q)) begin
        dfail = 1'b1;
        dcode = ErrHbm;
      // Coverage waiver: unreachable, the HBM never answers a fetch with an error (the fetch stays
      // below HbmBytes and inside 4 KB).
      /*verilator coverage_off*/
      end else if (head_valid && fhead[256]) begin
        dfail = 1'b1;
        dcode = ErrHbm;
      /*verilator coverage_on*/
      end else if (head_valid && derr != ErrOk) begin
        dfail = 1'b1;
        dcode = derr;
      end else if (consume && is_end && pend_q) begin
        // Check-only reached END: the pending runtime error stands.
        dfail = 1'b1;
        dcode = pcode_q;
        dpc   = ppc_q;
      end
    end
  end

  logic all_fin;
  assign all_fin = fin_i == 3'b111;

  always_comb begin
    state_d = state_q;
    case (state_q)
      SIdle:   if (start_i) state_d = (count_i == 32'd0 || prog_addr_i[4:0] != 5'd0) ? SFinish
                                                                                       : SRun;
      // (A runtime error pends only before END is dispatched: ended_q and pend_q exclude
      // each other.)
      SRun:    if (final_q || dfail || (ended_q && (all_fin || rt_err_i || deadlock)))
                 state_d = SFinish;
      SFinish: if (stuck_i == 3'b111 && ob_q == '0 && !ar_valid_o) state_d = SIdle;
      // A 3-state enum: the default is unreachable.
      /*verilator coverage_off*/ default: state_d = SIdle; /*verilator coverage_on*/
    endcase
  end

  assign flush_o = state_q == SFinish && state_d == SIdle;
  assign halt_o  = final_q || pend_q;
  assign busy_o  = state_q != SIdle;
  assign done_o  = done_q;
  assign err_code_o = code_q;
  assign err_pc_o   = pc_q;

  always_comb begin
    addr_d     = addr_q;
    count_d    = count_q;
    done_d     = done_q;
    final_d    = final_q;
    pend_d     = pend_q;
    ended_d    = ended_q;
    code_d     = code_q;
    pc_d       = pc_q;
    pcode_d    = pcode_q;
    ppc_d      = ppc_q;
    fpc_d      = fpc_q;
    beyond_d   = beyond_q;
    ob_d       = ob_q;
    dpc_d      = dpc_q;
    w_loaded_d = w_loaded_q;
    w_kv_d     = w_kv_q;
    w_nv_d     = w_nv_q;
    // Fetch bookkeeping.
    ob_d = ob_q + (ar_fire ? FCntW'(flen) : '0) - FCntW'(r_valid_i);
    if (ar_fire) fpc_d = fpc_q + 33'(flen);
    if (state_q == SRun && !f_stop && faddr >= (66'd1 << HbmAddrBits)) beyond_d = 1'b1;
    if (consume) begin
      dpc_d = dpc_q + 32'd1;
      if (is_gemm && fhead[tpu_isa_pkg::GemmLoadWeightsBit]) begin
        w_loaded_d = 1'b1;
        w_kv_d     = tpu_isa_pkg::gemm_kv(fhead[255:0]);
        w_nv_d     = tpu_isa_pkg::gemm_nv(fhead[255:0]);
      end
      if (is_end && !pend_q) begin
        ended_d = 1'b1;
        pc_d    = dpc_q;   // reported with code 0 on success, as the golden model does
      end
    end
    case (state_q)
      SIdle: if (start_i) begin
        addr_d     = prog_addr_i;
        count_d    = count_i;
        done_d     = 1'b0;
        pend_d     = 1'b0;
        ended_d    = 1'b0;
        fpc_d      = '0;
        beyond_d   = 1'b0;
        dpc_d      = '0;
        w_loaded_d = 1'b0;
        pc_d       = '0;
        code_d     = ErrOk;
        final_d    = 1'b0;
        if (count_i == 32'd0) begin
          final_d = 1'b1;
          code_d  = ErrHeader;
        end else if (prog_addr_i[4:0] != 5'd0) begin
          final_d = 1'b1;
          code_d  = ErrHbm;
        end
      end
      SRun: if (!final_q) begin
        if (dfail) begin
          final_d = 1'b1;
          code_d  = dcode;
          pc_d    = dpc;
        end else if (!pend_q && (rt_err_i || deadlock)) begin
          // Runtime error: final at once when END has been dispatched (nothing left to
          // check), or is dispatched in this cycle (a pending error would never be taken up:
          // only END in check-only mode does that), else pending while the rest of the
          // program is checked.
          if (ended_q || (consume && is_end)) begin
            final_d = 1'b1;
            code_d  = rt_err_i ? rt_code_i : ErrDeadlock;
            pc_d    = rt_err_i ? rt_pc_i : dl_pc;
          end else begin
            pend_d  = 1'b1;
            pcode_d = rt_err_i ? rt_code_i : ErrDeadlock;
            ppc_d   = rt_err_i ? rt_pc_i : dl_pc;
          end
        end
      end
      SFinish: if (state_d == SIdle) done_d = 1'b1;
      /*verilator coverage_off*/ default: ; /*verilator coverage_on*/  // 3-state enum
    endcase
  end
  `TPU_FF(state_q, state_d, SIdle)
  `TPU_FF(addr_q, addr_d, '0)
  `TPU_FF(count_q, count_d, '0)
  `TPU_FF(done_q, done_d, 1'b0)
  `TPU_FF(final_q, final_d, 1'b0)
  `TPU_FF(pend_q, pend_d, 1'b0)
  `TPU_FF(ended_q, ended_d, 1'b0)
  `TPU_FF(code_q, code_d, '0)
  `TPU_FF(pc_q, pc_d, '0)
  `TPU_FF(pcode_q, pcode_d, '0)
  `TPU_FF(ppc_q, ppc_d, '0)
  `TPU_FF(fpc_q, fpc_d, '0)
  `TPU_FF(beyond_q, beyond_d, 1'b0)
  `TPU_FF(ob_q, ob_d, '0)
  `TPU_FF(dpc_q, dpc_d, '0)
  `TPU_FF(w_loaded_q, w_loaded_d, 1'b0)
  `TPU_FF(w_kv_q, w_kv_d, '0)
  `TPU_FF(w_nv_q, w_nv_d, '0)

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // A runtime error pends only before END is dispatched (END then reports it); once END is
  // dispatched, one is final at once.
  a_end_pend_excl: assert property (@(posedge clk_i) disable iff (!rst_ni) !(ended_q && pend_q))
    else $error("tpu_accel_cmd: a runtime error pends after END was dispatched (it would be lost)");
  // Dispatch only into a queue with room; the fetch request holds while it waits; an error code
  // is reported only with a finished run.
  a_push_room: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                (queue_push_o & queue_full_i) == 3'b000)
    else $error("tpu_accel_cmd: dispatch %b into full queues %b", queue_push_o, queue_full_i);
  a_fetch_held: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 ar_valid_o && !ar_ready_i
                                 |=> ar_valid_o && $stable(ar_o))
    else $error("tpu_accel_cmd: the program fetch changed while waiting");
  a_state_known: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  state_q inside {SIdle, SRun, SFinish})
    else $error("tpu_accel_cmd: state %0d", state_q);
`endif

endmodule
