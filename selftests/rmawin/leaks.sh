#!/bin/bash
# leaks.sh: exit 0 if the module's debugfs counters of live objects are all
# zero (run after every rank on this guest has exited), else name the ones
# that are not and exit 1.
set -uo pipefail
stats=/sys/kernel/debug/rmawin/stats
mount | grep -q ' /sys/kernel/debug ' || mount -t debugfs none /sys/kernel/debug
[[ -r $stats ]] || { echo "leaks.sh: no $stats" >&2; exit 1; }
rc=0
for c in endpoints groups qps windows mrs pinned_pages reqs pollers; do
	v=$(awk -v k="$c" '$1 == k { print $2 }' "$stats")
	if [[ $v != 0 ]]; then
		echo "leaks.sh: counter $c is ${v:-missing} after every rank exited" >&2
		rc=1
	fi
done
exit $rc
