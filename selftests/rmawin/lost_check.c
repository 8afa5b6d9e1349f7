// SPDX-License-Identifier: GPL-2.0
/*
 * lost_check barrier|flush|again: a peer whose node drops off the network while
 * this rank waits for it.  Two ranks, one on each guest (spread.sh 1 PORT
 * under tools/vm --nodes 2); wire_test.sh takes rank 1's link down a few
 * seconds after rank 1 says "joined", and brings it back afterwards.
 *
 * barrier:
 *   rank 0: a barrier, then a second one that rank 1 never enters.  Its
 *	own message of that barrier is delivered while the link is still
 *	up, so nothing of rank 0's is in flight when it goes: no completion
 *	and no disconnect can tell rank 0 that rank 1 is gone, only the
 *	module's probes of a long wait (keepalive_ms).  The barrier must
 *	fail with -ECONNRESET, not wait for ever (wire_test.sh checks that
 *	the module's keepalives counter grew meanwhile).
 *   rank 1: a barrier, "joined" on stdout, then sleeps until it is killed.
 *
 * flush: the same for a reply owed, through the ring.
 *   rank 1: after the first barrier it has its kernel hold every message
 *	RECV_DELAY_MS before handling it (the recv_delay_ms test hook), then
 *	a second barrier, "joined", and sleeps until it is killed.
 *   rank 0: ACCS accumulates to rank 1 and a flush, through the ring:
 *	each accumulate is delivered at once, but answered only after the
 *	hold, one after the other, so most answers are still owed when the
 *	link goes.  Nothing of rank 0's is in flight then either, and the
 *	library waits for the flush's completion in user space: the shared
 *	poller, which leaves the flush at the head of the ring while its
 *	window has operations in flight, must probe the peers itself
 *	(ring.c) for the flush to fail with -ECONNRESET.  Prints the
 *	doorbells the library rang during the flush: none means that the
 *	poller, not a doorbell's system call, ran it.
 *
 * again: after the case above, node 1's link back up: a new group of the
 *	same two guests forms, and data crosses it both ways.  Each rank
 *	puts its pattern into the other's window between two fences, checks
 *	that its own window holds the other's pattern, and gets its own
 *	pattern back from the other's window.
 *
 * Exit status 0 when this rank saw what it must.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rmawin.h>

#include "rmawin_test_files.h"

#define FAIL(...) do { fprintf(stderr, "lost_check: " __VA_ARGS__); return 1; } while (0)

#define ACCS		8
#define RECV_DELAY_MS	2000	/* the module's largest */

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

/* flush, rank 0: after the second barrier, ACCS accumulates and a flush. */
static int flush_rank0(struct rmawin_ep *ep, struct rmawin_win *win)
{
	static const int64_t one[ACCS] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	unsigned long bells;
	double t0;
	int ret, i;

	if (rmawin_ep_ring_active(ep) != 1)
		FAIL("rank 0: the ring is not in use\n");
	ret = rmawin_lock_all(win);
	if (ret)
		FAIL("rank 0: lock_all: %s\n", rmawin_strerror(ret));
	/* rank 1's kernel holds every message from here on */
	ret = rmawin_barrier(ep);
	if (ret)
		FAIL("rank 0: second barrier: %s\n", rmawin_strerror(ret));
	t0 = now();
	for (i = 0; i < ACCS && !ret; i++)
		ret = rmawin_accumulate(win, &one[i], 1, RMAWIN_INT64, 1, i, RMAWIN_SUM);
	if (ret)
		FAIL("rank 0: accumulate %d: %s\n", i, rmawin_strerror(ret));
	/* the accumulates woke the poller if it slept: count from here */
	bells = rmawin_ep_ring_wakeups(ep);
	ret = rmawin_flush(win, 1);
	bells = rmawin_ep_ring_wakeups(ep) - bells;
	if (ret != -ECONNRESET)
		FAIL("the flush owed replies by the lost rank returned %d (%s), want -ECONNRESET\n",
		     ret, rmawin_strerror(ret));
	printf("lost_check: rank 0: the ring's flush failed with -ECONNRESET after %.1f s, %lu doorbells\n",
	       now() - t0, bells);
	ret = rmawin_ep_close(ep);
	if (ret)
		FAIL("ep_close after the loss: %s\n", rmawin_strerror(ret));
	return 0;
}

/* again: a put and a get each way between fences, both checked. */
static int again(struct rmawin_ep *ep, int64_t *mem)
{
	int me = rmawin_rank(ep), other = 1 - me, ret, i;
	int64_t mine[ACCS], back[ACCS];
	struct rmawin_win *win;

	for (i = 0; i < ACCS; i++)
		mine[i] = 1000 * (me + 1) + i;
	ret = rmawin_win_create(ep, mem, ACCS * sizeof(*mem), sizeof(*mem), 0, &win);
	ret = ret ?: rmawin_fence(win, 0);
	ret = ret ?: rmawin_put(win, mine, sizeof(mine), other, 0);
	ret = ret ?: rmawin_fence(win, 0);
	if (ret)
		FAIL("rank %d: win_create, put and fences: %s\n", me, rmawin_strerror(ret));
	for (i = 0; i < ACCS; i++)
		if (mem[i] != 1000 * (other + 1) + i)
			FAIL("rank %d: word %d of my window is %lld, want %d\n", me, i,
			     (long long)mem[i], 1000 * (other + 1) + i);
	memset(back, 0, sizeof(back));
	ret = rmawin_get(win, back, sizeof(back), other, 0);
	ret = ret ?: rmawin_fence(win, 0);
	if (ret)
		FAIL("rank %d: get and fence: %s\n", me, rmawin_strerror(ret));
	if (memcmp(back, mine, sizeof(mine)))
		FAIL("rank %d: the get from rank %d did not return my pattern\n", me, other);
	ret = rmawin_win_free(win);
	ret = ret ?: rmawin_ep_close(ep);
	if (ret)
		FAIL("rank %d: win_free and ep_close: %s\n", me, rmawin_strerror(ret));
	printf("lost_check: rank %d: a new group after the flap moved data both ways\n", me);
	return 0;
}

int main(int argc, char **argv)
{
	static int64_t mem[ACCS];
	struct rmawin_win *win = NULL;
	struct rmawin_ep *ep;
	int ret, tries, flush;

	if (argc != 2 || (strcmp(argv[1], "barrier") && strcmp(argv[1], "flush") &&
			  strcmp(argv[1], "again"))) {
		fprintf(stderr, "usage: lost_check barrier|flush|again\n");
		return 2;
	}
	flush = !strcmp(argv[1], "flush");

	/* line by line: wire_test.sh reads it from a file while we run */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/*
	 * The two guests reach this case at different times (the rogue's
	 * side of the case before can end minutes before the victims'):
	 * join again while the other is not there yet, up to about 10 min.
	 * Only on -ETIMEDOUT: -EKEYREJECTED here has been the sign of
	 * soft-RoCE's dead QP1 after a flap (testing.rst), which "again"
	 * must not paper over.
	 */
	for (tries = 0; tries < 20; tries++) {
		ret = rmawin_ep_open_env(&ep);
		if (ret != -ETIMEDOUT)
			break;
		fprintf(stderr, "lost_check: join %d: %s; again\n", tries + 1, rmawin_strerror(ret));
	}
	if (ret)
		FAIL("ep_open_env: %s\n", rmawin_strerror(ret));
	if (rmawin_nranks(ep) != 2)
		FAIL("%d ranks, want 2\n", rmawin_nranks(ep));
	if (!strcmp(argv[1], "again"))
		return again(ep, mem);
	if (flush) {
		ret = rmawin_win_create(ep, mem, sizeof(mem), sizeof(mem[0]), 0, &win);
		if (ret)
			FAIL("rank %d: win_create: %s\n", rmawin_rank(ep), rmawin_strerror(ret));
	}
	ret = rmawin_barrier(ep);
	if (ret)
		FAIL("rank %d: first barrier: %s\n", rmawin_rank(ep), rmawin_strerror(ret));
	if (rmawin_rank(ep) == 0)
		return flush ? flush_rank0(ep, win) : rank0(ep);
	if (flush) {
		ret = rmawin_test_set_hook("recv_delay_ms", RECV_DELAY_MS);
		ret = ret ?: rmawin_barrier(ep);
		if (ret)
			FAIL("rank 1: hold and second barrier: %s\n", rmawin_strerror(ret));
	}
	printf("joined\n");
	for (;;)
		pause();
}
