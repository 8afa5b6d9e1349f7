// SPDX-License-Identifier: GPL-2.0
/*
 * NIC atomics on a RMAWIN_WIN_SAME_OP window, continued from
 * atomic_test.c: MAX, MIN, PROD, the bitwise and logical ops and SUM
 * through accumulate (a compare-and-swap loop from the origin) and NO_OP;
 * accumulate and get_accumulate of 64 elements all to all; a group of one
 * keeps the CPU path; int32 operations take the device's atomics too with
 * RMAWIN_WIN_NIC_SMALL_INTS (atomic_int_test.c has the smaller integers),
 * the target's kernel without it, beside int64 ones (the device) and
 * doubles (the target's kernel); a window without the flag never takes
 * the device's atomics.
 */
#include "atomic_test.h"

/* ---- the other ops: a compare-and-swap loop from the origin --------------- */

#define KO	16	/* operations per rank on each location: NR * KO = 64 bits */

/* One location of rank 0's window per op; the result does not depend on the order. */
static const struct {
	const char *name;
	enum rmawin_op op;
	enum rmawin_type type;
	uint64_t initial;
} loop_slots[] = {
	{ "MAX int64", RMAWIN_MAX, RMAWIN_INT64, (uint64_t)-5000000000000LL },
	{ "MAX uint64", RMAWIN_MAX, RMAWIN_UINT64, 7 },
	{ "MIN int64", RMAWIN_MIN, RMAWIN_INT64, 5000000000000LL },
	{ "PROD uint64", RMAWIN_PROD, RMAWIN_UINT64, 1 },
	{ "BOR uint64", RMAWIN_BOR, RMAWIN_UINT64, 0 },
	{ "BAND uint64", RMAWIN_BAND, RMAWIN_UINT64, UINT64_MAX },
	{ "BXOR int64", RMAWIN_BXOR, RMAWIN_INT64, 0x5555 },
	{ "LXOR int64", RMAWIN_LXOR, RMAWIN_INT64, 0 },
	{ "LOR uint64", RMAWIN_LOR, RMAWIN_UINT64, 0 },
	{ "LAND int64", RMAWIN_LAND, RMAWIN_INT64, 9 },
	{ "SUM int64", RMAWIN_SUM, RMAWIN_INT64, (uint64_t)-3 },
};

#define NSLOTS	ARRAY_SIZE(loop_slots)

static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* What rank @r gives in its @i-th operation on slot @s */
static uint64_t loop_operand(unsigned int s, int r, int i)
{
	unsigned int k = r * KO + i;
	int64_t v = (int64_t)(mix(s * 1000 + k) % 2001) - 1000;

	switch (loop_slots[s].op) {
	case RMAWIN_MAX:
		if (loop_slots[s].type == RMAWIN_UINT64)	/* both halves of the range */
			return mix(k) >> (k % 2);
		/* fall through */
	case RMAWIN_MIN:
		return (uint64_t)(v * 1000000007LL);
	case RMAWIN_PROD:
		return 3;
	case RMAWIN_BOR:
		return 1ULL << k;
	case RMAWIN_BAND:
		return ~(1ULL << k);
	case RMAWIN_LXOR:
		return k != 0;		/* 63 toggles */
	case RMAWIN_LOR:
		return k == 37 ? 0x100000000ULL : 0;	/* one true value, above 32 bits */
	case RMAWIN_LAND:
		return k == 5 ? 0 : mix(k) | 1;		/* one false value */
	case RMAWIN_SUM:
		return (uint64_t)((int64_t)(r + 1) * (i + 1) * 1000000007LL * (i % 2 ? -1 : 1));
	default:
		return mix(k);
	}
}

/* target @op origin, in C: the reference */
static uint64_t loop_apply(unsigned int s, uint64_t t, uint64_t o)
{
	int sgn = loop_slots[s].type == RMAWIN_INT64;

	switch (loop_slots[s].op) {
	case RMAWIN_MAX:
		return (sgn ? (int64_t)o > (int64_t)t : o > t) ? o : t;
	case RMAWIN_MIN:
		return (sgn ? (int64_t)o < (int64_t)t : o < t) ? o : t;
	case RMAWIN_PROD:
		return t * o;
	case RMAWIN_BOR:
		return t | o;
	case RMAWIN_BAND:
		return t & o;
	case RMAWIN_BXOR:
		return t ^ o;
	case RMAWIN_LXOR:
		return !t != !o;
	case RMAWIN_LOR:
		return t || o;
	case RMAWIN_LAND:
		return t && o;
	case RMAWIN_SUM:
		return t + o;
	default:
		return t;
	}
}

/*
 * Every rank applies KO operands of each slot's op to rank 0's slot with
 * accumulate, all in one epoch with nothing waited for in between; the
 * last slot is MAX again through get_accumulate, whose fetched values
 * must each be a value the location held.
 */
static int loop_ops_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[NSLOTS + 1], origin[NSLOTS + 1][KO], got[KO];
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;
	unsigned int s;
	long before;

	(void)arg;
	for (s = 0; s < NSLOTS; s++)
		mem[s] = loop_slots[s].initial;
	mem[NSLOTS] = loop_slots[0].initial;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < KO; i++) {
		for (s = 0; s < NSLOTS; s++) {
			origin[s][i] = loop_operand(s, me, i);
			RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &origin[s][i], 1,
							     loop_slots[s].type, 0, s,
							     loop_slots[s].op));
		}
		origin[NSLOTS][i] = loop_operand(0, me, i) ^ 0x10;
		RMAWIN_TEST_TRY(5, rmawin_get_accumulate(win, &origin[NSLOTS][i], &got[i], 1,
							 RMAWIN_INT64, 0, NSLOTS, RMAWIN_MAX));
	}
	RMAWIN_TEST_TRY(6, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	memcpy(&sh->got[me * KO], got, sizeof(got));
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(8, rmawin_sync(win));
		memcpy(sh->final, mem, sizeof(mem));
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	return 0;
}

/* get_accumulate MAX fetched @v: the initial value or an operand, never above the end */
static int loop_ga_ok(uint64_t v, uint64_t final)
{
	int r, i;

	if ((int64_t)v > (int64_t)final)
		return 0;
	if (v == loop_slots[0].initial)
		return 1;
	for (r = 0; r < NR; r++)
		for (i = 0; i < KO; i++)
			if (v == (loop_operand(0, r, i) ^ 0x10))
				return 1;
	return 0;
}

TEST_F_TIMEOUT(path, accumulate_other_ops_cas_loop, 90)
{
	uint64_t want, ga_max = loop_slots[0].initial;
	unsigned int s;
	long grew;
	int r, i;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, loop_ops_rank, NULL, 80);
	for (s = 0; s < NSLOTS; s++) {
		want = loop_slots[s].initial;
		for (r = 0; r < NR; r++)
			for (i = 0; i < KO; i++)
				want = loop_apply(s, want, loop_operand(s, r, i));
		EXPECT_EQ(want, sh->final[s]) TH_LOG("%s: %#llx, want %#llx", loop_slots[s].name,
						     (unsigned long long)sh->final[s],
						     (unsigned long long)want);
	}
	for (r = 0; r < NR; r++)
		for (i = 0; i < KO; i++)
			ga_max = loop_apply(0, ga_max, loop_operand(0, r, i) ^ 0x10);
	EXPECT_EQ(ga_max, sh->final[NSLOTS]);
	for (i = 0; i < NR * KO; i++) {
		EXPECT_TRUE(loop_ga_ok(sh->got[i], ga_max))
			TH_LOG("get_accumulate MAX fetched %lld, which the location never held",
			       (long long)sh->got[i]);
	}
	/* at least one compare-and-swap per operation */
	expect_ep_atomics(_metadata, NR, KO * (NSLOTS + 1));
	EXPECT_LE((long)(NR * KO * (NSLOTS + 1)), grew);
	expect_end(_metadata);
}

/* ---- accumulate and get_accumulate of 64 elements, all to all ------------- */

#define NE	64	/* elements per operation */

/* Region A: accumulate SUM of int64, both signs */
static int64_t acc_operand(int r, int i)
{
	return (int64_t)(r + 1) * (i + 1) * 1000003 * (i % 2 ? -1 : 1);
}

static uint64_t acc_initial(int i)
{
	return (uint64_t)(-(int64_t)i * 1000);
}

/* Region B: get_accumulate SUM of uint64, positive, wrapping for the first elements */
static uint64_t ga_operand(int r, int i)
{
	return (uint64_t)(r + 1) * (i + 1);
}

static uint64_t ga_initial(int i)
{
	return UINT64_MAX - 2 * i;
}

/* Region C: accumulate MAX of int64 (a compare-and-swap loop per element) */
static int64_t max_operand(int r, int i)
{
	return (int64_t)(mix(r * NE + i) % 2000001) - 1000000;
}

#define MAX_INITIAL	(-5000000LL)

/* Any rank's window once all @n ranks' operations are done, as it should be */
static void acc_expected(uint64_t *want, int n)
{
	int64_t m;
	int r, i;

	for (i = 0; i < NE; i++) {
		want[i] = acc_initial(i);
		want[NE + i] = ga_initial(i);
		m = MAX_INITIAL;
		for (r = 0; r < n; r++) {
			want[i] += (uint64_t)acc_operand(r, i);
			want[NE + i] += ga_operand(r, i);
			m = max_operand(r, i) > m ? max_operand(r, i) : m;
		}
		want[2 * NE + i] = (uint64_t)m;
	}
}

/*
 * Every rank sends each rank, itself included, an accumulate SUM of NE
 * int64s, a get_accumulate SUM of NE uint64s and an accumulate MAX of NE
 * int64s, in one fence epoch; each rank checks its own window after the
 * closing fence, and hands the previous values to the test.
 */
static int acc_many_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[3 * NE], want[3 * NE], a[NE], b[NE], c[NE], res[NR][NE];
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), t, i;
	struct rmawin_win *win;
	long before;

	(void)arg;
	for (i = 0; i < NE; i++) {
		mem[i] = acc_initial(i);
		mem[NE + i] = ga_initial(i);
		mem[2 * NE + i] = (uint64_t)MAX_INITIAL;
		a[i] = (uint64_t)acc_operand(me, i);
		b[i] = ga_operand(me, i);
		c[i] = (uint64_t)max_operand(me, i);
	}
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_fence(win, 0));
	for (t = 0; t < n; t++) {
		RMAWIN_TEST_TRY(3, rmawin_accumulate(win, a, NE, RMAWIN_INT64, t, 0, RMAWIN_SUM));
		RMAWIN_TEST_TRY(4, rmawin_get_accumulate(win, b, res[t], NE, RMAWIN_UINT64, t, NE,
							 RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_accumulate(win, c, NE, RMAWIN_INT64, t, 2 * NE,
						     RMAWIN_MAX));
	}
	RMAWIN_TEST_TRY(6, rmawin_fence(win, 0));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	for (t = 0; t < n; t++)
		memcpy(&sh->got[(t * NR + me) * NE], res[t], sizeof(res[t]));
	acc_expected(want, n);
	for (i = 0; i < 3 * NE; i++) {
		if (mem[i] != want[i]) {
			RMAWIN_TEST_MSG("element %d of region %c: %#llx, want %#llx", i % NE,
					'A' + i / NE, (unsigned long long)mem[i],
					(unsigned long long)want[i]);
			return 7;
		}
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, accumulate_64_elements_all_to_all, 90)
{
	struct fetched ops[NR];
	uint64_t want[3 * NE];
	char what[64];
	long grew;
	int t, r, i, ok;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, acc_many_rank, NULL, 80);
	acc_expected(want, NR);
	/* each element of get_accumulate's results: the NR previous values form a chain */
	for (t = 0, ok = 1; t < NR && ok; t++) {
		for (i = 0; i < NE && ok; i++) {
			for (r = 0; r < NR; r++)
				ops[r] = (struct fetched){ .got = sh->got[(t * NR + r) * NE + i],
							   .add = (int64_t)ga_operand(r, i) };
			snprintf(what, sizeof(what), "get_accumulate to rank %d, element %d", t, i);
			ok = expect_chain(_metadata, what, ops, NR, ga_initial(i), want[NE + i]);
		}
	}
	/* one device atomic per element at least: NR targets x 3 x NE */
	expect_ep_atomics(_metadata, NR, 3 * NR * NE);
	EXPECT_LE(3 * NR * NR * NE, grew);
	expect_end(_metadata);
}

/* ---- a group of one rank ------------------------------------------------- */

/*
 * Alone in its group a rank's own operations are the only ones on its
 * window, and the kernel keeps its CPU path (design.rst): fetch_and_op SUM
 * and a MAX are exact, the alignment rule holds all the same.
 */
static int single_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t mem[4] = { 5 }, one = 1, big = 77, got[K], r;
	struct rmawin_win *win;
	int i, bad = 0;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_TRY(2, rmawin_lock_all(win));
	for (i = 0; i < K; i++)
		RMAWIN_TEST_TRY(3, rmawin_fetch_and_op(win, &one, &got[i], RMAWIN_UINT64, 0, 0,
						       RMAWIN_SUM));
	RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &big, 1, RMAWIN_INT64, 0, 8, RMAWIN_MAX));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, &one, &r, RMAWIN_INT64, 0, 4,
						      RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_compare_and_swap(win, &one, &big, &r, RMAWIN_UINT64,
							  0, 12));
	RMAWIN_TEST_TRY(5, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(6, rmawin_sync(win));
	memcpy(sh->got, got, sizeof(got));
	memcpy(sh->final, mem, sizeof(mem));
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	return bad ? 8 : 0;
}

TEST_F(path, single_rank_group_cpu_path)
{
	struct fetched ops[K];
	long grew;
	int i;

	shared_setup(_metadata);
	grew = run_counted(_metadata, 1, single_rank, NULL, 25);
	for (i = 0; i < K; i++)
		ops[i] = (struct fetched){ .got = sh->got[i], .add = 1 };
	expect_chain(_metadata, "fetch_and_op SUM, one rank", ops, K, 5, sh->final[0]);
	EXPECT_EQ(5 + K, sh->final[0]);
	EXPECT_EQ(77, sh->final[1]);
	EXPECT_EQ(0, sh->final[2]);
	EXPECT_EQ(0, grew) TH_LOG("nic_atomics grew by %ld in a group of one", grew);
	expect_end(_metadata);
}

/* ---- int32 on a same_op window: the device with NIC_SMALL_INTS ---------- */

#define KX	10	/* rounds of the int32 and double accumulates */

/* Where things are in rank 0's window (disp_unit 4) of the mixing tests */
#define MIX_I64		0	/* int64 counter, bytes 0-7 */
#define MIX_I32		3	/* int32 counter, bytes 12-15: not 8-byte aligned */
#define MIX_ARR		4	/* int32[4], bytes 16-31 */
#define MIX_DBL		8	/* double, bytes 32-39 */

struct mix {
	int with_int64;
	unsigned int flags;	/* the window's */
};

/*
 * Under a shared lock on rank 0, every rank fetch_and_ops +1 onto an int32
 * counter K times, and accumulates int32s and a double; with @with_int64,
 * it also fetch_and_ops +1 onto an int64 counter beside them, which takes
 * the device's atomics while the doubles stay with the target's kernel
 * (and the int32s too, without RMAWIN_WIN_NIC_SMALL_INTS).
 */
static int mix_rank(struct rmawin_ep *ep, void *arg)
{
	const struct mix *m = arg;
	int with_int64 = m->with_int64, me = rmawin_rank(ep), i, j;
	uint64_t mem[8] = { 0 }, got64[K];
	int32_t got32[K], one32 = 1, arr[4];
	int64_t one64 = 1;
	double dv = 0.5 * (me + 1);
	struct rmawin_win *win;
	long before;

	for (j = 0; j < 4; j++)
		arr[j] = (me + 1) * (j + 1);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 4, m->flags, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
	for (i = 0; i < K; i++) {
		if (with_int64)
			RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &one64, &got64[i], RMAWIN_INT64,
							       0, MIX_I64, RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_fetch_and_op(win, &one32, &got32[i], RMAWIN_INT32, 0,
						       MIX_I32, RMAWIN_SUM));
		if (i >= KX)
			continue;
		RMAWIN_TEST_TRY(6, rmawin_accumulate(win, arr, 4, RMAWIN_INT32, 0, MIX_ARR,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(7, rmawin_accumulate(win, &dv, 1, RMAWIN_DOUBLE, 0, MIX_DBL,
						     RMAWIN_SUM));
	}
	RMAWIN_TEST_TRY(8, rmawin_unlock(win, 0));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	for (i = 0; i < K; i++) {
		sh->got[me * K + i] = (uint32_t)got32[i];
		sh->got[(NR + me) * K + i] = with_int64 ? got64[i] : 0;
	}
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(10, rmawin_sync(win));
		memcpy(sh->final, mem, sizeof(mem));
	}
	RMAWIN_TEST_TRY(11, rmawin_win_free(win));
	return 0;
}

/* The int32 and double results of mix_rank(), the same with or without the int64 counter */
static void mix_check(struct __test_metadata *_metadata, int with_int64)
{
	const unsigned char *w = (const unsigned char *)sh->final;
	struct fetched ops[NR * K];
	int32_t c32, arr[4];
	int64_t c64;
	double d;
	int i, j;

	memcpy(&c64, w + 4 * MIX_I64, 8);
	memcpy(&c32, w + 4 * MIX_I32, 4);
	memcpy(arr, w + 4 * MIX_ARR, sizeof(arr));
	memcpy(&d, w + 4 * MIX_DBL, 8);
	EXPECT_EQ(NR * K, c32);
	for (i = 0; i < NR * K; i++)
		ops[i] = (struct fetched){ .got = sh->got[i], .add = 1 };
	expect_chain(_metadata, "int32 fetch_and_op", ops, NR * K, 0, (uint32_t)c32);
	for (j = 0; j < 4; j++) {
		/* sum over ranks r of (r + 1) * (j + 1), KX times */
		EXPECT_EQ(KX * NR * (NR + 1) / 2 * (j + 1), arr[j]) TH_LOG("int32 element %d", j);
	}
	EXPECT_EQ(KX * 0.5 * NR * (NR + 1) / 2, d);
	if (!with_int64) {
		EXPECT_EQ(0, c64) TH_LOG("bytes 0-7 were written: %#llx", (unsigned long long)c64);
		return;
	}
	EXPECT_EQ(NR * K, c64);
	for (i = 0; i < NR * K; i++)
		ops[i] = (struct fetched){ .got = sh->got[NR * K + i], .add = 1 };
	expect_chain(_metadata, "int64 fetch_and_op", ops, NR * K, 0, (uint64_t)c64);
}

TEST_F_TIMEOUT(path, same_op_int32_through_the_device_beside_double, 60)
{
	struct mix m = { 0, RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS };
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, mix_rank, &m, 50);
	mix_check(_metadata, 0);
	/* each int32 fetch_and_op and each accumulate of int32[4] (two words): a loop */
	EXPECT_LE((long)NR * (K + 2 * KX), grew);
	expect_ep_atomics(_metadata, NR, K + 2 * KX);
	expect_end(_metadata);
}

/* Doubles only, on a same_op window: the target's kernel computes them. */
static int double_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[2] = { 0 };
	int me = rmawin_rank(ep), i;
	double dv = 0.5 * (me + 1), got[KX];
	struct rmawin_win *win;
	long before;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
	for (i = 0; i < KX; i++) {
		RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &dv, 1, RMAWIN_DOUBLE, 0, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_fetch_and_op(win, &dv, &got[i], RMAWIN_DOUBLE, 0, 1,
						       RMAWIN_MAX));
	}
	RMAWIN_TEST_TRY(6, rmawin_unlock(win, 0));
	return rank_end(ep, win, mem, sizeof(mem), before);
}

TEST_F_TIMEOUT(path, same_op_double_stays_target_side, 60)
{
	double d[2];
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, double_rank, NULL, 50);
	memcpy(d, sh->final, sizeof(d));
	EXPECT_EQ(KX * 0.5 * NR * (NR + 1) / 2, d[0]);
	EXPECT_EQ(0.5 * NR, d[1]);
	EXPECT_EQ(0, grew) TH_LOG("nic_atomics grew by %ld with doubles only", grew);
	expect_ep_atomics_eq(_metadata, NR, 0);
	expect_end(_metadata);
}

TEST_F_TIMEOUT(path, same_op_int64_beside_int32_and_double, 60)
{
	struct mix m = { 1, RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS };
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, mix_rank, &m, 50);
	mix_check(_metadata, 1);
	expect_ep_atomics(_metadata, NR, K);
	EXPECT_LE(NR * K, grew);
	expect_end(_metadata);
}

/*
 * Without RMAWIN_WIN_NIC_SMALL_INTS the int32s go to the target's kernel
 * (one message per operation, applied there whole) and only the int64
 * counter takes the device: exactly one fetch-and-add per fetch_and_op,
 * and every result as exact as with the flag.
 */
TEST_F_TIMEOUT(path, same_op_int32_target_side_without_small_ints, 60)
{
	struct mix m = { 1, RMAWIN_WIN_SAME_OP };

	shared_setup(_metadata);
	run_counted(_metadata, NR, mix_rank, &m, 50);
	mix_check(_metadata, 1);
	expect_ep_atomics_eq(_metadata, NR, K);
	expect_end(_metadata);
}

/* ---- a window without the flag never takes the device's atomics ---------- */

/*
 * The same 8-byte integer operations on a window created without
 * RMAWIN_WIN_SAME_OP: fetch_and_op SUM K times, one compare_and_swap each
 * (one of them wins), an accumulate MAX of two uint64s.
 */
static int no_flag_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), i;
	uint64_t mem[4] = { 0 }, one = 1, got[K], mine = me + 1, zero = 0, old = 0;
	uint64_t maxv[2] = { me * 10, (1ULL << 63) | me };
	struct rmawin_win *win;
	long before;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < K; i++)
		RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &one, &got[i], RMAWIN_INT64, 0, 0,
						       RMAWIN_SUM));
	RMAWIN_TEST_TRY(5, rmawin_compare_and_swap(win, &mine, &zero, &old, RMAWIN_UINT64, 0, 1));
	RMAWIN_TEST_TRY(6, rmawin_accumulate(win, maxv, 2, RMAWIN_UINT64, 0, 2, RMAWIN_MAX));
	RMAWIN_TEST_TRY(7, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	memcpy(&sh->got[me * K], got, sizeof(got));
	sh->cas_old[me] = old;
	RMAWIN_TEST_TRY(8, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(9, rmawin_sync(win));
		memcpy(sh->final, mem, sizeof(mem));
	}
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, no_flag_window_takes_no_nic_atomics, 60)
{
	struct fetched ops[NR * K];
	int r, i, winners = 0;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, no_flag_rank, NULL, 50);
	EXPECT_EQ(0, grew) TH_LOG("nic_atomics grew by %ld on a window without the flag", grew);
	for (i = 0; i < NR * K; i++)
		ops[i] = (struct fetched){ .got = sh->got[i], .add = 1 };
	expect_chain(_metadata, "fetch_and_op SUM", ops, NR * K, 0, sh->final[0]);
	for (r = 0; r < NR; r++) {
		EXPECT_EQ(0, sh->ep_atomics[r]) TH_LOG("rank %d's endpoint: %ld NIC atomics", r,
						       sh->ep_atomics[r]);
		if (!sh->cas_old[r]) {
			winners++;
			EXPECT_EQ(r + 1, sh->final[1]);
		} else {
			EXPECT_EQ(sh->final[1], sh->cas_old[r]);
		}
	}
	EXPECT_EQ(1, winners);
	EXPECT_EQ((NR - 1) * 10, sh->final[2]);
	EXPECT_EQ((1ULL << 63) | (NR - 1), sh->final[3]);
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
