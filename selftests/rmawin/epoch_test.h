/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What epoch_test.c (one-message lock epochs through raw descriptors) and
 * lazy_lock_test.c (librmawin's lazy locks, which send them) share: the
 * ranks' shared page, a pattern, a window's kernel id, descriptors with
 * epoch flags.
 */
#ifndef RMAWIN_EPOCH_TEST_H
#define RMAWIN_EPOCH_TEST_H
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test through the library on both of its paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

#define EX	RMAWIN_OP_F_EPOCH_EXCLUSIVE
#define SH	RMAWIN_OP_F_EPOCH_SHARED

#define KC	50		/* operations per rank on the shared counters */
#define NR	4		/* ranks of the counter tests */

struct shared {
	int64_t fetched[NR][KC];	/* counter tests: what each rank's operations fetched */
	int64_t counter;		/* counter tests: rank 0's counter at the end */
	int eagain[NR];			/* raw counter test: -EAGAINs that fell back to the lock */
	int inside, max_inside;		/* lazy get/put counter: ranks between flush and put */
	int holding, released;		/* busy target: rank 1 holds its own lock / let it go */
	int released_seen;		/* busy target: what rank 0 saw after its unlock */
};

static struct shared *sh;

static inline void setup_shared(struct __test_metadata *_metadata)
{
	sh = rmawin_test_shared(sizeof(*sh));
	ASSERT_NE(NULL, sh);
}

/* In a rank: note a failed check and go on. */
#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "#   rank %d: %s:%d: ", rmawin_test_rank,	\
				__FILE__, __LINE__);				\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			bad = 1;						\
		}								\
	} while (0)

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Byte @i of pattern @seed */
static inline unsigned char pat(int seed, size_t i)
{
	return (unsigned char)(seed * 31 + i * 7 + 1);
}

static inline void fill(void *p, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		((unsigned char *)p)[i] = pat(seed, i);
}

/* Index of the first byte of @p that is not pattern @seed, or -1 */
static inline long check_pat(const void *p, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((const unsigned char *)p)[i] != pat(seed, i))
			return i;
	return -1;
}

/*
 * The kernel's id of a window of @ep created through the library: the one
 * id WIN_INFO knows that is not in @known (the windows made before it).
 * Return: 0, -ESRCH if there is none, -EEXIST if there are several.
 */
static inline int win_id(struct rmawin_ep *ep, const __u32 *known, int nknown, __u32 *id)
{
	struct rmawin_win_rank ranks[64];
	struct rmawin_win_info w;
	int found = 0, i;
	__u32 cand;

	*id = ~0U;
	for (cand = 0; cand < 1024; cand++) {
		for (i = 0; i < nknown && known[i] != cand; i++)
			;
		if (i < nknown)
			continue;
		memset(&w, 0, sizeof(w));
		w.size = sizeof(w);
		w.win = cand;
		w.nranks = rmawin_nranks(ep);
		w.ranks_ptr = (uintptr_t)ranks;
		if (ioctl(rmawin_ep_fd(ep), RMAWIN_IOC_WIN_INFO, &w))
			continue;
		*id = cand;
		found++;
	}
	return found == 1 ? 0 : found ? -EEXIST : -ESRCH;
}

/* A put/get descriptor with epoch flags @flags */
static inline struct rmawin_op_desc eop(int opcode, __u32 win, int target, unsigned int flags,
				 const void *origin, size_t len, size_t disp)
{
	struct rmawin_op_desc d = rmawin_test_op(opcode, win, target, origin, len, disp);

	d.flags = flags;
	return d;
}

/* An accumulate-family descriptor with epoch flags @flags */
static inline struct rmawin_op_desc eacc(int opcode, __u32 win, int target, unsigned int flags,
				  int acc_op, int type, const void *origin, size_t len, size_t disp,
				  void *result, const void *compare)
{
	struct rmawin_op_desc d = eop(opcode, win, target, flags, origin, len, disp);

	d.acc_op = acc_op;
	d.datatype = type;
	d.result = (uintptr_t)result;
	d.compare = (uintptr_t)compare;
	return d;
}

/* RMAWIN_IOC_RMA of @n descriptors: 0 or -errno */
static inline int rma(struct rmawin_ep *ep, const struct rmawin_op_desc *d, __u32 n)
{
	return rmawin_rma_raw(rmawin_ep_fd(ep), d, n) ? -errno : 0;
}

static inline int rma1(struct rmawin_ep *ep, struct rmawin_op_desc d)
{
	return rma(ep, &d, 1);
}

static inline void expect_end(struct __test_metadata *_metadata)
{
	rmawin_test_expect_no_leaks(_metadata);
}

/* The module says it has one-message epochs. */

#endif /* RMAWIN_EPOCH_TEST_H */
