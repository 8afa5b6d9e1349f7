#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A group lives in the network namespace of the process that joins it: a
# job inside a namespace (soft-RoCE on a veth pair there) forms on its
# namespace's addresses, and the same addresses mean nothing outside it.
# (Before groups took the caller's namespace, the module looked every
# address up in init_net and the job inside failed with -EADDRNOTAVAIL.)
set -uo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=selftests/rmawin/tap.sh
. selftests/rmawin/tap.sh

ns=rmawin_ns
ip=198.19.0.1
in_ns() { ip netns exec "$ns" "$@"; }

cleanup() {
	in_ns rdma link del rxens 2>/dev/null
	ip netns del "$ns" 2>/dev/null
}
trap cleanup EXIT

setup() {
	ip netns add "$ns" &&
		ip link add nsv0 type veth peer name nsv1 &&
		ip link set nsv0 netns "$ns" && ip link set nsv1 netns "$ns" &&
		in_ns ip link set lo up &&
		in_ns ip addr add "$ip/24" dev nsv0 && in_ns ip addr add 198.19.0.2/24 dev nsv1 &&
		in_ns ip link set nsv0 up && in_ns ip link set nsv1 up &&
		in_ns rdma link add rxens type rxe netdev nsv0 &&
		for _ in $(seq 50); do
			rdma link show rxens/1 | grep -q 'state ACTIVE' && return 0
			sleep 0.2
		done
	return 1
}

# A job outside the namespace must not reach its addresses.
outside() {
	local out
	out=$(tools/rmarun -n 2 --addr "$ip" --port 26500 --timeout 60 -- examples/hello 2>&1)
	echo "$out"
	[[ $out == *"address not available"* || $out == *"Cannot assign"* ]]
}

echo "TAP version 13"
echo "1..4"
check "netns: soft-RoCE on a veth pair inside a network namespace" setup
check "netns: hello on 2 ranks inside the namespace, on its addresses" \
	in_ns tools/rmarun -n 2 --addr "$ip" --port 26400 --timeout 120 -- examples/hello
check "netns: the namespace's address is not available outside it" outside
check "netns: nothing leaked" selftests/rmawin/leaks.sh
exit $failed
