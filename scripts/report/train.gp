# SPDX-License-Identifier: Apache-2.0
# Training the digits MLP from scratch: the mean loss (left, log scale) and the test accuracy
# (right) per epoch, on the RTL (every job checked against the golden model) and in PyTorch
# float32 with the same recipe, initial weights and data order. plotdir/train.dat: lines
# "epoch rtl_loss torch_loss rtl_test_pct torch_test_pct".
load gpdir."/common.gp"
set multiplot layout 1,2 title "Training the digits MLP 64-128-64-10 from scratch (SGD, momentum 0.9, batch 32)" font ",15"
set xlabel "epoch"
set key top right
set logscale y
set ylabel "mean training loss"
plot plotdir."/train.dat" using 1:2 with linespoints lw 2.5 pt 7 lc rgb palette[1] title "RTL (bf16 MACs, fp32 accumulation)", \
     plotdir."/train.dat" using 1:3 with linespoints lw 1.5 dt 2 pt 6 lc rgb palette[2] title "PyTorch float32"
unset logscale y
set ylabel "test accuracy  [%]"
set yrange [80:100]
set key bottom right
plot plotdir."/train.dat" using 1:4 with linespoints lw 2.5 pt 7 lc rgb palette[1] title "RTL", \
     plotdir."/train.dat" using 1:5 with linespoints lw 1.5 dt 2 pt 6 lc rgb palette[2] title "PyTorch float32"
unset multiplot
