// SPDX-License-Identifier: GPL-2.0
/*
 * ring_check [both]: rank 0 (with "both", each rank) issues 10 000 8-byte
 * puts and a flush to the other rank through the ring, between two
 * markers (prctl(PR_SET_NAME) "rmw-begin" and "rmw-end") that
 * ring_syscalls.sh finds in strace's output to count the system calls
 * made in between; the target checks every slot's last value.  Prints the
 * doorbells the library rang (the NEED_WAKEUP protocol's only system
 * calls).  Run under a launcher, 2 ranks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <rmawin.h>

#define PUTS	10000
#define SLOTS	512

int main(int argc, char **argv)
{
	uint64_t *vals = malloc(PUTS * sizeof(*vals)), *mem = calloc(SLOTS, sizeof(*mem));
	unsigned long w0, w1;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int ret, i, me, both = argc > 1 && !strcmp(argv[1], "both");

	if (!vals || !mem)
		return 1;
	ret = rmawin_ep_open_env(&ep);
	if (ret) {
		fprintf(stderr, "ring_check: open: %s\n", rmawin_strerror(ret));
		return 1;
	}
	me = rmawin_rank(ep);
	if (rmawin_nranks(ep) != 2 || rmawin_ep_ring_active(ep) != 1) {
		fprintf(stderr, "ring_check: needs 2 ranks and the ring\n");
		return 1;
	}
	for (i = 0; i < PUTS; i++)
		vals[i] = i * 3 + 1;
	ret = rmawin_win_create(ep, mem, SLOTS * sizeof(*mem), 8, 0, &win);
	ret = ret ?: rmawin_barrier(ep);
	if (!ret && (me == 0 || both)) {
		ret = rmawin_lock_all(win);
		w0 = rmawin_ep_ring_wakeups(ep);
		prctl(PR_SET_NAME, "rmw-begin");
		for (i = 0; i < PUTS && !ret; i++)
			ret = rmawin_put(win, &vals[i], 8, 1 - me, i % SLOTS);
		ret = ret ?: rmawin_flush(win, 1 - me);
		prctl(PR_SET_NAME, "rmw-end");
		w1 = rmawin_ep_ring_wakeups(ep);
		printf("ring_check: rank %d: %d puts and a flush, %lu doorbells\n", me, PUTS,
		       w1 - w0);
		ret = ret ?: rmawin_unlock_all(win);
	}
	ret = ret ?: rmawin_barrier(ep);
	if (ret) {
		fprintf(stderr, "ring_check: rank %d: %s\n", me, rmawin_strerror(ret));
		return 1;
	}
	for (i = 0; (me == 1 || both) && i < SLOTS; i++) {
		int last = (PUTS - 1) - ((PUTS - 1 - i) % SLOTS);

		if (mem[i] != vals[last]) {
			fprintf(stderr, "ring_check: slot %d holds %llu, want %llu\n", i,
				(unsigned long long)mem[i], (unsigned long long)vals[last]);
			return 1;
		}
	}
	if (me == 1 || both)
		printf("ring_check: all %d slots hold their last put\n", SLOTS);
	ret = rmawin_win_free(win);
	return ret || rmawin_ep_close(ep) ? 1 : 0;
}
