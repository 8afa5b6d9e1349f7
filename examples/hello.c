// SPDX-License-Identifier: MIT
/*
 * hello: every rank puts its rank number into slot [rank] of every other
 * rank's window, between two fences.  Run: rmarun -n 4 -- examples/hello
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rmawin.h>

static void check(int ret, const char *what)
{
	if (ret < 0) {
		fprintf(stderr, "hello: %s: %s\n", what, rmawin_strerror(ret));
		exit(1);
	}
}

int main(void)
{
	struct rmawin_ep *ep;
	struct rmawin_win *win;
	int rank, nranks, i, bad = 0, *slots;

	check(rmawin_ep_open_env(&ep), "rmawin_ep_open_env");
	check(rank = rmawin_rank(ep), "rmawin_rank");
	check(nranks = rmawin_nranks(ep), "rmawin_nranks");

	slots = calloc(nranks, sizeof(int));	/* the window: one int per rank */
	if (!slots)
		check(-ENOMEM, "calloc");
	for (i = 0; i < nranks; i++)
		slots[i] = -1;
	slots[rank] = rank;
	check(rmawin_win_create(ep, slots, nranks * sizeof(int), sizeof(int), 0, &win),
	      "rmawin_win_create");

	check(rmawin_fence(win, RMAWIN_MODE_NOPRECEDE), "rmawin_fence");
	for (i = 0; i < nranks; i++)
		if (i != rank)		/* my rank into slot [rank] of rank i's window */
			check(rmawin_put(win, &rank, sizeof(rank), i, rank), "rmawin_put");
	check(rmawin_fence(win, RMAWIN_MODE_NOSUCCEED), "rmawin_fence");

	printf("hello from rank %d of %d, my window:", rank, nranks);
	for (i = 0; i < nranks; i++) {
		printf(" %d", slots[i]);
		bad |= slots[i] != i;
	}
	printf(" %s\n", bad ? "WRONG" : "ok");

	check(rmawin_win_free(win), "rmawin_win_free");
	check(rmawin_ep_close(ep), "rmawin_ep_close");
	free(slots);
	return bad;
}
