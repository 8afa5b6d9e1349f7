#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of tools/rmarun, the local launcher.  They run on the build host: no
# VM, no /dev/rmawin, only processes, pipes and signals.  TAP output; exit 1
# if any test failed.
#   test_rmarun.sh            (RMARUN=path overrides ../../tools/rmarun)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
RMARUN=${RMARUN:-$here/../../tools/rmarun}
if [[ ! -x $RMARUN ]]; then
	echo "Bail out! $RMARUN is not built (make -C tools)"
	exit 1
fi

tmp=$(mktemp -d -t rmarun-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# rmarun's default address depends on these; the tests choose their own.
unset RMAWIN_VM_ADDRS RMAWIN_VM_NODE

failed=0 num=0

# ok COND-STATUS DESCRIPTION [DIAGNOSTIC-FILE...]
ok() {
	local rc=$1 desc=$2 f
	shift 2
	num=$((num + 1))
	if ((rc == 0)); then
		echo "ok $num - $desc"
		return
	fi
	echo "not ok $num - $desc"
	failed=1
	for f in "$@"; do
		[[ -f $f ]] && sed "s/^/# ${f##*/}: /" "$f"
	done
}

# run ARGS...: rmarun with stdout in $tmp/out, stderr in $tmp/err, the exit
# status in $rc and the time taken in $elapsed (s).  The outer timeout only
# keeps a broken rmarun from hanging the suite.
run() {
	local t0=$EPOCHREALTIME
	timeout -s KILL 60 "$RMARUN" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
}

# less_than A B: A < B, for decimal seconds
less_than() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'
}

# expect_lines FILE LINE...: FILE, sorted, is exactly these lines (sorted)
expect_lines() {
	local file=$1
	shift
	printf '%s\n' "$@" | sort >"$tmp/expected"
	sort "$file" | cmp -s - "$tmp/expected"
}

# wait_for_lines FILE N: until FILE has N lines (10 s at most)
wait_for_lines() {
	local i
	for ((i = 0; i < 100; i++)); do
		(($(wc -l <"$1") >= $2)) && return 0
		sleep 0.1
	done
	return 1
}

test_env() {
	run -n 4 --addr 127.0.0.1 --port 20000 -- \
		sh -c 'echo $RMAWIN_RANK $RMAWIN_NRANKS $RMAWIN_ADDRS'
	local a=127.0.0.1:20000,127.0.0.1:20001,127.0.0.1:20002,127.0.0.1:20003
	((rc == 0)) && [[ ! -s $tmp/err ]] &&
		expect_lines "$tmp/out" "[0] 0 4 $a" "[1] 1 4 $a" "[2] 2 4 $a" "[3] 3 4 $a"
	ok $? "RMAWIN_RANK, RMAWIN_NRANKS, RMAWIN_ADDRS for each rank" "$tmp/out" "$tmp/err"
}

test_defaults() {
	local a=127.0.0.1:18515,127.0.0.1:18516 b=198.18.1.2:18515,198.18.1.2:18516
	run -n 2 -- sh -c 'echo $RMAWIN_ADDRS'
	((rc == 0)) && expect_lines "$tmp/out" "[0] $a" "[1] $a"
	ok $? "default address 127.0.0.1 and base port 18515" "$tmp/out" "$tmp/err"

	RMAWIN_VM_ADDRS=198.18.1.1,198.18.1.2 RMAWIN_VM_NODE=1 run -n 2 -- \
		sh -c 'echo $RMAWIN_ADDRS'
	((rc == 0)) && expect_lines "$tmp/out" "[0] $b" "[1] $b"
	ok $? "default address from RMAWIN_VM_ADDRS[RMAWIN_VM_NODE]" "$tmp/out" "$tmp/err"
}

test_ipv6() {
	local a='[::1]:65534,[::1]:65535' b='[fe80::1%lo]:40000'
	run -n 2 --addr ::1 --port 65534 -- sh -c 'echo $RMAWIN_ADDRS'
	((rc == 0)) && expect_lines "$tmp/out" "[0] $a" "[1] $a"
	ok $? "IPv6 addresses are written [addr]:port, up to port 65535" "$tmp/out" "$tmp/err"

	run -n 1 --addr 'fe80::1%lo' --port 40000 -- sh -c 'echo $RMAWIN_ADDRS'
	((rc == 0)) && expect_lines "$tmp/out" "[0] $b"
	ok $? "IPv6 link-local address with a scope" "$tmp/out" "$tmp/err"
}

test_prefix() {
	run -n 3 -- sh -c 'echo out $RMAWIN_RANK; echo err $RMAWIN_RANK >&2; echo more'
	((rc == 0)) &&
		expect_lines "$tmp/out" "[0] out 0" "[1] out 1" "[2] out 2" \
			"[0] more" "[1] more" "[2] more" &&
		expect_lines "$tmp/err" "[0] err 0" "[1] err 1" "[2] err 2"
	ok $? "stdout and stderr lines go to stdout and stderr, prefixed" "$tmp/out" "$tmp/err"
}

test_partial_line() {
	run -n 2 -- sh -c 'echo whole; printf "part $RMAWIN_RANK"; printf "e$RMAWIN_RANK" >&2'
	((rc == 0)) &&
		expect_lines "$tmp/out" "[0] whole" "[1] whole" "[0] part 0" "[1] part 1" &&
		expect_lines "$tmp/err" "[0] e0" "[1] e1" &&
		[[ $(tail -c 1 "$tmp/out" | od -An -c | tr -d ' ') == '\n' ]]
	ok $? "a last line without newline is written, prefixed, when the rank exits" \
		"$tmp/out" "$tmp/err"
}

test_long_line() {
	head -c 150000 /dev/zero | tr '\0' x >"$tmp/long"
	echo >>"$tmp/long"
	run -n 1 -- cat "$tmp/long"
	((rc == 0)) &&
		(($(wc -l <"$tmp/out") > 1)) &&
		! grep -qv '^\[0\] ' "$tmp/out" &&
		sed 's/^\[0\] //' "$tmp/out" | tr -d '\n' | cmp -s - <(tr -d '\n' <"$tmp/long")
	ok $? "a 150000-byte line is split into pieces, each prefixed" "$tmp/err"
}

test_no_interleaving() {
	# Lines long enough that a torn write would show.
	run -n 8 -- sh -c 'i=0; while [ $i -lt 2000 ]; do
		echo "rank=$RMAWIN_RANK i=$i ................................................"
		i=$((i + 1)); done'
	((rc == 0)) &&
		(($(wc -l <"$tmp/out") == 16000)) &&
		awk '{ r = $2; sub(/^rank=/, "", r)
		       if ($1 != "[" r "]" || NF != 4 || length($4) != 48) bad++ }
		     END { exit bad > 0 }' "$tmp/out"
	ok $? "8 ranks x 2000 lines: every line whole, with its own rank's prefix" "$tmp/err"
}

test_stdin() {
	echo hello | timeout -s KILL 60 "$RMARUN" -n 3 -- cat >"$tmp/out" 2>"$tmp/err"
	rc=$?
	((rc == 0)) && expect_lines "$tmp/out" "[0] hello"
	ok $? "stdin goes to rank 0, the other ranks read /dev/null" "$tmp/out" "$tmp/err"
}

test_exit_status() {
	run -n 4 -- sh -c '[ $RMAWIN_RANK = 1 ] && exit 3; exec sleep 30'
	((rc == 3)) && less_than "$elapsed" 5 &&
		expect_lines "$tmp/err" "rmarun: rank 1 exited with status 3"
	ok $? "rank 1 exits 3: rmarun exits 3 at once, the other ranks killed (${elapsed}s)" \
		"$tmp/out" "$tmp/err"
}

test_grace_kill() {
	run -n 3 -- sh -c '[ $RMAWIN_RANK = 2 ] && { sleep 0.2; exit 5; }
		trap "" TERM; exec sleep 30'
	((rc == 5)) && less_than 1.5 "$elapsed" && less_than "$elapsed" 6 &&
		expect_lines "$tmp/err" "rmarun: rank 2 exited with status 5"
	ok $? "ranks that ignore SIGTERM get SIGKILL after the 2 s grace (${elapsed}s)" \
		"$tmp/out" "$tmp/err"
}

test_killed_rank() {
	run -n 3 -- sh -c '[ $RMAWIN_RANK = 1 ] && kill -9 $$; exec sleep 30'
	((rc == 137)) && less_than "$elapsed" 5 &&
		expect_lines "$tmp/err" "rmarun: rank 1 killed by signal SIGKILL"
	ok $? "rank 1 killed by SIGKILL: rmarun exits 137 (${elapsed}s)" "$tmp/out" "$tmp/err"
}

test_exec_failure() {
	run -n 2 -- "$tmp/no-such-program"
	((rc == 127)) && grep -q '^\[[01]\] rmarun: .*no-such-program: No such file' "$tmp/err"
	ok $? "a program that cannot be executed: 127" "$tmp/out" "$tmp/err"
}

# start_bg ARGS...: rmarun in the background, its own pid in $bg.  No
# timeout(1) in between: it would send the ranks each signal a second time.
start_bg() {
	"$RMARUN" "$@" >"$tmp/out" 2>"$tmp/err" &
	bg=$!
}

# wait_bg: rmarun's exit status in $rc; SIGKILL after 20 s so as not to hang
wait_bg() {
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$bg" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$bg" 2>/dev/null
	wait "$bg"
	rc=$?
}

test_forward_term() {
	local dir=$tmp/markers
	mkdir -p "$dir"
	# The trap runs as soon as "wait" is interrupted; "kill $!" reaps sleep.
	start_bg -n 3 -- sh -c 'trap "touch '"$dir"'/\$RMAWIN_RANK; kill \$!; exit 0" TERM
		echo ready; sleep 30 & wait'
	wait_for_lines "$tmp/out" 3
	kill -TERM "$bg"
	wait_bg
	((rc == 0)) && [[ -e $dir/0 && -e $dir/1 && -e $dir/2 ]]
	ok $? "SIGTERM to rmarun reaches every rank" "$tmp/out" "$tmp/err"
}

test_forward_int_once() {
	# The trap ends the sleep, so a slow signal cannot find the rank gone;
	# a second, duplicate SIGINT would land in the half second after.
	start_bg -n 2 -- sh -c 'n=0; trap "n=\$((n + 1)); kill \$! 2>/dev/null" INT
		echo ready; sleep 30 & wait; wait; sleep 0.5; echo "INT $n"'
	wait_for_lines "$tmp/out" 2
	kill -INT "$bg"
	wait_bg
	((rc == 0)) && expect_lines "$tmp/out" "[0] ready" "[1] ready" "[0] INT 1" "[1] INT 1"
	ok $? "SIGINT to rmarun reaches every rank exactly once" "$tmp/out" "$tmp/err"
}

test_forward_kills() {
	start_bg -n 2 -- sh -c 'echo ready; exec sleep 30'
	wait_for_lines "$tmp/out" 2
	kill -HUP "$bg"
	wait_bg
	((rc == 128 + 1)) && grep -q '^rmarun: rank [01] killed by signal SIGHUP$' "$tmp/err"
	ok $? "SIGHUP forwarded and fatal to the ranks: rmarun exits 129" "$tmp/out" "$tmp/err"
}

test_timeout() {
	run -n 2 --timeout 1 -- sleep 30
	((rc == 124)) && less_than 0.9 "$elapsed" && less_than "$elapsed" 4 &&
		expect_lines "$tmp/err" "rmarun: timeout after 1 s"
	ok $? "--timeout 1: ranks killed, exit 124 (${elapsed}s)" "$tmp/out" "$tmp/err"
}

test_all_succeed() {
	run -n 5 --timeout 30 -- true
	((rc == 0)) && [[ ! -s $tmp/out && ! -s $tmp/err ]] && less_than "$elapsed" 5
	ok $? "every rank exits 0: rmarun exits 0 without waiting for --timeout" \
		"$tmp/out" "$tmp/err"
}

test_fds() {
	# The suite's own inherited descriptors show in both lists alike.
	sh -c 'exec ls /proc/self/fd' | sed 's/^/[0] /' >"$tmp/direct"
	run -n 1 -- sh -c 'exec ls /proc/self/fd'
	((rc == 0)) && cmp -s "$tmp/out" "$tmp/direct"
	ok $? "a rank inherits no descriptor of rmarun's own" "$tmp/out" "$tmp/direct"
}

test_broken_stdout() {
	local t0=$EPOCHREALTIME
	timeout -s KILL 60 "$RMARUN" -n 2 -- yes 2>"$tmp/err" | head -n 1 >"$tmp/out"
	rc=${PIPESTATUS[0]}
	elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	((rc == 128 + 13)) && less_than "$elapsed" 5 && grep -qx '\[[01]\] y' "$tmp/out"
	ok $? "stdout closed by the reader: the ranks get SIGPIPE, rmarun exits 141" \
		"$tmp/out" "$tmp/err"
}

test_rmarun_killed() {
	local pids pid state alive
	start_bg -n 2 -- sh -c 'echo $$; exec sleep 30'
	wait_for_lines "$tmp/out" 2
	pids=$(sed 's/^\[[01]\] //' "$tmp/out")
	kill -KILL "$bg"
	wait_bg 2>/dev/null
	sleep 0.5
	# Gone, or a zombie waiting for its new parent to reap it.
	alive=0
	for pid in $pids; do
		state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
		[[ -n $state && $state != Z ]] && alive=1
	done
	((alive == 0))
	ok $? "ranks do not outlive a SIGKILLed rmarun" "$tmp/out"
}

# usage_error DESC ARGS...
usage_error() {
	local desc=$1
	shift
	run "$@"
	((rc == 2)) && grep -q '^usage: rmarun' "$tmp/err" && [[ ! -s $tmp/out ]]
	ok $? "usage error, exit 2: $desc" "$tmp/out" "$tmp/err"
}

test_usage() {
	usage_error "-n 0" -n 0 -- true
	usage_error "-n 1025" -n 1025 -- true
	usage_error "-n missing" -- true
	usage_error "--addr 1.2.3" -n 1 --addr 1.2.3 -- true
	usage_error "--addr ::g" -n 1 --addr ::g -- true
	usage_error "--addr host name" -n 1 --addr localhost -- true
	usage_error "ports 65535..65536" -n 2 --port 65535 -- true
	usage_error "--port 0" -n 1 --port 0 -- true
	usage_error "--port 70000" -n 1 --port 70000 -- true
	usage_error "--timeout -1" -n 1 --timeout -1 -- true
	usage_error "no PROGRAM" -n 1
	usage_error "unknown option" -n 1 --bogus -- true
}

tests=(test_env test_defaults test_ipv6 test_prefix test_partial_line test_long_line
       test_no_interleaving test_stdin test_exit_status test_grace_kill test_killed_rank
       test_exec_failure test_forward_term test_forward_int_once test_forward_kills
       test_timeout test_all_succeed test_fds test_broken_stdout test_rmarun_killed
       test_usage)
# Some functions hold more than one test: count the ok calls.
plan=$(for t in "${tests[@]}"; do declare -f "$t"; done | grep -cE '^\s+(ok|usage_error) ')
echo "1..$plan"
for t in "${tests[@]}"; do
	"$t"
done
if ((num != plan)); then
	echo "# planned $plan tests, ran $num"
	failed=1
fi
exit $failed
