// SPDX-License-Identifier: Apache-2.0
// The HBM timing parameters, declared and passed on in one place. Every value defaults to the
// module's `Preset` (tpu_hbm_pkg::timing) and can be overridden on its own.
//   module tpu_hbm_x #(parameter int unsigned Preset = 0, `TPU_HBM_TIMING_PARAMS(Preset)) ...
//   tpu_hbm_y #(.Preset(Preset), `TPU_HBM_TIMING_PASS) u_y (...);
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

`endif
