# SPDX-License-Identifier: Apache-2.0
# Where the accelerator's cycles go: one stacked bar per workload (busy, weight stall, input stall,
# accumulator hazard, store stall, idle; percent of the run's cycles), one panel per configuration.
# plotdir/stalls_<config>.dat: workload, then the six shares; plotdir/accel_vars.gp: the names.
load gpdir."/common.gp"
load plotdir."/accel_vars.gp"
nc = |configs|
set terminal pngcairo enhanced size 1200,(nc > 1 ? 1100 : 640) font "DejaVu Sans,12" linewidth 1.5
set output outfile

array stall_colors[6] = ["#009E73", "#E69F00", "#56B4E9", "#CC79A7", "#D55E00", "#999999"]
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border lc rgb "#404040"
set boxwidth 0.7
set yrange [0:100]
set ytics 0,10,100
set ylabel "share of the run's cycles  [%]"
set xtics rotate by -25 left scale 0 noenhanced font ",11"
set key outside right center vertical reverse Left title "cycle class" samplen 2
set multiplot layout nc,1 title "Accelerator: where the cycles go (performance counters, every cycle in one class)" font ",15"
do for [c=1:nc] {
  set title config_titles[c] font ",13"
  plot for [k=1:|stall_titles|] plotdir."/stalls_".configs[c].".dat" using (column(k + 1)):xtic(1) \
         lc rgb stall_colors[k] title stall_titles[k], \
       plotdir."/stalls_".configs[c].".dat" using 0:($2 > 12 ? $2 / 2 : NaN):(sprintf("%.1f%%", $2)) \
         with labels font ",10" tc rgb "#ffffff" notitle, \
       plotdir."/stalls_".configs[c].".dat" using 0:($3 > 12 ? $2 + $3 / 2 : NaN):(sprintf("%.1f%%", $3)) \
         with labels font ",10" tc rgb "#000000" notitle
}
unset multiplot
