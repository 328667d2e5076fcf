# ratio_chart DAT CHART TITLE [WIDTH]: a PNG bar chart of the "label value" lines in DAT, with a
# line at 1.0 (parity), when gnuplot is installed; says where it went, or that it was skipped.
# Sourced by compare_rocksdb.sh and compare_scale.sh.
ratio_chart() {
  local dat=$1 chart=$2 title=$3 width=${4:-900}
  if ! command -v gnuplot >/dev/null; then
    echo "chart: skipped (gnuplot not installed)"
    return
  fi
  gnuplot <<PLOT
set terminal png size $width,440
set output "$chart"
set title "$title" noenhanced
set style data histograms
set style fill solid 0.6
set boxwidth 0.7
set yrange [0:*]
set grid ytics
set key off
set xtics rotate by -45 noenhanced
plot "$dat" using 2:xtic(1), 1 with lines lw 2
PLOT
  echo "chart: $chart"
}
