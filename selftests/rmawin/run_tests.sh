#!/bin/bash
# Run the rmawin selftests (inside the test VM) and print their TAP output.
# Exit status: 0 if every test binary passed, 1 otherwise.
#   run_tests.sh [TEST...]     default: all, in the order of the Makefile
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
tests=("$@")
if ((${#tests[@]} == 0)); then
	read -ra tests < <(sed -n 's/^TESTS := //p' Makefile)
fi

mount | grep -q ' /sys/kernel/debug ' || mount -t debugfs none /sys/kernel/debug

# Each test's start, with the guest's uptime, on the console too: when the guest
# crashes, the console's tail (which the VM runner prints) then says which test ran.
mark() {
	local up _
	read -r up _ </proc/uptime
	{ echo "[$up] rmawin selftests: $*" >/dev/console; } 2>/dev/null
}

rc=0
for t in "${tests[@]}"; do
	echo "# selftests: rmawin: $t"
	mark "$t"
	if [[ ! -x ./$t ]]; then
		echo "not ok 1 $t # not built"
		rc=1
		continue
	fi
	./"$t" || rc=1
done
exit $rc
