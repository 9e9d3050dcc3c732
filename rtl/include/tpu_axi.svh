// SPDX-License-Identifier: Apache-2.0
// The AXI4 bundle of the HBM subsystem's ports, written once: 256-bit data, 32-byte strobes,
// IdBits-bit IDs, AddrBits-bit addresses, INCR bursts (AxLEN, AxSIZE, AxBURST carried as AXI4
// defines them). N ports are flattened lane by lane: field f of port i is f[i*W +: W]. The
// names are the ones the C++ harnesses use (aw_valid_i, ...), with an optional prefix P.
//   module m (`TPU_AXI_SLAVE_PORTS(s_, 1, IdBits, AddrBits), ...)   ports s_aw_valid_i, ...
//   `TPU_AXI_SIGNALS(bus_, N, IdBits, AddrBits)                       wires bus_aw_valid, ...
//   u_x (`TPU_AXI_SLAVE_TO(s_, bus_), ...)                           .s_aw_valid_i(bus_aw_valid)
//   u_x (`TPU_AXI_SLAVE_LANES(s_, , L, N, IdBits, AddrBits), ...)     lanes L .. L+N-1 of the
//                                                                    module's own slave ports
// And the accelerator's AXI4-Lite register port (TPU_AXIL_SLAVE_PORTS, TPU_AXIL_SLAVE_TO), last.
`ifndef TPU_AXI_SVH
`define TPU_AXI_SVH

// The port list of N AXI4 slave ports (the subordinate side).
`define TPU_AXI_SLAVE_PORTS(P, N, IdBits, AddrBits) \
  input  logic [(N)-1:0] P``aw_valid_i, \
  output logic [(N)-1:0] P``aw_ready_o, \
  input  logic [(N)*(IdBits)-1:0] P``aw_id_i, \
  input  logic [(N)*(AddrBits)-1:0] P``aw_addr_i, \
  input  logic [(N)*(8)-1:0] P``aw_len_i, \
  input  logic [(N)*(3)-1:0] P``aw_size_i, \
  input  logic [(N)*(2)-1:0] P``aw_burst_i, \
  input  logic [(N)-1:0] P``w_valid_i, \
  output logic [(N)-1:0] P``w_ready_o, \
  input  logic [(N)*(256)-1:0] P``w_data_i, \
  input  logic [(N)*(32)-1:0] P``w_strb_i, \
  input  logic [(N)-1:0] P``w_last_i, \
  output logic [(N)-1:0] P``b_valid_o, \
  input  logic [(N)-1:0] P``b_ready_i, \
  output logic [(N)*(IdBits)-1:0] P``b_id_o, \
  output logic [(N)*(2)-1:0] P``b_resp_o, \
  input  logic [(N)-1:0] P``ar_valid_i, \
  output logic [(N)-1:0] P``ar_ready_o, \
  input  logic [(N)*(IdBits)-1:0] P``ar_id_i, \
  input  logic [(N)*(AddrBits)-1:0] P``ar_addr_i, \
  input  logic [(N)*(8)-1:0] P``ar_len_i, \
  input  logic [(N)*(3)-1:0] P``ar_size_i, \
  input  logic [(N)*(2)-1:0] P``ar_burst_i, \
  output logic [(N)-1:0] P``r_valid_o, \
  input  logic [(N)-1:0] P``r_ready_i, \
  output logic [(N)*(IdBits)-1:0] P``r_id_o, \
  output logic [(N)*(256)-1:0] P``r_data_o, \
  output logic [(N)*(2)-1:0] P``r_resp_o, \
  output logic [(N)-1:0] P``r_last_o

// The port list of N AXI4 master ports (the manager side).
`define TPU_AXI_MASTER_PORTS(P, N, IdBits, AddrBits) \
  output logic [(N)-1:0] P``aw_valid_o, \
  input  logic [(N)-1:0] P``aw_ready_i, \
  output logic [(N)*(IdBits)-1:0] P``aw_id_o, \
  output logic [(N)*(AddrBits)-1:0] P``aw_addr_o, \
  output logic [(N)*(8)-1:0] P``aw_len_o, \
  output logic [(N)*(3)-1:0] P``aw_size_o, \
  output logic [(N)*(2)-1:0] P``aw_burst_o, \
  output logic [(N)-1:0] P``w_valid_o, \
  input  logic [(N)-1:0] P``w_ready_i, \
  output logic [(N)*(256)-1:0] P``w_data_o, \
  output logic [(N)*(32)-1:0] P``w_strb_o, \
  output logic [(N)-1:0] P``w_last_o, \
  input  logic [(N)-1:0] P``b_valid_i, \
  output logic [(N)-1:0] P``b_ready_o, \
  input  logic [(N)*(IdBits)-1:0] P``b_id_i, \
  input  logic [(N)*(2)-1:0] P``b_resp_i, \
  output logic [(N)-1:0] P``ar_valid_o, \
  input  logic [(N)-1:0] P``ar_ready_i, \
  output logic [(N)*(IdBits)-1:0] P``ar_id_o, \
  output logic [(N)*(AddrBits)-1:0] P``ar_addr_o, \
  output logic [(N)*(8)-1:0] P``ar_len_o, \
  output logic [(N)*(3)-1:0] P``ar_size_o, \
  output logic [(N)*(2)-1:0] P``ar_burst_o, \
  input  logic [(N)-1:0] P``r_valid_i, \
  output logic [(N)-1:0] P``r_ready_o, \
  input  logic [(N)*(IdBits)-1:0] P``r_id_i, \
  input  logic [(N)*(256)-1:0] P``r_data_i, \
  input  logic [(N)*(2)-1:0] P``r_resp_i, \
  input  logic [(N)-1:0] P``r_last_i

// The wires of N AXI4 ports between two instances.
`define TPU_AXI_SIGNALS(P, N, IdBits, AddrBits) \
  logic [(N)-1:0] P``aw_valid; \
  logic [(N)-1:0] P``aw_ready; \
  logic [(N)*(IdBits)-1:0] P``aw_id; \
  logic [(N)*(AddrBits)-1:0] P``aw_addr; \
  logic [(N)*(8)-1:0] P``aw_len; \
  logic [(N)*(3)-1:0] P``aw_size; \
  logic [(N)*(2)-1:0] P``aw_burst; \
  logic [(N)-1:0] P``w_valid; \
  logic [(N)-1:0] P``w_ready; \
  logic [(N)*(256)-1:0] P``w_data; \
  logic [(N)*(32)-1:0] P``w_strb; \
  logic [(N)-1:0] P``w_last; \
  logic [(N)-1:0] P``b_valid; \
  logic [(N)-1:0] P``b_ready; \
  logic [(N)*(IdBits)-1:0] P``b_id; \
  logic [(N)*(2)-1:0] P``b_resp; \
  logic [(N)-1:0] P``ar_valid; \
  logic [(N)-1:0] P``ar_ready; \
  logic [(N)*(IdBits)-1:0] P``ar_id; \
  logic [(N)*(AddrBits)-1:0] P``ar_addr; \
  logic [(N)*(8)-1:0] P``ar_len; \
  logic [(N)*(3)-1:0] P``ar_size; \
  logic [(N)*(2)-1:0] P``ar_burst; \
  logic [(N)-1:0] P``r_valid; \
  logic [(N)-1:0] P``r_ready; \
  logic [(N)*(IdBits)-1:0] P``r_id; \
  logic [(N)*(256)-1:0] P``r_data; \
  logic [(N)*(2)-1:0] P``r_resp; \
  logic [(N)-1:0] P``r_last;

// An instance's slave ports (prefix PORT) on the wires SIG of TPU_AXI_SIGNALS.
`define TPU_AXI_SLAVE_TO(PORT, SIG) \
  .PORT``aw_valid_i(SIG``aw_valid), \
  .PORT``aw_ready_o(SIG``aw_ready), \
  .PORT``aw_id_i(SIG``aw_id), \
  .PORT``aw_addr_i(SIG``aw_addr), \
  .PORT``aw_len_i(SIG``aw_len), \
  .PORT``aw_size_i(SIG``aw_size), \
  .PORT``aw_burst_i(SIG``aw_burst), \
  .PORT``w_valid_i(SIG``w_valid), \
  .PORT``w_ready_o(SIG``w_ready), \
  .PORT``w_data_i(SIG``w_data), \
  .PORT``w_strb_i(SIG``w_strb), \
  .PORT``w_last_i(SIG``w_last), \
  .PORT``b_valid_o(SIG``b_valid), \
  .PORT``b_ready_i(SIG``b_ready), \
  .PORT``b_id_o(SIG``b_id), \
  .PORT``b_resp_o(SIG``b_resp), \
  .PORT``ar_valid_i(SIG``ar_valid), \
  .PORT``ar_ready_o(SIG``ar_ready), \
  .PORT``ar_id_i(SIG``ar_id), \
  .PORT``ar_addr_i(SIG``ar_addr), \
  .PORT``ar_len_i(SIG``ar_len), \
  .PORT``ar_size_i(SIG``ar_size), \
  .PORT``ar_burst_i(SIG``ar_burst), \
  .PORT``r_valid_o(SIG``r_valid), \
  .PORT``r_ready_i(SIG``r_ready), \
  .PORT``r_id_o(SIG``r_id), \
  .PORT``r_data_o(SIG``r_data), \
  .PORT``r_resp_o(SIG``r_resp), \
  .PORT``r_last_o(SIG``r_last)

// An instance's master ports (prefix PORT) on the wires SIG of TPU_AXI_SIGNALS.
`define TPU_AXI_MASTER_TO(PORT, SIG) \
  .PORT``aw_valid_o(SIG``aw_valid), \
  .PORT``aw_ready_i(SIG``aw_ready), \
  .PORT``aw_id_o(SIG``aw_id), \
  .PORT``aw_addr_o(SIG``aw_addr), \
  .PORT``aw_len_o(SIG``aw_len), \
  .PORT``aw_size_o(SIG``aw_size), \
  .PORT``aw_burst_o(SIG``aw_burst), \
  .PORT``w_valid_o(SIG``w_valid), \
  .PORT``w_ready_i(SIG``w_ready), \
  .PORT``w_data_o(SIG``w_data), \
  .PORT``w_strb_o(SIG``w_strb), \
  .PORT``w_last_o(SIG``w_last), \
  .PORT``b_valid_i(SIG``b_valid), \
  .PORT``b_ready_o(SIG``b_ready), \
  .PORT``b_id_i(SIG``b_id), \
  .PORT``b_resp_i(SIG``b_resp), \
  .PORT``ar_valid_o(SIG``ar_valid), \
  .PORT``ar_ready_i(SIG``ar_ready), \
  .PORT``ar_id_o(SIG``ar_id), \
  .PORT``ar_addr_o(SIG``ar_addr), \
  .PORT``ar_len_o(SIG``ar_len), \
  .PORT``ar_size_o(SIG``ar_size), \
  .PORT``ar_burst_o(SIG``ar_burst), \
  .PORT``r_valid_i(SIG``r_valid), \
  .PORT``r_ready_o(SIG``r_ready), \
  .PORT``r_id_i(SIG``r_id), \
  .PORT``r_data_i(SIG``r_data), \
  .PORT``r_resp_i(SIG``r_resp), \
  .PORT``r_last_i(SIG``r_last)

// An instance's slave ports (prefix PORT) on the enclosing module's own slave ports (prefix SIG).
`define TPU_AXI_SLAVE_PASS(PORT, SIG) \
  .PORT``aw_valid_i(SIG``aw_valid_i), \
  .PORT``aw_ready_o(SIG``aw_ready_o), \
  .PORT``aw_id_i(SIG``aw_id_i), \
  .PORT``aw_addr_i(SIG``aw_addr_i), \
  .PORT``aw_len_i(SIG``aw_len_i), \
  .PORT``aw_size_i(SIG``aw_size_i), \
  .PORT``aw_burst_i(SIG``aw_burst_i), \
  .PORT``w_valid_i(SIG``w_valid_i), \
  .PORT``w_ready_o(SIG``w_ready_o), \
  .PORT``w_data_i(SIG``w_data_i), \
  .PORT``w_strb_i(SIG``w_strb_i), \
  .PORT``w_last_i(SIG``w_last_i), \
  .PORT``b_valid_o(SIG``b_valid_o), \
  .PORT``b_ready_i(SIG``b_ready_i), \
  .PORT``b_id_o(SIG``b_id_o), \
  .PORT``b_resp_o(SIG``b_resp_o), \
  .PORT``ar_valid_i(SIG``ar_valid_i), \
  .PORT``ar_ready_o(SIG``ar_ready_o), \
  .PORT``ar_id_i(SIG``ar_id_i), \
  .PORT``ar_addr_i(SIG``ar_addr_i), \
  .PORT``ar_len_i(SIG``ar_len_i), \
  .PORT``ar_size_i(SIG``ar_size_i), \
  .PORT``ar_burst_i(SIG``ar_burst_i), \
  .PORT``r_valid_o(SIG``r_valid_o), \
  .PORT``r_ready_i(SIG``r_ready_i), \
  .PORT``r_id_o(SIG``r_id_o), \
  .PORT``r_data_o(SIG``r_data_o), \
  .PORT``r_resp_o(SIG``r_resp_o), \
  .PORT``r_last_o(SIG``r_last_o)

// An instance's N slave ports (prefix PORT) on lanes L .. L+N-1 of the enclosing module's own
// slave ports (prefix SIG).
`define TPU_AXI_SLAVE_LANES(PORT, SIG, L, N, IdBits, AddrBits) \
  .PORT``aw_valid_i(SIG``aw_valid_i[(L) +: (N)]), \
  .PORT``aw_ready_o(SIG``aw_ready_o[(L) +: (N)]), \
  .PORT``aw_id_i(SIG``aw_id_i[(L)*(IdBits) +: (N)*(IdBits)]), \
  .PORT``aw_addr_i(SIG``aw_addr_i[(L)*(AddrBits) +: (N)*(AddrBits)]), \
  .PORT``aw_len_i(SIG``aw_len_i[(L)*(8) +: (N)*(8)]), \
  .PORT``aw_size_i(SIG``aw_size_i[(L)*(3) +: (N)*(3)]), \
  .PORT``aw_burst_i(SIG``aw_burst_i[(L)*(2) +: (N)*(2)]), \
  .PORT``w_valid_i(SIG``w_valid_i[(L) +: (N)]), \
  .PORT``w_ready_o(SIG``w_ready_o[(L) +: (N)]), \
  .PORT``w_data_i(SIG``w_data_i[(L)*(256) +: (N)*(256)]), \
  .PORT``w_strb_i(SIG``w_strb_i[(L)*(32) +: (N)*(32)]), \
  .PORT``w_last_i(SIG``w_last_i[(L) +: (N)]), \
  .PORT``b_valid_o(SIG``b_valid_o[(L) +: (N)]), \
  .PORT``b_ready_i(SIG``b_ready_i[(L) +: (N)]), \
  .PORT``b_id_o(SIG``b_id_o[(L)*(IdBits) +: (N)*(IdBits)]), \
  .PORT``b_resp_o(SIG``b_resp_o[(L)*(2) +: (N)*(2)]), \
  .PORT``ar_valid_i(SIG``ar_valid_i[(L) +: (N)]), \
  .PORT``ar_ready_o(SIG``ar_ready_o[(L) +: (N)]), \
  .PORT``ar_id_i(SIG``ar_id_i[(L)*(IdBits) +: (N)*(IdBits)]), \
  .PORT``ar_addr_i(SIG``ar_addr_i[(L)*(AddrBits) +: (N)*(AddrBits)]), \
  .PORT``ar_len_i(SIG``ar_len_i[(L)*(8) +: (N)*(8)]), \
  .PORT``ar_size_i(SIG``ar_size_i[(L)*(3) +: (N)*(3)]), \
  .PORT``ar_burst_i(SIG``ar_burst_i[(L)*(2) +: (N)*(2)]), \
  .PORT``r_valid_o(SIG``r_valid_o[(L) +: (N)]), \
  .PORT``r_ready_i(SIG``r_ready_i[(L) +: (N)]), \
  .PORT``r_id_o(SIG``r_id_o[(L)*(IdBits) +: (N)*(IdBits)]), \
  .PORT``r_data_o(SIG``r_data_o[(L)*(256) +: (N)*(256)]), \
  .PORT``r_resp_o(SIG``r_resp_o[(L)*(2) +: (N)*(2)]), \
  .PORT``r_last_o(SIG``r_last_o[(L) +: (N)])

// The host's AXI4-Lite register port of the accelerator (tpu_accel_regs says what it does):
// 12-bit byte addresses, 32-bit data, no strobes, no protection bits, responses always OKAY.
//   module m (`TPU_AXIL_SLAVE_PORTS(s_), ...)      ports s_aw_valid_i, ...
//   u_x (`TPU_AXIL_SLAVE_TO(, s_), ...)           .aw_valid_i(s_aw_valid_i), ...
`define TPU_AXIL_SLAVE_PORTS(P) \
  input  logic P``aw_valid_i, \
  output logic P``aw_ready_o, \
  input  logic [11:0] P``aw_addr_i, \
  input  logic P``w_valid_i, \
  output logic P``w_ready_o, \
  input  logic [31:0] P``w_data_i, \
  output logic P``b_valid_o, \
  input  logic P``b_ready_i, \
  input  logic P``ar_valid_i, \
  output logic P``ar_ready_o, \
  input  logic [11:0] P``ar_addr_i, \
  output logic P``r_valid_o, \
  input  logic P``r_ready_i, \
  output logic [31:0] P``r_data_o

// Connects a module's AXI4-Lite port PORT to the signals (or ports) SIG.
`define TPU_AXIL_SLAVE_TO(PORT, SIG) \
  .PORT``aw_valid_i(SIG``aw_valid_i), .PORT``aw_ready_o(SIG``aw_ready_o), \
  .PORT``aw_addr_i(SIG``aw_addr_i), \
  .PORT``w_valid_i(SIG``w_valid_i), .PORT``w_ready_o(SIG``w_ready_o), \
  .PORT``w_data_i(SIG``w_data_i), \
  .PORT``b_valid_o(SIG``b_valid_o), .PORT``b_ready_i(SIG``b_ready_i), \
  .PORT``ar_valid_i(SIG``ar_valid_i), .PORT``ar_ready_o(SIG``ar_ready_o), \
  .PORT``ar_addr_i(SIG``ar_addr_i), \
  .PORT``r_valid_o(SIG``r_valid_o), .PORT``r_ready_i(SIG``r_ready_i), \
  .PORT``r_data_o(SIG``r_data_o)

`endif
