// SPDX-License-Identifier: GPL-2.0
/*
 * NIC atomics, the errors: on a window created with RMAWIN_WIN_SAME_OP an
 * 8-byte integer accumulate-family operation at a target offset that is
 * not a multiple of 8 is -EINVAL (the device's atomics need it), through
 * the library and through the raw ioctls, to this rank and to a peer; so
 * is a smaller integer whose elements would straddle two of the device's
 * words (an offset that is not a multiple of its size, the operation not
 * inside one word) with RMAWIN_WIN_NIC_SMALL_INTS, while one inside one
 * word works there, and without the flag (the target's kernel) both work;
 * other types at such offsets work; a same_op
 * window on a base that is not 8-byte aligned, RMAWIN_WIN_NIC_SMALL_INTS
 * without RMAWIN_WIN_SAME_OP, and unknown flag bits, are -EINVAL; the
 * module reports RMAWIN_FEAT_NIC_ATOMICS and RMAWIN_FEAT_NIC_SMALL_FLAG.
 * atomic_test.c has the operations.
 */
#include <stdint.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test through the library on both of its paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

static void expect_end(struct __test_metadata *_metadata)
{
	rmawin_test_expect_no_leaks(_metadata);
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

/* ---- errors: alignment and flags ------------------------------------------ */

/*
 * Every 8-byte integer operation of the accumulate family at a target
 * offset that is not a multiple of 8 on a same_op window (unit 1): -EINVAL
 * at once, to a peer and to itself, and through a batch.  Returns the
 * number of wrong answers.
 */
static int misaligned_ops(struct rmawin_ep *ep, struct rmawin_win *win, int t)
{
	/* static: nothing refused may point into this stack frame */
	static uint64_t v[2] = { 0x1111111111111111ULL, 0x2222 }, c, r[2];
	static int32_t v32 = 1, r32;
	static uint32_t c32;
	static int16_t v16 = 1;
	struct rmawin_batch *batch;
	int bad = 0, ret;

	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, v, r, RMAWIN_INT64, t, 4, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, v, r, RMAWIN_UINT64, t, 12,
						      RMAWIN_REPLACE));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, v, r, RMAWIN_INT64, t, 1, RMAWIN_NO_OP));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, v, r, RMAWIN_UINT64, t, 20,
						      RMAWIN_MAX));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_compare_and_swap(win, v, &c, r, RMAWIN_INT64, t, 4));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_compare_and_swap(win, v, &c, r, RMAWIN_UINT64, t, 2));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, v, 1, RMAWIN_INT64, t, 4, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, v, 2, RMAWIN_UINT64, t, 68, RMAWIN_BOR));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_get_accumulate(win, v, r, 1, RMAWIN_INT64, t, 4,
							RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_get_accumulate(win, v, r, 2, RMAWIN_UINT64, t, 20,
							RMAWIN_NO_OP));
	/* smaller integers, with NIC_SMALL_INTS: each element must lie in one of the device's words */
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, &v32, &r32, RMAWIN_INT32, t, 6,
						      RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v16, 1, RMAWIN_INT16, t, 7, RMAWIN_MAX));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v16, 2, RMAWIN_INT16, t, 5, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_compare_and_swap(win, &v32, &c32, &r32, RMAWIN_UINT32,
							  t, 6));
	/* a batch: refused when added, or when submitted, as the single call */
	RMAWIN_TEST_TRY(100, rmawin_batch_create(ep, 4, &batch));
	ret = rmawin_batch_fetch_and_op(batch, win, v, r, RMAWIN_INT64, t, 4, RMAWIN_SUM);
	if (!ret)
		ret = rmawin_batch_submit(batch);
	RMAWIN_TEST_WANT(-EINVAL, ret);
	rmawin_batch_free(batch);
	return bad;
}

/* Where align_rank()'s valid operations land, in bytes of its 128-byte window */
#define AL_I32		4	/* int32 fetch_and_op SUM: not 8-byte aligned, fine */
#define AL_I64		16	/* int64 fetch_and_op SUM */
#define AL_I32X2	36	/* int32[2] accumulate SUM */
#define AL_DBL		52	/* double accumulate SUM, not 8-byte aligned */
#define AL_U64X2	64	/* uint64[2] accumulate SUM */
#define AL_I16W		25	/* int16 accumulate SUM: odd, inside word 3 */
#define AL_I16F		27	/* int16 fetch_and_op SUM: odd, inside word 3 */
#define AL_I16X2W	81	/* int16[2] accumulate SUM: odd, inside word 10 */

static const int32_t al_i32x2[2] = { 7, -9 };
static const uint64_t al_u64x2[2] = { 1ULL << 40, UINT64_MAX };
static const int16_t al_i16 = 3, al_i16x2[2] = { 5, -7 };

/*
 * The valid operations beside them, to target @t; @r32, @r64, @r16:
 * result buffers.  The int16 ones are at odd bytes, but each inside one
 * of the device's words.
 */
static int aligned_ops(struct rmawin_win *win, int t, int32_t *r32, int64_t *r64, int16_t *r16)
{
	static const int16_t one16 = 1;
	static const int32_t one32 = 1;
	static const int64_t one64 = 1;
	static const double half = 0.5;
	int bad = 0;

	RMAWIN_TEST_WANT(0, rmawin_fetch_and_op(win, &one32, r32, RMAWIN_INT32, t, AL_I32,
						RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_fetch_and_op(win, &one64, r64, RMAWIN_INT64, t, AL_I64,
						RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_accumulate(win, al_i32x2, 2, RMAWIN_INT32, t, AL_I32X2,
					      RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_accumulate(win, &half, 1, RMAWIN_DOUBLE, t, AL_DBL,
					      RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_accumulate(win, al_u64x2, 2, RMAWIN_UINT64, t, AL_U64X2,
					      RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_accumulate(win, &al_i16, 1, RMAWIN_INT16, t, AL_I16W,
					      RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_fetch_and_op(win, &one16, r16, RMAWIN_INT16, t, AL_I16F,
						RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_accumulate(win, al_i16x2, 2, RMAWIN_INT16, t, AL_I16X2W,
					      RMAWIN_SUM));
	return bad;
}

/* The window after both ranks' aligned_ops() to it: the rest untouched (zero). */
static long aligned_check(const unsigned char *w, size_t len)
{
	unsigned char want[128] = { 0 };
	int32_t i32 = 2, i32x2[2] = { 2 * al_i32x2[0], 2 * al_i32x2[1] };
	int64_t i64 = 2;
	uint64_t u64x2[2] = { 2 * al_u64x2[0], 2 * al_u64x2[1] };
	int16_t i16 = 2 * al_i16, i16f = 2, i16x2[2] = { 2 * al_i16x2[0], 2 * al_i16x2[1] };
	double d = 1.0;
	size_t i;

	memcpy(want + AL_I32, &i32, 4);
	memcpy(want + AL_I64, &i64, 8);
	memcpy(want + AL_I32X2, i32x2, 8);
	memcpy(want + AL_DBL, &d, 8);
	memcpy(want + AL_U64X2, u64x2, 16);
	memcpy(want + AL_I16W, &i16, 2);
	memcpy(want + AL_I16F, &i16f, 2);
	memcpy(want + AL_I16X2W, i16x2, 4);
	for (i = 0; i < len; i++)
		if (w[i] != want[i])
			return i;
	return -1;
}

/*
 * On a same_op window without RMAWIN_WIN_NIC_SMALL_INTS (unit 1), to
 * target @t: smaller integers at offsets that are not multiples of their
 * size work (the target's kernel applies them), an int64 at byte 4 is
 * still refused.
 */
static int small_unaligned_ops(struct rmawin_win *win, int t, int32_t *r32)
{
	static const int32_t one32 = 1;
	static const int16_t one16 = 1;
	static const int64_t one64 = 1;
	static int64_t r64;
	int bad = 0;

	RMAWIN_TEST_WANT(0, rmawin_fetch_and_op(win, &one32, r32, RMAWIN_INT32, t, 2, RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_accumulate(win, &one16, 1, RMAWIN_INT16, t, 9, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, &one64, &r64, RMAWIN_INT64, t, 4,
						      RMAWIN_SUM));
	return bad;
}

/*
 * Two ranks, each to itself and to the other: on a same_op window of unit
 * 1 with RMAWIN_WIN_NIC_SMALL_INTS the misaligned integer operations are
 * refused, the aligned ones and the other types anywhere work, and the
 * unlock reports nothing for what was refused; on one without
 * NIC_SMALL_INTS only the 8-byte ones are; on one of unit 4, target_disp 1
 * (byte 4) is refused and 2 (byte 8) works; on a window without the flag,
 * byte 4 works.
 */
static int align_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t mem[16], mem4[4], plain[4], so[4];
	int me = rmawin_rank(ep), bad = 0, t, tt[2] = { me, 1 - me };
	struct rmawin_win *win, *win4, *winp, *winso;
	int32_t r32[2], rso[2], i32;
	int64_t r64[2], r4[2], one = 1;
	int16_t i16, r16[2];
	long at;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1,
					     RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS, &win));
	RMAWIN_TEST_TRY(13, rmawin_win_create(ep, so, sizeof(so), 1, RMAWIN_WIN_SAME_OP, &winso));
	RMAWIN_TEST_TRY(14, rmawin_lock_all(winso));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem4, sizeof(mem4), 4, RMAWIN_WIN_SAME_OP,
					     &win4));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, plain, sizeof(plain), 1, 0, &winp));
	RMAWIN_TEST_TRY(4, rmawin_lock_all(win));
	RMAWIN_TEST_TRY(5, rmawin_lock_all(win4));
	RMAWIN_TEST_TRY(6, rmawin_lock_all(winp));
	for (t = 0; t < 2; t++) {
		bad += misaligned_ops(ep, win, tt[t]);
		bad += aligned_ops(win, tt[t], &r32[t], &r64[t], &r16[t]);
		RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win4, &one, &r4[t], RMAWIN_INT64,
							      tt[t], 1, RMAWIN_SUM));
		RMAWIN_TEST_WANT(0, rmawin_accumulate(win4, &one, 1, RMAWIN_INT64, tt[t], 2,
						      RMAWIN_SUM));
		RMAWIN_TEST_WANT(0, rmawin_accumulate(winp, &one, 1, RMAWIN_INT64, tt[t], 4,
						      RMAWIN_SUM));
		bad += small_unaligned_ops(winso, tt[t], &rso[t]);
	}
	RMAWIN_TEST_WANT(0, rmawin_unlock_all(winso));
	RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
	RMAWIN_TEST_WANT(0, rmawin_unlock_all(win4));
	RMAWIN_TEST_WANT(0, rmawin_unlock_all(winp));
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(8, rmawin_sync(win));
	at = aligned_check((const unsigned char *)mem, sizeof(mem));
	if (r16[0] < 0 || r16[0] > 1 || r16[1] < 0 || r16[1] > 1) {
		RMAWIN_TEST_MSG("int16 fetch_and_op at byte %d fetched %d and %d, want 0 or 1",
				AL_I16F, r16[0], r16[1]);
		bad = 1;
	}
	if (at >= 0) {
		RMAWIN_TEST_MSG("same_op window, byte %ld: %#x", at, ((unsigned char *)mem)[at]);
		bad = 1;
	}
	if (mem4[0] || mem4[1] != 2 || mem4[2] || mem4[3]) {
		RMAWIN_TEST_MSG("unit-4 window: %#llx %#llx %#llx %#llx, want 0 2 0 0",
				(unsigned long long)mem4[0], (unsigned long long)mem4[1],
				(unsigned long long)mem4[2], (unsigned long long)mem4[3]);
		bad = 1;
	}
	memcpy(&one, (unsigned char *)plain + 4, 8);
	if (one != 2) {
		RMAWIN_TEST_MSG("window without the flag, bytes 4-11: %lld, want 2",
				(long long)one);
		bad = 1;
	}
	memcpy(&i32, (unsigned char *)so + 2, 4);
	memcpy(&i16, (unsigned char *)so + 9, 2);
	if (i32 != 2 || i16 != 2 || so[2] || so[3] || ((unsigned char *)so)[0] ||
	    ((unsigned char *)so)[6] || ((unsigned char *)so)[11] || rso[0] > 1 || rso[1] > 1) {
		RMAWIN_TEST_MSG("same_op window without NIC_SMALL_INTS: int32 %d at byte 2, int16 %d "
				"at byte 9 (want 2, 2), fetched %d %d", i32, i16, rso[0], rso[1]);
		bad = 1;
	}
	RMAWIN_TEST_TRY(15, rmawin_win_free(winso));
	RMAWIN_TEST_TRY(9, rmawin_win_free(winp));
	RMAWIN_TEST_TRY(10, rmawin_win_free(win4));
	RMAWIN_TEST_TRY(11, rmawin_win_free(win));
	return bad ? 12 : 0;
}

TEST_F(path, misaligned_operations_einval)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, align_rank, NULL, 25));
	expect_end(_metadata);
}

/*
 * Window creation: RMAWIN_WIN_SAME_OP with a base that is not 8-byte
 * aligned or a length that is not a multiple of 8, RMAWIN_WIN_NIC_SMALL_INTS
 * without RMAWIN_WIN_SAME_OP, and unknown flag bits, are -EINVAL on every
 * rank; a base that is 8-byte aligned but no more is fine, and the window
 * works.
 */
static int create_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t mem[8] __attribute__((aligned(64)));
	static const unsigned int bad_flags[] = {
		0x100, 0x8, 0x80000000, RMAWIN_WIN_SAME_OP | 0x100, RMAWIN_WIN_NIC_SMALL_INTS,
		RMAWIN_WIN_NIC_SMALL_INTS | 0x100,
	};
	unsigned char *b = (unsigned char *)mem;
	int me = rmawin_rank(ep), bad = 0;
	uint64_t one = 1, got = 0;
	struct rmawin_win *win;
	unsigned int i;
	void *base;

	(void)arg;
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_create(ep, b + 4, 32, 1, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_create(ep, b + 1, 32, 8, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_create(ep, b + 12, 8, 8, RMAWIN_WIN_SAME_OP, &win));
	/* and a length that is not whole words */
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_create(ep, b, 12, 4, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_allocate(ep, 4097, 1, RMAWIN_WIN_SAME_OP, &base,
						      &win));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_create(ep, b + 4, 32, 1,
						    RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS,
						    &win));
	for (i = 0; i < ARRAY_SIZE(bad_flags); i++) {
		RMAWIN_TEST_WANT(-EINVAL, rmawin_win_create(ep, mem, 64, 8, bad_flags[i], &win));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_win_allocate(ep, 4096, 8, bad_flags[i], &base,
							      &win));
	}
	/* byte 8 of a 64-byte aligned array: 8-byte aligned, not 16 */
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, b + 8, 48, 8, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_TRY(2, rmawin_lock_all(win));
	RMAWIN_TEST_TRY(3, rmawin_fetch_and_op(win, &one, &got, RMAWIN_INT64, 0, 0, RMAWIN_SUM));
	RMAWIN_TEST_TRY(4, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(5, rmawin_barrier(ep));
	if (got > 1) {
		RMAWIN_TEST_MSG("fetched %llu, want 0 or 1", (unsigned long long)got);
		bad = 1;
	}
	if (me == 0 && (mem[0] || mem[1] != 2 || mem[2])) {
		RMAWIN_TEST_MSG("rank 0's memory: %llu %llu %llu, want 0 2 0",
				(unsigned long long)mem[0], (unsigned long long)mem[1],
				(unsigned long long)mem[2]);
		bad = 1;
	}
	RMAWIN_TEST_TRY(6, rmawin_win_free(win));
	return bad ? 7 : 0;
}

TEST_F(path, window_flags_and_base_alignment_einval)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, create_rank, NULL, 25));
	expect_end(_metadata);
}

/* ---- the kernel's own checks, through the raw ioctls ----------------------- */

static int create_raw(int fd, __u32 flags, void *base, __u64 len, __u32 unit, __u32 *win)
{
	struct rmawin_win_create c = {
		.size = sizeof(c), .flags = flags, .base = (uintptr_t)base, .length = len,
		.disp_unit = unit,
	};

	if (ioctl(fd, RMAWIN_IOC_WIN_CREATE, &c))
		return -errno;
	*win = c.win;
	return 0;
}

static int fence_raw(int fd, __u32 win)
{
	struct rmawin_fence f = { .size = sizeof(f), .win = win };

	return ioctl(fd, RMAWIN_IOC_FENCE, &f) ? -errno : 0;
}

static int free_raw(int fd, __u32 win)
{
	struct rmawin_win_free f = { .size = sizeof(f), .win = win };

	return ioctl(fd, RMAWIN_IOC_WIN_FREE, &f) ? -errno : 0;
}

/* One accumulate-family descriptor through RMAWIN_IOC_RMA; 0 or -errno. */
static int acc_raw(int fd, __u32 win, int opcode, int acc_op, int type, int target,
		   __u64 disp, __u64 len, const void *origin, const void *compare, void *result)
{
	struct rmawin_op_desc d = rmawin_test_op(opcode, win, target, origin, len, disp);
	struct rmawin_rma r = {
		.size = sizeof(r), .ops_ptr = (uintptr_t)&d, .nops = 1, .op_size = sizeof(d),
	};

	d.acc_op = acc_op;
	d.datatype = type;
	d.compare = (uintptr_t)compare;
	d.result = (uintptr_t)result;
	return ioctl(fd, RMAWIN_IOC_RMA, &r) ? -errno : 0;
}

/*
 * The library checks alignment before the kernel sees an operation; here
 * the kernel is asked directly: WIN_CREATE with unknown flags or a
 * misaligned base or a length that is not whole words under
 * RMAWIN_WIN_SAME_OP, RMAWIN_WIN_NIC_SMALL_INTS without it, RMA descriptors
 * of 8-byte integer operations at byte 4 and (with NIC_SMALL_INTS) of an
 * int32 one at byte 6, across two words (to itself and to the peer), are
 * -EINVAL; the same at byte 8, the int32 one at byte 4 and an int16 one
 * at byte 1 (inside word 0), work; without NIC_SMALL_INTS an int32 one at
 * byte 2 works too, the int64 one at byte 4 does not.
 */
static int raw_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t mem[8] __attribute__((aligned(64))), v[2] = { 5, 6 }, c, res[8];
	static int32_t v32 = 1, r32[2];
	static int16_t v16 = 1, r16[2];
	int fd = rmawin_ep_fd(ep), me = rmawin_rank(ep), bad = 0, t;
	__u32 win = 0;

	(void)arg;
	RMAWIN_TEST_WANT(-EINVAL, create_raw(fd, 0x100, mem, 64, 1, &win));
	RMAWIN_TEST_WANT(-EINVAL, create_raw(fd, 0x8, mem, 64, 1, &win));
	RMAWIN_TEST_WANT(-EINVAL, create_raw(fd, RMAWIN_WIN_NIC_SMALL_INTS, mem, 64, 1, &win));
	RMAWIN_TEST_WANT(-EINVAL, create_raw(fd, RMAWIN_WIN_NIC_SMALL_INTS | RMAWIN_WIN_ALLOCATE,
					     NULL, 4096, 1, &win));
	RMAWIN_TEST_WANT(-EINVAL, create_raw(fd, RMAWIN_WIN_SAME_OP, (char *)mem + 4, 32, 1, &win));
	RMAWIN_TEST_WANT(-EINVAL, create_raw(fd, RMAWIN_WIN_SAME_OP, mem, 60, 1, &win));
	RMAWIN_TEST_TRY(1, create_raw(fd, RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS, mem, 64,
				      1, &win));
	RMAWIN_TEST_TRY(2, fence_raw(fd, win));
	for (t = 0; t < 2; t++) {
		RMAWIN_TEST_WANT(-EINVAL, acc_raw(fd, win, RMAWIN_OP_FETCH_OP, RMAWIN_ACC_SUM,
						  RMAWIN_TYPE_INT64, t, 4, 8, v, NULL, res));
		RMAWIN_TEST_WANT(-EINVAL, acc_raw(fd, win, RMAWIN_OP_CAS, 0, RMAWIN_TYPE_UINT64,
						  t, 4, 8, v, &c, res));
		RMAWIN_TEST_WANT(-EINVAL, acc_raw(fd, win, RMAWIN_OP_ACC, RMAWIN_ACC_MAX,
						  RMAWIN_TYPE_INT64, t, 12, 16, v, NULL, NULL));
		RMAWIN_TEST_WANT(-EINVAL, acc_raw(fd, win, RMAWIN_OP_GET_ACC, RMAWIN_ACC_NO_OP,
						  RMAWIN_TYPE_UINT64, t, 36, 8, v, NULL, res));
		RMAWIN_TEST_WANT(0, acc_raw(fd, win, RMAWIN_OP_FETCH_OP, RMAWIN_ACC_SUM,
					    RMAWIN_TYPE_INT64, t, 8, 8, v, NULL, &res[2 + t]));
		RMAWIN_TEST_WANT(-EINVAL, acc_raw(fd, win, RMAWIN_OP_FETCH_OP, RMAWIN_ACC_SUM,
						  RMAWIN_TYPE_INT32, t, 6, 4, &v32, NULL, &r32[t]));
		RMAWIN_TEST_WANT(0, acc_raw(fd, win, RMAWIN_OP_FETCH_OP, RMAWIN_ACC_SUM,
					    RMAWIN_TYPE_INT32, t, 4, 4, &v32, NULL, &r32[t]));
		RMAWIN_TEST_WANT(0, acc_raw(fd, win, RMAWIN_OP_FETCH_OP, RMAWIN_ACC_SUM,
					    RMAWIN_TYPE_INT16, t, 1, 2, &v16, NULL, &r16[t]));
	}
	RMAWIN_TEST_WANT(0, fence_raw(fd, win));
	if (mem[0] != ((uint64_t)2 << 32 | 2 << 8) || mem[1] != 10 || mem[2] || mem[3] ||
	    mem[4] || mem[5] || r16[0] < 0 || r16[0] > 1 || r16[1] < 0 || r16[1] > 1) {
		RMAWIN_TEST_MSG("rank %d's window: %#llx %#llx %#llx..., want 0x200000200 10 0...; "
				"int16 fetched %d %d",
				me, (unsigned long long)mem[0], (unsigned long long)mem[1],
				(unsigned long long)mem[2], r16[0], r16[1]);
		bad = 1;
	}
	RMAWIN_TEST_TRY(3, free_raw(fd, win));
	/* RMAWIN_WIN_SAME_OP alone: the int32 at byte 2 goes to the target's kernel */
	memset(mem, 0, sizeof(mem));
	RMAWIN_TEST_TRY(5, create_raw(fd, RMAWIN_WIN_SAME_OP, mem, 64, 1, &win));
	RMAWIN_TEST_TRY(6, fence_raw(fd, win));
	for (t = 0; t < 2; t++) {
		RMAWIN_TEST_WANT(0, acc_raw(fd, win, RMAWIN_OP_FETCH_OP, RMAWIN_ACC_SUM,
					    RMAWIN_TYPE_INT32, t, 2, 4, &v32, NULL, &r32[t]));
		RMAWIN_TEST_WANT(-EINVAL, acc_raw(fd, win, RMAWIN_OP_FETCH_OP, RMAWIN_ACC_SUM,
						  RMAWIN_TYPE_INT64, t, 4, 8, v, NULL, res));
	}
	RMAWIN_TEST_WANT(0, fence_raw(fd, win));
	if (mem[0] != (uint64_t)2 << 16 || mem[1]) {
		RMAWIN_TEST_MSG("rank %d's window without NIC_SMALL_INTS: %#llx %#llx, want 0x20000 0",
				me, (unsigned long long)mem[0], (unsigned long long)mem[1]);
		bad = 1;
	}
	RMAWIN_TEST_TRY(7, free_raw(fd, win));
	return bad ? 4 : 0;
}

/* raw ioctls: the library's path does not matter, once is enough */
TEST(raw_ioctls_kernel_checks_einval)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, raw_rank, NULL, 25));
	rmawin_test_expect_no_leaks(_metadata);
}

/* The module says it has NIC atomics, and rxe0 has the atomics they need. */
TEST(feature_nic_atomics)
{
	struct rmawin_device devs[16];
	struct rmawin_info info;
	int n, i, found = 0;

	n = rmawin_query(&info, devs, 16);
	ASSERT_LE(0, n) TH_LOG("rmawin_query: %s", rmawin_strerror(n));
	EXPECT_NE(0, info.features & RMAWIN_FEAT_NIC_ATOMICS)
		TH_LOG("features %#llx: no RMAWIN_FEAT_NIC_ATOMICS",
		       (unsigned long long)info.features);
	EXPECT_NE(0, info.features & RMAWIN_FEAT_NIC_SMALL_FLAG)
		TH_LOG("features %#llx: no RMAWIN_FEAT_NIC_SMALL_FLAG",
		       (unsigned long long)info.features);
	for (i = 0; i < n && i < 16; i++) {
		if (strcmp(devs[i].name, rmawin_test_ibdev()))
			continue;
		found = 1;
		EXPECT_LE(1, devs[i].atomic_cap) TH_LOG("%s: atomic_cap %u", devs[i].name,
						       devs[i].atomic_cap);
	}
	EXPECT_EQ(1, found) TH_LOG("no device %s", rmawin_test_ibdev());
}

TEST_HARNESS_MAIN
