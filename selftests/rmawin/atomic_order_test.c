// SPDX-License-Identifier: GPL-2.0
/*
 * NIC atomics keep MPI's default accumulate_ordering (rar,raw,war,waw):
 * the accumulate-family operations of one origin on one location of a
 * RMAWIN_WIN_SAME_OP window take effect in the order they were issued,
 * with nothing waited for between them.  A fetch-and-add and a single
 * compare-and-swap execute in the order of their queue pair; an operation
 * that takes more than one work request (a compare-and-swap loop, several
 * elements) posts the later ones from its completion handler, so the
 * module starts no other atomic to that target until it is over
 * (Documentation/design.rst).  Each test issues its operations in one
 * passive-target epoch with no flush between those it checks:
 *
 *  - get_accumulate SUM of 64 elements, then fetch_and_op SUM on the last
 *    of them, from every rank to every rank: the fetch_and_op fetched the
 *    get_accumulate's +1 (its one work request would overtake the 63
 *    before), and the get_accumulate did not fetch the fetch_and_op's add;
 *  - fetch_and_op REPLACE, SUM and NO_OP on one location, from every rank
 *    to every rank: a chain (the add would land between the REPLACE's
 *    first try, which fails, and its second);
 *  - rank 0 issues 64 get_accumulate REPLACEs to one location in a row
 *    while the other ranks REPLACE it with 0 as fast as they can: each of
 *    rank 0's operations fetched 0 or the value of its own one just before,
 *    never a later one's (two loops in flight at once, a racer changing
 *    the value between their tries, and the later one's swap lands first);
 *    to a peer, and to rank 0's own window (the queue pair to itself).
 *
 * Each also on a window without the flag, where the target's kernel
 * applies the operations in the order their messages arrive on the queue
 * pair (and a rank's own at once): the same order, no device atomic.
 */
#include "atomic_test.h"

/* Both paths of the library, each on a same_op window and on a plain one */
FIXTURE(order) {};
FIXTURE_VARIANT(order) {
	int no_ring;
	unsigned int flags;	/* RMAWIN_WIN_SAME_OP: the device's atomics */
};
RMAWIN_TEST_VARIANT_ADD(order, same_op, .flags = RMAWIN_WIN_SAME_OP);
RMAWIN_TEST_VARIANT_ADD(order, plain, .flags = 0);
FIXTURE_SETUP(order)
{
	rmawin_test_path(variant->no_ring);
}
FIXTURE_TEARDOWN(order) {}

/*
 * The device's atomics: at least @per of them from each of the NR ranks'
 * endpoints (@ranks of them) and @all in all; none on a plain window.
 */
static void expect_path(struct __test_metadata *_metadata, unsigned int flags, int ranks,
			long per, long all, long grew)
{
	int r;

	if (flags & RMAWIN_WIN_SAME_OP) {
		expect_ep_atomics(_metadata, ranks, per);
		EXPECT_LE(all, grew);
		return;
	}
	EXPECT_EQ(0, grew) TH_LOG("nic_atomics grew by %ld on a window without the flag", grew);
	for (r = 0; r < NR; r++) {
		EXPECT_EQ(0, sh->ep_atomics[r]) TH_LOG("rank %d's endpoint: %ld NIC atomics", r,
						       sh->ep_atomics[r]);
	}
}

/* Rank @me's operation @op of round @round fetched @got, not @want. */
static void misordered(int me, uint64_t got, uint64_t want, int round, int op)
{
	if (!sh->misordered[me]++) {
		sh->first_bad[me][0] = got;
		sh->first_bad[me][1] = want;
		sh->first_bad[me][2] = (uint64_t)round << 16 | op;
	}
}

static void expect_ordered(struct __test_metadata *_metadata, const char *what)
{
	int r;

	/* braces: the harness's EXPECT is two statements */
	for (r = 0; r < NR; r++) {
		EXPECT_EQ(0, sh->misordered[r])
			TH_LOG("%s: %ld operations of rank %d out of order; the first (round %llu, "
			       "operation %llu) fetched %#llx, want %#llx", what,
			       sh->misordered[r], r,
			       (unsigned long long)(sh->first_bad[r][2] >> 16),
			       (unsigned long long)(sh->first_bad[r][2] & 0xffff),
			       (unsigned long long)sh->first_bad[r][0],
			       (unsigned long long)sh->first_bad[r][1]);
	}
}

/* ---- several elements, then one of them ------------------------------------ */

#define NE		64		/* elements of the get_accumulate */
#define RE		8		/* rounds */
#define ADD_LAST	(1ULL << 32)	/* what the fetch_and_op adds to the last element */

/* Element @i of origin @o's region of every window, before the first round */
static uint64_t elem_initial(int o, int i)
{
	return ((uint64_t)(o + 1) << 48) + (uint64_t)i * 1000;
}

/* Element @i of origin @o's region after @rounds rounds */
static uint64_t elem_after(int o, int i, int rounds)
{
	return elem_initial(o, i) + rounds + (i == NE - 1 ? rounds * ADD_LAST : 0);
}

/*
 * Every round, to every rank: get_accumulate SUM of NE ones over this
 * rank's region, then fetch_and_op SUM of ADD_LAST on its last element;
 * one flush_all for the round.  Only this rank touches its region, so
 * every fetched value is known.
 */
static int elems_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[NR * NE], one[NE], res[NR][NE], got[NR], add = ADD_LAST, want;
	int me = rmawin_rank(ep), round, t, o, i;
	unsigned int flags = *(const unsigned int *)arg;
	struct rmawin_win *win;
	long before;

	for (o = 0; o < NR; o++)
		for (i = 0; i < NE; i++)
			mem[o * NE + i] = elem_initial(o, i);
	for (i = 0; i < NE; i++)
		one[i] = 1;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, flags, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (round = 0; round < RE; round++) {
		for (t = 0; t < NR; t++) {
			RMAWIN_TEST_TRY(4, rmawin_get_accumulate(win, one, res[t], NE, RMAWIN_UINT64,
								 t, me * NE, RMAWIN_SUM));
			RMAWIN_TEST_TRY(5, rmawin_fetch_and_op(win, &add, &got[t], RMAWIN_UINT64, t,
							       me * NE + NE - 1, RMAWIN_SUM));
		}
		RMAWIN_TEST_TRY(6, rmawin_flush_all(win));
		for (t = 0; t < NR; t++) {
			for (i = 0; i < NE; i++) {
				want = elem_after(me, i, round);
				if (res[t][i] != want)
					misordered(me, res[t][i], want, round, t * (NE + 1) + i);
			}
			/* after the get_accumulate's +1 */
			want = elem_after(me, NE - 1, round) + 1;
			if (got[t] != want)
				misordered(me, got[t], want, round, t * (NE + 1) + NE);
		}
	}
	RMAWIN_TEST_TRY(7, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	RMAWIN_TEST_TRY(8, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(9, rmawin_sync(win));
	for (o = 0; o < NR; o++) {
		for (i = 0; i < NE; i++) {
			want = elem_after(o, i, RE);
			if (mem[o * NE + i] != want) {
				RMAWIN_TEST_MSG("element %d of rank %d's region: %#llx, want %#llx", i,
						o, (unsigned long long)mem[o * NE + i],
						(unsigned long long)want);
				return 10;
			}
		}
	}
	RMAWIN_TEST_TRY(11, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(order, several_elements_then_one_in_order, 90)
{
	unsigned int flags = variant->flags;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, elems_rank, &flags, 80);
	expect_ordered(_metadata, "get_accumulate of 64 elements, then fetch_and_op on the last");
	/* one device atomic per element */
	expect_path(_metadata, flags, NR, (long)RE * NR * (NE + 1), (long)RE * NR * NR * (NE + 1),
		    grew);
	expect_end(_metadata);
}

/* ---- a compare-and-swap loop, then an add and a read ---------------------- */

#define RL	16	/* rounds */

/* What rank @me swaps into its location on rank @t in round @round */
static uint64_t loop_value(int me, int t, int round)
{
	return (uint64_t)(round + 1) << 32 | (uint64_t)me << 8 | (uint64_t)t;
}

/*
 * Every round, to every rank, on this rank's own location there (which
 * starts non-zero, so that the REPLACE's first try, which guesses 0,
 * fails): fetch_and_op REPLACE, SUM of 1, NO_OP; one flush_all for the
 * round.  The REPLACE fetched what the last round left, the SUM the
 * REPLACE's value, the NO_OP that plus 1.
 */
static int loop_add_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[NR], y[NR], got[NR][3], at[NR], one = 1, want;
	int me = rmawin_rank(ep), round, t, o;
	unsigned int flags = *(const unsigned int *)arg;
	struct rmawin_win *win;
	long before;

	for (o = 0; o < NR; o++)
		mem[o] = 5 + o;
	for (t = 0; t < NR; t++)
		at[t] = 5 + me;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, flags, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (round = 0; round < RL; round++) {
		for (t = 0; t < NR; t++) {
			y[t] = loop_value(me, t, round);
			RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &y[t], &got[t][0], RMAWIN_UINT64,
							       t, me, RMAWIN_REPLACE));
			RMAWIN_TEST_TRY(5, rmawin_fetch_and_op(win, &one, &got[t][1], RMAWIN_UINT64,
							       t, me, RMAWIN_SUM));
			RMAWIN_TEST_TRY(6, rmawin_fetch_and_op(win, &one, &got[t][2], RMAWIN_UINT64,
							       t, me, RMAWIN_NO_OP));
		}
		RMAWIN_TEST_TRY(7, rmawin_flush_all(win));
		for (t = 0; t < NR; t++) {
			if (got[t][0] != at[t])
				misordered(me, got[t][0], at[t], round, t * 3);
			if (got[t][1] != y[t])
				misordered(me, got[t][1], y[t], round, t * 3 + 1);
			if (got[t][2] != y[t] + 1)
				misordered(me, got[t][2], y[t] + 1, round, t * 3 + 2);
			at[t] = y[t] + 1;
		}
	}
	RMAWIN_TEST_TRY(8, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(10, rmawin_sync(win));
	for (o = 0; o < NR; o++) {
		want = loop_value(o, me, RL - 1) + 1;
		if (mem[o] != want) {
			RMAWIN_TEST_MSG("rank %d's location: %#llx, want %#llx", o,
					(unsigned long long)mem[o], (unsigned long long)want);
			return 11;
		}
	}
	RMAWIN_TEST_TRY(12, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(order, replace_then_add_then_read_in_order, 90)
{
	unsigned int flags = variant->flags;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, loop_add_rank, &flags, 80);
	expect_ordered(_metadata, "fetch_and_op REPLACE, SUM, NO_OP");
	/*
	 * one device atomic each at least: the REPLACE's compare-and-swap loop
	 * guesses first what its queue pair last left in the word, right here
	 */
	expect_path(_metadata, flags, NR, (long)RL * NR * 3, (long)RL * NR * NR * 3, grew);
	expect_end(_metadata);
}

/* ---- a sequence of REPLACEs against racers -------------------------------- */

#define KR	64	/* rank 0's get_accumulates per round */
#define RR	16	/* rounds at least */
#define RR_MAX	512	/* rounds at most, while no racer came between */

/* What rank 0's operation @i of round @round swaps in: never 0 */
static uint64_t seq_value(int round, int i)
{
	return (uint64_t)(round + 1) << 32 | (uint64_t)(i + 1);
}

struct racers_case {
	int target;		/* where rank 0's location is */
	unsigned int flags;	/* of the window */
};

/*
 * Whether a racer's REPLACE must land between two of rank 0's: not on a
 * plain window to rank 0 itself, where rank 0's operations are copies done
 * back to back, by its ioctl or by the poller, which nothing need come
 * between (and which keep their order without any help).
 */
static bool racers_must_land(const struct racers_case *c)
{
	return (c->flags & RMAWIN_WIN_SAME_OP) || c->target != 0;
}

/*
 * Rank 0 issues KR get_accumulate REPLACEs to element 0 of the target's
 * window and flushes, RR times; every other rank swaps 0 in there with
 * fetch_and_op REPLACE and a flush, over and over, from before rank 0's
 * first until rank 0 is done.
 * Each of rank 0's operations must have fetched the value of its own one
 * just before (the last round's last for the first), or a racer's 0.
 */
static int racers_rank(struct rmawin_ep *ep, void *arg)
{
	const struct racers_case *c = arg;
	uint64_t mem[8] = { 0 }, v[KR], got[KR], prev = 0, zero = 0, old, want;
	int target = c->target, me = rmawin_rank(ep), round, i, r;
	struct rmawin_win *win;
	double until;
	long before;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, c->flags, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	if (me == 0) {
		/*
		 * Every racer under way first: on a plain window this rank's
		 * own operations are copies, done before a racer's first round
		 * trip.  Bounded: a racer that failed is the run's error.
		 */
		until = rmawin_test_now() + 20;
		for (r = 1; r < NR; r++)
			while (!__atomic_load_n(&sh->raced[r], __ATOMIC_ACQUIRE) &&
			       rmawin_test_now() < until)
				usleep(1000);
		/*
		 * Rounds go on past RR until a racer's 0 has landed between
		 * two of this rank's operations (racers_run() wants one), so
		 * a run whose racers the scheduler held back for RR rounds
		 * still races; bounded in rounds and in time.
		 */
		until = rmawin_test_now() + 30;
		for (round = 0; round < RR_MAX; round++) {
			if (round >= RR && (sh->between[me] || !racers_must_land(c) ||
					    rmawin_test_now() > until))
				break;
			for (i = 0; i < KR; i++) {
				v[i] = seq_value(round, i);
				RMAWIN_TEST_TRY(4, rmawin_get_accumulate(win, &v[i], &got[i], 1,
									 RMAWIN_UINT64, target, 0,
									 RMAWIN_REPLACE));
			}
			RMAWIN_TEST_TRY(5, rmawin_flush(win, target));
			for (i = 0; i < KR; i++) {
				want = i ? v[i - 1] : prev;
				if (got[i] == want)
					continue;
				if (got[i])
					misordered(me, got[i], want, round, i);
				else if (i)
					sh->between[me]++;
			}
			prev = v[KR - 1];
		}
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	} else {
		while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
			RMAWIN_TEST_TRY(6, rmawin_fetch_and_op(win, &zero, &old, RMAWIN_UINT64, target,
							       0, RMAWIN_REPLACE));
			RMAWIN_TEST_TRY(7, rmawin_flush(win, target));
			__atomic_add_fetch(&sh->raced[me], 1, __ATOMIC_RELEASE);
		}
	}
	RMAWIN_TEST_TRY(8, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	return 0;
}

static void racers_run(struct __test_metadata *_metadata, int target, unsigned int flags)
{
	struct racers_case c = { .target = target, .flags = flags };
	long grew;
	int r;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, racers_rank, &c, 80);
	expect_ordered(_metadata, "rank 0's get_accumulate REPLACEs");
	/* The test raced something: a racer's 0 landed between two of rank 0's */
	if (racers_must_land(&c)) {
		EXPECT_LT(0, sh->between[0]) TH_LOG("no racer's REPLACE landed between rank 0's");
	}
	for (r = 1; r < NR; r++) {
		EXPECT_LT(0, sh->raced[r]) TH_LOG("rank %d never raced", r);
	}
	/* at least one compare-and-swap per operation of rank 0's */
	expect_path(_metadata, flags, 1, (long)RR * KR, (long)RR * KR, grew);
	expect_end(_metadata);
}

TEST_F_TIMEOUT(order, replace_sequence_against_racers_to_peer, 90)
{
	racers_run(_metadata, 1, variant->flags);
}

TEST_F_TIMEOUT(order, replace_sequence_against_racers_to_self, 90)
{
	racers_run(_metadata, 0, variant->flags);
}

TEST_HARNESS_MAIN
