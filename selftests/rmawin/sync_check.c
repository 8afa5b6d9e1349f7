// SPDX-License-Identifier: GPL-2.0
/*
 * sync_check: the accumulate family, passive target, generalized active
 * target and notified put, on however many ranks the launcher started and
 * wherever they are (rmarun in one guest, spread.sh across guests).
 *
 * The ranks share nothing but the group: every cross-rank observation
 * (who is inside a lock, whether a writer got in) goes through a monitor
 * window on rank 0 updated with fetch_and_op, itself under test.  Cases:
 *   counter   get/add/put under an exclusive lock on the last rank, K times
 *             per rank: ends at n*K; the monitor never sees two inside
 *   fetch     fetch_and_op and get_accumulate SUM from every rank: every
 *             previous value 0..n*K-1 is fetched exactly once
 *   fetch_same_op  the same on a RMAWIN_WIN_SAME_OP window (the device's
 *             atomics, the rank's own through its loopback queue pair)
 *   cas       a compare_and_swap spin lock; the holder is always alone
 *   accdbl    accumulate SUM of doubles, every rank to every rank
 *   shared    every rank but 0 holds a shared lock on rank 0 at once
 *   starve    readers keep a shared lock held; a writer still gets in
 *   sleep     rank 0 sleeps in nanosleep while the others lock,
 *             accumulate, flush and unlock: done before it wakes
 *   ring      PSCW ring, ten rounds
 *   onetoall  PSCW all-to-one; the target polls with test()
 *   notify    every rank sends notified puts to rank 0, which takes them
 *             through poll() and notify_wait: data, tags, sources, order
 *   order_same_op  issue order on a RMAWIN_WIN_SAME_OP window (MPI's
 *             accumulate_ordering): rank 0's get_accumulate REPLACEs to the
 *             last rank, many in a row, while every other rank swaps 0 in:
 *             each fetched 0 or the value of the one before it; then
 *             REPLACE, SUM, NO_OP on another location: a chain
 *   loops_end  the end of an epoch (WAIT, a fence, UNLOCK) waits for the
 *             device's compare-and-swap loops still in flight
 * Exit status 0 when every case passed on this rank.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rmawin.h>

#define K		10	/* increments per rank and case */
#define NOTES		200	/* notified puts per sending rank */
#define SLOTS		32
#define MON_INSIDE	0	/* monitor slots on rank 0 */
#define MON_MAX		1
#define MON_STOP	2
#define MON_ROUNDS	3
#define MON_LEN		8

static struct rmawin_ep *ep;
static struct rmawin_win *mon;	/* int64 counters on rank 0, under lock_all */
static int me, n;
static const char *cur = "setup";

#define CHECK(call) do { int _r = (call); if (_r) { \
	fprintf(stderr, "sync_check: rank %d: %s: %s: %s\n", me, cur, #call, \
		rmawin_strerror(_r)); return 1; } } while (0)
#define EXPECT(cond, ...) do { if (!(cond)) { \
	fprintf(stderr, "sync_check: rank %d: %s: ", me, cur); \
	fprintf(stderr, __VA_ARGS__); return 1; } } while (0)

/* Add @delta to monitor slot @slot; the previous value in *old. */
static int mon_add(int slot, int64_t delta, int64_t *old)
{
	int ret = rmawin_fetch_and_op(mon, &delta, old, RMAWIN_INT64, 0, slot, RMAWIN_SUM);

	return ret ?: rmawin_flush(mon, 0);
}

static int mon_read(int slot, int64_t *v)
{
	int ret = rmawin_fetch_and_op(mon, NULL, v, RMAWIN_INT64, 0, slot, RMAWIN_NO_OP);

	return ret ?: rmawin_flush(mon, 0);
}

/* Raise MON_MAX to at least @v. */
static int mon_max(int64_t v)
{
	int64_t cur_max, old;
	int ret;

	do {
		ret = mon_read(MON_MAX, &cur_max);
		if (ret || cur_max >= v)
			return ret;
		ret = rmawin_compare_and_swap(mon, &v, &cur_max, &old, RMAWIN_INT64, 0, MON_MAX);
		ret = ret ?: rmawin_flush(mon, 0);
	} while (!ret && old != cur_max);
	return ret;
}

/* Zero the monitor (rank 0, between barriers). */
static int mon_reset(void)
{
	static const int64_t zero[MON_LEN];

	if (me == 0) {
		int ret = rmawin_accumulate(mon, zero, MON_LEN, RMAWIN_INT64, 0, 0,
					    RMAWIN_REPLACE);

		ret = ret ?: rmawin_flush(mon, 0);
		if (ret)
			return ret;
	}
	return rmawin_barrier(ep);
}

static int case_counter(void)
{
	int64_t counter = 0, v, inside, max;
	int last = n - 1, i;
	struct rmawin_win *win;

	CHECK(rmawin_win_create(ep, &counter, me == last ? 8 : 0, 8, 0, &win));
	CHECK(mon_reset());
	for (i = 0; i < K; i++) {
		CHECK(rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, last));
		CHECK(mon_add(MON_INSIDE, 1, &inside));
		CHECK(mon_max(inside + 1));
		CHECK(rmawin_get(win, &v, 8, last, 0));
		CHECK(rmawin_flush(win, last));
		v++;
		CHECK(rmawin_put(win, &v, 8, last, 0));
		CHECK(mon_add(MON_INSIDE, -1, &inside));
		CHECK(rmawin_unlock(win, last));
	}
	CHECK(rmawin_barrier(ep));
	CHECK(mon_read(MON_MAX, &max));
	EXPECT(max == 1, "%lld ranks inside an exclusive lock at once\n", (long long)max);
	EXPECT(me != last || counter == (int64_t)n * K, "counter %lld, want %d\n",
	       (long long)counter, n * K);
	CHECK(rmawin_win_free(win));
	return 0;
}

/*
 * Element 0 by fetch_and_op, elements 1 and 2 by get_accumulate of a
 * 2-vector; each rank then puts what it fetched into rank 0's table.  The
 * counters' window is created with @flags.
 */
static int fetch_on(unsigned int flags)
{
	int64_t cnt[3] = { 0 }, one[2] = { 1, 1 }, got[K][3], res[2];
	int64_t *table = calloc((size_t)n * K * 3, sizeof(*table));
	char *seen = calloc((size_t)n * K, 1);
	struct rmawin_win *cwin, *twin;
	int i, e;

	EXPECT(table && seen, "out of memory\n");
	CHECK(rmawin_win_create(ep, cnt, me ? 0 : sizeof(cnt), 8, flags, &cwin));
	CHECK(rmawin_win_create(ep, table, me ? 0 : (size_t)n * K * 3 * 8, 8, 0, &twin));
	CHECK(rmawin_lock_all(cwin));
	for (i = 0; i < K; i++) {
		CHECK(rmawin_fetch_and_op(cwin, one, &got[i][0], RMAWIN_INT64, 0, 0, RMAWIN_SUM));
		CHECK(rmawin_get_accumulate(cwin, one, res, 2, RMAWIN_INT64, 0, 1, RMAWIN_SUM));
		CHECK(rmawin_flush(cwin, 0));
		got[i][1] = res[0];
		got[i][2] = res[1];
	}
	CHECK(rmawin_unlock_all(cwin));
	CHECK(rmawin_fence(twin, 0));
	CHECK(rmawin_put(twin, got, sizeof(got), 0, (size_t)me * K * 3));
	CHECK(rmawin_fence(twin, 0));
	if (me == 0) {
		for (e = 0; e < 3; e++) {
			EXPECT(cnt[e] == (int64_t)n * K, "element %d is %lld, want %d\n", e,
			       (long long)cnt[e], n * K);
			memset(seen, 0, (size_t)n * K);
			for (i = 0; i < n * K; i++) {
				int64_t v = table[i * 3 + e];

				EXPECT(v >= 0 && v < n * K && !seen[v],
				       "element %d: value %lld fetched twice or out of range\n",
				       e, (long long)v);
				seen[v] = 1;
			}
		}
	}
	CHECK(rmawin_win_free(twin));
	CHECK(rmawin_win_free(cwin));
	free(table);
	free(seen);
	return 0;
}

static int case_fetch(void)
{
	return fetch_on(0);
}

/* The same through the device's atomics, rank 0's own included. */
static int case_fetch_same_op(void)
{
	return fetch_on(RMAWIN_WIN_SAME_OP);
}

static int case_cas(void)
{
	int64_t mutex = 0, zero = 0, mine = me + 1, old, inside;
	struct rmawin_win *win;
	int i;

	CHECK(rmawin_win_create(ep, &mutex, me ? 0 : 8, 8, 0, &win));
	CHECK(mon_reset());
	CHECK(rmawin_lock_all(win));
	for (i = 0; i < K / 2; i++) {
		do {
			CHECK(rmawin_compare_and_swap(win, &mine, &zero, &old, RMAWIN_INT64, 0, 0));
			CHECK(rmawin_flush(win, 0));
		} while (old != 0);
		CHECK(mon_add(MON_INSIDE, 1, &inside));
		EXPECT(inside == 0, "%lld others hold the CAS mutex too\n", (long long)inside);
		CHECK(mon_add(MON_INSIDE, -1, &inside));
		CHECK(rmawin_compare_and_swap(win, &zero, &mine, &old, RMAWIN_INT64, 0, 0));
		CHECK(rmawin_flush(win, 0));
		EXPECT(old == mine, "released a mutex holding %lld\n", (long long)old);
	}
	CHECK(rmawin_unlock_all(win));
	CHECK(rmawin_barrier(ep));
	CHECK(rmawin_win_free(win));
	return 0;
}

static int case_accdbl(void)
{
	double win_mem[64] = { 0 }, mine[64], want;
	struct rmawin_win *win;
	int t, i;

	for (i = 0; i < 64; i++)
		mine[i] = (me + 1) * (i + 0.5);
	CHECK(rmawin_win_create(ep, win_mem, sizeof(win_mem), sizeof(double), 0, &win));
	CHECK(rmawin_fence(win, 0));
	for (t = 0; t < n; t++)
		CHECK(rmawin_accumulate(win, mine, 64, RMAWIN_DOUBLE, t, 0, RMAWIN_SUM));
	CHECK(rmawin_fence(win, 0));
	for (i = 0; i < 64; i++) {
		want = (double)n * (n + 1) / 2 * (i + 0.5);
		EXPECT(win_mem[i] == want, "element %d is %g, want %g\n", i, win_mem[i], want);
	}
	CHECK(rmawin_win_free(win));
	return 0;
}

/* Wait up to 60 s for monitor slot @slot to reach @v. */
static int mon_wait(int slot, int64_t v)
{
	int64_t got = 0;
	int i;

	for (i = 0; i < 6000; i++) {
		int ret = mon_read(slot, &got);

		if (ret || got >= v)
			return ret;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

static int case_shared(void)
{
	int32_t w = 0;
	int64_t inside;
	struct rmawin_win *win;

	CHECK(rmawin_win_create(ep, &w, 4, 4, 0, &win));
	CHECK(mon_reset());
	if (me) {
		CHECK(rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
		CHECK(mon_add(MON_INSIDE, 1, &inside));
		/* every reader inside together, or this times out */
		CHECK(mon_wait(MON_INSIDE, n - 1));
		CHECK(rmawin_unlock(win, 0));
	}
	CHECK(rmawin_barrier(ep));
	CHECK(rmawin_win_free(win));
	return 0;
}

/*
 * Ranks 1 .. n-2 take shared locks on rank 0 in overlapping turns, so one
 * is always held; rank n-1 asks for an exclusive lock after 100 ms.
 */
static int case_starve(void)
{
	int64_t stop = 0, old, rounds;
	int32_t w = 0;
	struct rmawin_win *win;
	int r;

	CHECK(rmawin_win_create(ep, &w, 4, 4, 0, &win));
	CHECK(mon_reset());
	if (me > 0 && me < n - 1) {
		for (r = 0; r < 400 && !stop; r++) {
			CHECK(rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
			usleep(5000 * (me % 2 + 1));
			CHECK(rmawin_unlock(win, 0));
			CHECK(mon_add(MON_ROUNDS, 1, &old));
			CHECK(mon_read(MON_STOP, &stop));
		}
		EXPECT(stop, "the writer never got in during %d reader rounds\n", r);
	} else if (me == n - 1) {
		usleep(100000);
		CHECK(rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		CHECK(mon_add(MON_STOP, 1, &old));
		CHECK(rmawin_unlock(win, 0));
	}
	CHECK(rmawin_barrier(ep));
	CHECK(mon_read(MON_ROUNDS, &rounds));
	EXPECT(rounds < 400LL * (n - 2), "readers ran out of rounds (%lld)\n", (long long)rounds);
	CHECK(rmawin_win_free(win));
	return 0;
}

static int case_sleep(void)
{
	volatile double acc = 0;
	double one = 1, seen;
	struct rmawin_win *win;
	struct timespec ts = { 5, 0 };

	CHECK(rmawin_win_create(ep, (void *)&acc, me ? 0 : sizeof(acc), 8, 0, &win));
	CHECK(rmawin_barrier(ep));
	if (me == 0) {
		nanosleep(&ts, NULL);
		/* read before any library call: the others finished while we slept */
		seen = acc;
		EXPECT(seen == n - 1, "woke to %g of %d accumulates\n", seen, n - 1);
	} else {
		CHECK(rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		CHECK(rmawin_accumulate(win, &one, 1, RMAWIN_DOUBLE, 0, 0, RMAWIN_SUM));
		CHECK(rmawin_flush(win, 0));
		CHECK(rmawin_unlock(win, 0));
	}
	CHECK(rmawin_barrier(ep));
	CHECK(rmawin_win_free(win));
	return 0;
}

static int case_ring(void)
{
	int left = (me + n - 1) % n, right = (me + 1) % n, round;
	int32_t slot = -1, v;
	struct rmawin_win *win;

	CHECK(rmawin_win_create(ep, &slot, sizeof(slot), 4, 0, &win));
	for (round = 0; round < K; round++) {
		v = round * 100 + me;
		CHECK(rmawin_post(win, &left, 1));
		CHECK(rmawin_start(win, &right, 1));
		CHECK(rmawin_put(win, &v, 4, right, 0));
		CHECK(rmawin_complete(win));
		CHECK(rmawin_wait(win));
		EXPECT(slot == round * 100 + left, "round %d: slot %d\n", round, slot);
	}
	CHECK(rmawin_win_free(win));
	return 0;
}

static int case_onetoall(void)
{
	int64_t sum = 0, mine = me * 10;
	int zero = 0, i, t, polls = 0, *others = calloc(n, sizeof(int));
	struct rmawin_win *win;

	EXPECT(others, "out of memory\n");
	CHECK(rmawin_win_create(ep, &sum, me ? 0 : 8, 8, 0, &win));
	if (me == 0) {
		for (i = 1; i < n; i++)
			others[i - 1] = i;
		CHECK(rmawin_post(win, others, n - 1));
		while ((t = rmawin_test(win)) == 0) {
			polls++;
			usleep(1000);
		}
		EXPECT(t == 1, "test: %s\n", rmawin_strerror(t));
		EXPECT(sum == 10LL * n * (n - 1) / 2, "sum %lld after %d polls\n",
		       (long long)sum, polls);
	} else {
		CHECK(rmawin_start(win, &zero, 1));
		CHECK(rmawin_accumulate(win, &mine, 1, RMAWIN_INT64, 0, 0, RMAWIN_SUM));
		CHECK(rmawin_complete(win));
	}
	CHECK(rmawin_win_free(win));
	free(others);
	return 0;
}

static int take_notes(struct rmawin_win *win, const uint32_t *mem)
{
	uint32_t *next = calloc(n, sizeof(*next));
	struct rmawin_notification note;
	struct pollfd pfd = { .fd = rmawin_ep_fd(ep), .events = POLLIN };
	int got;

	EXPECT(next, "out of memory\n");
	for (got = 0; got < NOTES * (n - 1); got++) {
		if (got % 2 == 0) {
			EXPECT(poll(&pfd, 1, 60000) == 1 && (pfd.revents & POLLIN),
			       "poll: no notification after %d\n", got);
			CHECK(rmawin_notify_wait(win, &note, 0));
		} else {
			CHECK(rmawin_notify_wait(win, &note, 60000));
		}
		EXPECT(note.source > 0 && note.source < n && note.len == 4 &&
		       note.tag == next[note.source] &&
		       note.target_disp == (size_t)note.source * SLOTS + note.tag % SLOTS,
		       "notification source %d tag %u (want %u) disp %zu\n", note.source,
		       note.tag, note.source > 0 && note.source < n ? next[note.source] : 0,
		       note.target_disp);
		/* visible already: this put's value or a later one into the same slot */
		EXPECT(mem[note.target_disp] >= note.tag &&
		       mem[note.target_disp] % SLOTS == note.tag % SLOTS,
		       "slot %zu holds %u at notification %u\n", note.target_disp,
		       mem[note.target_disp], note.tag);
		next[note.source]++;
	}
	EXPECT(rmawin_notify_wait(win, &note, 10) == -ETIMEDOUT, "a notification too many\n");
	free(next);
	return 0;
}

static int case_notify(void)
{
	uint32_t *mem = calloc((size_t)n * SLOTS, 4), v;
	struct rmawin_win *win;
	int i;

	EXPECT(mem, "out of memory\n");
	CHECK(rmawin_win_create(ep, mem, me ? 0 : (size_t)n * SLOTS * 4, 4, 0, &win));
	CHECK(rmawin_lock_all(win));
	CHECK(rmawin_barrier(ep));
	if (me == 0) {
		if (take_notes(win, mem))
			return 1;
	} else {
		for (i = 0; i < NOTES; i++) {
			v = i;
			CHECK(rmawin_put_notify(win, &v, 4, 0, (size_t)me * SLOTS + i % SLOTS, i));
			CHECK(rmawin_flush(win, 0));
		}
	}
	CHECK(rmawin_unlock_all(win));
	CHECK(rmawin_barrier(ep));
	CHECK(rmawin_win_free(win));
	free(mem);
	return 0;
}

#define ORDER_OPS	32	/* rank 0's REPLACEs in a row */
#define ORDER_ROUNDS	8

/*
 * Across a wire every round trip is still in flight when the call that
 * started it returns, so two compare-and-swap loops of rank 0 in flight at
 * once would interleave their tries: with a racer's 0 landing between, the
 * later one's swap would land first, and the earlier one would fetch its
 * value.  The module starts no atomic on a queue pair while such a loop
 * is in flight there (atomic.c).
 */
static int case_order_same_op(void)
{
	uint64_t loc[2] = { 0, 5 }, v[ORDER_OPS], got[ORDER_OPS], prev = 0, zero = 0, one = 1;
	uint64_t old, want, y, chain[3], at = 5;
	int64_t stop = 0, bump;
	int last = n - 1, r, i;
	struct rmawin_win *win;

	CHECK(rmawin_win_create(ep, loc, me == last ? sizeof(loc) : 0, 8, RMAWIN_WIN_SAME_OP,
				&win));
	CHECK(mon_reset());
	CHECK(rmawin_lock_all(win));
	if (me == 0) {
		for (r = 0; r < ORDER_ROUNDS; r++) {
			for (i = 0; i < ORDER_OPS; i++) {
				v[i] = (uint64_t)(r + 1) << 32 | (uint64_t)(i + 1);
				CHECK(rmawin_get_accumulate(win, &v[i], &got[i], 1, RMAWIN_UINT64,
							    last, 0, RMAWIN_REPLACE));
			}
			CHECK(rmawin_flush(win, last));
			for (i = 0; i < ORDER_OPS; i++) {
				want = i ? v[i - 1] : prev;
				EXPECT(!got[i] || got[i] == want,
				       "REPLACE %d of round %d fetched %#llx, want %#llx (or 0)\n", i,
				       r, (unsigned long long)got[i], (unsigned long long)want);
			}
			prev = v[ORDER_OPS - 1];
			/* the loop's first try guesses 0 and fails: the add must wait */
			y = (uint64_t)(r + 1) << 40;
			CHECK(rmawin_fetch_and_op(win, &y, &chain[0], RMAWIN_UINT64, last, 1,
						  RMAWIN_REPLACE));
			CHECK(rmawin_fetch_and_op(win, &one, &chain[1], RMAWIN_UINT64, last, 1,
						  RMAWIN_SUM));
			CHECK(rmawin_fetch_and_op(win, &one, &chain[2], RMAWIN_UINT64, last, 1,
						  RMAWIN_NO_OP));
			CHECK(rmawin_flush(win, last));
			EXPECT(chain[0] == at && chain[1] == y && chain[2] == y + 1,
			       "REPLACE, SUM, NO_OP fetched %#llx %#llx %#llx, want %#llx %#llx %#llx\n",
			       (unsigned long long)chain[0], (unsigned long long)chain[1],
			       (unsigned long long)chain[2], (unsigned long long)at,
			       (unsigned long long)y, (unsigned long long)(y + 1));
			at = y + 1;
		}
		CHECK(mon_add(MON_STOP, 1, &bump));
	} else {
		while (!stop) {
			CHECK(rmawin_fetch_and_op(win, &zero, &old, RMAWIN_UINT64, last, 0,
						  RMAWIN_REPLACE));
			CHECK(rmawin_flush(win, last));
			CHECK(mon_read(MON_STOP, &stop));
		}
	}
	CHECK(rmawin_unlock_all(win));
	CHECK(rmawin_barrier(ep));
	want = ((uint64_t)ORDER_ROUNDS << 40) + 1;
	EXPECT(me != last || loc[1] == want, "location 1 is %#llx, want %#llx\n",
	       (unsigned long long)loc[1], (unsigned long long)want);
	CHECK(rmawin_win_free(win));
	return 0;
}

/*
 * loops_end: every rank adds 1 to every byte of the next rank's 64 words,
 * twice, on a window whose small integers take the device's
 * compare-and-swap loops (64 words: twice the lanes an operation keeps in
 * flight, so work requests are still to be posted from completions), and
 * ends the epoch without a flush; the target reads its bytes as soon as
 * its own call learns that the epoch ended: WAIT, the fence, its
 * exclusive lock of its own window that the origin's UNLOCK lets it have.
 */
#define LOOPS_WORDS	64

/* 1 (and a message) if a byte is not 3; each byte read once */
static int loops_check(const uint64_t *mem, const char *how)
{
	const volatile unsigned char *b = (const volatile unsigned char *)mem;
	unsigned char v;
	size_t j;

	for (j = 0; j < LOOPS_WORDS * 8; j++) {
		v = b[j];
		if (v != 3) {
			fprintf(stderr, "sync_check: rank %d: %s: after %s: byte %zu is %u, want 3\n",
				me, cur, how, j, v);
			return 1;
		}
	}
	return 0;
}

static int loops_add(struct rmawin_win *win, const int8_t *ones, int right)
{
	CHECK(rmawin_accumulate(win, ones, LOOPS_WORDS * 8, RMAWIN_INT8, right, 0, RMAWIN_SUM));
	CHECK(rmawin_accumulate(win, ones, LOOPS_WORDS * 8, RMAWIN_INT8, right, 0, RMAWIN_SUM));
	return 0;
}

/* Every rank's bytes back to 1, once every origin is done with them. */
static int loops_reset(uint64_t *mem)
{
	CHECK(rmawin_barrier(ep));
	memset(mem, 1, LOOPS_WORDS * 8);
	CHECK(rmawin_barrier(ep));
	return 0;
}

static int case_loops_end(void)
{
	int left = (me + n - 1) % n, right = (me + 1) % n, bad = 0;
	uint64_t mem[LOOPS_WORDS];
	int8_t ones[LOOPS_WORDS * 8];
	struct rmawin_win *win;

	memset(mem, 1, sizeof(mem));
	memset(ones, 1, sizeof(ones));
	CHECK(rmawin_win_create(ep, mem, sizeof(mem), 1,
				RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS, &win));
	CHECK(rmawin_post(win, &left, 1));
	CHECK(rmawin_start(win, &right, 1));
	if (loops_add(win, ones, right))
		return 1;
	CHECK(rmawin_complete(win));
	CHECK(rmawin_wait(win));
	CHECK(rmawin_sync(win));
	bad |= loops_check(mem, "WAIT");
	if (loops_reset(mem))
		return 1;
	CHECK(rmawin_fence(win, RMAWIN_MODE_NOPRECEDE));
	if (loops_add(win, ones, right))
		return 1;
	CHECK(rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
	CHECK(rmawin_sync(win));
	bad |= loops_check(mem, "the fence");
	if (loops_reset(mem))
		return 1;
	CHECK(rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, right));
	/* every origin holds its lock before any target asks for its own */
	CHECK(rmawin_barrier(ep));
	if (loops_add(win, ones, right))
		return 1;
	CHECK(rmawin_unlock(win, right));
	CHECK(rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, me));
	CHECK(rmawin_sync(win));
	bad |= loops_check(mem, "the lock");
	CHECK(rmawin_unlock(win, me));
	CHECK(rmawin_barrier(ep));
	CHECK(rmawin_win_free(win));
	return bad;
}

static const struct {
	const char *name;
	int (*fn)(void);
	int min_ranks;
} cases[] = {
	{ "counter", case_counter, 1 },
	{ "fetch", case_fetch, 1 },
	{ "fetch_same_op", case_fetch_same_op, 1 },
	{ "cas", case_cas, 1 },
	{ "accdbl", case_accdbl, 1 },
	{ "shared", case_shared, 3 },
	{ "starve", case_starve, 4 },
	{ "sleep", case_sleep, 2 },
	{ "ring", case_ring, 2 },
	{ "onetoall", case_onetoall, 2 },
	{ "notify", case_notify, 2 },
	{ "order_same_op", case_order_same_op, 2 },
	{ "loops_end", case_loops_end, 2 },
};

int main(void)
{
	int64_t mon_mem[MON_LEN] = { 0 };
	unsigned int i, done = 0;
	int ret;

	ret = rmawin_ep_open_env(&ep);
	if (ret) {
		fprintf(stderr, "sync_check: ep_open_env: %s\n", rmawin_strerror(ret));
		return 1;
	}
	me = rmawin_rank(ep);
	n = rmawin_nranks(ep);
	CHECK(rmawin_win_create(ep, mon_mem, me ? 0 : sizeof(mon_mem), 8, 0, &mon));
	CHECK(rmawin_lock_all(mon));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (n < cases[i].min_ranks)
			continue;
		cur = cases[i].name;
		if (cases[i].fn())
			return 1;
		/* every rank done with the case before the next resets the monitor */
		CHECK(rmawin_barrier(ep));
		done++;
	}
	cur = "teardown";
	CHECK(rmawin_unlock_all(mon));
	CHECK(rmawin_win_free(mon));
	printf("sync_check: rank %d of %d: %u cases passed\n", me, n, done);
	return rmawin_ep_close(ep) ? 1 : 0;
}
