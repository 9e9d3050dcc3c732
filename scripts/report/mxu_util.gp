# SPDX-License-Identifier: Apache-2.0
# Matrix-unit utilization by GEMM shape: a cluster per shape, a bar per array size
# (plotdir/mxu_util.dat: shape, then utilization % on 4x4 8x8 16x16 32x32, NaN = not run;
# plotdir/mxu_vars.gp: names; plotdir/mxu_notrun.gp: a "not run" label for each run not made).
load gpdir."/common.gp"
load plotdir."/mxu_vars.gp"
load plotdir."/mxu_notrun.gp"

n = |arrays|
w = 0.8 / n
x(i) = $0 + (i - (n + 1) / 2.0) * w
set title "Matrix unit (tpu\\_mxu): utilization by GEMM shape and array size" font ",15"
set ylabel "utilization = useful MACs / (R·C·cycles)  [%]"
set xlabel "GEMM shape M×K×N (operands on chip, P = 1)"
set yrange [0:120]
set ytics 0,10,100
set xrange [-0.6:|shapes|-0.4]
set xtics scale 0 noenhanced
set style fill solid 0.9 border lc rgb "#404040"
set boxwidth w
set key top center horizontal reverse Left title "array (R×C)"
plot plotdir."/mxu_util.dat" using 0:(-1):xtic(1) with points ps 0 notitle, \
     for [i=1:n] plotdir."/mxu_util.dat" using (x(i)):(column(i + 1)) \
       with boxes lc rgb palette[i] title arrays[i], \
     for [i=1:n] plotdir."/mxu_util.dat" using (x(i)):(column(i + 1)):(sprintf("%.1f", column(i + 1))) \
       with labels rotate by 90 left offset 0,0.4 font ",9" notitle
