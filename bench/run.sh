#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench/run.sh [OUTDIR] - the benchmarks, inside the test VM; `make bench` runs
#
#   tools/vm --mem 3072 --timeout 2400 -- bench/run.sh bench/results
#
# then bench/report.sh on the host.  In one guest, on one RDMA device (rxe0),
# each rmawin measurement runs right after its yardstick: perftest's
# ib_write_lat, ib_read_lat, ib_atomic_lat, ib_write_bw and ib_read_bw (server
# and client both in the guest) and bench/reg_mr; rmawin_bench runs under
# tools/rmarun, once with the default path (the ring when there is one) and
# once with RMAWIN_NO_RING=1.  Writes OUTDIR/bench.csv (one line per
# measurement: median, 10th and 90th percentile) and OUTDIR/raw/ (every
# tool's output).  OUTDIR defaults to bench/results.
#
# Needs bench/rmawin_bench, bench/reg_mr and tools/rmarun built, /dev/rmawin,
# and perftest.  Exit status: 0 if every step succeeded, else 1 (the steps
# after a failed one still run).  BENCH_STEPS, a list of the steps put_lat,
# get_lat, atomics, put_bw, get_bw, rate, registration, repeat, sync and
# rounds, runs only those (default: all).  The last, rounds, measures the
# 8-byte latency lines again in BENCH_ROUNDS (default 5) interleaved rounds,
# each yardstick right before its rmawin figures, into OUTDIR/rounds/N.csv
# (bench.csv's format): report.sh takes the median of the rounds' ratios.
# See Documentation/bench.rst.

set -uo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
REPO=$(dirname -- "$(dirname -- "$self")")

case ${1-} in
-h | --help)
	sed -n '4,21s/^# \{0,1\}//p' "$self"
	exit 0
	;;
esac

out=${1:-$REPO/bench/results}
dev=${RMAWIN_VM_IBDEV:-rxe0}
addrs=${RMAWIN_VM_ADDRS:-198.18.0.1}
addr=${addrs%%,*}

# The iteration plans of bench/rmawin_bench.h, which perftest gets too: keep them in step.
SIZES=(8 16 64 256 1024 4096 16384 65536 262144 1048576 4194304)
LAT_BYTES=$((16 << 20)) LAT_MIN_ITERS=10 LAT_MAX_ITERS=5000
BW_BYTES=$((16 << 20)) BW_MIN_OPS=5 BW_MAX_OPS=4096 BW_REPS=5
RATE_OPS=8192 RATE_REPS=5
WIN_MAX_MIB=256 WIN_REPS=9
SYNC_RANKS=(2 4 8)
ROUNDS=${BENCH_ROUNDS:-5}

# Each client/server pair and each rmarun job gets fresh ports: no waiting for TIME_WAIT.
next_port=19000
failed=0
t_start=$SECONDS

die() {
	printf 'run.sh: %s\n' "$*" >&2
	exit 1
}

say() {
	local t=$((SECONDS - t_start))
	printf 'run.sh: [%2d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*"
}

fail() {
	printf 'run.sh: FAILED: %s\n' "$*" >&2
	failed=1
}

clamp() {
	local v=$1
	((v < $2)) && v=$2
	((v > $3)) && v=$3
	echo "$v"
}

lat_iters() {
	clamp $((LAT_BYTES / $1)) "$LAT_MIN_ITERS" "$LAT_MAX_ITERS"
}

bw_ops() {
	clamp $((BW_BYTES / $1)) "$BW_MIN_OPS" "$BW_MAX_OPS"
}

# emit BENCH SIZE UNIT: one perftest line of bench.csv from the samples on stdin, with the
# percentiles computed as rmawin_bench computes them (linear between closest ranks).
emit() {
	sort -g | awk -v b="$1" -v s="$2" -v u="$3" -v ranks="${4:-2}" '
		{ v[NR] = $1 }
		function pct(q,    pos, i) {
			pos = q * (NR - 1)
			i = int(pos) + 1
			return i >= NR ? v[NR] : v[i] + (pos - (i - 1)) * (v[i + 1] - v[i])
		}
		END {
			if (NR)
				printf "%s,perftest,-,verbs,%d,%s,%s,%.6g,%.6g,%.6g,%d\n",
					b, ranks, s, u, pct(0.5), pct(0.1), pct(0.9), NR
		}' >>"$csv"
}

# perftest_once OUT TOOL ARGS...: one run of a perftest tool, its server in the background and
# its client connecting to it over $dev (retried until the server listens); the client's output
# goes to OUT, the server's to OUT.server.
perftest_once() {
	local outf=$1 tool=$2 port=$next_port spid i
	shift 2
	next_port=$((next_port + 1))
	timeout 600 "$tool" -d "$dev" -F -p "$port" "$@" >"$outf.server" 2>&1 &
	spid=$!
	for ((i = 0; i < 100; i++)); do
		if timeout 600 "$tool" -d "$dev" -F -p "$port" "$@" "$addr" >"$outf" 2>&1; then
			wait "$spid" && return 0
			cat "$outf.server" >>"$outf"
			return 1
		fi
		grep -q "Couldn't connect" "$outf" || break
		sleep 0.2
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	return 1
}

# perftest OUT TOOL ARGS...: perftest_once, again if perftest could not trust its clock.
# perftest converts cycles to time with the CPU frequency it samples at start; under
# emulation the sampling is noisy, and then it either reports "inf" (r^2 < 0.9) or uses the
# sampled value instead of /proc/cpuinfo's (off by more than 2%).  Such a run is discarded.
perftest() {
	local outf=$1 tool=$2 try
	for ((try = 1; try <= 5; try++)); do
		if ! perftest_once "$@"; then
			fail "$tool ${*:3}: $(tail -n 3 "$outf")"
			return 1
		fi
		grep -qE 'Correlation coefficient|differs from nominal' "$outf" || return 0
		cp -- "$outf" "$outf.clock$try"
	done
	fail "$tool ${*:3}: perftest could not calibrate its clock in 5 runs"
	return 1
}

# Latency tools: -H prints every sample (ib_write_lat's already halved); all become one line.
perftest_lat() {
	local tool=$1 bench=$2 size=$3 iters f
	shift 3
	iters=$(lat_iters "$size")
	f=$raw/$bench.$size.txt
	# perftest reports iters - 1 deltas between successive iterations
	perftest "$f" "$tool" -s "$size" -n $((iters + 1)) -H "$@" || return
	awk -F', ' '/^[0-9]+, [0-9.eE+-]+$/ { print $2 }' "$f" | emit "$bench" "$size" us
}

# Bandwidth tools: one run per repetition; COLUMN 4 is "BW average[MB/sec]" (MiB/s),
# COLUMN 5 the message rate in Mpps.
perftest_bw() {
	local tool=$1 bench=$2 size=$3 ops=$4 reps=$5 col=$6 scale=$7 unit=$8 rep f
	local values=$raw/$bench.$size.values
	: >"$values"
	for ((rep = 0; rep < reps; rep++)); do
		f=$raw/$bench.$size.$rep.txt
		perftest "$f" "$tool" -s "$size" -n "$ops" || return
		awk -v s="$size" -v c="$col" -v k="$scale" \
			'$1 == s && NF >= 5 { print $c * k }' "$f" >>"$values"
	done
	emit "$bench" "$size" "$unit" <"$values"
}

# rmawin MODE NRANKS ARGS...: rmawin_bench on NRANKS ranks; MODE default or no_ring.
rmawin() {
	local mode=$1 n=$2 env=(env -u RMAWIN_NO_RING)
	shift 2
	[[ $mode == no_ring ]] && env=(env RMAWIN_NO_RING=1)
	printf '\n$ %s rmarun -n %s -- rmawin_bench %s\n' "$mode" "$n" "$*" >>"$raw/rmawin.log"
	if ! "${env[@]}" "$REPO/tools/rmarun" -n "$n" --port "$next_port" --timeout 600 -- \
		"$REPO/bench/rmawin_bench" -o "$csv" "$@" >>"$raw/rmawin.log" 2>&1; then
		fail "$mode: rmarun -n $n -- rmawin_bench $* (see $raw/rmawin.log)"
	fi
	next_port=$((next_port + n))
}

rmawin_both() {
	rmawin default "$@"
	rmawin no_ring "$@"
}

# want STEP: is STEP one of BENCH_STEPS (or are they all wanted)?
want() {
	[[ -z ${BENCH_STEPS:-} || " ${BENCH_STEPS//,/ } " == *" $1 "* ]]
}

for f in bench/rmawin_bench bench/reg_mr tools/rmarun; do
	[[ -x $REPO/$f ]] || die "$REPO/$f missing: build first (make -C bench; make)"
done
command -v ib_write_lat >/dev/null || die "perftest not found (apt-get install perftest)"
[[ -e /dev/rmawin ]] || die "/dev/rmawin missing: load kmod/rmawin.ko (tools/vm does)"
[[ -e /sys/class/infiniband/$dev ]] || die "no RDMA device $dev"

mkdir -p -- "$out" || die "cannot create $out"
out=$(readlink -f -- "$out")
csv=$out/bench.csv
raw=$out/raw
# a report must not mix in an earlier run's rounds
rm -rf -- "$raw" "$out/rounds"
mkdir -p -- "$raw"
echo "bench,impl,requested,path,ranks,size,unit,median,p10,p90,samples" >"$csv"
{
	echo "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
	echo "device $dev at $addr; $(dpkg-query -W -f='perftest ${Version}' perftest 2>/dev/null)"
	date -u
} >"$out/env.txt"

cd -- "$REPO" || die "cannot cd to $REPO"
say "results in $csv, tool output in $raw"

if want put_lat; then
	say "put latency: ib_write_lat, then rmawin put_lat"
	for s in "${SIZES[@]}"; do
		perftest_lat ib_write_lat ib_write_lat "$s"
	done
	rmawin_both 2 -b put_lat
fi

if want get_lat; then
	say "get latency: ib_read_lat, then rmawin get_lat"
	for s in "${SIZES[@]}"; do
		perftest_lat ib_read_lat ib_read_lat "$s"
	done
	rmawin_both 2 -b get_lat
fi

if want atomics; then
	say "atomics: ib_atomic_lat (FETCH_AND_ADD), then rmawin fop_lat and acc_lat, then"
	say "  fop_lat_same_op and cas_lat_same_op (the device's atomics, RMAWIN_WIN_SAME_OP)"
	perftest_lat ib_atomic_lat ib_atomic_lat 8 -A FETCH_AND_ADD
	rmawin_both 2 -b fop_lat,acc_lat
	# a job of their own: a module without RMAWIN_FEAT_NIC_ATOMICS refuses the window
	rmawin_both 2 -b fop_lat_same_op,cas_lat_same_op
fi

# bandwidth: put beside ib_write_bw, get beside ib_read_bw
for bw in put:write get:read; do
	op=${bw%:*} verb=${bw#*:}
	want "${op}_bw" || continue
	say "$op bandwidth: ib_${verb}_bw, then rmawin ${op}_bw"
	for s in "${SIZES[@]}"; do
		perftest_bw "ib_${verb}_bw" "ib_${verb}_bw" "$s" "$(bw_ops "$s")" "$BW_REPS" 4 1 MiB/s
	done
	rmawin_both 2 -b "${op}_bw"
done

if want rate; then
	say "message rate: ib_write_bw -s 8, then rmawin put_rate and put_rate_batch"
	perftest_bw ib_write_bw ib_write_rate 8 "$RATE_OPS" "$RATE_REPS" 5 1000000 ops/s
	rmawin_both 2 -b put_rate,put_rate_batch
fi

if want registration; then
	say "registration: reg_mr, then rmawin win_create"
	if ! "$REPO/bench/reg_mr" -d "$dev" -m "$WIN_MAX_MIB" -r "$WIN_REPS" >>"$csv" 2>"$raw/reg_mr.err"; then
		fail "reg_mr: $(cat "$raw/reg_mr.err")"
	fi
	rmawin_both 2 -b win_create -m "${WIN_MAX_MIB}M"
fi

if want repeat; then
	say "repeated 64 MiB put: registration cache cold, warm, and window memory"
	rmawin_both 2 -b put_repeat
fi

if want sync; then
	for n in "${SYNC_RANKS[@]}"; do
		say "fence, lock/unlock, flush on $n ranks"
		rmawin_both "$n" -b sync
	done
fi

if want rounds; then
	main_csv=$csv main_raw=$raw
	for ((round = 1; round <= ROUNDS; round++)); do
		say "round $round of $ROUNDS: ib_write_lat and put_lat, ib_atomic_lat and the same_op atomics, 8 B"
		csv=$out/rounds/$round.csv raw=$out/rounds/raw.$round
		mkdir -p -- "$raw"
		head -n 1 -- "$main_csv" >"$csv"
		perftest_lat ib_write_lat ib_write_lat 8
		rmawin_both 2 -b put_lat -s 8 -S 8
		perftest_lat ib_atomic_lat ib_atomic_lat 8 -A FETCH_AND_ADD
		rmawin_both 2 -b fop_lat_same_op,cas_lat_same_op
	done
	csv=$main_csv raw=$main_raw
fi

say "done: $(($(wc -l <"$csv") - 1)) measurements in $csv"
((failed)) && say "some steps FAILED (see above and $raw)"
exit "$failed"
