#!/bin/bash
# sync_check (accumulate family, passive target, PSCW, notified put) on 2,
# 4 and 8 ranks in one guest, each run followed by a leak check of the
# module's counters.  The two-guest runs are in wire_test.sh.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# shellcheck source=selftests/rmawin/tap.sh
. selftests/rmawin/tap.sh

# every run its own ports, from here up
port=25000

echo "TAP version 13"
echo "1..6"
for ranks in 2 4 8; do
	check "sync_check: accumulate, locks, PSCW, notify on $ranks ranks in one guest" \
		tools/rmarun -n "$ranks" --port "$port" --timeout 600 -- selftests/rmawin/sync_check
	check "sync_check: nothing leaked after $ranks ranks" selftests/rmawin/leaks.sh
	port=$((port + 100))
done
exit $failed
