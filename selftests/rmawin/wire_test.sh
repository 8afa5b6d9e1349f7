#!/bin/bash
# Two guests joined by the QEMU socket link (tools/vm --nodes 2): both see
# their soft-RoCE device through /dev/rmawin, and RDMA traffic crosses the
# wire (perftest's ib_write_lat, node 1 the client of node 0).  TAP output.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

node=${RMAWIN_VM_NODE:?run me with tools/vm --nodes 2}
IFS=, read -r -a addrs <<<"${RMAWIN_VM_ADDRS:?}"
ibdev=${RMAWIN_VM_IBDEV:-rxe0}
n=0 failed=0
# every run its own ports, from here up (the rogue's cases from port + 1000)
port=23000

check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		failed=1
	fi
}

# the rogue's victims never use the ring: the no-ring pass skips them
rogue_pass=1
[[ ${RMAWIN_NO_RING:-0} == 1 ]] && rogue_pass=0

echo "TAP version 13"
echo "1..$((12 + rogue_pass))"
check "wire: two guests" test "${#addrs[@]}" -eq 2
check "wire: $ibdev active on node $node" \
	sh -c "rdma link show $ibdev/1 | grep -q 'state ACTIVE'"
if [[ $node == 0 ]]; then
	serve() {
		timeout 120 ib_write_lat -d "$ibdev" -n 200 -F >/tmp/lat.log 2>&1 ||
			{ cat /tmp/lat.log; return 1; }
	}
	check "wire: ib_write_lat server" serve
else
	# the server needs a moment to listen; retry the connect
	lat() {
		local _
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			timeout 120 ib_write_lat -d "$ibdev" -n 200 -F "${addrs[0]}" \
				>/tmp/lat.log 2>&1 && return 0
			sleep 1
		done
		cat /tmp/lat.log
		return 1
	}
	check "wire: ib_write_lat client to ${addrs[0]}" lat
	grep -E '^ +[0-9]+ +[0-9]+' /tmp/lat.log | sed 's/^/# /'
fi

# rmawin itself across the wire: 2 ranks per guest, 4 in all.
check "wire: hello, 4 ranks on 2 guests" \
	selftests/rmawin/spread.sh 2 "$port" examples/hello
check "wire: halo exchange, 4 ranks on 2 guests, checked against serial" \
	selftests/rmawin/spread.sh 2 $((port + 100)) examples/halo -i 200
check "wire: rma_check all to all, 4 ranks on 2 guests" \
	selftests/rmawin/spread.sh 2 $((port + 200)) selftests/rmawin/rma_check

# accumulate, locks, PSCW and notified put across the wire: 1, 2 and 4 ranks
# per guest (2, 4 and 8 in all), each run followed by this guest's leak check
sport=$((port + 300))
for per in 1 2 4; do
	check "wire: sync_check on $((2 * per)) ranks, $per per guest" \
		timeout 900 selftests/rmawin/spread.sh "$per" "$sport" selftests/rmawin/sync_check
	check "wire: nothing leaked on node $node after $((2 * per)) ranks" \
		selftests/rmawin/leaks.sh
	sport=$((sport + 100))
done

# the rogue's attacks on the other guest's victims: node 0 the victims,
# node 1 the rogue (rogue_cases.sh prints its own TAP, indented here)
role=victim
[[ $node == 1 ]] && role=rogue
rogue_wire() {
	selftests/rmawin/rogue_cases.sh "$role" "${addrs[0]}" "${addrs[1]}" $((port + 1000)) \
		"${RMAWIN_WIRE_FUZZ_COUNT:-2000}" >/tmp/rogue_wire.tap 2>&1
	local rc=$?
	sed 's/^/# /' /tmp/rogue_wire.tap
	return "$rc"
}
((rogue_pass)) &&
	check "wire: the rogue on node 1 against victims on node 0 ($role side)" rogue_wire
exit $failed
