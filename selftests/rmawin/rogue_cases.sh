#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rogue_cases.sh ROLE VICTIM_IP ROGUE_IP PORT FUZZ_COUNT - the attacks of
# selftests/rmawin/rogue on victims (selftests/rmawin/victim), as TAP.
#
# ROLE "both" runs victims and rogue in this guest (rogue_test.sh); across
# two guests (wire_test.sh) node 0 runs ROLE "victim" and node 1 ROLE
# "rogue", each case on its own ports, each side bounded in time.  The
# victims check their errors and memory, the rogue what it was sent and
# what its RDMA could reach; after each case the victim's guest checks that
# nothing of the module's leaked.  Cases that need the rogue on a victim's
# own address (impersonate, relay) run with ROLE "both" only.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

role=${1:?both|victim|rogue}
vip=${2:?victim ip}
rip=${3:?rogue ip}
port=${4:?base port}
fuzz=${5:-10000}
seed=${RMAWIN_FUZZ_SEED:-$(date +%s)}
bin=selftests/rmawin
export VICTIM_NO_RING=1

# shellcheck source=selftests/rmawin/tap.sh
. "$bin/tap.sh"

victim() { [[ $role != rogue ]]; }
rogue() { [[ $role != victim ]]; }

# run_case NAME "VICTIM COMMAND" "ROGUE COMMAND": with ROLE both, the
# victim in the background and the rogue in front; one TAP line per side.
run_case() {
	local name=$1 vcmd=$2 rcmd=$3 vpid vrc=0
	if victim && rogue; then
		bash -c "$vcmd" >/tmp/victim.out 2>&1 &
		vpid=$!
		check "$name: the rogue sees what a safe victim shows" bash -c "$rcmd"
		wait "$vpid" || vrc=$?
		check "$name: the victim gets its errors, its memory intact" \
			bash -c "cat /tmp/victim.out; exit $vrc"
	elif victim; then
		check "$name: the victim gets its errors, its memory intact" bash -c "$vcmd"
	else
		check "$name: the rogue sees what a safe victim shows" bash -c "$rcmd"
	fi
	victim && check "$name: nothing leaked" "$bin/leaks.sh"
}

# killed_and_released PID, in a victim command, of a victim it started: a
# SIGKILL must end that victim within 10 s, and its endpoint must be
# released within 10 s more.
killed_and_released() {
	local v=$1 s i
	kill -9 "$v"
	for i in $(seq 100); do
		s=$(awk '{ print $3 }' "/proc/$v/stat" 2>/dev/null)
		[[ -z $s || $s == Z ]] && break
		sleep 0.1
	done
	[[ -z $s || $s == Z ]] ||
		{ echo victim alive 10 s after SIGKILL; cat "/proc/$v/stack"; return 1; }
	wait "$v"
	echo victim gone after SIGKILL
	for i in $(seq 100); do
		"$bin/leaks.sh" >/dev/null 2>&1 && { echo released; return 0; }
		sleep 0.1
	done
	"$bin/leaks.sh"
	echo its endpoint still held 10 s after it died
	return 1
}
export -f killed_and_released
export bin

counter() {
	awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/rmawin/stats
}

addrs() {	# addrs N: N-1 victims on vip, the rogue last on rip
	local n=$1 i a=
	for ((i = 0; i < n - 1; i++)); do
		a+="${a:+,}$vip:$((port + i))"
	done
	echo "$a,$rip:$((port + n - 1))"
}

echo "TAP version 13"
mount | grep -q ' /sys/kernel/debug ' || mount -t debugfs none /sys/kernel/debug
auth0=$(counter auth_failures) proto0=$(counter proto_errors)

# Victims of the handshake cases wait with a timeout; their join must
# fail with -EKEYREJECTED (someone failed its proof), never let the rogue in.
A=$(addrs 2)
run_case "no proof at all" "$bin/victim join 0 $A 8000 EKEYREJECTED" "$bin/rogue silent $A 1"
port=$((port + 10)); A=$(addrs 2)
run_case "a random proof" "$bin/victim join 0 $A 8000 EKEYREJECTED" "$bin/rogue nokey $A 1"
port=$((port + 10)); A=$(addrs 2)
run_case "a wrong key" "$bin/victim join 0 $A 8000 EKEYREJECTED" "$bin/rogue wrongkey $A 1"
# The rogue as rank 0, the victim's responder: it takes the victim's proof,
# never welcomes it and drops it, as a responder whose proof timeout ran
# out; the victim must join on its next connection, not fail.
port=$((port + 10)); A="$rip:$port,$vip:$((port + 1))"
run_case "a responder that drops our proof unwelcomed; the next connection joins" \
	"$bin/victim join 1 $A 30000 0" "$bin/rogue lateack $A 0"
port=$((port + 10)); A=$(addrs 2)
run_case "a replayed request and proof; then the honest join" \
	"$bin/victim join 0 $A 30000 0" "$bin/rogue replay $A 1"

if victim && rogue; then
	# the rogue in rank 0's place: it listens on rank 0's address first
	port=$((port + 10)); A=$(addrs 2)
	check "impersonation: record a real rank 0's reply" bash -c "
		$bin/victim join 0 $A 6000 EKEYREJECTED & v=\$!
		$bin/rogue record $A 1 /tmp/rogue.rep; r=\$?; wait \$v && exit \$r"
	check "impersonation: a replayed and a forged reply are refused, then the job forms" \
		bash -c "
		$bin/victim join 1 $A 40000 0 & v1=\$!
		$bin/rogue impersonate $A 0 /tmp/rogue.rep; r=\$?
		$bin/victim join 0 $A 40000 0; r0=\$?
		wait \$v1 && exit \$((r | r0))"
	check "impersonation: nothing leaked" "$bin/leaks.sh"
	port=$((port + 10)); A=$(addrs 2)
	run_case "a man in the middle relays an honest member's proof" \
		"$bin/victim join 0 $A 15000 EKEYREJECTED" "$bin/rogue relay $A 1 $((port + 9))"
fi

# As a member: every kind of invalid message, each cutting the rogue off
port=$((port + 10)); A=$(addrs 2)
run_case "invalid messages of every type" "$bin/victim serve $A 20000 intact" \
	"$bin/rogue msgs $A 1"
# As a member the victim posted to: COMPLETEs whose carried operation is
# invalid, past the count check, each cutting the rogue off
port=$((port + 10)); A=$(addrs 2)
run_case "invalid carried operations in a COMPLETE" "$bin/victim serve $A 20000 intact post" \
	"$bin/rogue completes $A 1"
port=$((port + 10)); A=$(addrs 2)
run_case "a flood of 5096 notifications" "$bin/victim notify $A 5096" \
	"$bin/rogue notify $A 1 5096"
port=$((port + 10)); A=$(addrs 4)
run_case "a forged barrier round" \
	"p=(); for r in 0 1 2; do $bin/victim barrier4 \$r $A & p+=(\$!); done; s=0; for q in \${p[@]}; do wait \$q || s=1; done; exit \$s" \
	"$bin/rogue barrier4 $A 3"
# A member that stops answering while the victim's poller waits for room,
# and a second victim thread issues a put meanwhile: SIGKILL must still end
# the victim within seconds (no D state in close or in that put), and what
# it held must go too while the mute member stays connected.
port=$((port + 10)); A=$(addrs 2)
run_case "a mute member, then SIGKILL" \
	"$bin/victim mute $A & v=\$!; sleep 15; killed_and_released \$v" \
	"$bin/rogue mute $A 1 40"
# A reply whose status no target sends (-ERESTARTSYS would make the
# victim's kernel restart its system call): cut off, the victim told -EPROTO.
port=$((port + 10)); A=$(addrs 2)
run_case "an accumulate answered with status -512" "$bin/victim badstatus $A" \
	"$bin/rogue badstatus $A 1"
# A member whose receive queue runs dry: the victim's sends to it are
# retried for ever, and a window's registration, posted on its queue pair,
# waits behind them.  SIGKILL must end the victim within seconds (the
# registration's wait is killable; its memory stays until the peer's
# queue pair, failed, flushes it), and what it held must go.
# In one guest only: across two, the victim's soft-RoCE gave the retried
# send up once (the connection lost, no registration waiting), and what
# is tested is the victim kernel's own wait.
port=$((port + 10)); A=$(addrs 2)
if victim && rogue; then
	run_case "a member takes no more messages; a registration waits, then SIGKILL" \
		"$bin/victim regstall $A & v=\$!
		 in_reg() { grep -qE 'rmawin_(reg_|win_register)' /proc/\$v/stack 2>/dev/null; }
		 for i in \$(seq 300); do in_reg && break; sleep 0.1; done
		 in_reg || { echo the victim was never seen in a registration; cat /proc/\$v/stack
			     kill -9 \$v; wait \$v; exit 1; }
		 echo the victim waits in a registration; sleep 1
		 in_reg || { echo it left the registration; kill -9 \$v; exit 1; }
		 killed_and_released \$v" \
		"$bin/rogue stall $A 1 40"
fi
# The same mute member holds the shared poller in the victim's entry; the
# ring of another endpoint of the same user and cgroup (same poller) is set
# up and closed meanwhile, and neither may wait for that entry.
port=$((port + 10)); A=$(addrs 2)
run_case "a mute member holds the poller, another ring comes and goes" \
	"pollers() {	# the poller threads, by builtins alone: forks are slow under KASAN
		local t c
		for t in /proc/[0-9]*; do
			read -r c <\$t/comm && [[ \$c == rmawin_poll/* ]] && echo \$t
		done 2>/dev/null
	 }
	 stacks() {
		local t
		for t in \$(pollers) \$(for p; do echo /proc/\$p/task/*; done); do
			echo \$t \$(cat \$t/comm 2>/dev/null):; cat \$t/stack 2>/dev/null
		done
	 }
	 $bin/victim mute $A & v=\$!
	 for i in \$(seq 200); do
		for t in \$(pollers); do grep -q rmawin_ring_consume \$t/stack && break 2; done
		sleep 0.1
	 done
	 grep -q rmawin_ring_consume \$t/stack 2>/dev/null ||
		{ echo the poller was never seen waiting in an entry; stacks \$v; kill -9 \$v; exit 1; }
	 echo poller \$(cat \$t/comm) waits in an entry of the victim
	 $bin/victim ringcycle $vip:$((port + 5)) & c=\$!
	 for i in \$(seq 100); do kill -0 \$c 2>/dev/null || break; sleep 0.1; done
	 late=0; kill -0 \$c 2>/dev/null && { late=1; echo still waiting after 10 s:; stacks \$c; }
	 kill -9 \$v
	 for i in \$(seq 300); do { kill -0 \$c || kill -0 \$v; } 2>/dev/null || break; sleep 0.1; done
	 { kill -0 \$c || kill -0 \$v; } 2>/dev/null &&
		{ echo still there 30 s after the SIGKILL:; stacks \$c \$v; exit 1; }
	 wait \$c; rc=\$?; wait \$v
	 for i in \$(seq 100); do $bin/leaks.sh >/dev/null 2>&1 && break; sleep 0.1; done
	 [[ \$late == 0 && \$rc == 0 ]]" \
	"$bin/rogue mute $A 1 40"
# A member whose window claims 2^40 bytes (RMAWIN_WIN_MAX), more than the
# victim's machine has: a put and a get of all of it are refused (-ENOMEM)
# before the victim's kernel sizes anything by them (its page arrays would
# take 2 GiB, past kvmalloc's limit, which warns), and nothing reaches the
# rogue.
port=$((port + 10)); A=$(addrs 2)
run_case "a window that claims 2^40 bytes: a put and a get of all of it" \
	"w=\$(dmesg | grep -c 'WARNING:'); $bin/victim huge $A || exit 1
	 n=\$(dmesg | grep -c 'WARNING:')
	 [[ \$n == \$w ]] || { echo the kernel warned; dmesg | tail -40; exit 1; }" \
	"$bin/rogue huge $A 1"
port=$((port + 10)); A=$(addrs 2)
run_case "seed $seed: $fuzz mutated messages" "$bin/victim serve $A 20000 guards" \
	"$bin/rogue fuzz $A 1 $seed $fuzz"

if victim; then
	check "auth_failures counted ($(($(counter auth_failures) - auth0)) this run)" \
		test "$(counter auth_failures)" -gt "$auth0"
	check "proto_errors counted ($(($(counter proto_errors) - proto0)) this run)" \
		test "$(counter proto_errors)" -gt "$proto0"
fi
echo "1..$n"
exit $failed
