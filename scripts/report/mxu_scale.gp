# SPDX-License-Identifier: Apache-2.0
# Matrix-unit utilization against the array size, one colour per GEMM shape: measured (solid)
# and SCALE-Sim's model of the same shape (dashed). plotdir/mxu_scale.dat: a block per shape,
# lines "array_size util_pct scalesim_pct" (NaN = not run).
load gpdir."/common.gp"
load plotdir."/mxu_vars.gp"

set title "Matrix unit: utilization against array size (solid: measured RTL, dashed: SCALE-Sim's model)" font ",15"
set ylabel "utilization  [%]"
set xlabel "array size R = C (R×C PEs)"
set logscale x 2
set xrange [3.4:38]
set xtics ("4×4" 4, "8×8" 8, "16×16" 16, "32×32" 32)
set yrange [0:105]
set ytics 0,10,100
set key outside right center vertical reverse Left title "GEMM M×K×N" samplen 3 spacing 1.3
plot for [i=1:|shapes|] plotdir."/mxu_scale.dat" index (i - 1) using 1:2 \
       with linespoints lw 2.5 pt 7 ps 1.2 lc rgb palette[i] title shapes[i], \
     for [i=1:|shapes|] plotdir."/mxu_scale.dat" index (i - 1) using 1:3 \
       with linespoints lw 1.5 dt 2 pt 6 ps 1 lc rgb palette[i] notitle, \
     NaN with lines lw 1.5 dt 2 lc rgb "#000000" title "SCALE-Sim's model"
