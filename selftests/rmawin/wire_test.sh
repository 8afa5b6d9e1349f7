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
echo "1..$((16 + rogue_pass))"
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

# A node that drops off the wire while a rank waits for it (lost_check.c):
# rank 0 on node 0 waits in a barrier (lost barrier), or for the replies
# to its accumulates that rank 1's kernel holds back (lost flush, through
# the ring); node 1 takes its link down a few seconds after its rank
# joined, and only the module's keepalive probes can end rank 0's wait
# (-ECONNRESET).  The device's retries take about 15 s (6 retries of
# rdma_cm's 2.1 s acknowledgment timeout on RoCE); node 1 keeps the link
# down for 60 s and brings it back.  Then the two guests form a new group
# and move data both ways (lost_check again).
#
# Soft-RoCE (Debian's 6.1 rdma_rxe) stops receiving management datagrams
# for good once one of its MAD sends failed, and a send fails while the
# link is down (Documentation/testing.rst, "Soft-RoCE's QP1 after a link
# flap"). In the barrier case node 1 sends nothing while its link is
# down: its rank is killed only once the link is back, and the new group
# forms on the same device. In the flush case node 1's kernel answers
# the held accumulates with the link down, those sends fail, and it
# disconnects rank 0, a MAD that fails too: node 1 re-creates its rxe
# device (rdma link delete and add, what an operator does) before the
# new group.
lport=$((port + 2000))
stats=/sys/kernel/debug/rmawin/stats
hold=/sys/kernel/debug/rmawin/recv_delay_ms
# lost_rank MODE PORT [CMD...]: this node's rank, behind CMD (timeout, exec) if any
lost_rank() {
	local mode=$1 p=$2
	shift 2
	RMAWIN_RANK=$node RMAWIN_NRANKS=2 RMAWIN_ADDRS="${addrs[0]}:$p,${addrs[1]}:$((p + 1))" \
		"$@" selftests/rmawin/lost_check "$mode"
}
link_active() {
	local _
	for _ in $(seq 150); do
		rdma link show "$ibdev/1" | grep -q 'state ACTIVE' && return 0
		sleep 0.2
	done
	rdma link show "$ibdev/1"
	return 1
}
# lost MODE PORT
lost() {
	local mode=$1 p=$2 netdev pid rc=0 before after _
	if [[ $node == 0 ]]; then
		before=$(sed -n 's/^keepalives //p' "$stats")
		lost_rank "$mode" "$p" timeout 900 >/tmp/lost.log 2>&1 || rc=1
		after=$(sed -n 's/^keepalives //p' "$stats")
		sed 's/^/# /' /tmp/lost.log
		echo "# keepalive probes sent: ${before:-none} before, ${after:-none} after"
		[[ -n $before && -n $after ]] && ((after > before)) || rc=1
		return "$rc"
	fi
	netdev=$(rdma link show "$ibdev/1" | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	[[ -n $netdev ]] || { echo "# no netdev under $ibdev"; return 1; }
	# exec: $! is the rank itself, which the kill below must reach
	lost_rank "$mode" "$p" exec >/tmp/lost.log 2>&1 &
	pid=$!
	# the other guest may come minutes later (lost_check.c joins again)
	for _ in $(seq 4500); do
		grep -q '^joined' /tmp/lost.log && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	if ! grep -q '^joined' /tmp/lost.log; then
		kill "$pid" 2>/dev/null
		wait "$pid"
		echo 0 >"$hold"
		sed 's/^/# /' /tmp/lost.log
		return 1
	fi
	sleep 3
	ip link set "$netdev" down || rc=1
	sleep 60
	# no more holding back (lost flush set it) before the rank's teardown
	echo 0 >"$hold" || rc=1
	ip link set "$netdev" up || rc=1
	link_active || rc=1
	kill "$pid"
	wait "$pid"
	if [[ $mode == flush ]]; then
		rdma link delete "$ibdev" || rc=1
		rdma link add "$ibdev" type rxe netdev "$netdev" || rc=1
		link_active || rc=1
	fi
	return "$rc"
}
# The ring pass takes the flush, the no-ring pass the barrier.
if ((rogue_pass)); then
	lost_desc0="a ring flush owed replies by a rank whose node dropped off fails (the poller's keepalive)"
	lost_desc1="node 1's link taken down under its rank holding replies, and back"
	lost_args=(flush $((lport + 2)))
else
	lost_desc0="a barrier with a rank whose node dropped off fails (keepalive)"
	lost_desc1="node 1's link taken down under its rank in a barrier, and back"
	lost_args=(barrier "$lport")
fi
if [[ $node == 0 ]]; then
	check "wire: $lost_desc0" lost "${lost_args[@]}"
else
	check "wire: $lost_desc1" lost "${lost_args[@]}"
fi
check "wire: nothing leaked on node $node after the lost rank" selftests/rmawin/leaks.sh
again() {
	lost_rank again $((lport + 4)) timeout 900 >/tmp/again.log 2>&1
	local rc=$?
	sed 's/^/# /' /tmp/again.log
	return "$rc"
}
check "wire: a new group across the guests after the flap moves data both ways" again
check "wire: nothing leaked on node $node after the new group" selftests/rmawin/leaks.sh
exit $failed
