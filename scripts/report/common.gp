# SPDX-License-Identifier: Apache-2.0
# Shared settings of the report's plots; scripts/report.py sets gpdir, plotdir and outfile.
set terminal pngcairo enhanced size 1200,680 font "DejaVu Sans,12" linewidth 1.5
set output outfile
set encoding utf8
set datafile missing "NaN"
set border lw 1
set grid ytics lc rgb "#d0d0d0" lw 1 dt 1
set key noenhanced
# A colour per series (colour-blind safe, Okabe-Ito).
array palette[10] = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#882255", "#999933", "#44AA99"]
