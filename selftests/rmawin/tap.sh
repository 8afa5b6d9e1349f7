# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the scripted tests: TAP lines for commands.
#   check DESC COMMAND...   runs COMMAND, prints "ok N DESC" or "not ok N DESC"
#                           and the last 12 lines of its output as comments;
#                           a failure sets failed=1 (the script's exit status)
#                           and counts in nfailed
# shellcheck disable=SC2034 # failed is the sourcing script's
n=0 failed=0 nfailed=0
check() {
	local desc=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		failed=1
		nfailed=$((nfailed + 1))
	fi
	printf "%s\n" "$out" | tail -n 12 | sed "s/^/# /"
}
