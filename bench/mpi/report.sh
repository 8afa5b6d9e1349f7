#!/bin/bash
# The report of bench/mpi/osu.sh run, on the host: from build/osu/raw/
#   build/osu/results.csv   bench,window,sync,size,stack,value,unit,rxe_pkts,
#                           over_rxe,status
#   build/osu/table.txt     the side-by-side table, every size
#   build/osu/*.png         gnuplot: each program's default -s mode against
#                           size (both window flavors), and overlap.png
# and prints the table at a few sizes, with each stack's status.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${OSU_OUT:-$top/build/osu}
raw=$out/raw
csv=$out/results.csv
stacks=(rmawin-ompi rmawin-mpich ompi-osc-ucx ompi-osc-rdma mpich-ucx)

[[ -d $raw ]] || { echo "report: no $raw: run osu.sh run first" >&2; exit 1; }

# results.csv: a measured row per size; a run that failed or was skipped is
# one row with size "-" and its reason; a stack whose check failed, the
# check's reason.
{
	echo "bench,window,sync,size,stack,value,unit,rxe_pkts,over_rxe,status"
	for st in "${stacks[@]}"; do
		d=$raw/$st
		[[ -d $d ]] || continue
		chk=$(cat "$d/check.status" 2>/dev/null || echo "not run")
		for f in "$d"/*.status; do
			n=$(basename "$f" .status)
			[[ $n == check ]] && continue
			IFS=. read -r prog win sync <<<"$n"
			status=$(cat "$f")
			pkts=$(cat "$d/$n.rxe_pkts" 2>/dev/null || echo "")
			# over_rxe: no if rxe0 sent fewer packets during the run than the
			# run made timed operations (55 per size for latencies, 4 x 16
			# for bandwidths, 30 for overlap): then they did not all cross it
			awk -v prog="$prog" -v win="$win" -v sync="$sync" -v st="$st" \
				-v status="$status" -v pkts="$pkts" '
				function q(s) { gsub(/"/, "\"\"", s); return "\"" s "\"" }
				prog == "overlap" && $1 == "overlap" {
					row[++n] = sprintf("overlap_%s,%s,lock,%s,%s,%s,us", $2, $3, $5, st, $7)
					ops += 6; next }
				prog != "overlap" && /^[0-9]+[ \t]+[0-9.]+[ \t]*$/ {
					unit = (prog ~ /_bw|_bibw/) ? "MB/s" : "us"
					row[++n] = sprintf("%s,%s,%s,%s,%s,%s,%s", prog, win, sync, $1, st, $2, unit)
					ops += (unit == "us") ? 55 : 64 }
				END { rx = (pkts == "" || pkts + 0 >= ops) ? "yes" : "no"
					for (i = 1; i <= n; i++) printf "%s,%s,%s,ok\n", row[i], pkts, rx
					if (status == "ok") exit
					# overlap rows are overlap_OP with sync "lock"
					if (prog == "overlap") { prog = prog "_" sync; sync = "lock" }
					printf "%s,%s,%s,-,%s,,,%s,,%s\n", prog, win, sync, st, pkts, q(status) }
			' "$([[ -f $d/$n.txt ]] && echo "$d/$n.txt" || echo /dev/null)"
		done
		if [[ $chk != ok ]]; then
			echo "all,-,-,-,$st,,,,,$(printf '"%s"' "${chk//\"/\"\"}")"
		fi
	done
} >"$csv.tmp"
mv "$csv.tmp" "$csv"

# The table: one row per bench/window/sync/size, one column per stack.
table() {
	local sizes=$1
	awk -F, -v sizes="$sizes" -v order="${stacks[*]}" '
		function unq(s) { if (s ~ /^"/) { s = substr(s, 2, length(s) - 2); gsub(/""/, "\"", s) } return s }
		BEGIN { ns = split(order, so, " ")
			np = split("overlap_acc overlap_fop osu_put_latency osu_get_latency osu_acc_latency osu_get_acc_latency osu_fop_latency osu_cas_latency osu_put_bw osu_get_bw osu_put_bibw", po, " ")
			for (i = 1; i <= np; i++) prank[po[i]] = i
			split("create allocate", wo, " "); wrank["create"] = 1; wrank["allocate"] = 2
			split("lock flush flush_local lock_all pscw fence", yo, " ")
			for (i = 1; i <= 6; i++) yrank[yo[i]] = i
			if (sizes != "all") { m = split(sizes, sz, " "); for (i = 1; i <= m; i++) want[sz[i]] = 1 } }
		NR == 1 { next }
		{ $0 = $0; st = $5 }
		$1 == "all" { dead[st] = unq(substr($0, index($0, ",\"") + 1)); seen[st] = 1; next }
		{ seen[st] = 1; key = $1 SUBSEP $2 SUBSEP $3
		  if ($4 == "-") { fail[key, st] = ($0 ~ /,"skipped/) ? "skipped" : "failed"; keys[key] = 1; next }
		  if (sizes != "all" && $1 !~ /^overlap/ && !($4 in want)) next
		  rows[key, $4] = 1; keys[key] = 1; unit[key] = $7
		  val[key, $4, st] = $6 ($9 == "no" ? "*" : "") }
		END {
			for (i = 1; i <= ns; i++) if (so[i] in seen) cols[++nc] = so[i]
			printf "%s\t%-20s %-8s %-11s %8s %-5s", "0", "benchmark", "window", "sync", "size", "unit"
			for (c = 1; c <= nc; c++) printf " %13s", cols[c]; printf "\n"
			# each row behind its sort key: program, window, sync, size
			for (r in rows) { split(r, k, SUBSEP)
				key = k[1] SUBSEP k[2] SUBSEP k[3]
				printf "%02d%d%d%012d\t%-20s %-8s %-11s %8s %-5s", prank[k[1]], wrank[k[2]],
					yrank[k[3]], k[4], k[1], k[2], k[3], k[4], unit[key]
				for (c = 1; c <= nc; c++) { st = cols[c]
					if (st in dead) v = "fails"
					else if ((key, k[4], st) in val) v = val[key, k[4], st]
					else if ((key, st) in fail) v = fail[key, st]
					else v = "-"
					printf " %13s", v }
				printf "\n" }
		}' "$csv" | sort | cut -f2-
}

table all >"$out/table.txt"

# gnuplot: one PNG per program (its default -s mode, both flavors), and
# overlap.png. The .dat files are the CSV's columns for one line each.
pd=$out/plot
rm -rf "$pd"
mkdir -p "$pd"
awk -F, -v pd="$pd" 'NR > 1 && $4 != "-" && $6 != "" {
	f = pd "/" $1 "." $2 "." $3 "." $5; print $4, $6 >> (f ".dat")
	if ($9 == "no") print "" > (f ".shm") }' "$csv"
join_by_comma() {
	local IFS=,
	echo "$*"
}
plot_one() {
	local prog=$1 sync=$2 ylabel=$3 w st f t lines=()
	local png=$out/$prog.png
	for w in create allocate; do
		for st in "${stacks[@]}"; do
			f=$pd/$prog.$w.$sync.$st.dat
			t="$st -w $w"
			[[ -e ${f%.dat}.shm ]] && t+=" (not over rxe0)"
			[[ -s $f ]] && lines+=("'$f' using 1:2 with linespoints title '$t'")
		done
	done
	((${#lines[@]})) || return 0
	gnuplot <<-EOF
		set terminal png size 900,560 noenhanced
		set output '$png'
		set title '$prog -s $sync (2 ranks, one guest, rxe0)'
		set logscale x 2
		set logscale y
		set xlabel 'message size (bytes)'
		set ylabel '$ylabel'
		set key outside right
		set grid
		plot $(join_by_comma "${lines[@]}")
	EOF
}
for p in osu_put_latency osu_get_latency osu_acc_latency osu_get_acc_latency; do
	plot_one "$p" flush "latency (us)"
done
plot_one osu_put_bw flush "bandwidth (MB/s)"
plot_one osu_get_bw flush "bandwidth (MB/s)"
plot_one osu_put_bibw fence "bandwidth (MB/s)"

# fop and cas have one size: a bar per stack and sync mode
for p in osu_fop_latency osu_cas_latency; do
	awk -F, -v p="$p" 'NR > 1 && $1 == p && $4 != "-" && $6 != "" {
		print $5 "/" $2 "/" $3, $6 }' "$csv" | sort >"$pd/$p.bars"
	[[ -s $pd/$p.bars ]] || continue
	gnuplot <<-EOF
		set terminal png size 1200,720 noenhanced
		set bmargin 16
		set output '$out/$p.png'
		set title '$p, 8 bytes (2 ranks, one guest, rxe0)'
		set style data histograms
		set style fill solid 0.6
		set ylabel 'latency (us)'
		set logscale y
		set xtics rotate by -60 font ',8'
		set grid y
		plot '$pd/$p.bars' using 2:xtic(1) notitle
	EOF
done

lines=()
for op in acc fop; do
	for w in create allocate; do
		for st in "${stacks[@]}"; do
			f=$pd/overlap_$op.$w.lock.$st.dat
			[[ -s $f ]] && lines+=("'$f' using 0:2:xtic(1) with linespoints title '$st $op -w $w'")
		done
	done
done
if ((${#lines[@]})); then
	gnuplot <<-EOF
		set terminal png size 900,560 noenhanced
		set output '$out/overlap.png'
		set title 'lock, accumulate or fetch_and_op, unlock while the target computes'
		set xlabel "target's compute time T (us)"
		set ylabel "origin's time (us), median"
		set logscale y
		set key outside right
		set grid
		plot $(join_by_comma "${lines[@]}")
	EOF
fi

echo
echo "osu: each stack"
for st in "${stacks[@]}"; do
	[[ -f $raw/$st/check.status ]] || continue
	printf '  %-14s %s (rxe0 packets in its check: %s)\n' "$st" "$(cat "$raw/$st/check.status")" \
		"$(cat "$raw/$st/check.rxe_pkts" 2>/dev/null || echo ?)"
	for f in "$raw/$st"/*.status; do
		[[ $f == */check.status || $(cat "$f") == ok ]] && continue
		printf '    %s: %s\n' "$(basename "$f" .status)" "$(cat "$f")"
	done
done
echo
echo "osu: the table at 8 B, 1 KiB, 64 KiB and 1 MiB (every size: $out/table.txt);"
echo "     latency in us (less is better), bandwidth in MB/s (more is better);"
echo "     * rxe0 carried fewer packets than the run made operations: not over rxe;"
echo "     fails: the stack's check failed; failed, skipped: this run (reasons above)"
table "8 1024 65536 1048576"
echo
echo "osu: wrote $csv, $out/table.txt and $(find "$out" -maxdepth 1 -name '*.png' | wc -l) plots in $out"
