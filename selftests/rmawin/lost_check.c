// SPDX-License-Identifier: GPL-2.0
/*
 * lost_check: a peer whose node drops off the network while this rank
 * waits for it.  Two ranks, one on each guest (spread.sh 1 PORT under
 * tools/vm --nodes 2); wire_test.sh takes rank 1's link down a few
 * seconds after rank 1 says "joined", and brings it back afterwards.
 *
 *   rank 0: a barrier, then a second one that rank 1 never enters.  Its
 *	own message of that barrier is delivered while the link is still
 *	up, so nothing of rank 0's is in flight when it goes: no completion
 *	and no disconnect can tell rank 0 that rank 1 is gone, only the
 *	module's probes of a long wait (keepalive_ms).  The barrier must
 *	fail with -ECONNRESET, not wait for ever (wire_test.sh checks that
 *	the module's keepalives counter grew meanwhile).
 *   rank 1: a barrier, "joined" on stdout, then sleeps until it is killed.
 *
 * Exit status 0 when this rank saw what it must.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rmawin.h>

#define FAIL(...) do { fprintf(stderr, "lost_check: " __VA_ARGS__); return 1; } while (0)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int rank0(struct rmawin_ep *ep)
{
	double t0 = now();
	int ret = rmawin_barrier(ep);

	if (ret != -ECONNRESET)
		FAIL("the barrier with the lost rank returned %d (%s), want -ECONNRESET\n",
		     ret, rmawin_strerror(ret));
	printf("lost_check: rank 0: the barrier failed with -ECONNRESET after %.1f s\n",
	       now() - t0);
	/* the group is dead: closing must still work (leaks.sh checks the rest) */
	ret = rmawin_ep_close(ep);
	if (ret)
		FAIL("ep_close after the loss: %s\n", rmawin_strerror(ret));
	return 0;
}

int main(void)
{
	struct rmawin_ep *ep;
	int ret, tries;

	/* line by line: wire_test.sh reads it from a file while we run */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * The two guests reach this case at different times (the rogue's
	 * side of the case before can end minutes before the victims'):
	 * join again while the other is not there yet, up to about 10 min.
	 */
	for (tries = 0; tries < 20; tries++) {
		ret = rmawin_ep_open_env(&ep);
		if (ret != -ETIMEDOUT)
			break;
	}
	if (ret)
		FAIL("ep_open_env: %s\n", rmawin_strerror(ret));
	if (rmawin_nranks(ep) != 2)
		FAIL("%d ranks, want 2\n", rmawin_nranks(ep));
	ret = rmawin_barrier(ep);
	if (ret)
		FAIL("rank %d: first barrier: %s\n", rmawin_rank(ep), rmawin_strerror(ret));
	if (rmawin_rank(ep) == 0)
		return rank0(ep);
	printf("joined\n");
	for (;;)
		pause();
}
