#!/bin/bash
# issue 14's benchmarks: OSU 5.7's one-sided suite and bench/mpi/overlap.c on
# rmawin-mpi and on the MPIs' own one-sided, side by side on one rxe device.
#   osu.sh build           configure and build OSU 5.7's mpi/one-sided out of
#                          tree in build/osu/<mpi>, and overlap.c, with each
#                          MPI's own mpicc (on the host)
#   osu.sh run             in the VM: every program, -w create and allocate,
#                          every -s mode it has, on every stack (STACKS)
#   osu.sh report          on the host: build/osu/results.csv, table.txt, the
#                          side-by-side table and gnuplot's PNGs
#   osu.sh probe           in the VM: every configuration tried for the peers,
#                          each with a timeout, with its outcome and rxe0's
#                          packet count (not part of make mpi-bench)
#   osu.sh compare         in the VM: the 8-byte latency rows of issue 14's
#                          comparison, ROUNDS interleaved rounds on every
#                          stack (make mpi-compare)
#   osu.sh compare-report  on the host: build/osu/compare.txt, the medians
# The source stays where it is (OSU_SRC, default ../shared/osu-micro-benchmarks-5.7
# beside the checkout): nothing of it is copied into the project.
# Environment: STACKS (which columns to run, default all), OSU_PROGRAMS (which
# programs, default overlap and the nine OSU ones; a run replaces only their
# results), OSU_BUDGET (seconds
# the matrix may take in the guest, default 1350; the peers stop at 85% of
# it: what is left is reported as skipped), OSU_TIMEOUT (one program run, default 60 s).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
src=${OSU_SRC:-$top/../shared/osu-micro-benchmarks-5.7}
out=$top/build/osu
raw=$out/raw
all_stacks=(rmawin-ompi rmawin-mpich ompi-osc-ucx ompi-osc-rdma mpich-ucx)
read -r -a stacks <<<"${STACKS:-${all_stacks[*]}}"
budget=${OSU_BUDGET:-1350}
tmo=${OSU_TIMEOUT:-60}

# program: the -s modes it has (OSU 5.7's own lists) and its arguments here.
# Latencies go to 64 KiB, bandwidths to 1 MiB; iterations are few because
# emulated RDMA is slow and every launch costs seconds in the guest.
lat_args=(-m 1:65536 -x 5 -i 50)
bw_args=(-m 1:1048576 -x 1 -i 3 -W 16)
all_sync=(lock flush flush_local lock_all pscw fence)
# (the order in which they run: issue 14's latency comparisons first, the
# short ones before the accumulates, whose 64 KiB sizes take rmawin-mpi tens
# of seconds a run, so a budget that runs out cuts get_accumulate and the
# bandwidths)
programs=(osu_put_latency osu_get_latency osu_fop_latency osu_cas_latency
	osu_acc_latency osu_get_acc_latency osu_put_bw osu_get_bw osu_put_bibw)
read -r -a programs <<<"${OSU_PROGRAMS:-overlap ${programs[*]}}"
syncs_of() {
	case $1 in
	osu_put_bibw) echo pscw fence ;;
	*) echo "${all_sync[@]}" ;;
	esac
}
args_of() {
	case $1 in
	*_bw | *_bibw) echo "${bw_args[@]}" ;;
	*) echo "${lat_args[@]}" ;;
	esac
}
# overlap.c: the target computes T us without calling MPI
overlap_t=0,100,1000,10000,100000
overlap_i=5

mpi_of() {
	case $1 in
	*ompi* | *openmpi*) echo openmpi ;;
	*) echo mpich ;;
	esac
}

# The launch of each stack: L, the command before the program. Every stack
# keeps the MPI's own traffic off shared memory where it could carry the
# one-sided operations, so that what is measured crosses rxe0 (osu.sh probe
# counts rxe0's packets to show it).
ompi=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 --bind-to none)
mpich=(mpiexec.mpich -launcher fork -np 2)
stack_cmd() {
	# UCX's UD (its wireup, and rc's) loses every packet on rxe's IPv4 GID,
	# the one UCX picks itself: GID 0 (IPv6 link-local) carries it
	local ucx=(-x UCX_NET_DEVICES=rxe0:1 -x "UCX_TLS=self,rc_verbs,ud_verbs"
		-x UCX_IB_GID_INDEX=0)
	case $1 in
	rmawin-ompi)
		L=("${ompi[@]}" -x "LD_PRELOAD=$top/mpi/librmawin-mpi-openmpi.so") ;;
	rmawin-mpich)
		# MPICH's own traffic on shared memory and TCP (mpi.rst: its UCX
		# aborts on rxe's UD queue pairs)
		L=("${mpich[@]}" -env UCX_TLS "self,sm,tcp"
			-env LD_PRELOAD "$top/mpi/librmawin-mpi-mpich.so") ;;
	ompi-osc-ucx)
		L=("${ompi[@]}" --mca pml ucx --mca osc ucx "${ucx[@]}") ;;
	ompi-osc-rdma)
		L=("${ompi[@]}" --mca pml ob1 --mca btl "self,tcp,ofi" --mca osc rdma
			--mca osc_rdma_btls ofi -x "FI_PROVIDER=verbs,ofi_rxm") ;;
	mpich-ucx)
		L=("${mpich[@]}" -env UCX_NET_DEVICES rxe0:1
			-env UCX_TLS "self,rc_verbs,ud_verbs" -env UCX_IB_GID_INDEX 0
			-env MPIR_CVAR_NOLOCAL 1) ;;
	*) echo "osu: unknown stack $1" >&2; exit 2 ;;
	esac
}

build() {
	local fl bdir
	[[ -x $src/configure ]] || { echo "osu: no OSU source at $src" >&2; exit 1; }
	for fl in openmpi mpich; do
		bdir=$out/$fl
		mkdir -p "$bdir"
		(
			cd "$bdir"
			if [[ ! -f Makefile ]]; then
				"$src/configure" CC="mpicc.$fl" CXX="mpicxx.$fl" >configure.log 2>&1 ||
					{ tail -20 configure.log >&2; exit 1; }
			fi
			# git keeps no file times: never let make rerun autotools
			make -s ACLOCAL=true AUTOMAKE=true AUTOCONF=true -C mpi/one-sided \
				>make.log 2>&1 || { tail -20 make.log >&2; exit 1; }
		)
		"mpicc.$fl" -O2 -g -Wall -Wextra -Werror -o "$bdir/overlap" \
			"$top/bench/mpi/overlap.c"
		echo "osu: built $bdir/mpi/one-sided and $bdir/overlap"
	done
}

rxe_pkts() {
	cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts 2>/dev/null || echo 0
}

# The line of an MPI's output that says why it failed: UCX's and MPI's own
# error lines first, the launcher's summary last.
why() {
	local f=$1 rc=$2 line
	if ((rc == 124 || rc == 137)); then
		line=$(grep -m1 -E 'Fatal|unhandled|ERROR|[Ee]rror|failed' "$f" || true)
		echo "timed out after ${tmo}s${line:+ (first error line: ${line:0:200})}"
		return
	fi
	line=$(grep -v -E '^\[[^]]*\] \[ *[0-9]+\]|backtrace|^ *[0-9]+ +0x|End of error message' "$f" |
		grep -m1 -E 'Fatal|Signal:|ERROR|unhandled' || true)
	[[ -n $line ]] || line=$(grep -v -E 'End of error message' "$f" |
		grep -m1 -E '[Ee]rror|failed|unreachable|not available|Abort' || true)
	[[ -n $line ]] || line=$(grep -v '^#' "$f" | grep -m1 -v '^[0-9 .]*$' || true)
	echo "exit $rc: ${line:0:240}"
}

# one run: STACK NAME PROGRAM ARGS... -> raw/STACK/NAME.txt, NAME.status
run_one() {
	local st=$1 name=$2 f rc t0 pk0
	shift 2
	f=$raw/$st/$name.txt
	stack_cmd "$st"
	t0=$SECONDS
	rc=0
	pk0=$(rxe_pkts)
	timeout -k 5 "$tmo" "${L[@]}" "$@" </dev/null >"$f" 2>&1 || rc=$?
	# what crossed rxe0 during the run: ~0 means the stack did not use it
	echo "$(($(rxe_pkts) - pk0))" >"$raw/$st/$name.rxe_pkts"
	if ((rc == 0)); then
		echo ok >"$raw/$st/$name.status"
	else
		why "$f" "$rc" >"$raw/$st/$name.status"
	fi
	printf '  %-14s %-36s %3ds %7s pkts %s\n' "$st" "$name" $((SECONDS - t0)) \
		"$(cat "$raw/$st/$name.rxe_pkts")" "$(cat "$raw/$st/$name.status")"
}

# STACK TIMED_OUT (0 or 1): count the stack's timeouts in a row in the
# caller's hung[] (a stack whose last three runs timed out hangs, and
# gets no more of the budget)
note_hang() {
	if (($2)); then
		hung[$1]=$((${hung[$1]:-0} + 1))
	else
		hung[$1]=0
	fi
}

run() {
	local st p w s mpi start=$SECONDS n=0 args
	local -A hung=()
	# a run replaces what it runs and keeps the rest (OSU_PROGRAMS)
	for st in "${stacks[@]}"; do
		mkdir -p "$raw/$st"
		for p in check "${programs[@]}"; do
			rm -f "$raw/$st/$p".*
		done
	done
	{
		uname -r
		ibv_devinfo -d rxe0 | grep -E 'fw_ver|active_mtu|state'
		mpirun.openmpi --version | head -1
		mpichversion | head -3
		date -u
	} >"$raw/env.txt" 2>&1
	# First each stack's check: osu_put_latency at 8 bytes, and rxe0's packets
	# during it. A stack that fails here gets no more runs: its reason stands
	# for every row.
	echo "osu: checking each stack (osu_put_latency -m 8:8, rxe0 packets)"
	for st in "${stacks[@]}"; do
		mpi=$(mpi_of "$st")
		run_one "$st" check "$out/$mpi/mpi/one-sided/osu_put_latency" \
			-w create -s flush -m 8:8 -x 2 -i 20
	done
	echo "osu: the matrix (each program run ${tmo}s at most, ${budget}s in all)"
	for p in "${programs[@]}"; do
		for w in create allocate; do
			if [[ $p == overlap ]]; then
				set -- acc fop
			else
				# shellcheck disable=SC2046
				set -- $(syncs_of "$p")
			fi
			for s in "$@"; do
				for st in "${stacks[@]}"; do
					mpi=$(mpi_of "$st")
					name=$p.$w.$s
					if [[ $(cat "$raw/$st/check.status") != ok ]]; then
						continue
					fi
					# a stack whose last three runs timed out hangs: it
					# gets no more of the budget
					if ((${hung[$st]:-0} >= 3)); then
						echo "skipped: the stack's last 3 runs timed out" >"$raw/$st/$name.status"
						continue
					fi
					# the peers stop at 85% of the budget, so that rmawin-mpi
					# runs every program
					if ((SECONDS - start > budget)) ||
						{ [[ $st != rmawin-* ]] && ((SECONDS - start > budget * 85 / 100)); }; then
						echo "skipped: over the time budget" >"$raw/$st/$name.status"
						continue
					fi
					if [[ $p == overlap ]]; then
						run_one "$st" "$name" "$out/$mpi/overlap" -w "$w" -o "$s" \
							-t "$overlap_t" -i "$overlap_i"
					else
						read -r -a args <<<"$(args_of "$p")"
						run_one "$st" "$name" "$out/$mpi/mpi/one-sided/$p" \
							-w "$w" -s "$s" "${args[@]}"
					fi
					n=$((n + 1))
					note_hang "$st" "$(grep -c '^timed out' "$raw/$st/$name.status")"
				done
			done
		done
	done
	echo "osu: $n runs in $((SECONDS - start))s"
}

# Issue 14's latency comparison, made robust to the guest's spread (one
# OSU run can come out twice as slow as the next, on every stack): the
# 8-byte rows of the five operations (and get_accumulate), both flavors,
# flush and lock, ROUNDS rounds (default 3) with the stacks in a different
# order each round, each value OSU's mean of 200 iterations, and the
# packets rxe0 sent during the run -> compare.csv (COMPARE_CSV);
# compare_report takes the medians.
cmp_programs=(osu_put_latency osu_get_latency osu_acc_latency osu_get_acc_latency
	osu_fop_latency osu_cas_latency)
compare() {
	local r i st p w s mpi v rc f pk0 n=${#stacks[@]} start=$SECONDS runs=0
	local csv=${COMPARE_CSV:-$out/compare.csv} rounds=${ROUNDS:-3}
	local -A hung=()
	mkdir -p "$raw/compare"
	echo "round,bench,window,sync,stack,value,status,rxe_pkts" >"$csv"
	for ((r = 1; r <= rounds; r++)); do
		for p in "${cmp_programs[@]}"; do
			for w in create allocate; do
				for s in ${COMPARE_SYNCS:-flush lock}; do
					for ((i = 0; i < n; i++)); do
						st=${stacks[$(((i + r) % n))]}
						mpi=$(mpi_of "$st")
						f=$raw/compare/$st.$p.$w.$s.$r.txt
						if ((${hung[$st]:-0} >= 3)); then
							echo "$r,$p,$w,$s,$st,,skipped: the stack's last 3 runs timed out," >>"$csv"
							continue
						fi
						stack_cmd "$st"
						rc=0
						pk0=$(rxe_pkts)
						timeout -k 5 "$tmo" "${L[@]}" "$out/$mpi/mpi/one-sided/$p" -w "$w" \
							-s "$s" -m 8:8 -x 20 -i 200 </dev/null >"$f" 2>&1 || rc=$?
						runs=$((runs + 1))
						v=$(awk '$1 == 8 { print $2; exit }' "$f")
						pk0=$(($(rxe_pkts) - pk0))
						if ((rc == 0)) && [[ -n $v ]]; then
							echo "$r,$p,$w,$s,$st,$v,ok,$pk0"
						else
							echo "$r,$p,$w,$s,$st,,$(why "$f" "$rc" | tr ',' ';'),$pk0"
						fi >>"$csv"
						note_hang "$st" $((rc == 124 || rc == 137))
					done
				done
			done
		done
		echo "osu: compare round $r of $rounds done, $runs runs in $((SECONDS - start))s"
	done
}

# compare.csv (COMPARE_CSV) -> compare.txt beside it: per row the median of
# each stack's rounds (- where none ran; the reason of the first failure in
# the notes below), and each rmawin stack's median over the best working
# peer's.  A run during which rxe0 sent fewer packets than OSU's 220
# iterations did not cross the device (Open MPI's osc rdma keeps an
# allocated window in shared memory): its median is marked * and is no
# peer's best.
compare_report() {
	local csv=${COMPARE_CSV:-$out/compare.csv}
	[[ -f $csv ]] || { echo "osu: no $csv (osu.sh compare)" >&2; exit 1; }
	{
		echo "8-byte latency, us: median of each stack's rounds ($(cut -d, -f1 "$csv" |
			sort -u | grep -c '^[0-9]') rounds, OSU's mean of 200 iterations each)"
		tail -n +2 "$csv" | grep ',ok,' | sort -t, -k2,2 -k3,3 -k4,4 -k5,5 -k6,6g |
			awk -F, -v stacks="${stacks[*]}" '
			function med(k,   m) {
				m = cnt[k]
				if (m % 2)
					return val[k, (m + 1) / 2]
				return (val[k, m / 2] + val[k, m / 2 + 1]) / 2
			}
			{ k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5; val[k, ++cnt[k]] = $6
			  if ($8 != "" && $8 < 220) local[k] = 1
			  row = $2 " " $3 " " $4; if (!(row in seen)) { seen[row] = 1; rows[++nr] = row } }
			END {
				ns = split(stacks, st, " ")
				printf "%-20s %-8s %-5s", "benchmark", "window", "sync"
				for (i = 1; i <= ns; i++) printf " %13s", st[i]
				printf "  %s\n", "rmawin / best peer"
				for (r = 1; r <= nr; r++) {
					split(rows[r], f, " "); best = ""
					printf "%-20s %-8s %-5s", f[1], f[2], f[3]
					for (i = 1; i <= ns; i++) {
						k = f[1] SUBSEP f[2] SUBSEP f[3] SUBSEP st[i]
						if (!(k in cnt)) { printf " %13s", "-"; continue }
						m[i] = med(k)
						if (k in local) {
							printf " %12.2f*", m[i]
							continue
						}
						printf " %13.2f", m[i]
						if (st[i] !~ /^rmawin/ && (best == "" || m[i] < best)) best = m[i]
					}
					out = ""
					for (i = 1; i <= ns; i++) {
						k = f[1] SUBSEP f[2] SUBSEP f[3] SUBSEP st[i]
						if (st[i] ~ /^rmawin/ && (k in cnt) && best != "")
							out = out sprintf(" %.2f", m[i] / best)
					}
					printf " %s\n", out == "" ? " -" : out
				}
				print "(* : rxe0 sent fewer packets than the run had iterations: not over the device)"
			}'
		echo
		echo "runs that did not give a value (the first of each stack, program and flavor):"
		tail -n +2 "$csv" | grep -v ',ok,' | sort -t, -k5,5 -k2,2 -k3,3 -u |
			awk -F, '{ printf "  %s %s %s %s round %s: %s\n", $5, $2, $3, $4, $1, $7 }'
	} | tee "${csv%.csv}.txt"
}

# Every configuration tried for the peers (Documentation/mpi.rst), one after
# the other, each with the same short run and a timeout.
probe() {
	local ob=$out/openmpi/mpi/one-sided/osu_put_latency
	local mb=$out/mpich/mpi/one-sided/osu_put_latency
	local a=(-w create -s flush -m 8:8 -x 2 -i 20) pk0 rc f=$raw/probe.out
	local u=(-x UCX_NET_DEVICES=rxe0:1)
	mkdir -p "$raw"
	try() {
		echo "=== $1"
		shift
		echo "    $*" | sed "s|$top/||g"
		pk0=$(rxe_pkts)
		rc=0
		timeout -k 5 "$tmo" "$@" </dev/null >"$f" 2>&1 || rc=$?
		if ((rc == 0)); then
			echo "    ok: $(grep -E '^8 ' "$f" | head -1) (us), rxe0 sent $(($(rxe_pkts) - pk0)) packets"
		else
			echo "    fails: $(why "$f" "$rc"), rxe0 sent $(($(rxe_pkts) - pk0)) packets"
		fi
	}
	# UCX alone, without MPI: ucx_perftest's tag latency over ud_verbs, the
	# server in the background, on the GID UCX picks and on GID 0
	local g
	for g in auto 0; do
		echo "=== UCX alone: ucx_perftest -t tag_lat over ud_verbs, UCX_IB_GID_INDEX=$g"
		pk0=$(rxe_pkts)
		UCX_TLS=ud_verbs UCX_NET_DEVICES=rxe0:1 UCX_IB_GID_INDEX=$g UCX_UD_TIMEOUT=10s \
			timeout 30 ucx_perftest -t tag_lat -n 200 >"$f.srv" 2>&1 &
		sleep 2
		rc=0
		UCX_TLS=ud_verbs UCX_NET_DEVICES=rxe0:1 UCX_IB_GID_INDEX=$g UCX_UD_TIMEOUT=10s \
			timeout 25 ucx_perftest 127.0.0.1 -t tag_lat -n 200 >"$f" 2>&1 || rc=$?
		wait || true
		if ((rc == 0)); then
			echo "    ok: $(grep Final "$f" | tr -s ' ' | cut -d' ' -f1-5) (us), rxe0 sent $(($(rxe_pkts) - pk0)) packets"
		else
			echo "    fails: $(why "$f.srv" "$rc"), rxe0 sent $(($(rxe_pkts) - pk0)) packets"
		fi
	done
	try "Open MPI, pml ucx + osc ucx, UCX over rc_verbs+ud_verbs (issue 14's)" \
		"${ompi[@]}" --mca pml ucx --mca osc ucx "${u[@]}" -x UCX_TLS=self,rc_verbs,ud_verbs "$ob" "${a[@]}"
	try "Open MPI, pml ucx + osc ucx, UCX_IB_GID_INDEX=1 (the IPv4 GID)" \
		"${ompi[@]}" --mca pml ucx --mca osc ucx "${u[@]}" -x UCX_TLS=self,rc_verbs,ud_verbs \
		-x UCX_IB_GID_INDEX=1 "$ob" "${a[@]}"
	try "Open MPI, pml ucx + osc ucx, UCX_IB_GID_INDEX=0 (IPv6 link-local GID)" \
		"${ompi[@]}" --mca pml ucx --mca osc ucx "${u[@]}" -x UCX_TLS=self,rc_verbs,ud_verbs \
		-x UCX_IB_GID_INDEX=0 "$ob" "${a[@]}"
	try "Open MPI, pml ucx + osc ucx, GID 0, -w allocate" \
		"${ompi[@]}" --mca pml ucx --mca osc ucx "${u[@]}" -x UCX_TLS=self,rc_verbs,ud_verbs \
		-x UCX_IB_GID_INDEX=0 "$ob" "${a[@]}" -w allocate
	try "Open MPI, pml ob1 over TCP + osc ucx over rc_verbs+ud_verbs" \
		"${ompi[@]}" --mca pml ob1 --mca btl self,tcp --mca osc ucx "${u[@]}" \
		-x UCX_TLS=self,rc_verbs,ud_verbs "$ob" "${a[@]}"
	try "Open MPI, pml ucx + osc ucx, rc_verbs with tcp for wireup" \
		"${ompi[@]}" --mca pml ucx --mca osc ucx -x UCX_NET_DEVICES=rxe0:1,veth0 \
		-x UCX_TLS=self,rc_verbs,tcp "$ob" "${a[@]}"
	try "Open MPI, osc rdma over btl openib (udcm)" \
		"${ompi[@]}" --mca pml ob1 --mca btl self,tcp,openib --mca osc rdma \
		--mca btl_openib_allow_ib 1 "$ob" "${a[@]}"
	try "Open MPI, osc rdma over btl ofi, libfabric verbs;ofi_rxm" \
		"${ompi[@]}" --mca pml ob1 --mca btl self,tcp,ofi --mca osc rdma \
		--mca osc_rdma_btls ofi -x FI_PROVIDER=verbs,ofi_rxm "$ob" "${a[@]}"
	try "MPICH ch4:ucx, UCX over rc_verbs+ud_verbs, MPIR_CVAR_NOLOCAL=1" \
		"${mpich[@]}" -env UCX_NET_DEVICES rxe0:1 -env UCX_TLS self,rc_verbs,ud_verbs \
		-env MPIR_CVAR_NOLOCAL 1 "$mb" "${a[@]}"
	try "MPICH ch4:ucx, UCX_IB_GID_INDEX=1" \
		"${mpich[@]}" -env UCX_NET_DEVICES rxe0:1 -env UCX_TLS self,rc_verbs,ud_verbs \
		-env UCX_IB_GID_INDEX 1 -env MPIR_CVAR_NOLOCAL 1 "$mb" "${a[@]}"
	try "MPICH ch4:ucx, UCX_IB_GID_INDEX=0" \
		"${mpich[@]}" -env UCX_NET_DEVICES rxe0:1 -env UCX_TLS self,rc_verbs,ud_verbs \
		-env UCX_IB_GID_INDEX 0 -env MPIR_CVAR_NOLOCAL 1 "$mb" "${a[@]}"
	try "MPICH ch4:ucx, UCX_IB_GID_INDEX=0, -w allocate" \
		"${mpich[@]}" -env UCX_NET_DEVICES rxe0:1 -env UCX_TLS self,rc_verbs,ud_verbs \
		-env UCX_IB_GID_INDEX 0 -env MPIR_CVAR_NOLOCAL 1 "$mb" "${a[@]}" -w allocate
	try "MPICH ch4:ucx, GID 0, without MPIR_CVAR_NOLOCAL, -w allocate" \
		"${mpich[@]}" -env UCX_NET_DEVICES rxe0:1 -env UCX_TLS self,rc_verbs,ud_verbs \
		-env UCX_IB_GID_INDEX 0 "$mb" "${a[@]}" -w allocate
	try "Open MPI, osc rdma over btl ofi, -w allocate" \
		"${ompi[@]}" --mca pml ob1 --mca btl self,tcp,ofi --mca osc rdma \
		--mca osc_rdma_btls ofi -x FI_PROVIDER=verbs,ofi_rxm "$ob" "${a[@]}" -w allocate
	try "MPICH ch4:ucx, rc_verbs with tcp for wireup" \
		"${mpich[@]}" -env UCX_NET_DEVICES rxe0:1,veth0 -env UCX_TLS self,rc_verbs,tcp \
		-env MPIR_CVAR_NOLOCAL 1 "$mb" "${a[@]}"
}

case ${1:-} in
build) build ;;
run) run ;;
probe) probe ;;
report) exec "$top/bench/mpi/report.sh" ;;
compare) compare ;;
compare-report) compare_report ;;
*) echo "usage: osu.sh build|run|report|probe|compare|compare-report" >&2; exit 2 ;;
esac
