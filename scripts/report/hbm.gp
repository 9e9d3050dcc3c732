# SPDX-License-Identifier: Apache-2.0
# HBM2 full stack: bandwidth (top) and read latency (bottom) per traffic class, all-bank and
# per-bank refresh. plotdir/hbm.dat: class, bandwidth % all-bank, per-bank, then average and
# maximum read latency all-bank, per-bank (NaN = not run).
load gpdir."/common.gp"
load plotdir."/hbm_vars.gp"
set terminal pngcairo enhanced size 1200,900 font "DejaVu Sans,12" linewidth 1.5
set output outfile

w = 0.36
x(i) = $0 + (i - 1.5) * w
set style fill solid 0.9 border lc rgb "#404040"
set boxwidth w
set xrange [-0.6:nclasses - 0.4]
set xtics scale 0 noenhanced
set multiplot layout 2,1 title "HBM2 full stack (8 channels, 16 pseudo-channels, 2.0 Gb/s): 64-byte requests per traffic class" font ",15"

set ylabel "bandwidth  [% of peak]"
set yrange [0:115]
set ytics 0,10,100
set key top right horizontal reverse Left title "refresh"
plot plotdir."/hbm.dat" using 0:(-1):xtic(1) with points ps 0 notitle, \
     "" using (x(1)):2 with boxes lc rgb palette[1] title "all-bank (REFab)", \
     "" using (x(2)):3 with boxes lc rgb palette[2] title "per-bank (REFpb)", \
     "" using (x(1)):2:(sprintf("%.1f%%", $2)) with labels offset 0,0.7 font ",10" notitle, \
     "" using (x(2)):3:(sprintf("%.1f%%", $3)) with labels offset 0,0.7 font ",10" notitle

set ylabel "read latency  [cycles]"
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set ytics autofreq
set key top left horizontal reverse Left title "refresh: bar = average, whisker = maximum"
plot plotdir."/hbm.dat" using 0:(-1):xtic(1) with points ps 0 notitle, \
     "" using (x(1)):4 with boxes lc rgb palette[1] title "all-bank", \
     "" using (x(2)):6 with boxes lc rgb palette[2] title "per-bank", \
     "" using (x(1)):4:(0):($5 - $4) with vectors head size screen 0.008,90 lc rgb "#202020" notitle, \
     "" using (x(2)):6:(0):($7 - $6) with vectors head size screen 0.008,90 lc rgb "#202020" notitle, \
     "" using (x(1)):5:(sprintf("%.0f", $5)) with labels offset 0,0.7 font ",9" notitle, \
     "" using (x(2)):7:(sprintf("%.0f", $7)) with labels offset 0,0.7 font ",9" notitle, \
     "" using (x(1)):4:(sprintf("%.0f", $4)) with labels offset 0,-0.7 font ",10" tc rgb "#ffffff" notitle, \
     "" using (x(2)):6:(sprintf("%.0f", $6)) with labels offset 0,-0.7 font ",10" tc rgb "#ffffff" notitle
unset multiplot
