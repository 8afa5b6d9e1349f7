// SPDX-License-Identifier: GPL-2.0
/*
 * rma_check: every rank puts to and gets from every rank (itself too),
 * over a matrix of sizes (both sides of the bounce limit, up to 4 MiB),
 * unaligned offsets and displacement units, and checks every byte, plus
 * the guard bytes around each target range.  Runs under any launcher
 * (rmawin_ep_open_env): rmarun in one guest, spread.sh across guests.
 * Exit status 0 when everything matched.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rmawin.h>

#define GUARD	64

static const size_t sizes[] = { 1, 7, 8, 4095, 8192, 8193, 65537, 1 << 20, (4 << 20) + 3 };
static const unsigned int units[] = { 1, 4, 8 };

static unsigned char pattern(int origin, int target, size_t size, size_t i)
{
	return (unsigned char)(origin * 31 + target * 7 + size * 3 + i * 11 + 1);
}

#define FAIL(...) do { fprintf(stderr, "rma_check: " __VA_ARGS__); return 1; } while (0)

/* One size and unit: every rank puts into its slot of every window, then gets it back. */
static int round_trip(struct rmawin_ep *ep, size_t size, unsigned int unit)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), t, o, ret;
	/* rank o's slot in any window starts at GUARD + o * slot, unit aligned, +1 byte skew */
	size_t slot = (size + 2 * GUARD + unit - 1) / unit * unit, winlen = GUARD + n * slot + GUARD;
	unsigned char *win_mem, *src, *back;
	struct rmawin_win *win;
	size_t i;

	win_mem = malloc(winlen);
	src = malloc(size + 3);
	back = calloc(1, (size + 3) * n);
	if (!win_mem || !src || !back)
		FAIL("out of memory\n");
	memset(win_mem, 0xee, winlen);
	ret = rmawin_win_create(ep, win_mem, winlen, unit, 0, &win);
	if (ret)
		FAIL("win_create: %s\n", rmawin_strerror(ret));
	ret = rmawin_fence(win, RMAWIN_MODE_NOPRECEDE);
	for (t = 0; t < n && !ret; t++) {
		/* unaligned origin: the data starts 3 bytes into the buffer */
		for (i = 0; i < size; i++)
			src[3 + i] = pattern(me, t, size, i);
		ret = rmawin_put(win, src + 3, size, t, (GUARD + me * slot) / unit);
		/* the origin buffer may change only after the fence */
		if (!ret)
			ret = rmawin_fence(win, 0);
	}
	if (ret)
		FAIL("put/fence size %zu unit %u: %s\n", size, unit, rmawin_strerror(ret));
	for (o = 0; o < n; o++)
		for (i = 0; i < size; i++)
			if (win_mem[GUARD + o * slot + i] != pattern(o, me, size, i))
				FAIL("size %zu unit %u: byte %zu from rank %d wrong\n", size, unit,
				     i, o);
	for (i = 0; i < GUARD; i++)
		if (win_mem[i] != 0xee || win_mem[winlen - 1 - i] != 0xee)
			FAIL("size %zu unit %u: guard byte touched\n", size, unit);
	for (t = 0; t < n && !ret; t++)
		ret = rmawin_get(win, back + t * (size + 3) + 1, size, t,
				 (GUARD + me * slot) / unit);
	ret = ret ?: rmawin_fence(win, 0);
	if (ret)
		FAIL("get/fence size %zu unit %u: %s\n", size, unit, rmawin_strerror(ret));
	for (t = 0; t < n; t++)
		for (i = 0; i < size; i++)
			if (back[t * (size + 3) + 1 + i] != pattern(me, t, size, i))
				FAIL("size %zu unit %u: got byte %zu from rank %d wrong\n", size,
				     unit, i, t);
	ret = rmawin_win_free(win);
	if (ret)
		FAIL("win_free: %s\n", rmawin_strerror(ret));
	free(win_mem);
	free(src);
	free(back);
	return 0;
}

int main(void)
{
	struct rmawin_ep *ep;
	size_t s, u;
	int ret, checked = 0;

	ret = rmawin_ep_open_env(&ep);
	if (ret)
		FAIL("ep_open_env: %s\n", rmawin_strerror(ret));
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			/* the largest size once: emulated RDMA is slow */
			if (sizes[s] > (1 << 20) && units[u] != 8)
				continue;
			if (round_trip(ep, sizes[s], units[u]))
				return 1;
			checked++;
		}
	printf("rma_check: rank %d of %d: %d size/unit combinations verified both ways\n",
	       rmawin_rank(ep), rmawin_nranks(ep), checked);
	return rmawin_ep_close(ep) ? 1 : 0;
}
