#!/bin/bash
# spread.sh N PORT PROGRAM ARGS... -- run N ranks on every guest of a
# `tools/vm --nodes K` run: guest g holds ranks g*N .. g*N+N-1, each rank
# listens on its guest's address at PORT + rank.  Sets the environment of
# rmawin_ep_open_env(); prefixes output with the rank; exits non-zero if
# any local rank failed.
set -uo pipefail

per=${1:?ranks per guest}
port=${2:?base port}
shift 2
node=${RMAWIN_VM_NODE:?run me under tools/vm}
IFS=, read -r -a hosts <<<"${RMAWIN_VM_ADDRS:?}"
n=$((per * ${#hosts[@]}))

addrs=
for ((r = 0; r < n; r++)); do
	addrs+="${addrs:+,}${hosts[r / per]}:$((port + r))"
done

pids=()
for ((i = 0; i < per; i++)); do
	r=$((node * per + i))
	RMAWIN_RANK=$r RMAWIN_NRANKS=$n RMAWIN_ADDRS=$addrs "$@" 2>&1 |
		sed -u "s/^/[$r] /" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
exit $rc
