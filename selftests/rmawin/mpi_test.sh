#!/bin/bash
# rmawin-mpi in one guest: unmodified MPI programs (selftests/rmawin/mpi/)
# run under each MPI's own launcher with LD_PRELOAD=librmawin-mpi-<mpi>.so,
# on 4 ranks.  TAP output.  An MPI whose library or programs are not built
# (make mpi) or whose launcher is missing is skipped, saying which.
#   mpi_test.sh [openmpi|mpich]...    default: both
# Environment: MPI_TEST_NP (ranks, default 4), MPI_TEST_TIMEOUT (seconds
# per program, default 180), MPI_TEST_UCX_TLS (MPICH's UCX transports).
# The programs run with RMAWIN_MPI_RING=1 unless it is set: rmawin-mpi
# would leave the ring out in a guest with fewer CPUs than ranks (mpi.rst),
# and the check runs this suite once for each of librmawin's paths
# (RMAWIN_NO_RING=1 the second time); ring_policy checks that choice.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
top=$PWD

# shellcheck source=selftests/rmawin/tap.sh
. selftests/rmawin/tap.sh

progs=(sync_modes types comms errors same_op requests)
export RMAWIN_MPI_RING=${RMAWIN_MPI_RING:-1}
np=${MPI_TEST_NP:-4}
tmo=${MPI_TEST_TIMEOUT:-180}
# MPICH's UCX would wire up over the soft-RoCE device's UD queue pairs,
# which lose messages on rxe ("UD endpoint ... unhandled timeout error"):
# the real MPI's own traffic goes through shared memory and TCP
ucx_tls=${MPI_TEST_UCX_TLS:-self,sm,tcp}
flavors=("$@")
((${#flavors[@]})) || flavors=(openmpi mpich)

# run_prog FLAVOR PROG: one program on $np ranks under FLAVOR's launcher
run_prog() {
	local fl=$1 prog=$top/selftests/rmawin/mpi/$1/$2 lib=$top/mpi/librmawin-mpi-$1.so
	local fwd=() v
	# Hydra passes the whole environment on; Open MPI's mpirun what -x names
	for v in RMAWIN_NO_RING RMAWIN_MPI_RING MT_WANT_RING MT_WANT_BACKEND RMAWIN_MPI_THREAD_MULTIPLE RMAWIN_MPI_DEBUG RMAWIN_MPI_PORT RMAWIN_MPI_TIMEOUT_MS RMAWIN_MPI_SAME_OP RMAWIN_MPI_LAZY_LOCK \
		RMAWIN_IBDEV RMAWIN_ADDR; do
		[[ -n ${!v:-} ]] && fwd+=(-x "$v")
	done
	case $fl in
	openmpi)
		timeout "$tmo" mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" \
			"${fwd[@]}" -x LD_PRELOAD="$lib" "$prog" </dev/null
		;;
	mpich)
		timeout "$tmo" mpiexec.mpich -launcher fork -np "$np" \
			-env UCX_TLS "$ucx_tls" -env LD_PRELOAD "$lib" "$prog" </dev/null
		;;
	esac
}

# why FLAVOR cannot run here, or nothing
why_skip() {
	local fl=$1 launcher=mpirun.openmpi p
	[[ $fl == mpich ]] && launcher=mpiexec.mpich
	command -v "$launcher" >/dev/null || { echo "$launcher not installed (tools/deps mpi)"; return; }
	[[ -f mpi/librmawin-mpi-$fl.so ]] || { echo "mpi/librmawin-mpi-$fl.so not built (make mpi)"; return; }
	for p in "${progs[@]}" ring_policy threads; do
		[[ -x selftests/rmawin/mpi/$fl/$p ]] ||
			{ echo "selftests/rmawin/mpi/$fl/$p not built (make mpi)"; return; }
	done
	[[ -c /dev/rmawin ]] || echo "/dev/rmawin missing: the module is not loaded"
}

# Two jobs at once whose first try is on the same ports: the one that finds
# them taken tries again elsewhere, and both complete.
collide() {
	local fl=$1 pid rc=0
	RMAWIN_MPI_PORT=41000 run_prog "$fl" sync_modes &
	pid=$!
	RMAWIN_MPI_PORT=41000 run_prog "$fl" sync_modes || rc=1
	wait "$pid" || rc=1
	return "$rc"
}

# RMAWIN_MPI_RING's choice, made where the group is joined: off by default
# where the node's ranks are at least its CPUs, on below that, and as the
# variable forces it either way; RMAWIN_NO_RING=1 (librmawin's) always wins.
# Each case's program checks the path it got and its data (ring_policy.c).
ring_policy() {
	local fl=$1 cpus mode ranks want forced=0 c
	cpus=$(getconf _NPROCESSORS_ONLN)
	[[ -n ${RMAWIN_NO_RING:-} && ${RMAWIN_NO_RING} != 0 ]] && forced=1
	local cases=("auto $cpus 0" "1 $cpus 1" "0 1 0")
	((cpus > 1)) && cases+=("auto 1 1")
	for c in "${cases[@]}"; do
		read -r mode ranks want <<<"$c"
		((forced)) && want=0
		echo "# ring_policy: RMAWIN_MPI_RING=$mode on $ranks of $cpus CPUs: want path $want"
		RMAWIN_MPI_RING=$mode MT_WANT_RING=$want np=$ranks run_prog "$fl" ring_policy || return 1
	done
}

# MPI_THREAD_MULTIPLE: two threads of each rank put between fences, on the
# real MPI's windows (rmawin-mpi takes one-sided calls from one thread at a
# time), and on rmawin's where RMAWIN_MPI_THREAD_MULTIPLE=1 promises just
# that (threads.c).
threads() {
	local fl=$1
	echo "# threads: at MPI_THREAD_MULTIPLE, the real MPI's windows"
	MT_WANT_BACKEND=0 run_prog "$fl" threads || return 1
	echo "# threads: RMAWIN_MPI_THREAD_MULTIPLE=1, rmawin's windows, one thread at a time"
	RMAWIN_MPI_THREAD_MULTIPLE=1 MT_WANT_BACKEND=1 run_prog "$fl" threads
}

echo "TAP version 13"
echo "1..$((${#flavors[@]} * (${#progs[@]} + 3)))"
for fl in "${flavors[@]}"; do
	why=$(why_skip "$fl")
	for p in "${progs[@]}"; do
		if [[ -n $why ]]; then
			n=$((n + 1))
			echo "ok $n mpi: $fl $p on $np ranks # SKIP $why"
			continue
		fi
		check "mpi: $fl $p on $np ranks" run_prog "$fl" "$p"
	done
	if [[ -n $why ]]; then
		n=$((n + 1))
		echo "ok $n mpi: $fl two jobs on the same first ports # SKIP $why"
	else
		check "mpi: $fl two jobs on the same first ports" collide "$fl"
	fi
	if [[ -n $why ]]; then
		n=$((n + 1))
		echo "ok $n mpi: $fl ring or ioctl as RMAWIN_MPI_RING decides # SKIP $why"
	else
		check "mpi: $fl ring or ioctl as RMAWIN_MPI_RING decides" ring_policy "$fl"
	fi
	if [[ -n $why ]]; then
		n=$((n + 1))
		echo "ok $n mpi: $fl MPI_THREAD_MULTIPLE # SKIP $why"
	else
		check "mpi: $fl MPI_THREAD_MULTIPLE" threads "$fl"
	fi
done
exit "$failed"
