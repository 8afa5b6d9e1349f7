#!/bin/bash
# The examples as tests, in one guest: hello (every rank puts into every
# other rank's window and checks what it received) on 2, 4 and 8 ranks,
# and the halo exchange on 4 ranks, checked against the serial solve.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# shellcheck source=selftests/rmawin/tap.sh
. selftests/rmawin/tap.sh

# every run its own ports, from here up
port=24000

echo "TAP version 13"
echo "1..7"
check "examples: hello on 2 ranks" tools/rmarun -n 2 --port "$port" -- examples/hello
check "examples: hello on 4 ranks" tools/rmarun -n 4 --port $((port + 100)) -- examples/hello
check "examples: hello on 8 ranks" tools/rmarun -n 8 --port $((port + 200)) -- examples/hello
check "examples: halo on 4 ranks matches the serial solve" \
	tools/rmarun -n 4 --port $((port + 300)) -- examples/halo -i 300
check "rma_check: puts and gets all to all, 2 ranks" \
	tools/rmarun -n 2 --port $((port + 400)) -- selftests/rmawin/rma_check
check "rma_check: puts and gets all to all, 4 ranks" \
	tools/rmarun -n 4 --port $((port + 500)) -- selftests/rmawin/rma_check
check "rma_check: puts and gets all to all, 8 ranks" \
	tools/rmarun -n 8 --port $((port + 600)) -- selftests/rmawin/rma_check
exit $failed
