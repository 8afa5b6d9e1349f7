#!/bin/bash
# rmawin-mpi in one guest: unmodified MPI programs (selftests/rmawin/mpi/)
# run under each MPI's own launcher with LD_PRELOAD=librmawin-mpi-<mpi>.so,
# on 4 ranks.  TAP output.  An MPI whose library or programs are not built
# (make mpi) or whose launcher is missing is skipped, saying which.
#   mpi_test.sh [openmpi|mpich]...    default: both
# Environment: MPI_TEST_NP (ranks, default 4), MPI_TEST_TIMEOUT (seconds
# per program, default 180), MPI_TEST_UCX_TLS (MPICH's UCX transports).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
top=$PWD

# shellcheck source=selftests/rmawin/tap.sh
. selftests/rmawin/tap.sh

progs=(sync_modes types comms errors)
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
	case $fl in
	openmpi)
		timeout "$tmo" mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" \
			-x LD_PRELOAD="$lib" "$prog" </dev/null
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
	for p in "${progs[@]}"; do
		[[ -x selftests/rmawin/mpi/$fl/$p ]] ||
			{ echo "selftests/rmawin/mpi/$fl/$p not built (make mpi)"; return; }
	done
	[[ -c /dev/rmawin ]] || echo "/dev/rmawin missing: the module is not loaded"
}

echo "TAP version 13"
echo "1..$((${#flavors[@]} * ${#progs[@]}))"
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
done
exit "$failed"
