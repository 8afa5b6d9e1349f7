#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fuzz.sh SEED CALLS - make fuzz's guest side: ioctl_fuzz in 3 processes,
# then, once they are all gone, nothing of the module's may be left.  The
# VM runner fails the run on any kernel report, kmemleak's included.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
seed=${1:?seed}
calls=${2:?calls}
mount | grep -q ' /sys/kernel/debug ' || mount -t debugfs none /sys/kernel/debug
echo "fuzz: seed $seed, $calls calls"
./ioctl_fuzz "$seed" "$calls" 3 || exit 1
./leaks.sh || exit 1
echo "fuzz: no leak after the fuzzer's processes exited"
