#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/report.sh [DIR] - what `make bench` runs on the host after bench/run.sh.
#
# From DIR/bench.csv (default bench/results) draws DIR/latency.png,
# DIR/bandwidth.png, DIR/sync.png and DIR/registration.png with gnuplot
# (rmawin on both paths beside its yardstick, log axes, bars from the 10th to
# the 90th percentile), then prints the table of median ratios rmawin /
# yardstick with the targets of issue 6 and writes it to DIR/ratios.txt,
# then the ratios of the interleaved rounds (DIR/rounds/, run.sh's step
# rounds) with their median, least and greatest.
# A missed target is reported, not an error: the exit status is 0 unless the
# CSV is missing or a plot could not be drawn.  See Documentation/bench.rst.

set -euo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
REPO=$(dirname -- "$(dirname -- "$self")")

case ${1-} in
-h | --help)
	sed -n '4,12s/^# \{0,1\}//p' "$self"
	exit 0
	;;
esac

dir=${1:-$REPO/bench/results}
csv=$dir/bench.csv

die() {
	printf 'report.sh: %s\n' "$*" >&2
	exit 1
}

[[ -s $csv ]] || die "$csv missing or empty: run bench/run.sh in the VM first (make bench)"
command -v gnuplot >/dev/null || die "gnuplot not found (apt-get install gnuplot-nox)"
[[ $dir != *[\'\"\\]* ]] || die "DIR must not contain quotes or backslashes: $dir"

# The interleaved rounds of run.sh's step rounds, if it ran.
rounds=("$dir"/rounds/[0-9]*.csv)
[[ -s ${rounds[0]} ]] || rounds=()

# What the default run actually used: the ring when the library had one.
default_path=$(awk -F, '$2 == "rmawin" && $3 == "default" { print $4; exit }' "$csv" "${rounds[@]}")
if [[ $default_path == ring ]]; then
	label_default="rmawin, ring"
else
	label_default="rmawin, default path (${default_path:-?}: no ring)"
fi
label_noring="rmawin, ioctl (RMAWIN_NO_RING=1)"

# --- plots -----------------------------------------------------------------------------------

plot=$dir/plot
rm -rf -- "$plot"
mkdir -p -- "$plot"

# series NAME BENCH IMPL REQUESTED [X]: "x median p10 p90" of the matching rows into
# $plot/NAME.dat; X is the column of the x value (6: size, the default; 5: ranks).
series() {
	awk -F, -v b="$2" -v i="$3" -v r="$4" -v x="${5:-6}" \
		'NR > 1 && $1 == b && $2 == i && $3 == r { print $x, $8, $9, $10 }' \
		"$csv" >"$plot/$1.dat"
}

# clause NAME TITLE STYLE: a plot clause for $plot/NAME.dat, or nothing if it is empty.
clause() {
	[[ -s $plot/$1.dat ]] || return 0
	printf "'%s' using 1:2:3:4 with %s title \"%s\", " "$plot/$1.dat" "$3" "$2"
}

# plotcmd CLAUSES: the plot command of one panel, or an empty panel saying "no data".
plotcmd() {
	if [[ -n $1 ]]; then
		printf 'plot %s\n' "${1%, }"
	else
		printf '%s\n' 'set label 1 "no data" at graph 0.5, 0.5 center' \
			'set xrange [1:2]; set yrange [1:2]; plot 0.5 notitle' \
			'unset label 1; set autoscale'
	fi
}

for b in put_lat get_lat acc_lat fop_lat fop_lat_same_op cas_lat_same_op put_bw get_bw win_create_free win_create put_from_win \
	put_repeat_warm put_repeat_cold; do
	series "$b.default" "$b" rmawin default
	series "$b.no_ring" "$b" rmawin no_ring
done
for b in fence lock_unlock lock_all flush flush_all; do
	series "$b.default" "$b" rmawin default 5
	series "$b.no_ring" "$b" rmawin no_ring 5
done
for b in ib_write_lat ib_read_lat ib_atomic_lat ib_write_bw ib_read_bw; do
	series "$b" "$b" perftest -
done
for b in reg_dereg_mr reg_mr; do
	series "$b" "$b" verbs -
done

L='yerrorlines lw 2 pt 7 ps 0.6'
P='yerrorbars pt 7 ps 1.2'
# fetch_and_op (P_SAME) and compare_and_swap (P_CAS) on a window that promises same_op
P_SAME='yerrorbars pt 5 ps 1.2'
P_CAS='yerrorbars pt 9 ps 1.2'
# the three implementations always in the same colours
C_DEF='lc rgb "#1f77b4"' C_IOC='lc rgb "#ff7f0e"' C_REF='lc rgb "#2ca02c"'

rmawin_pair() {
	clause "$1.default" "$label_default" "$L $C_DEF"
	clause "$1.no_ring" "$label_noring" "$L $C_IOC"
}

# the latency panel's points for the same_op window (the device's atomics)
same_op_points() {
	clause fop_lat_same_op.default "fetch_and_op, same_op window, default path" "$P_SAME $C_DEF"
	clause fop_lat_same_op.no_ring "fetch_and_op, same_op window, ioctl path" "$P_SAME $C_IOC"
	clause cas_lat_same_op.default "compare_and_swap, same_op window, default path" "$P_CAS $C_DEF"
	clause cas_lat_same_op.no_ring "compare_and_swap, same_op window, ioctl path" "$P_CAS $C_IOC"
}

if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
	term='pngcairo font "sans,10"'
else
	term='png'
fi

size_axis='set logscale x 2; set format x "%.0b%B"; set xlabel "message size (bytes)"'

# draw NAME WIDTH,HEIGHT SCRIPT: $dir/NAME.png from a gnuplot script.
draw() {
	local name=$1 size=$2
	shift 2
	if ! printf '%s\n' "set terminal $term size $size" "set output '$dir/$name.png'" \
		'set termoption noenhanced; set grid; set key top left box opaque; set bars small' \
		"$*" | gnuplot; then
		die "gnuplot could not draw $dir/$name.png"
	fi
}

draw latency 1500,520 "
	set multiplot layout 1,3 title 'rmawin latency beside perftest (median, bars: 10th-90th percentile)';
	$size_axis; set logscale y; set ylabel 'microseconds';
	set title 'put: half round trip of a ping-pong';
	$(plotcmd "$(rmawin_pair put_lat)$(clause ib_write_lat ib_write_lat "$L $C_REF")")
	set title 'get + flush, per operation';
	$(plotcmd "$(rmawin_pair get_lat)$(clause ib_read_lat ib_read_lat "$L $C_REF")")
	set title 'accumulate SUM int64 (lines), 8 B atomics (points), + flush';
	$(plotcmd "$(rmawin_pair acc_lat)$(clause fop_lat.default "fetch_and_op, default path" "$P $C_DEF")$(clause fop_lat.no_ring "fetch_and_op, ioctl path" "$P $C_IOC")$(same_op_points)$(clause ib_atomic_lat "ib_atomic_lat (FETCH_AND_ADD)" "$P $C_REF")")
	unset multiplot"

draw bandwidth 1100,520 "
	set multiplot layout 1,2 title 'rmawin bandwidth beside perftest (median of 5, bars: 10th-90th percentile)';
	$size_axis; set logscale y; set ylabel 'MiB/s'; set key bottom right;
	set title 'put, up to 64 in flight';
	$(plotcmd "$(rmawin_pair put_bw)$(clause ib_write_bw ib_write_bw "$L $C_REF")")
	set title 'get, up to 64 in flight';
	$(plotcmd "$(rmawin_pair get_bw)$(clause ib_read_bw ib_read_bw "$L $C_REF")")
	unset multiplot"

sync_panel() {
	local m=$1 c=""
	c+=$(clause "fence.$m" "fence" "$L lc rgb '#1f77b4'")
	c+=$(clause "lock_unlock.$m" "lock + unlock (exclusive)" "$L lc rgb '#ff7f0e'")
	c+=$(clause "lock_all.$m" "lock_all + unlock_all" "$L lc rgb '#2ca02c'")
	c+=$(clause "flush.$m" "flush (nothing outstanding)" "$L lc rgb '#d62728'")
	c+=$(clause "flush_all.$m" "put to every rank + flush_all" "$L lc rgb '#9467bd'")
	plotcmd "$c"
}

draw sync 1100,520 "
	set multiplot layout 1,2 title 'synchronization cost per call, every rank at once (rank 0, median)';
	set logscale x 2; set xtics (2, 4, 8); set xrange [1.7:9.5]; set xlabel 'ranks';
	set logscale y; set ylabel 'microseconds';
	set title '$label_default';
	$(sync_panel default)
	set title '$label_noring';
	$(sync_panel no_ring)
	unset multiplot"

draw registration 760,520 "
	set logscale x 2; set format x '%.0b%B'; set xlabel 'memory size (bytes)';
	set logscale y; set ylabel 'microseconds';
	set title 'window create + free beside ibv_reg_mr + ibv_dereg_mr';
	$(plotcmd "$(clause win_create_free.default "$label_default: create + free" "$L $C_DEF")$(clause win_create_free.no_ring "$label_noring: create + free" "$L $C_IOC")$(clause reg_dereg_mr "ibv_reg_mr + ibv_dereg_mr" "$L $C_REF")$(clause win_create.default "rmawin, default path: create alone" "$L dt 2 $C_DEF")$(clause reg_mr "ibv_reg_mr alone" "$L dt 2 $C_REF")")"

# --- the ratio table -------------------------------------------------------------------------

# the guest's CPUs (run.sh writes "kernel K, N CPUs, ..." into env.txt): a time growth between
# rank counts is reported only up to that many ranks (issue 13)
cpus=$(sed -n 's/^kernel [^,]*, \([0-9]*\) CPUs.*/\1/p' "$dir/env.txt" 2>/dev/null)
awk -F, -v defpath="$default_path" -v cpus="${cpus:-0}" '
NR == 1 { next }
{ med[$1, $2, $3, $5, $6] = $8 }

function val(k) { return (k in med) ? med[k] : "" }

# One line: rmawin figure A over reference figure B, against "OP LIMIT" (OP "<=" or ">=",
# "" for information only).
function row(measure, path, a, b, op, limit,    r, verdict, tgt) {
	tgt = op == "" ? "-" : op " " limit
	if (a == "" || b == "" || b == 0) {
		verdict = (path == "ring" && defpath != "ring") ? "n/a (no ring)" : "n/a (no data)"
		printf "%-58s %-5s %12s %12s %7s  %-7s %s\n", measure, path, \
			a == "" ? "-" : a, b == "" ? "-" : b, "-", tgt, verdict
		na++
		return
	}
	r = a / b
	if (op == "")
		verdict = "info"
	else if ((op == "<=" && r <= limit) || (op == ">=" && r >= limit))
		verdict = "PASS"
	else
		verdict = "MISS"
	if (verdict == "PASS")
		pass++
	else if (verdict == "MISS")
		miss++
	printf "%-58s %-5s %12.6g %12.6g %7.3f  %-7s %s\n", measure, path, a, b, r, tgt, verdict
}

# The rmawin figure of a path: the ring is the default run when it used the ring; the ioctl
# path is always the RMAWIN_NO_RING=1 run.
function rm(bench, path, ranks, size) {
	if (path == "ring")
		return defpath == "ring" ? val(bench SUBSEP "rmawin" SUBSEP "default" SUBSEP ranks SUBSEP size) : ""
	return val(bench SUBSEP "rmawin" SUBSEP "no_ring" SUBSEP ranks SUBSEP size)
}

function pt(bench, size) { return val(bench SUBSEP "perftest" SUBSEP "-" SUBSEP 2 SUBSEP size) }

END {
	MiB = 1048576
	printf "%-58s %-5s %12s %12s %7s  %-7s %s\n", "measure (rmawin / yardstick, medians)", \
		"path", "rmawin", "yardstick", "ratio", "target", "result"
	row("8 B put latency (us) / ib_write_lat", "ring", rm("put_lat", "ring", 2, 8), \
	    pt("ib_write_lat", 8), "<=", 1.0)
	row("8 B put latency (us) / ib_write_lat", "ioctl", rm("put_lat", "ioctl", 2, 8), \
	    pt("ib_write_lat", 8), "<=", 1.3)
	# issue 13: the ring no slower than the ioctl
	row("8 B put latency (us), ring / ioctl", "ring", rm("put_lat", "ring", 2, 8), \
	    rm("put_lat", "ioctl", 2, 8), "<=", 1.0)
	np = split(defpath == "ring" ? "ring ioctl" : "ioctl", paths, " ")
	for (i = 1; i <= np; i++)
		row("8 B get latency (us) / ib_read_lat", paths[i], rm("get_lat", paths[i], 2, 8), \
		    pt("ib_read_lat", 8), "<=", 1.1)
	for (i = 1; i <= np; i++)
		row("8 B fetch_and_op latency (us) / ib_atomic_lat", paths[i], \
		    rm("fop_lat", paths[i], 2, 8), pt("ib_atomic_lat", 8), "<=", 1.1)
	for (i = 1; i <= np; i++)
		row("8 B fetch_and_op, same_op window (us) / ib_atomic_lat", paths[i], \
		    rm("fop_lat_same_op", paths[i], 2, 8), pt("ib_atomic_lat", 8), "<=", 1.2)
	for (i = 1; i <= np; i++)
		row("8 B compare_and_swap, same_op window (us) / ib_atomic_lat", paths[i], \
		    rm("cas_lat_same_op", paths[i], 2, 8), pt("ib_atomic_lat", 8), "<=", 1.2)
	for (i = 1; i <= np; i++)
		row("1 MiB put bandwidth (MiB/s) / ib_write_bw", paths[i], \
		    rm("put_bw", paths[i], 2, MiB), pt("ib_write_bw", MiB), ">=", 0.95)
	row("8 B put rate (ops/s) / ib_write_bw -s 8", "ring", rm("put_rate", "ring", 2, 8), \
	    pt("ib_write_rate", 8), ">=", 1.0)
	row("8 B put rate (ops/s) / ib_write_bw -s 8", "ioctl", rm("put_rate", "ioctl", 2, 8), \
	    pt("ib_write_rate", 8), ">=", 0.9)
	for (i = 1; i <= np; i++)
		row("8 B batched put rate (ops/s) / ib_write_bw -s 8", paths[i], \
		    rm("put_rate_batch", paths[i], 2, 8), pt("ib_write_rate", 8), "", "")
	reg = val("reg_dereg_mr" SUBSEP "verbs" SUBSEP "-" SUBSEP 1 SUBSEP 256 * MiB)
	for (i = 1; i <= np; i++)
		row("256 MiB win create+free (us) / reg+dereg_mr", paths[i], \
		    rm("win_create_free", paths[i], 2, 256 * MiB), reg, "<=", 1.2)
	for (i = 1; i <= np; i++)
		row("64 MiB put, warm cache / from window (MiB/s)", paths[i], \
		    rm("put_repeat_warm", paths[i], 2, 64 * MiB), \
		    rm("put_from_win", paths[i], 2, 64 * MiB), ">=", 0.95)
	# time grows with the rank count whatever the algorithm once ranks share CPUs
	for (i = 1; i <= np; i++)
		if (cpus >= 8)
			row("fence cost, 8 ranks / 2 ranks (log2: 3)", paths[i], \
			    rm("fence", paths[i], 8, 0), rm("fence", paths[i], 2, 0), "<=", 3)
		else if (cpus >= 4)
			row("fence cost, 4 ranks / 2 ranks (log2: 2)", paths[i], \
			    rm("fence", paths[i], 4, 0), rm("fence", paths[i], 2, 0), "<=", 2)
		else
			printf "%-58s %-5s %12s %12s %7s  %-7s %s\n", "fence cost growth (time)", \
			    paths[i], "-", "-", "-", "-", "not reported: " cpus + 0 " vCPUs"
	for (i = 1; i <= np; i++)
		row("fence messages per rank, 8 / 2 ranks", paths[i], \
		    rm("fence_msgs", paths[i], 8, 0), rm("fence_msgs", paths[i], 2, 0), "<=", 3)
	printf "\n%d PASS, %d MISS, %d not measured\n", pass, miss, na
}' "$csv" | tee "$dir/ratios.txt"

# --- the interleaved rounds (run.sh's step rounds) -------------------------------------------

# Each 8-byte latency line of issue 13 again, from rounds of its own: each round measures the
# yardstick right before the rmawin figures, so that a drift of the host's load between the
# main run's steps, minutes apart, does not decide a ratio.  One ratio per round; the verdict
# is the median's.
if ((${#rounds[@]})); then
	awk -F, -v defpath="$default_path" '
	FNR == 1 { nr++; next }
	{ med[nr, $1, $2, $3, $5, $6] = $8 }

	function val(k) { return (k in med) ? med[k] : "" }
	function rm(r, bench, path) {
		if (path == "ring")
			return defpath == "ring" ? val(r SUBSEP bench SUBSEP "rmawin" SUBSEP "default" SUBSEP 2 SUBSEP 8) : ""
		return val(r SUBSEP bench SUBSEP "rmawin" SUBSEP "no_ring" SUBSEP 2 SUBSEP 8)
	}
	function pt(r, bench) { return val(r SUBSEP bench SUBSEP "perftest" SUBSEP "-" SUBSEP 2 SUBSEP 8) }

	# One line: the ratio A/B of every round that has both, their median, least and greatest.
	function line(measure, path, abench, apath, bbench, bpath, limit,    r, a, b, n, x, i, j, t, m, verdict) {
		n = 0
		for (r = 1; r <= nr; r++) {
			a = rm(r, abench, apath)
			b = bbench == "" ? rm(r, abench, bpath) : pt(r, bbench)
			if (a == "" || b == "" || b == 0)
				continue
			x[++n] = a / b
		}
		if (!n) {
			printf "%-58s %-5s %7s %7s %7s %5s  <= %-4s %s\n", measure, path, "-", "-", "-", 0, limit, \
				(path == "ring" && defpath != "ring") ? "n/a (no ring)" : "n/a (no data)"
			return
		}
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && x[j - 1] > x[j]; j--) {
				t = x[j]; x[j] = x[j - 1]; x[j - 1] = t
			}
		m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
		verdict = m <= limit + 0 ? "PASS" : "MISS"
		printf "%-58s %-5s %7.3f %7.3f %7.3f %5d  <= %-4s %s\n", measure, path, m, x[1], x[n], n, limit, verdict
	}

	END {
		printf "\n%-58s %-5s %7s %7s %7s %5s  %-7s %s\n", \
			"interleaved rounds (rmawin / yardstick, each round)", "path", "median", "least", \
			"most", "runs", "target", "result"
		line("8 B put latency (us) / ib_write_lat", "ring", "put_lat", "ring", "ib_write_lat", "", "1.0")
		line("8 B put latency (us) / ib_write_lat", "ioctl", "put_lat", "ioctl", "ib_write_lat", "", "1.3")
		line("8 B put latency (us), ring / ioctl", "ring", "put_lat", "ring", "", "ioctl", "1.0")
		np = split(defpath == "ring" ? "ring ioctl" : "ioctl", paths, " ")
		for (i = 1; i <= np; i++)
			line("8 B fetch_and_op, same_op window (us) / ib_atomic_lat", paths[i], \
			     "fop_lat_same_op", paths[i], "ib_atomic_lat", "", "1.2")
		for (i = 1; i <= np; i++)
			line("8 B compare_and_swap, same_op window (us) / ib_atomic_lat", paths[i], \
			     "cas_lat_same_op", paths[i], "ib_atomic_lat", "", "1.2")
	}' "${rounds[@]}" | tee -a "$dir/ratios.txt"
fi

echo
echo "report.sh: $dir/{latency,bandwidth,sync,registration}.png, $dir/ratios.txt, $csv"
