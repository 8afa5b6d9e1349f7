// SPDX-License-Identifier: GPL-2.0
/*
 * Batches (rmawin_batch_*): operations prepared one by one and issued with
 * one call.  Two ranks: each fills the other's window through batches
 * larger than the ring (256 entries) and than one RMAWIN_IOC_RMA (1024
 * operations), with puts, gets and the accumulate family mixed, and the
 * target checks every element; a batch with a put too large for the ring
 * goes by ioctl whole.  Then every argument error with its errno, and what
 * a submit that fails leaves issued on each path.  Every test runs on both
 * paths (variants ring and no_ring).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rmawin.h>

#include "rmawin_test.h"

RMAWIN_TEST_PATHS(path);

#define NPUT	1500		/* 8-byte puts per rank: more than one ioctl batch */
#define NACC	300		/* SUM accumulates onto one counter */
#define BIG	(16 * 1024)	/* a put the ring does not take */
#define WIN_WORDS	(NPUT + 8 + BIG / 8)

/* Word i of what @origin puts. */
static uint64_t word_of(int origin, unsigned int i)
{
	return ((uint64_t)origin + 1) << 40 | (uint64_t)i * 2654435761U;
}

/*
 * What the peer's batches did to this rank's window @w: every put, the
 * counter, the fetch_and_op and CAS words, the put that went by ioctl.
 * Return: 0, or the step of the first thing wrong.
 */
static int peer_fill_landed(const uint64_t *w, int peer)
{
	unsigned int i;

	for (i = 0; i < NPUT; i++) {
		if (w[i] != word_of(peer, i)) {
			RMAWIN_TEST_MSG("word %u is %#llx, want %#llx from rank %d", i,
					(unsigned long long)w[i],
					(unsigned long long)word_of(peer, i), peer);
			return 17;
		}
	}
	if (w[NPUT] != NACC || w[NPUT + 1] != 5 || w[NPUT + 2] != 77 ||
	    w[NPUT + 3] != word_of(peer, 0)) {
		RMAWIN_TEST_MSG("counter %llu (want %u), fetch_and_op word %llu (want 5), CAS word %llu (want 77), word %u %#llx",
				(unsigned long long)w[NPUT], NACC,
				(unsigned long long)w[NPUT + 1], (unsigned long long)w[NPUT + 2],
				NPUT + 3, (unsigned long long)w[NPUT + 3]);
		return 18;
	}
	if (rmawin_test_check_fill((unsigned char *)(w + NPUT + 8), BIG, 0x40 + peer) >= 0) {
		RMAWIN_TEST_MSG("the %d-byte put from rank %d did not land", BIG, peer);
		return 19;
	}
	return 0;
}

/*
 * Gets in a batch: the puts this rank's batches made, read back from the
 * peer's window into @got.  Return: 0, or the step that failed.
 */
static int batch_gets_back(struct rmawin_batch *b, struct rmawin_win *win, uint64_t *got,
			   int rank, int peer)
{
	unsigned int i;

	memset(got, 0, NPUT * 8);
	for (i = 0; i < NPUT; i++)
		RMAWIN_TEST_TRY(21, rmawin_batch_get(b, win, &got[i], 8, peer, i));
	RMAWIN_TEST_TRY(22, rmawin_batch_submit(b));
	RMAWIN_TEST_TRY(23, rmawin_fence(win, 0));
	for (i = 0; i < NPUT; i++) {
		if (got[i] != word_of(rank, i)) {
			RMAWIN_TEST_MSG("get of word %u from rank %d: %#llx, want %#llx", i, peer,
					(unsigned long long)got[i],
					(unsigned long long)word_of(rank, i));
			return 24;
		}
	}
	return 0;
}

/*
 * Layout of each window, in words: [0, NPUT) the puts, NPUT the counter,
 * NPUT + 1 the fetch_and_op word, NPUT + 2 the CAS word, then BIG bytes.
 */
static int fill_rank(int rank, int n, void *arg)
{
	uint64_t *w = calloc(WIN_WORDS, 8), *src = malloc(NPUT * 8), *got = malloc(NPUT * 8);
	uint64_t one = 1, add = 5, prev = 0, cas_old = 0, cas_new = 77, cas_cmp = 3;
	unsigned char *big = malloc(BIG);
	struct rmawin_batch *b;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int peer = 1 - rank, ret;
	unsigned int i;

	if (!w || !src || !got || !big)
		return 1;
	for (i = 0; i < NPUT; i++)
		src[i] = word_of(rank, i);
	w[NPUT + 2] = 3;
	memset(big, 0x40 + rank, BIG);
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, w, WIN_WORDS * 8, 8, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_batch_create(ep, NPUT + NACC + 2, &b));
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
	for (i = 0; i < NPUT; i++)
		RMAWIN_TEST_TRY(6, rmawin_batch_put(b, win, &src[i], 8, peer, i));
	for (i = 0; i < NACC; i++)
		RMAWIN_TEST_TRY(7, rmawin_batch_accumulate(b, win, &one, 1, RMAWIN_UINT64, peer,
							   NPUT, RMAWIN_SUM));
	RMAWIN_TEST_TRY(8, rmawin_batch_fetch_and_op(b, win, &add, &prev, RMAWIN_UINT64, peer,
						     NPUT + 1, RMAWIN_SUM));
	RMAWIN_TEST_TRY(9, rmawin_batch_compare_and_swap(b, win, &cas_new, &cas_cmp, &cas_old,
							 RMAWIN_UINT64, peer, NPUT + 2));
	if (rmawin_batch_count(b) != NPUT + NACC + 2) {
		RMAWIN_TEST_MSG("batch count %u, want %u", rmawin_batch_count(b), NPUT + NACC + 2);
		return 10;
	}
	RMAWIN_TEST_TRY(11, rmawin_batch_submit(b));
	if (rmawin_batch_count(b)) {
		RMAWIN_TEST_MSG("%u operations still in the batch after submit",
				rmawin_batch_count(b));
		return 12;
	}
	/* a batch with a put the ring does not take: by ioctl, whole */
	RMAWIN_TEST_TRY(13, rmawin_batch_put(b, win, &src[0], 8, peer, NPUT + 3));
	RMAWIN_TEST_TRY(14, rmawin_batch_put(b, win, big, BIG, peer, NPUT + 8));
	RMAWIN_TEST_TRY(15, rmawin_batch_submit(b));
	RMAWIN_TEST_TRY(16, rmawin_fence(win, 0));

	/* what the peer's batches did to this rank's window */
	ret = peer_fill_landed(w, peer);
	if (ret)
		return ret;
	if (prev != 0 || cas_old != 3) {
		RMAWIN_TEST_MSG("fetch_and_op fetched %llu (want 0), CAS fetched %llu (want 3)",
				(unsigned long long)prev, (unsigned long long)cas_old);
		return 20;
	}
	ret = batch_gets_back(b, win, got, rank, peer);
	if (ret)
		return ret;
	ret = rmawin_fence(win, 0);
	rmawin_batch_free(b);
	RMAWIN_TEST_TRY(25, ret);
	RMAWIN_TEST_TRY(26, rmawin_win_free(win));
	RMAWIN_TEST_TRY(27, rmawin_ep_close(ep));
	free(w);
	free(src);
	free(got);
	free(big);
	return 0;
}

TEST_F_TIMEOUT(path, batches_land_at_the_peer, 120)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, fill_rank, &port, 100));
	rmawin_test_expect_no_leaks(_metadata);
}


/*
 * Argument errors, at the call that adds the operation; then what a failed
 * submit leaves: with the ring each good operation is issued, as ioctls a
 * group of up to 1024 is all or nothing.  Rank 1 only serves.
 */
static int errors_rank(int rank, int n, void *arg)
{
	uint64_t w[64] = { 0 }, v = 0x1234, r, path;
	struct rmawin_batch *b, *other_b;
	struct rmawin_win *win, *other_win;
	struct rmawin_ep *ep, *other;
	int bad = 0, ring;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, w, sizeof(w), 8, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_fence(win, 0));
	if (rank == 0) {
		ring = rmawin_ep_ring_active(ep);
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_create(NULL, 4, &b));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_create(ep, 0, &b));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_create(ep, 65537, &b));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_create(ep, 4, NULL));
		RMAWIN_TEST_TRY(4, rmawin_batch_create(ep, 2, &b));
		/* a window of another endpoint (a group of one) */
		RMAWIN_TEST_TRY(5, rmawin_test_open(0, 1, rmawin_test_ports(1), &other));
		RMAWIN_TEST_TRY(6, rmawin_win_create(other, w, 8, 8, 0, &other_win));
		RMAWIN_TEST_TRY(7, rmawin_batch_create(other, 1, &other_b));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_put(b, other_win, &v, 8, 0, 0));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_put(other_b, win, &v, 8, 1, 0));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_put(NULL, win, &v, 8, 1, 0));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_get(b, NULL, &v, 8, 1, 0));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_put(b, win, &v, 8, -1, 0));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_put(b, win, NULL, 8, 1, 0));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_accumulate(b, win, &v, 1, (enum rmawin_type)99, 1, 0,
						      RMAWIN_SUM));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_fetch_and_op(b, win, &v, &r, RMAWIN_UINT64, -3, 0,
							RMAWIN_SUM));
		if (rmawin_batch_count(b) || rmawin_batch_count(NULL)) {
			RMAWIN_TEST_MSG("refused operations were counted: %u",
					rmawin_batch_count(b));
			bad = 1;
		}
		RMAWIN_TEST_WANT(-EINVAL, rmawin_batch_submit(NULL));
		RMAWIN_TEST_WANT(0, rmawin_batch_submit(b));	/* empty */
		/* full */
		RMAWIN_TEST_WANT(0, rmawin_batch_put(b, win, &v, 8, 1, 0));
		RMAWIN_TEST_WANT(0, rmawin_batch_put(b, win, &v, 8, 1, 1));
		RMAWIN_TEST_WANT(-ENOSPC, rmawin_batch_put(b, win, &v, 8, 1, 2));
		/* the second is out of the target's 64 words: -ERANGE at submit */
		rmawin_batch_free(b);
		RMAWIN_TEST_TRY(8, rmawin_batch_create(ep, 2, &b));
		RMAWIN_TEST_WANT(0, rmawin_batch_put(b, win, &v, 8, 1, 5));
		RMAWIN_TEST_WANT(0, rmawin_batch_put(b, win, &v, 8, 1, 64));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_batch_submit(b));
		if (rmawin_batch_count(b)) {
			RMAWIN_TEST_MSG("a failed submit left %u operations", rmawin_batch_count(b));
			bad = 1;
		}
		/* the target says what landed: word 5 */
		path = ring;
		RMAWIN_TEST_TRY(9, rmawin_put(win, &path, 8, 1, 63));
		rmawin_batch_free(other_b);
		RMAWIN_TEST_TRY(10, rmawin_win_free(other_win));
		RMAWIN_TEST_TRY(11, rmawin_ep_close(other));
	}
	RMAWIN_TEST_TRY(12, rmawin_fence(win, 0));
	if (rank == 0) {
		/* outside any epoch (NOSUCCEED closed it): -EPERM at submit */
		RMAWIN_TEST_TRY(13, rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
		RMAWIN_TEST_WANT(0, rmawin_batch_put(b, win, &v, 8, 1, 0));
		RMAWIN_TEST_WANT(-EPERM, rmawin_batch_submit(b));
		rmawin_batch_free(b);
	} else {
		/* word 63: rank 0's path; ring: the good put landed, ioctl: nothing did */
		if (w[5] != (w[63] ? 0x1234 : 0)) {
			RMAWIN_TEST_MSG("%s path: word 5 is %#llx after a batch that failed",
					w[63] ? "ring" : "ioctl", (unsigned long long)w[5]);
			bad = 1;
		}
		RMAWIN_TEST_TRY(14, rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
	}
	RMAWIN_TEST_TRY(15, rmawin_win_free(win));
	RMAWIN_TEST_TRY(16, rmawin_ep_close(ep));
	return bad ? 17 : 0;
}

TEST_F_TIMEOUT(path, argument_and_submit_errors, 60)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, errors_rank, &port, 45));
	rmawin_test_expect_no_leaks(_metadata);
}

#define NLONG	3000		/* three RMAWIN_IOC_RMA groups of 1024 at most */
#define LONG_BAD	1500	/* in the second group: beyond the target's window */

/*
 * A failed group stops the batch: rank 0 puts NLONG words to rank 1 in one
 * batch, one of them out of range.  Through the ring every good put lands;
 * as ioctls the first group lands, and neither the failed group nor the
 * third, which is never issued.
 */
static int long_rank(int rank, int n, void *arg)
{
	uint64_t *w = calloc(NLONG + 8, 8), *src = malloc(NLONG * 8), path;
	struct rmawin_batch *b;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int bad = 0, ring;
	unsigned int i, want;

	if (!w || !src)
		return 1;
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, w, (NLONG + 8) * 8, 8, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	if (rank == 0) {
		ring = rmawin_ep_ring_active(ep);
		RMAWIN_TEST_TRY(5, rmawin_batch_create(ep, NLONG, &b));
		for (i = 0; i < NLONG; i++) {
			src[i] = word_of(0, i);
			RMAWIN_TEST_TRY(6, rmawin_batch_put(b, win, &src[i], 8, 1,
							    i == LONG_BAD ? NLONG + 8 : i));
		}
		RMAWIN_TEST_WANT(-ERANGE, rmawin_batch_submit(b));
		rmawin_batch_free(b);
		path = ring;
		RMAWIN_TEST_TRY(7, rmawin_put(win, &path, 8, 1, NLONG + 7));
	}
	RMAWIN_TEST_TRY(8, rmawin_fence(win, 0));
	if (rank == 1) {
		ring = w[NLONG + 7] != 0;
		for (i = 0; i < NLONG && !bad; i++) {
			want = ring ? i != LONG_BAD : i < RMAWIN_RMA_MAX_OPS;
			if (w[i] != (want ? word_of(0, i) : 0)) {
				RMAWIN_TEST_MSG("%s path: word %u is %#llx, want %s", ring ? "ring" :
						"ioctl", i, (unsigned long long)w[i],
						want ? "the put" : "nothing");
				bad = 1;
			}
		}
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	RMAWIN_TEST_TRY(10, rmawin_ep_close(ep));
	free(w);
	free(src);
	return bad ? 11 : 0;
}

TEST_F_TIMEOUT(path, failed_group_stops_the_batch, 60)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, long_rank, &port, 45));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
