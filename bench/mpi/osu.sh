#!/bin/bash
# The OSU Micro-Benchmarks' one-sided programs under rmawin-mpi.
#   osu.sh build [openmpi|mpich]   configure and build OSU 5.7's mpi/one-sided
#                                  out of tree in build/osu/<mpi>, with that
#                                  MPI's own mpicc (on the host)
#   osu.sh run [openmpi|mpich]     in the VM: osu_put_latency on 2 ranks with
#                                  LD_PRELOAD=librmawin-mpi-<mpi>.so, -w create
#                                  and -w allocate
# The source stays where it is (OSU_SRC, default ../shared/osu-micro-benchmarks-5.7
# beside the checkout): nothing of it is copied into the project.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
src=${OSU_SRC:-$top/../shared/osu-micro-benchmarks-5.7}
cmd=${1:?usage: osu.sh build|run [openmpi|mpich]}
fl=${2:-openmpi}
out=$top/build/osu/$fl
bin=$out/mpi/one-sided

build() {
	[[ -x $src/configure ]] || { echo "osu: no OSU source at $src" >&2; exit 1; }
	mkdir -p "$out"
	cd "$out"
	if [[ ! -f Makefile ]]; then
		"$src/configure" CC="mpicc.$fl" CXX="mpicxx.$fl" >configure.log 2>&1 ||
			{ tail -20 configure.log >&2; exit 1; }
	fi
	# git keeps no file times: never let make rerun autotools
	make -s ACLOCAL=true AUTOMAKE=true AUTOCONF=true -C mpi/one-sided >make.log 2>&1 ||
		{ tail -20 make.log >&2; exit 1; }
	echo "osu: built $bin"
}

run() {
	local lib=$top/mpi/librmawin-mpi-$fl.so w launch
	[[ -x $bin/osu_put_latency ]] || { echo "osu: not built: osu.sh build $fl" >&2; exit 1; }
	[[ -f $lib ]] || { echo "osu: $lib not built: make mpi" >&2; exit 1; }
	for w in create allocate; do
		echo "# osu_put_latency -w $w, rmawin-mpi ($fl), 2 ranks"
		if [[ $fl == openmpi ]]; then
			launch=(mpirun.openmpi --allow-run-as-root --oversubscribe -np 2
				-x "LD_PRELOAD=$lib")
		else
			launch=(mpiexec.mpich -launcher fork -np 2 -env LD_PRELOAD "$lib")
		fi
		timeout 600 "${launch[@]}" "$bin/osu_put_latency" -w "$w" -s flush -m 1:4096 \
			-x 10 -i 200 </dev/null
	done
}

case $cmd in
build) build ;;
run) run ;;
*) echo "usage: osu.sh build|run [openmpi|mpich]" >&2; exit 2 ;;
esac
