#!/bin/bash
# SPDX-License-Identifier: MIT
#
# examples/demo.sh [OUTDIR [HALO-OPTIONS...]] - what `make demo` runs on the host.
#
# Boots the test VM (tools/vm), runs the halo exchange example on 4 ranks there
# (tools/rmarun -n 4 -- examples/halo -o OUTDIR/halo), then, back on the host,
# renders OUTDIR/halo.png from OUTDIR/halo.dat with gnuplot and prints
# OUTDIR/halo.txt.  OUTDIR defaults to build/demo; relative paths are taken from
# the current directory.  HALO-OPTIONS go to examples/halo (e.g. -i 100).
#
# Needs examples/halo and tools/rmarun built, and gnuplot (Debian: gnuplot-nox).
# Exit status: 0 if the run succeeded and the summary says "halo: OK", else 1
# (or the runner's 124 on timeout, 125 if the VM failed).
# See Documentation/examples.rst.

set -euo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
REPO=$(dirname -- "$(dirname -- "$self")")
NRANKS=4
TIMEOUT=900

die() {
	printf 'demo: %s\n' "$*" >&2
	exit 1
}

case ${1-} in
-h | --help)
	sed -n '4,16s/^# \{0,1\}//p' "$self"
	exit 0
	;;
esac

outdir=${1:-$REPO/build/demo}
(($# > 0)) && shift

# Fail before booting anything if the pieces are missing.
command -v gnuplot >/dev/null ||
	die "gnuplot not found: install Debian's gnuplot-nox (apt-get install gnuplot-nox; make demo does)"
for f in tools/vm tools/rmarun examples/halo; do
	[[ -x $REPO/$f ]] || die "$REPO/$f missing or not executable: build first (make, make -C examples)"
done

mkdir -p -- "$outdir"
outdir=$(readlink -f -- "$outdir")
[[ $outdir != *[\'\"\\]* ]] || die "OUTDIR must not contain quotes or backslashes: $outdir"

# The guest sees the repository read-write at the same path and the rest of the
# host read-only, so the program writes into the repository; results meant for
# elsewhere go through a staging directory under build/.
case $outdir/ in
"$REPO"/*)
	stage=$outdir
	;;
*)
	mkdir -p -- "$REPO/build"
	stage=$(mktemp -d -- "$REPO/build/demo.XXXXXX")
	trap 'rm -rf -- "$stage"' EXIT
	;;
esac
rm -f -- "$stage/halo.dat" "$stage/halo.txt" "$outdir/halo.dat" "$outdir/halo.txt" \
	"$outdir/halo.png" "$outdir/halo.log"

cd -- "$REPO"
echo "demo: tools/vm --timeout $TIMEOUT -- tools/rmarun -n $NRANKS -- examples/halo -o $outdir/halo${*:+ $*}"

# Each rank binds to the RDMA device that owns its address (rmarun's RMAWIN_ADDRS).
set +e
tools/vm --timeout "$TIMEOUT" -- \
	tools/rmarun -n "$NRANKS" -- examples/halo -o "$stage/halo" "$@" 2>&1 |
	tee "$stage/halo.log"
rc=${PIPESTATUS[0]}
set -e

if [[ $stage != "$outdir" ]]; then
	for f in halo.dat halo.txt halo.log; do
		[[ -e $stage/$f ]] && mv -f -- "$stage/$f" "$outdir/$f"
	done
fi

# The picture, from whatever grid the run left, even a mismatching one.
png_ok=0
if [[ -s $outdir/halo.dat ]]; then
	if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
		term='pngcairo size 720,640 font "sans,10"'
	else
		term='png size 720,640'
	fi
	cols=$(awk 'NR == 1 { print NF; exit }' "$outdir/halo.dat")
	rows=$(awk 'END { print NR }' "$outdir/halo.dat")
	title="rmawin halo exchange: Jacobi, $((cols - 2)) x $((rows - 2)) interior"
	ranks=
	if [[ -s $outdir/halo.txt ]]; then
		ranks=$(sed -n 's/^halo: \([0-9]*\) ranks\{0,1\},.*/\1/p' "$outdir/halo.txt")
		title+=", ${ranks:-?} ranks"
		title+=", $(sed -n 's/.*, \([0-9]* iterations\)$/\1/p' "$outdir/halo.txt")"
		title+=": $(sed -n 's/^halo: \(OK\|MISMATCH\)$/\1/p' "$outdir/halo.txt")"
	fi
	# Dashed lines between the ranks' row blocks, split as examples/halo does.
	blocks=()
	if [[ $ranks =~ ^[0-9]+$ ]] && ((ranks > 1 && ranks <= rows - 2)); then
		ny=$((rows - 2))
		base=$((ny / ranks)) extra=$((ny % ranks))
		for ((r = 1; r < ranks; r++)); do
			first=$((1 + r * base + (r < extra ? r : extra)))
			blocks+=(-e "set arrow from -0.5,$first - 0.5 to $cols - 0.5,$first - 0.5 nohead front dt 2 lc rgb 'white'")
		done
		title+=" (dashed: rank blocks)"
	fi
	# Row 0 of the file is the top edge: the y axis runs downwards.
	if gnuplot -e "set terminal $term" \
		-e "set output '$outdir/halo.png'" \
		-e "set title \"$title\" noenhanced" \
		-e "set size ratio -1" \
		-e "set xrange [-0.5:$cols - 0.5]; set yrange [$rows - 0.5:-0.5]" \
		-e "set xlabel 'column'; set ylabel 'row'; set cblabel 'u'" \
		-e "set cbrange [0:1]; set palette rgbformulae 7,5,15; unset key" \
		"${blocks[@]}" \
		-e "plot '$outdir/halo.dat' matrix with image"; then
		png_ok=1
	else
		echo "demo: gnuplot failed to render $outdir/halo.png" >&2
	fi
fi

echo
if [[ -s $outdir/halo.txt ]]; then
	echo "demo: $outdir/halo.txt:"
	cat -- "$outdir/halo.txt"
fi
echo

if ((rc != 0)); then
	printf 'demo: the run failed with exit status %d (124: timeout, 125: VM failure); output in %s\n' \
		"$rc" "$outdir/halo.log" >&2
	exit "$rc"
fi
[[ -s $outdir/halo.txt ]] || die "the run left no summary $outdir/halo.txt"
grep -qx 'halo: OK' "$outdir/halo.txt" || die "the summary does not say \"halo: OK\""
((png_ok)) || die "no picture: $outdir/halo.png was not rendered"
echo "demo: OK: $outdir/halo.png, $outdir/halo.txt, $outdir/halo.log"
