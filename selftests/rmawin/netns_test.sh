#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A group lives in the network namespace of the process that joins it: a
# process inside a namespace (soft-RoCE on a veth pair there) joins on its
# namespace's address, and the same address means nothing outside it.
# (Before groups took the caller's namespace, the module looked every
# address up in init_net, and the join inside failed with -EADDRNOTAVAIL.)
#
# Only a group of one: soft-RoCE on 6.1 carries no traffic in a namespace
# other than init_net (its UDP socket lives there; perftest's ib_write_lat
# fails the same way), so a job of several ranks inside one cannot be
# tested on this kernel.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# shellcheck source=selftests/rmawin/tap.sh
. selftests/rmawin/tap.sh

ns=rmawin_ns
ip=198.19.0.1
port=26400	# of the group of one
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

echo "TAP version 13"
echo "1..4"
check "netns: soft-RoCE on a veth pair inside a network namespace" setup
check "netns: a group joined inside the namespace, on its address" \
	in_ns selftests/rmawin/victim join 0 "$ip:$port" 5000 0
check "netns: the namespace's address is not available outside it" \
	selftests/rmawin/victim join 0 "$ip:$port" 5000 EADDRNOTAVAIL
check "netns: nothing leaked" selftests/rmawin/leaks.sh
exit $failed
