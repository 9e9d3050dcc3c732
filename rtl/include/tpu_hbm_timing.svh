// SPDX-License-Identifier: Apache-2.0
// The HBM subsystem's parameters, declared and passed on in one place.
// TPU_HBM_TIMING_PARAMS: the timing values; each defaults to the module's `Preset`
// (tpu_hbm_pkg::timing) and can be overridden on its own.
//   module tpu_hbm_x #(parameter int unsigned Preset = 0, `TPU_HBM_TIMING_PARAMS(Preset)) ...
//   tpu_hbm_y #(.Preset(Preset), `TPU_HBM_TIMING_PASS) u_y (...);
// TPU_HBM_CONFIG_PARAMS: the organisation and controller knobs of tpu_hbm_subsys, _channel and
// _single (docs/hbm.md): RowBits, ColBits (a row of 2^ColBits 32-byte columns), AddrMap (0: row
// high, 1: bank low), RdQDepth/WrQDepth (per pseudo-channel), RetDepth (the port's read return
// slots), PagePolicy (0 open, 1 close, 2 adaptive), PerBankRefresh (0: REFab every nREFI, 1: 16
// REFpb per nREFI), AgeCap (cycles), WrHigh/WrLow (write-drain watermarks), RefUrgent (the
// refresh debt at which refresh preempts traffic). TPU_HBM_CONFIG_PASS passes them all on.
`ifndef TPU_HBM_TIMING_SVH
`define TPU_HBM_TIMING_SVH

`define TPU_HBM_TIMING_PARAMS(P) \
  parameter int unsigned TCl     = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingCl), \
  parameter int unsigned TCwl    = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingCwl), \
  parameter int unsigned TBl     = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingBl), \
  parameter int unsigned TRcdRd  = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRcdRd), \
  parameter int unsigned TRcdWr  = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRcdWr), \
  parameter int unsigned TRp     = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRp), \
  parameter int unsigned TRas    = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRas), \
  parameter int unsigned TRc     = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRc), \
  parameter int unsigned TCcdS   = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingCcdS), \
  parameter int unsigned TCcdL   = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingCcdL), \
  parameter int unsigned TRrdS   = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRrdS), \
  parameter int unsigned TRrdL   = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRrdL), \
  parameter int unsigned TFaw    = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingFaw), \
  parameter int unsigned TWr     = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingWr), \
  parameter int unsigned TRtp    = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRtp), \
  parameter int unsigned TWtrS   = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingWtrS), \
  parameter int unsigned TWtrL   = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingWtrL), \
  parameter int unsigned TRfc    = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRfc), \
  parameter int unsigned TRfcSb  = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRfcSb), \
  parameter int unsigned TRefi   = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRefi), \
  parameter int unsigned TRefiSb = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRefiSb), \
  parameter int unsigned TRrefd  = tpu_hbm_pkg::timing(P, tpu_hbm_pkg::TimingRrefd)

`define TPU_HBM_TIMING_PASS \
  .TCl(TCl), .TCwl(TCwl), .TBl(TBl), .TRcdRd(TRcdRd), .TRcdWr(TRcdWr), .TRp(TRp), \
  .TRas(TRas), .TRc(TRc), .TCcdS(TCcdS), .TCcdL(TCcdL), .TRrdS(TRrdS), .TRrdL(TRrdL), \
  .TFaw(TFaw), .TWr(TWr), .TRtp(TRtp), .TWtrS(TWtrS), .TWtrL(TWtrL), .TRfc(TRfc), \
  .TRfcSb(TRfcSb), .TRefi(TRefi), .TRefiSb(TRefiSb), .TRrefd(TRrefd)

`define TPU_HBM_CONFIG_PARAMS \
  parameter int unsigned RowBits        = 16, \
  parameter int unsigned ColBits        = 5, \
  parameter int unsigned AddrMap        = 0, \
  parameter int unsigned RdQDepth       = 16, \
  parameter int unsigned WrQDepth       = 16, \
  parameter int unsigned RetDepth       = 64, \
  parameter int unsigned PagePolicy     = 2, \
  parameter int unsigned PerBankRefresh = 0, \
  parameter int unsigned AgeCap         = 1024, \
  parameter int unsigned WrHigh         = 14, \
  parameter int unsigned WrLow          = 2, \
  parameter int unsigned RefUrgent      = 2

`define TPU_HBM_CONFIG_PASS \
  .RowBits(RowBits), .ColBits(ColBits), .AddrMap(AddrMap), .RdQDepth(RdQDepth), \
  .WrQDepth(WrQDepth), .RetDepth(RetDepth), .PagePolicy(PagePolicy), \
  .PerBankRefresh(PerBankRefresh), .AgeCap(AgeCap), .WrHigh(WrHigh), .WrLow(WrLow), \
  .RefUrgent(RefUrgent)

`endif
