#!/bin/bash
# Zero syscalls: ring_check's rank 0 issues 10 000 puts and a flush through
# the ring under strace -f; between its two markers it may make no system
# call but the doorbell (RMAWIN_IOC_RING_ENTER) that the NEED_WAKEUP
# protocol requires, and as many of those as the library says it rang.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# the ports of ring_check's two ranks
port=25700

echo "TAP version 13"
echo "1..2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v strace >/dev/null; then
	echo "not ok 1 ring: strace is not installed (tools/deps installs it)"
	exit 1
fi
strace -f -qq -o "$tmp/trace" tools/rmarun -n 2 --port "$port" --timeout 300 -- \
	selftests/rmawin/ring_check >"$tmp/out" 2>&1
rc=$?
sed 's/^/# /' "$tmp/out"
if ((rc == 0)); then
	echo "ok 1 ring: 10 000 puts and a flush through the ring land at the target"
else
	echo "not ok 1 ring: ring_check failed (exit $rc)"
fi
# The rank that named itself rmw-begin; its calls until it named itself rmw-end.
pid=$(awk '/PR_SET_NAME, "rmw-begin"/ { print $1; exit }' "$tmp/trace")
# strace -f splits a call that another process's output interrupts into
# "<unfinished ...>" and "<... resumed>" lines: the first one is the call.
awk -v pid="$pid" '
	$1 == pid && /PR_SET_NAME, "rmw-end"/ { inside = 0 }
	$1 == pid && inside && !/^[0-9]+ +<\.\.\. [a-z_0-9]+ resumed>/ { print }
	$1 == pid && /PR_SET_NAME, "rmw-begin"/ { inside = 1 }' "$tmp/trace" >"$tmp/between"
total=$(wc -l <"$tmp/between")
# RMAWIN_IOC_RING_ENTER: _IO(0xd7, 0x91)
doorbells=$(grep -c '^[0-9]* *ioctl([0-9]*, _IOC(_IOC_NONE, 0xd7, 0x91, 0)' "$tmp/between")
said=$(sed -n 's/.*a flush, \([0-9]*\) doorbells$/\1/p' "$tmp/out")
echo "# rank 0 (pid ${pid:-?}): $total system calls between the markers, $doorbells doorbells (the library counted ${said:-?})"
grep -v '0xd7, 0x91' "$tmp/between" | head -5 | sed 's/^/# other: /'
if [[ -n $pid && $total == "$doorbells" && $doorbells == "$said" ]]; then
	echo "ok 2 ring: no system call but the NEED_WAKEUP doorbells while issuing 10 000 puts and a flush"
else
	echo "not ok 2 ring: system calls other than the doorbell, or a count that disagrees"
	exit 1
fi
((rc == 0))
