// SPDX-License-Identifier: Apache-2.0
// The store module's vector unit (docs/vpu.md): the vector memory (VmemDepth rows of Cols fp32),
// VOP on it and on the accumulators through tpu_vpu, and LOAD into it (a read client of the DMA).
// The store module starts a vector instruction only when it has nothing else in flight and starts
// nothing else while busy_o, so the vector memory has one reader and one writer at a time: the
// instruction here, or else STORE's data side through st_re_i (source 1).
//
// VOP runs its elements (i < m outer, j < n inner) in batches of up to Slots rows, one row of
// Cols lanes per slot of tpu_vpu (Lanes = Cols), in two overlapped parts:
//   gather  reads each element's operands, one row a cycle (A; B unless the scalar; the old
//           destination for mac and select), from the accumulators (the store port) or the vector
//           memory. A batch ends before an element that reads a vector-memory row an earlier
//           element of the batch writes, and an element waits while it reads a row the batch in
//           execution has still to write, so every element reads what the elements before it
//           wrote (the ISA's sequential meaning);
//   execute starts tpu_vpu on a gathered batch (its operands are copied in at the start, so the
//           next batch is gathered while this one runs), then writes the results to their
//           destination rows in element order, a row a cycle; the next batch may start in the
//           cycle of the last write.
// LOAD takes the DMA's beats up to each row's end, widens bf16 (format 1) to fp32 exactly, sets
// elements at or beyond `elems` to +0 and writes the row when it is whole.
// done_o is the instruction's completion (its push_prev token when push_o).
`include "tpu_channels.svh"
`include "tpu_ff.svh"
module tpu_accel_vec #(
  parameter int unsigned Cols      = 16,
  parameter int unsigned AccDepth  = 4096,
  parameter int unsigned VmemDepth = 64,
  parameter int unsigned AddrW     = 31,
  parameter int unsigned Lanes     = 1,     // DMA beats a cycle
  parameter int unsigned Slots     = 4,     // rows per batch of tpu_vpu
  parameter int unsigned PipeRegs  = 3,     // stages of tpu_vpu's FMAs (< Slots)
  localparam int unsigned LCntW    = $clog2(Lanes + 1),
  localparam int unsigned AccAW    = (AccDepth > 1) ? $clog2(AccDepth) : 1,
  localparam int unsigned VmAW     = (VmemDepth > 1) ? $clog2(VmemDepth) : 1,
  localparam int unsigned RowW     = Cols * 32,
  localparam int unsigned SlotBits = (Slots > 1) ? $clog2(Slots) : 1,
  localparam int unsigned DmaBurstW   = `TPU_DMA_BURST_W(AddrW),
  localparam int unsigned DmaRdBeatsW = `TPU_DMA_RD_BEATS_W(LCntW, Lanes)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,
  input  logic                   flush_i,
  input  logic                   ftz_i,
  // A vector instruction (VOP, or LOAD to buffer 3) to start (only while !busy_o)
  input  logic                   start_i,
  input  logic [255:0]           instr_i,
  input  logic [31:0]            pc_i,
  output logic                   busy_o,
  output logic                   vop_o,     // busy with a VOP (not a LOAD)
  output logic                   done_o,
  output logic                   push_o,
  output logic [31:0]            pc_o,      // the running (or last) instruction's pc
  output logic                   err_o,     // a LOAD's read came back with an error
  // Read client of tpu_accel_dma (dma_burst, dma_rd_beats: rtl/channels.json)
  output logic                   ar_valid_o,
  input  logic                   ar_ready_i,
  output logic [DmaBurstW-1:0]   ar_o,
  input  logic                   r_valid_i,
  input  logic [DmaRdBeatsW-1:0] r_i,
  output logic [LCntW-1:0]       r_take_o,
  // The accumulators' store port (while busy): a row one cycle after its read
  output logic                   acc_re_o,
  output logic [AccAW-1:0]       acc_addr_o,
  input  logic [RowW-1:0]        acc_data_i,
  // STORE's reads of the vector memory (while !busy_o): a row one cycle after its read
  input  logic                   st_re_i,
  input  logic [VmAW-1:0]        st_addr_i,
  output logic [RowW-1:0]        st_data_o
);

  `TPU_DMA_TYPEDEFS(AddrW, LCntW, Lanes)
  dma_rd_beats_t r;
  dma_burst_t    ar;
  assign r    = r_i;
  assign ar_o = ar;

  if (Slots <= PipeRegs) begin : gen_bad_slots
    $error("tpu_accel_vec: Slots (%0d) must exceed PipeRegs (%0d)", Slots, PipeRegs);
  end

  // ---------------------------------------------------------------------------------------------
  // The vector memory: one write port, one read port (the row a cycle after its read)
  // ---------------------------------------------------------------------------------------------
  logic            vm_we, vm_re;
  logic [VmAW-1:0] vm_waddr, vm_raddr;
  logic [RowW-1:0] vm_wdata, vm_rdata;
  logic [RowW-1:0] vmem_q [VmemDepth];
  always_ff @(posedge clk_i) begin
    if (vm_we) vmem_q[vm_waddr] <= vm_wdata;
    if (vm_re) vm_rdata <= vmem_q[vm_raddr];
  end
  assign st_data_o = vm_rdata;

  // ---------------------------------------------------------------------------------------------
  // The instruction
  // ---------------------------------------------------------------------------------------------
  typedef enum logic [1:0] {Idle, Vop, Load} state_e;
  state_e state_q, state_d;
  logic   is_load;
  assign is_load = tpu_isa_pkg::instr_opcode(instr_i) == tpu_isa_pkg::OpLoad;
  assign busy_o  = state_q != Idle;
  assign vop_o   = state_q == Vop;

  logic        push_q, push_d;
  logic [31:0] pc_q, pc_d;
  assign push_o = push_q;
  assign pc_o   = pc_q;

  // VOP fields, held from the start.
  logic [7:0]  op_q, op_d;
  logic        avm_q, avm_d, bvm_q, bvm_d, rdb_q, rdb_d, rdd_q, rdd_d;
  logic [15:0] n_q, n_d, m_q, m_d, asi_q, asi_d, aso_q, aso_d, bsi_q, bsi_d, bso_q, bso_d;
  logic [15:0] dsi_q, dsi_d, dso_q, dso_d;
  logic [31:0] scalar_q, scalar_d;
  // The element walk: inner and outer index, each operand's row and its outer row.
  logic [15:0] j_q, j_d, i_q, i_d;
  logic [15:0] ra_q, ra_d, rb_q, rb_d, rd_q, rd_d, oa_q, oa_d, ob_q, ob_d, od_q, od_d;
  logic        last_elem;
  assign last_elem = j_q == n_q - 16'd1 && i_q == m_q - 16'd1;

  // The batch being gathered: its size, the operand being read (0 A, 1 B, 2 the old
  // destination), each slot's destination row, the walk is past its last element (fin), the
  // batch is complete (ready).
  logic [SlotBits:0]    cnt_q, cnt_d;
  logic [1:0]           k_q, k_d;
  logic [Slots*16-1:0]  dst_q, dst_d;
  logic                 fin_q, fin_d, ready_q, ready_d;
  // The batch in execution: running in tpu_vpu (e_run) or being written (e_wr, row w), its size,
  // destinations, and whether it is the instruction's last.
  logic                 e_run_q, e_run_d, e_wr_q, e_wr_d, e_last_q, e_last_d;
  logic [SlotBits:0]    e_cnt_q, e_cnt_d, w_q, w_d;
  logic [Slots*16-1:0]  e_dst_q, e_dst_d;

  // Hazards of the element at the walk: it reads a vector-memory row that a slot of the batch
  // being gathered writes (the batch ends before it), or one the batch in execution has still to
  // write (the element waits).
  function automatic logic reads_row(input logic [15:0] row, input logic avm, input logic bvm,
                                     input logic rdb, input logic rdd, input logic [15:0] ra,
                                     input logic [15:0] rb, input logic [15:0] rd);
    reads_row = (avm && ra == row) || (rdb && bvm && rb == row) || (rdd && rd == row);
  endfunction
  logic hazard, hazard_exec;
  always_comb begin
    hazard      = 1'b0;
    hazard_exec = 1'b0;
    for (int unsigned s = 0; s < Slots; s++) begin
      if ((SlotBits + 1)'(s) < cnt_q &&
          reads_row(dst_q[16*s +: 16], avm_q, bvm_q, rdb_q, rdd_q, ra_q, rb_q, rd_q)) begin
        hazard = 1'b1;
      end
      if ((e_run_q || e_wr_q) && (SlotBits + 1)'(s) < e_cnt_q &&
          reads_row(e_dst_q[16*s +: 16], avm_q, bvm_q, rdb_q, rdd_q, ra_q, rb_q, rd_q)) begin
        hazard_exec = 1'b1;
      end
    end
  end

  // This cycle's operand read: which operand, from where.
  logic rd_go, rd_vm, rd_last;
  logic [15:0] rd_row;
  assign rd_go   = state_q == Vop && !fin_q && !ready_q &&
                   !(k_q == 2'd0 && (hazard || hazard_exec));
  assign rd_vm   = k_q == 2'd0 ? avm_q : k_q == 2'd1 ? bvm_q : 1'b1;
  assign rd_row  = k_q == 2'd0 ? ra_q : k_q == 2'd1 ? rb_q : rd_q;
  // The element's last operand: A alone, or B, or the destination.
  assign rd_last = k_q == 2'd2 || (k_q == 2'd1 && !rdd_q) || (k_q == 2'd0 && !rdb_q && !rdd_q);
  logic [1:0] k_next;
  assign k_next = (k_q == 2'd0 && rdb_q) ? 2'd1 : 2'd2;

  // The read's data arrives the next cycle, into its slot's operand.
  logic                cap_q, cap_d, cap_vm_q, cap_vm_d;
  logic [1:0]          cap_k_q, cap_k_d;
  logic [SlotBits-1:0] cap_s_q, cap_s_d;
  logic [Slots*RowW-1:0] opa_q, opb_q, opc_q;
  logic [RowW-1:0]     cap_row;
  assign cap_row = cap_vm_q ? vm_rdata : acc_data_i;
  for (genvar s = 0; s < Slots; s++) begin : gen_ops
    logic wa, wb, wc, bs;
    assign wa = cap_q && cap_s_q == SlotBits'(s) && cap_k_q == 2'd0;
    assign wb = cap_q && cap_s_q == SlotBits'(s) && cap_k_q == 2'd1;
    assign wc = cap_q && cap_s_q == SlotBits'(s) && cap_k_q == 2'd2;
    // B is the scalar on every lane unless the op reads a B row.
    assign bs = rd_go && k_q == 2'd0 && cnt_q == (SlotBits + 1)'(s) && !rdb_q;
    always_ff @(posedge clk_i) begin
      if (wa) opa_q[RowW*s +: RowW] <= cap_row;
      if (wb) opb_q[RowW*s +: RowW] <= cap_row;
      else if (bs) opb_q[RowW*s +: RowW] <= {Cols{scalar_q}};
      if (wc) opc_q[RowW*s +: RowW] <= cap_row;
    end
  end

  // tpu_vpu: one row per slot, Cols lanes.
  logic vpu_start, vpu_busy, vpu_done;
  logic [Slots*RowW-1:0] res;
  // A gathered batch starts when its last row is in and the batch in execution is written (or
  // writes its last row this cycle).
  logic exec_free, last_write;
  assign last_write = e_wr_q && w_q == e_cnt_q - 1'b1;
  assign exec_free  = !e_run_q && (!e_wr_q || last_write);
  assign vpu_start  = state_q == Vop && ready_q && !cap_q && exec_free && !vpu_busy;
  tpu_vpu #(.Lanes(Cols), .Slots(Slots), .PipeRegs(PipeRegs)) u_vpu (
    .clk_i, .rst_ni, .ftz_i,
    .start_i(vpu_start), .prog_i(op_q), .a_i(opa_q), .b_i(opb_q), .c_i(opc_q),
    .busy_o(vpu_busy), .done_o(vpu_done), .res_o(res)
  );

  // ---------------------------------------------------------------------------------------------
  // LOAD to the vector memory
  // ---------------------------------------------------------------------------------------------
  logic [15:0] l_dst_q, l_dst_d, l_rows_q, l_rows_d, l_elems_q, l_elems_d, l_row_q, l_row_d;
  logic [4:0]  l_bpr_q, l_bpr_d, l_chunk_q, l_chunk_d, bpr, l_chunk_end, l_row_left;
  logic        l_bf16_q, l_bf16_d, row_full_q, row_full_d, beat, l_last_chunk, l_write, l_done;
  logic        ld_start, ld_bf16;
  logic [RowW-1:0] row_q;

  assign ld_start = start_i && is_load;
  assign ld_bf16  = tpu_isa_pkg::load_format(instr_i) == tpu_isa_pkg::FmtBf16;
  assign bpr      = 5'(((17'(tpu_isa_pkg::load_elems(instr_i)) << (ld_bf16 ? 1 : 2)) + 17'd31)
                       >> 5);

  tpu_accel_burst #(.AddrW(AddrW)) u_burst (
    .clk_i, .rst_ni, .flush_i,
    .start_i   (ld_start),
    .addr_i    (AddrW'(tpu_isa_pkg::load_hbm_addr(instr_i))),
    .stride_i  (tpu_isa_pkg::load_hbm_stride(instr_i)),
    .rows_i    (tpu_isa_pkg::load_rows(instr_i)),
    .bpr_i     (bpr),
    .once_i    (1'b0),
    .busy_o    (),
    .req_valid_o(ar_valid_o),
    .req_ready_i(ar_ready_i),
    .req_o     (ar),
    .req_last_o()
  );

  // Take the offered beats up to the row's end (a burst may span rows).
  assign l_row_left   = l_bpr_q - l_chunk_q;
  assign beat         = state_q == Load && r_valid_i && !row_full_q;
  assign r_take_o     = !beat ? '0 : (5'(r.count) > l_row_left) ? LCntW'(l_row_left) : r.count;
  assign l_chunk_end  = l_chunk_q + 5'(r_take_o);
  assign l_last_chunk = l_chunk_end == l_bpr_q;
  assign l_write      = row_full_q;
  assign l_done       = l_write && l_row_q == l_rows_q - 16'd1;

  // Element e of the row comes from beat e/8 (fp32) or e/16 (bf16, widened: bits << 16), lane
  // beat - l_chunk_q of this cycle; the row's first beats clear the rest.
  for (genvar e = 0; e < Cols; e++) begin : gen_row
    logic [4:0]  ch32, ch16, ch;
    logic [31:0] v32, v16, v;
    assign ch32 = 5'(e / 8);
    assign ch16 = 5'(e / 16);
    assign ch   = l_bf16_q ? ch16 : ch32;
    always_comb begin
      v32 = 32'd0;
      v16 = 32'd0;
      for (int unsigned l = 0; l < Lanes; l++) begin
        if (ch32 - l_chunk_q == 5'(l)) v32 = r.data[256*l + 32*(e%8) +: 32];
        if (ch16 - l_chunk_q == 5'(l)) v16 = {r.data[256*l + 16*(e%16) +: 16], 16'd0};
      end
    end
    assign v = l_bf16_q ? v16 : v32;
    logic here, wen;
    assign here = l_chunk_q <= ch && ch < l_chunk_end;
    assign wen  = beat && (here || l_chunk_q == 5'd0);
    always_ff @(posedge clk_i) begin
      if (wen) row_q[32*e +: 32] <= (here && e < 32'(l_elems_q)) ? v : 32'd0;
    end
  end

  logic [Lanes-1:0] lane_on;
  for (genvar i = 0; i < Lanes; i++) begin : gen_lane_on
    assign lane_on[i] = LCntW'(i) < r_take_o;
  end
  assign err_o = beat && |(r.err & lane_on);

  // ---------------------------------------------------------------------------------------------
  // Memory ports
  // ---------------------------------------------------------------------------------------------
  assign acc_re_o   = rd_go && !rd_vm;
  assign acc_addr_o = AccAW'(rd_row);
  assign vm_re      = busy_o ? (rd_go && rd_vm) : st_re_i;
  assign vm_raddr   = busy_o ? VmAW'(rd_row) : st_addr_i;
  assign vm_we      = e_wr_q || (state_q == Load && l_write);
  assign vm_waddr   = e_wr_q ? VmAW'(e_dst_q[16*w_q[SlotBits-1:0] +: 16])
                             : VmAW'(l_dst_q + l_row_q);
  assign vm_wdata   = e_wr_q ? res[RowW*w_q[SlotBits-1:0] +: RowW] : row_q;

  // The instruction's last result row or loaded row is written this cycle.
  assign done_o = (last_write && e_last_q) || (state_q == Load && l_done);

  // ---------------------------------------------------------------------------------------------
  // Next state
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    state_d   = state_q;
    push_d    = push_q;
    pc_d      = pc_q;
    op_d      = op_q;
    avm_d     = avm_q;
    bvm_d     = bvm_q;
    rdb_d     = rdb_q;
    rdd_d     = rdd_q;
    n_d       = n_q;
    m_d       = m_q;
    asi_d     = asi_q;
    aso_d     = aso_q;
    bsi_d     = bsi_q;
    bso_d     = bso_q;
    dsi_d     = dsi_q;
    dso_d     = dso_q;
    scalar_d  = scalar_q;
    j_d       = j_q;
    i_d       = i_q;
    ra_d      = ra_q;
    rb_d      = rb_q;
    rd_d      = rd_q;
    oa_d      = oa_q;
    ob_d      = ob_q;
    od_d      = od_q;
    cnt_d     = cnt_q;
    k_d       = k_q;
    dst_d     = dst_q;
    fin_d     = fin_q;
    ready_d   = ready_q;
    e_run_d   = e_run_q;
    e_wr_d    = e_wr_q;
    e_last_d  = e_last_q;
    e_cnt_d   = e_cnt_q;
    e_dst_d   = e_dst_q;
    w_d       = w_q;
    cap_d     = rd_go;
    cap_vm_d  = rd_vm;
    cap_k_d   = k_q;
    cap_s_d   = SlotBits'(cnt_q);
    l_dst_d   = l_dst_q;
    l_rows_d  = l_rows_q;
    l_elems_d = l_elems_q;
    l_row_d   = l_row_q;
    l_bpr_d   = l_bpr_q;
    l_chunk_d = l_chunk_q;
    l_bf16_d  = l_bf16_q;
    row_full_d = row_full_q;
    if (flush_i) begin
      state_d    = Idle;
      cap_d      = 1'b0;
      row_full_d = 1'b0;
      l_chunk_d  = '0;
      ready_d    = 1'b0;
      e_run_d    = 1'b0;
      e_wr_d     = 1'b0;
    end else begin
      unique case (state_q)
        Idle: if (start_i) begin
          push_d = instr_i[tpu_isa_pkg::FlagPushPrev];
          pc_d   = pc_i;
          if (is_load) begin
            state_d   = Load;
            l_dst_d   = tpu_isa_pkg::load_dst(instr_i);
            l_rows_d  = tpu_isa_pkg::load_rows(instr_i);
            l_elems_d = tpu_isa_pkg::load_elems(instr_i);
            l_bf16_d  = ld_bf16;
            l_bpr_d   = bpr;
            l_row_d   = '0;
            l_chunk_d = '0;
          end else begin
            state_d  = Vop;
            op_d     = tpu_isa_pkg::vop_op(instr_i);
            avm_d    = instr_i[tpu_isa_pkg::VopAVmemBit];
            bvm_d    = instr_i[tpu_isa_pkg::VopBVmemBit];
            rdb_d    = tpu_isa_pkg::VopReadsB[5'(tpu_isa_pkg::vop_op(instr_i))] &&
                       !instr_i[tpu_isa_pkg::VopBScalarBit];
            rdd_d    = tpu_isa_pkg::VopReadsD[5'(tpu_isa_pkg::vop_op(instr_i))];
            n_d      = tpu_isa_pkg::vop_n(instr_i);
            m_d      = tpu_isa_pkg::vop_m(instr_i);
            asi_d    = tpu_isa_pkg::vop_asi(instr_i);
            aso_d    = tpu_isa_pkg::vop_aso(instr_i);
            bsi_d    = tpu_isa_pkg::vop_bsi(instr_i);
            bso_d    = tpu_isa_pkg::vop_bso(instr_i);
            dsi_d    = tpu_isa_pkg::vop_dsi(instr_i);
            dso_d    = tpu_isa_pkg::vop_dso(instr_i);
            scalar_d = tpu_isa_pkg::vop_scalar(instr_i);
            j_d      = '0;
            i_d      = '0;
            ra_d     = tpu_isa_pkg::vop_a(instr_i);
            rb_d     = tpu_isa_pkg::vop_b(instr_i);
            rd_d     = tpu_isa_pkg::vop_d(instr_i);
            oa_d     = tpu_isa_pkg::vop_a(instr_i);
            ob_d     = tpu_isa_pkg::vop_b(instr_i);
            od_d     = tpu_isa_pkg::vop_d(instr_i);
            cnt_d    = '0;
            k_d      = '0;
            fin_d    = 1'b0;
            ready_d  = 1'b0;
            e_run_d  = 1'b0;
            e_wr_d   = 1'b0;
          end
        end
        Vop: begin
          // Gather.
          if (!fin_q && !ready_q) begin
            if (k_q == 2'd0 && hazard) begin
              ready_d = 1'b1;  // the next element must wait for this batch
            end else if (k_q == 2'd0 && hazard_exec) begin
              // wait for the batch in execution to write the row
            end else if (!rd_last) begin
              k_d = k_next;
            end else begin
              // The element is gathered: its destination joins the batch, the walk moves on.
              k_d = '0;
              dst_d[16*SlotBits'(cnt_q) +: 16] = rd_q;
              cnt_d = cnt_q + 1'b1;
              if (j_q == n_q - 16'd1) begin
                j_d  = '0;
                i_d  = i_q + 16'd1;
                oa_d = oa_q + aso_q;
                ob_d = ob_q + bso_q;
                od_d = od_q + dso_q;
                ra_d = oa_q + aso_q;
                rb_d = ob_q + bso_q;
                rd_d = od_q + dso_q;
              end else begin
                j_d  = j_q + 16'd1;
                ra_d = ra_q + asi_q;
                rb_d = rb_q + bsi_q;
                rd_d = rd_q + dsi_q;
              end
              if (last_elem) fin_d = 1'b1;
              if (last_elem || cnt_q == (SlotBits + 1)'(Slots - 1)) ready_d = 1'b1;
            end
          end
          // Execute: write the results a row a cycle, in element order.
          if (e_wr_q) begin
            w_d = w_q + 1'b1;
            if (last_write) begin
              e_wr_d = 1'b0;
              if (e_last_q) state_d = Idle;
            end
          end
          if (e_run_q && vpu_done) begin
            e_run_d = 1'b0;
            e_wr_d  = 1'b1;
            w_d     = '0;
          end
          // Start the gathered batch; the gatherer begins the next one.
          if (vpu_start) begin
            e_run_d  = 1'b1;
            e_cnt_d  = cnt_q;
            e_dst_d  = dst_q;
            e_last_d = fin_q;
            ready_d  = 1'b0;
            cnt_d    = '0;
          end
        end
        Load: begin
          if (beat) begin
            l_chunk_d = l_last_chunk ? 5'd0 : l_chunk_end;
            if (l_last_chunk) row_full_d = 1'b1;
          end
          if (l_write) begin
            row_full_d = 1'b0;
            l_row_d    = l_row_q + 16'd1;
          end
          if (l_done) state_d = Idle;
        end
        default: state_d = Idle;
      endcase
    end
  end

  `TPU_FF(state_q, state_d, Idle)
  `TPU_FF(push_q, push_d, 1'b0)
  `TPU_FF(pc_q, pc_d, '0)
  `TPU_FF(op_q, op_d, '0)
  `TPU_FF(avm_q, avm_d, 1'b0)
  `TPU_FF(bvm_q, bvm_d, 1'b0)
  `TPU_FF(rdb_q, rdb_d, 1'b0)
  `TPU_FF(rdd_q, rdd_d, 1'b0)
  `TPU_FF(n_q, n_d, '0)
  `TPU_FF(m_q, m_d, '0)
  `TPU_FF(asi_q, asi_d, '0)
  `TPU_FF(aso_q, aso_d, '0)
  `TPU_FF(bsi_q, bsi_d, '0)
  `TPU_FF(bso_q, bso_d, '0)
  `TPU_FF(dsi_q, dsi_d, '0)
  `TPU_FF(dso_q, dso_d, '0)
  `TPU_FF(scalar_q, scalar_d, '0)
  `TPU_FF(j_q, j_d, '0)
  `TPU_FF(i_q, i_d, '0)
  `TPU_FF(ra_q, ra_d, '0)
  `TPU_FF(rb_q, rb_d, '0)
  `TPU_FF(rd_q, rd_d, '0)
  `TPU_FF(oa_q, oa_d, '0)
  `TPU_FF(ob_q, ob_d, '0)
  `TPU_FF(od_q, od_d, '0)
  `TPU_FF(cnt_q, cnt_d, '0)
  `TPU_FF(k_q, k_d, '0)
  `TPU_FF(dst_q, dst_d, '0)
  `TPU_FF(fin_q, fin_d, 1'b0)
  `TPU_FF(ready_q, ready_d, 1'b0)
  `TPU_FF(e_run_q, e_run_d, 1'b0)
  `TPU_FF(e_wr_q, e_wr_d, 1'b0)
  `TPU_FF(e_last_q, e_last_d, 1'b0)
  `TPU_FF(e_cnt_q, e_cnt_d, '0)
  `TPU_FF(e_dst_q, e_dst_d, '0)
  `TPU_FF(w_q, w_d, '0)
  `TPU_FF(cap_q, cap_d, 1'b0)
  `TPU_FF(cap_vm_q, cap_vm_d, 1'b0)
  `TPU_FF(cap_k_q, cap_k_d, '0)
  `TPU_FF(cap_s_q, cap_s_d, '0)
  `TPU_FF(l_dst_q, l_dst_d, '0)
  `TPU_FF(l_rows_q, l_rows_d, '0)
  `TPU_FF(l_elems_q, l_elems_d, '0)
  `TPU_FF(l_row_q, l_row_d, '0)
  `TPU_FF(l_bpr_q, l_bpr_d, '0)
  `TPU_FF(l_chunk_q, l_chunk_d, '0)
  `TPU_FF(l_bf16_q, l_bf16_d, 1'b0)
  `TPU_FF(row_full_q, row_full_d, 1'b0)

  // ---------------------------------------------------------------------------------------------
  // Assertions
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  // The decoder refuses rows beyond the vector memory, so no access ever falls outside it.
  a_vm_write_in_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                        vm_we |-> 32'(vm_waddr) < VmemDepth)
    else $error("tpu_accel_vec: vector-memory write at row %0d of %0d", vm_waddr, VmemDepth);
  a_vm_read_in_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                       vm_re |-> 32'(vm_raddr) < VmemDepth)
    else $error("tpu_accel_vec: vector-memory read at row %0d of %0d", vm_raddr, VmemDepth);
  a_acc_read_in_range: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                        acc_re_o |-> 32'(rd_row) < AccDepth)
    else $error("tpu_accel_vec: accumulator read at row %0d of %0d", rd_row, AccDepth);
  // STORE reads the vector memory only while no vector instruction runs, and none starts then.
  a_one_reader: assert property (@(posedge clk_i) disable iff (!rst_ni) !(busy_o && st_re_i))
    else $error("tpu_accel_vec: STORE reads the vector memory during a vector instruction");
  a_start_idle: assert property (@(posedge clk_i) disable iff (!rst_ni) start_i |-> !busy_o)
    else $error("tpu_accel_vec: a vector instruction starts while one runs");
  // A batch never outgrows the slots, and the element walk stays inside the VOP's elements.
  a_batch_fits: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                 32'(cnt_q) <= Slots)
    else $error("tpu_accel_vec: a batch of %0d rows in %0d slots", cnt_q, Slots);
  a_walk_inside: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                  state_q == Vop && !fin_q |-> i_q < m_q && j_q < n_q)
    else $error("tpu_accel_vec: element (%0d, %0d) outside m=%0d n=%0d", i_q, j_q, m_q, n_q);
  // One batch in execution at a time; a batch starts only when it holds a row.
  a_one_exec: assert property (@(posedge clk_i) disable iff (!rst_ni) !(e_run_q && e_wr_q))
    else $error("tpu_accel_vec: a batch runs while another is written");
  a_start_nonempty: assert property (@(posedge clk_i) disable iff (!rst_ni)
                                     vpu_start |-> cnt_q != '0)
    else $error("tpu_accel_vec: an empty batch started");
`endif

endmodule
