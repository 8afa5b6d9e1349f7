#!/bin/bash
# rmawin-mpi across two guests (tools/vm --nodes 2): the MPI test programs
# of selftests/rmawin/mpi/ run with ranks on both guests, all six on 4
# ranks (two per guest) and three of them on 2 (one per guest: sync_modes,
# types, requests; the others add little there and CI's time is short),
# under Open MPI's mpirun and MPICH's
# mpiexec, each launching the other guest's ranks over ssh (tools/vm-ssh:
# sshd on the wire address, keys made fresh in a tmpfs).  Node 0 runs the
# launchers; node 1 only serves.  TAP output on both.
#   mpi_wire_test.sh [openmpi|mpich]...    default: both
#   mpi_wire_test.sh --stacks FLAVOR PROG   the state, kernel stacks and gdb backtraces
#                                           of PROG's processes on this guest (a hang)
# Environment: MPI_TEST_PROGS (the programs, the same on 2 and 4 ranks),
# MPI_TEST_TIMEOUT (seconds per program, default 180), MPI_TEST_REPEAT (runs of
# each program, each its own test; default 1: to chase a rare hang),
# MPI_TEST_UCX_TLS (MPICH's UCX transports; default self,sm,rc_verbs,ud_verbs, see
# below), MPI_TEST_UCX_GID_INDEX (the GID index UCX uses on rxe0; default 0).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
top=$PWD

# The user-space backtraces of every thread of process PID (gdb, at most 60 s
# and 80 lines), twice 2 s apart if it is running, to tell a spin from a wait;
# gdb's last words when it gives none.
backtraces() {
	local i out bt
	for i in 1 2; do
		echo "  user-space backtraces of pid $1 ($i):"
		out=$(timeout 60 gdb -nx -batch -iex 'set debuginfod enabled off' -p "$1" \
			-ex 'thread apply all bt 12' </dev/null 2>&1)
		bt=$(grep -E '^(Thread|#)' <<<"$out" | head -n 80)
		if [[ -n $bt ]]; then
			awk '{ print "    " $0 }' <<<"$bt"
		else
			echo "    none; gdb's last line: $(tail -n 1 <<<"$out")"
		fi
		[[ $(awk '{print $3}' /proc/"$1"/stat 2>/dev/null) == R ]] || break
		sleep 2
	done
}

# the state, wait channel and kernel stack of every thread of PROG's processes here
# (the launcher's and the ranks'), then the ranks' user-space backtraces, taken at
# once (gdb takes seconds a process in a TCG guest, more on a loaded host)
stacks() {
	local p t ranks=() bg=() dir
	for p in $(pgrep -f "mpi/$1/$2\$"); do
		echo "pid $p: $(ps -o stat=,etime=,wchan:32=,comm= -p "$p")"
		for t in /proc/"$p"/task/*; do
			echo "  thread ${t##*/}: $(awk '{print $3}' "$t"/stat 2>/dev/null) $(cat "$t"/wchan 2>/dev/null)"
			sed 's/^/    /' "$t"/stack 2>/dev/null | head -n 16
		done
		# a rank, not the launcher or timeout(1) (comm is 15 characters at most)
		[[ $(ps -o comm= -p "$p") == "${2:0:15}" ]] && ranks+=("$p")
	done
	dir=$(mktemp -d)
	for p in "${ranks[@]}"; do
		backtraces "$p" >"$dir/$p" 2>&1 &
		bg+=($!)
	done
	((${#bg[@]})) && wait "${bg[@]}"
	for p in "${ranks[@]}"; do
		cat "$dir/$p"
	done
	rm -rf "$dir"
	grep -E '^(endpoints|groups|qps|windows|reqs) ' /sys/kernel/debug/rmawin/stats 2>/dev/null | tr '\n' ' '
	echo
}
if [[ ${1:-} == --stacks ]]; then
	stacks "$2" "$3"
	exit 0
fi

# shellcheck source=selftests/rmawin/tap.sh
. selftests/rmawin/tap.sh

node=${RMAWIN_VM_NODE:?run me with tools/vm --nodes 2}
IFS=, read -r -a addrs <<<"${RMAWIN_VM_ADDRS:?}"
# the programs on 1 and on 2 ranks per guest
read -r -a progs1 <<<"${MPI_TEST_PROGS:-sync_modes types requests}"
read -r -a progs2 <<<"${MPI_TEST_PROGS:-sync_modes types comms errors same_op requests}"
tmo=${MPI_TEST_TIMEOUT:-180}
repeat=${MPI_TEST_REPEAT:-1}
# MPICH's own traffic across the guests goes over the soft-RoCE device, RC with
# UD for the wireup, on GID index 0 (the IPv6 link-local GID: UCX's UD loses
# every packet on the IPv4-mapped one, Documentation/mpi.rst), not over UCX's
# TCP transport as before.  Over TCP, MPI_Finalize hung
# now and then after every check had passed (3 of 60 runs of sync_modes on 2
# ranks, 0 of 60 on 4; in CI sync_modes on 2 and same_op on 4): gdb showed one
# rank spinning in PMPI_Finalize -> (MPICH, unnamed) -> ucp_worker_progress ->
# uct_tcp_iface_progress, the wait for its ucp_disconnect_nb() requests in
# MPICH's UCX finalize hook, and the other rank in PMPI_Finalize -> read() of
# its PMI socket: the PMI barrier that follows those disconnects, where it no
# longer progresses UCX for the first rank's close to complete (as in
# openucx/ucx issue 8738).  Without rmawin-mpi preloaded it hangs the same
# way, more often (22 of 85).  Over RC, where the device acknowledges what the
# close flushes without the peer's process, no run hung: 110 of sync_modes on
# 2 ranks, 110 on 4, 72 of the other programs (Documentation/mpi.rst).
ucx_tls=${MPI_TEST_UCX_TLS:-self,sm,rc_verbs,ud_verbs}
ucx_gid=${MPI_TEST_UCX_GID_INDEX:-0}
# the wire's addresses (tools/vm gives the guests 198.18.1.x)
wire_net=198.18.0.0/15
flavors=("$@")
((${#flavors[@]})) || flavors=(openmpi mpich)
ssh=

# Forty-five seconds before a run of FLAVOR's PROG times out (gdb in a TCG guest takes
# seconds a process), what its processes do on both guests at once, on the test's
# output (fd 3) rather than in the 12 lines check() keeps.
watchdog() {
	local s lead=45 out=/tmp/mpi-wire-stacks.$$
	((tmo > 2 * lead)) || lead=$((tmo / 2))
	sleep "$((tmo - lead))" >/dev/null 2>&1 3>&- &
	s=$!
	# run_prog ends it: no sleep left behind
	trap 'kill "$s" 2>/dev/null; exit 0' TERM
	wait "$s"
	{
		"$ssh" rmawin-vm1 "$top/selftests/rmawin/mpi_wire_test.sh" --stacks "$1" "$2" >"$out" 2>&1 &
		echo "$1 $2: still running after $((tmo - lead)) s; node 0:"
		stacks "$1" "$2"
		wait
		echo "node 1:"
		cat "$out"
		rm -f "$out"
	} 2>&1 | sed 's/^/# /' >&3
}

# run_prog FLAVOR PROG PER: PROG on PER ranks per guest, 2 * PER in all
run_prog() {
	local wd rc
	# not on check()'s output, which it would hold open
	watchdog "$1" "$2" </dev/null >/dev/null 2>&1 &
	wd=$!
	launch "$@"
	rc=$?
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	return "$rc"
}

launch() {
	local fl=$1 prog=$top/selftests/rmawin/mpi/$1/$2 per=$3 lib=$top/mpi/librmawin-mpi-$1.so
	local np=$((2 * per)) hosts=rmawin-vm0:$3,rmawin-vm1:$3 ring=${RMAWIN_MPI_RING:-1}
	# on the ring, which rmawin-mpi would leave out with a rank per vCPU (mpi.rst)
	# RMAWIN_MPI_DEBUG: a failed call names itself and its errno (stderr)
	# the real MPI's own traffic: Open MPI's on its own TCP transport (ob1's
	# tcp BTL, not UCX) over the wire; MPICH's on UCX over rxe0 (ucx_tls above)
	case $fl in
	openmpi)
		timeout "$tmo" mpirun.openmpi --allow-run-as-root -np "$np" --host "$hosts" \
			--mca plm_rsh_agent "$ssh" --mca pml ob1 --mca btl self,vader,tcp \
			--mca btl_tcp_if_include "$wire_net" --mca oob_tcp_if_include "$wire_net" \
			-x RMAWIN_MPI_DEBUG=1 -x RMAWIN_MPI_RING="$ring" -x LD_PRELOAD="$lib" \
			"$prog" </dev/null
		;;
	mpich)
		# Hydra passes the whole environment on, RMAWIN_NO_RING and the like
		timeout "$tmo" mpiexec.mpich -launcher ssh -launcher-exec "$ssh" \
			-hosts "$hosts" -np "$np" \
			-env UCX_TLS "$ucx_tls" -env UCX_IB_GID_INDEX "$ucx_gid" \
			-env RMAWIN_MPI_DEBUG 1 -env RMAWIN_MPI_RING "$ring" -env LD_PRELOAD "$lib" \
			"$prog" </dev/null
		;;
	esac
}

# why FLAVOR cannot run here, or nothing
why_skip() {
	local fl=$1 launcher=mpirun.openmpi p
	[[ $fl == mpich ]] && launcher=mpiexec.mpich
	command -v "$launcher" >/dev/null || { echo "$launcher not installed (tools/deps mpi)"; return; }
	[[ -x /usr/sbin/sshd ]] || { echo "sshd not installed (tools/deps mpi)"; return; }
	[[ -f mpi/librmawin-mpi-$fl.so ]] || { echo "mpi/librmawin-mpi-$fl.so not built (make mpi)"; return; }
	for p in "${progs2[@]}" "${progs1[@]}"; do
		[[ -x selftests/rmawin/mpi/$fl/$p ]] ||
			{ echo "selftests/rmawin/mpi/$fl/$p not built (make mpi)"; return; }
	done
	[[ -c /dev/rmawin ]] || echo "/dev/rmawin missing: the module is not loaded"
}

# (check runs it in a subshell: the ssh it prints is read again below)
ssh_up() {
	local s
	s=$(tools/vm-ssh up) && [[ -x $s ]]
}

exec 3>&1
echo "TAP version 13"
if ((node != 0)); then
	echo "1..2"
	if [[ ! -x /usr/sbin/sshd ]]; then
		echo "ok 1 mpi wire: sshd on node $node # SKIP sshd not installed (tools/deps mpi)"
		echo "ok 2 mpi wire: node $node served node 0's launchers # SKIP sshd not installed"
		exit 0
	fi
	check "mpi wire: sshd on node $node (${addrs[node]})" ssh_up
	((failed)) || check "mpi wire: node $node served node 0's launchers" tools/vm-ssh serve
	tools/vm-ssh down
	exit "$failed"
fi

echo "1..$((1 + ${#flavors[@]} * (${#progs1[@]} + ${#progs2[@]}) * repeat))"
if [[ -x /usr/sbin/sshd ]]; then
	check "mpi wire: sshd on node 0 (${addrs[0]}), ssh to every guest" ssh_up
	if ((!failed)); then
		ssh=/run/rmawin-ssh/ssh
		# node 1 waits for this, whatever happens here
		trap 'tools/vm-ssh release; tools/vm-ssh down' EXIT
	fi
else
	n=$((n + 1))
	echo "ok $n mpi wire: sshd on node 0 # SKIP sshd not installed (tools/deps mpi)"
fi
for fl in "${flavors[@]}"; do
	why=$(why_skip "$fl")
	[[ -z $why && -z $ssh ]] && why="no ssh between the guests (the first test)"
	for per in 1 2; do
		list=("${progs2[@]}")
		((per == 1)) && list=("${progs1[@]}")
		for p in "${list[@]}"; do
			for ((r = 1; r <= repeat; r++)); do
				desc="mpi wire: $fl $p on $((2 * per)) ranks, $per per guest"
				((repeat > 1)) && desc+=" (run $r of $repeat)"
				if [[ -n $why ]]; then
					n=$((n + 1))
					echo "ok $n $desc # SKIP $why"
					continue
				fi
				check "$desc" run_prog "$fl" "$p" "$per"
			done
		done
	done
done
exit "$failed"
