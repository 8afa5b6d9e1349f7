#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The rogue peer's attacks in one guest (rogue_cases.sh); the same across
# two guests run in wire_test.sh.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
port=30000	# the first of the cases' ports (rogue_cases.sh)
ip=${RMAWIN_VM_ADDRS:-198.18.0.1}
ip=${ip%%,*}
exec ./rogue_cases.sh both "$ip" "$ip" "$port" "${RMAWIN_FUZZ_COUNT:-10000}"
