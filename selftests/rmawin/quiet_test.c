// SPDX-License-Identifier: GPL-2.0
/*
 * Flushes with nothing to wait for (issue 13): RMAWIN_IOC_RMA with
 * RMAWIN_RMA_QUIET returns 1 when the windows it used have nothing in
 * flight, their results delivered and no error waiting, and librmawin then
 * answers a flush of such a window without a system call.
 *
 * What is certain is asserted: an operation on the rank's own window is
 * done within the call, so it is always quiet, and its data is there when
 * the call returns; a fetch_and_op that says quiet has its result in the
 * buffer before any flush.  Whether an operation on a peer completes
 * within the call is the device's timing: such calls may answer either
 * way, and the test only counts them.  The library's side is checked with
 * a seccomp filter that makes RMAWIN_IOC_FLUSH fail with EHWPOISON: a
 * flush that reaches the kernel then says so.
 *
 * The ring's counterpart, RMAWIN_CQE_F_QUIET: a flush after a queued entry
 * whose completion said quiet takes no ring entry (the endpoint's
 * ring_entries counter in debugfs) and no system call; and a quiet entry
 * followed by one still in flight does not spare the flush, which the
 * target checks with the data, told that the flush returned through a
 * pipe, outside rmawin.
 *
 * The library's bookkeeping of which window is quiet (lib/rma.c, its
 * tickets) is also driven directly, in the orders that two threads of one
 * process can take and a test cannot force through the device's timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <rmawin.h>

#include "rmawin_test.h"
/* the library's tickets, driven directly (tickets_*) */
#include "../../lib/rmawin_priv.h"

#define WORDS	512
#define NFOP	200

FIXTURE(quiet) {};
FIXTURE_SETUP(quiet)
{
	/* the library asks for quiet reports only without a ring */
	rmawin_test_path(1);
}
FIXTURE_TEARDOWN(quiet) {}

static int rma_flags(int fd, const struct rmawin_op_desc *ops, __u32 nops, __u32 flags)
{
	struct rmawin_rma r = {
		.size = sizeof(r), .flags = flags, .ops_ptr = (uintptr_t)ops, .nops = nops,
		.op_size = sizeof(*ops),
	};

	return ioctl(fd, RMAWIN_IOC_RMA, &r);
}

static int passive_raw(int fd, unsigned long req, __u32 win, __u32 target, __u32 type)
{
	struct rmawin_passive p = {
		.size = sizeof(p), .win = win, .target = target, .type = type,
	};

	return ioctl(fd, req, &p) ? -errno : 0;
}

/* 0, else a message on stderr and 1 */
#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "#   rank %d: line %d: ",		\
				rmawin_test_rank, __LINE__);			\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			bad = 1;						\
		}								\
	} while (0)

/*
 * Each rank: its own window's put and get are quiet and done on return;
 * puts to the peer, alone and in a batch, answer 0 or 1 and land; unknown
 * flags are refused.
 */
static int raw_rank(struct rmawin_ep *ep, void *arg)
{
	int fd = rmawin_ep_fd(ep), me = rmawin_rank(ep), peer = !me, bad = 0, ret, i;
	static uint64_t mem[WORDS];
	uint64_t v = 0x5100 + me, back = 0, far = 0x7700 + me;
	struct rmawin_op_desc ops[2];
	__u32 win = 0;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_create_raw(fd, mem, sizeof(mem), 8, &win) ? -errno : 0);
	RMAWIN_TEST_TRY(2, rmawin_fence_raw(fd, win, 0) ? -errno : 0);

	ops[0] = rmawin_test_op(RMAWIN_OP_PUT, win, me, &v, 8, 1);
	ret = rma_flags(fd, ops, 1, 0x2);
	CHECK(ret == -1 && errno == EINVAL, "flags 0x2: %d (%s), want EINVAL", ret,
	      strerror(errno));
	ret = rma_flags(fd, ops, 1, RMAWIN_RMA_QUIET | 0x80000000u);
	CHECK(ret == -1 && errno == EINVAL, "flags QUIET|0x80000000: %d (%s), want EINVAL", ret,
	      strerror(errno));
	CHECK(mem[1] == 0, "a refused put wrote %#llx", (unsigned long long)mem[1]);

	/* to itself: copied within the call */
	ret = rma_flags(fd, ops, 1, RMAWIN_RMA_QUIET);
	CHECK(ret == 1, "put to itself: %d (%s), want 1", ret, ret < 0 ? strerror(errno) : "");
	CHECK(mem[1] == v, "own window after the put: %#llx", (unsigned long long)mem[1]);
	ops[0] = rmawin_test_op(RMAWIN_OP_GET, win, me, &back, 8, 1);
	ret = rma_flags(fd, ops, 1, RMAWIN_RMA_QUIET);
	CHECK(ret == 1, "get from itself: %d (%s), want 1", ret, ret < 0 ? strerror(errno) : "");
	CHECK(back == v, "get from itself returned %#llx before any flush, want %#llx",
	      (unsigned long long)back, (unsigned long long)v);

	/* to the peer, alone and with a put to itself: either answer */
	ops[0] = rmawin_test_op(RMAWIN_OP_PUT, win, peer, &far, 8, 2 + me);
	ret = rma_flags(fd, ops, 1, RMAWIN_RMA_QUIET);
	CHECK(ret == 0 || ret == 1, "put to the peer: %d (%s)", ret, strerror(errno));
	ops[0] = rmawin_test_op(RMAWIN_OP_PUT, win, me, &v, 8, 4);
	ops[1] = rmawin_test_op(RMAWIN_OP_PUT, win, peer, &far, 8, 5 + me);
	ret = rma_flags(fd, ops, 2, RMAWIN_RMA_QUIET);
	CHECK(ret == 0 || ret == 1, "a batch of two: %d (%s)", ret, strerror(errno));
	/* and without the flag, 0 as ever */
	ops[0] = rmawin_test_op(RMAWIN_OP_PUT, win, me, &v, 8, 7);
	ret = rma_flags(fd, ops, 1, 0);
	CHECK(ret == 0, "without RMAWIN_RMA_QUIET: %d, want 0", ret);

	RMAWIN_TEST_TRY(3, rmawin_fence_raw(fd, win, 0) ? -errno : 0);
	for (i = 0; i < 2; i++) {
		CHECK(mem[2 + i * 3 + peer] == 0x7700u + peer, "word %d from the peer: %#llx",
		      2 + i * 3 + peer, (unsigned long long)mem[2 + i * 3 + peer]);
	}
	CHECK(mem[4] == v && mem[7] == v, "own words 4, 7: %#llx %#llx",
	      (unsigned long long)mem[4], (unsigned long long)mem[7]);
	RMAWIN_TEST_TRY(4, rmawin_free_raw(fd, win) ? -errno : 0);
	return bad ? 20 : 0;
}

TEST_F_TIMEOUT(quiet, raw_reports, 60)
{
	ASSERT_EQ(2, rmawin_test_run_eps(_metadata, 2, raw_rank, NULL, 50));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * Rank 1 adds 1 to rank 0's counter NFOP times on a same_op window under
 * an exclusive lock: the i-th add fetches i.  One that says quiet has it
 * in its buffer at once; the others after a flush.
 */
static int fop_rank(struct rmawin_ep *ep, void *arg)
{
	int fd = rmawin_ep_fd(ep), me = rmawin_rank(ep), bad = 0, ret, i, quiet = 0;
	static uint64_t mem[8];
	uint64_t one = 1, got;
	struct rmawin_op_desc op;
	struct rmawin_win_create c = {
		.size = sizeof(c), .flags = RMAWIN_WIN_SAME_OP, .base = (uintptr_t)mem,
		.length = sizeof(mem), .disp_unit = 8,
	};

	(void)arg;
	RMAWIN_TEST_TRY(1, ioctl(fd, RMAWIN_IOC_WIN_CREATE, &c) ? -errno : 0);
	if (me == 1) {
		RMAWIN_TEST_TRY(2, passive_raw(fd, RMAWIN_IOC_LOCK, c.win, 0,
					       RMAWIN_LOCK_TYPE_EXCLUSIVE));
		for (i = 0; i < NFOP; i++) {
			op = rmawin_test_op(RMAWIN_OP_FETCH_OP, c.win, 0, &one, 8, 0);
			op.acc_op = RMAWIN_ACC_SUM;
			op.datatype = RMAWIN_TYPE_UINT64;
			op.result = (uintptr_t)&got;
			got = ~0ULL;
			ret = rma_flags(fd, &op, 1, RMAWIN_RMA_QUIET);
			CHECK(ret == 0 || ret == 1, "fetch_and_op %d: %d (%s)", i, ret,
			      strerror(errno));
			if (ret == 1) {
				quiet++;
				CHECK(got == (uint64_t)i,
				      "fetch_and_op %d said quiet with %#llx in its buffer", i,
				      (unsigned long long)got);
			}
			RMAWIN_TEST_TRY(3, passive_raw(fd, RMAWIN_IOC_FLUSH, c.win, 0, 0));
			CHECK(got == (uint64_t)i, "fetch_and_op %d fetched %#llx", i,
			      (unsigned long long)got);
		}
		RMAWIN_TEST_TRY(4, passive_raw(fd, RMAWIN_IOC_UNLOCK, c.win, 0, 0));
		fprintf(stderr, "#   %d of %d fetch_and_ops were quiet when issued\n", quiet,
			NFOP);
	}
	RMAWIN_TEST_TRY(5, rmawin_barrier(ep));
	if (me == 0)
		CHECK(mem[0] == NFOP, "counter %llu, want %d", (unsigned long long)mem[0], NFOP);
	RMAWIN_TEST_TRY(6, rmawin_free_raw(fd, c.win) ? -errno : 0);
	return bad ? 20 : 0;
}

TEST_F_TIMEOUT(quiet, fetch_and_op_result_when_quiet, 60)
{
	ASSERT_EQ(2, rmawin_test_run_eps(_metadata, 2, fop_rank, NULL, 50));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * From here on, RMAWIN_IOC_FLUSH fails with EHWPOISON in this process:
 * which flushes reach the kernel shows.  -errno of prctl() on failure.
 */
static int poison_flush(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* the request's low 32 bits: what the kernel compares too */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RMAWIN_IOC_FLUSH, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EHWPOISON),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return -errno;
	return 0;
}

/*
 * Through librmawin without a ring: after an operation on its own window
 * (always quiet), a flush of it makes no system call and returns 0; after
 * one on another window of the endpoint, on a window with no lock, and
 * for a rank out of range, the flush goes to the kernel.
 */
static int lib_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), bad = 0, ret;
	static uint64_t mem[WORDS], other[8];
	uint64_t v = 0xabc0 + me, back = 0;
	struct rmawin_win *win, *win2;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, other, sizeof(other), 8, 0, &win2));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	RMAWIN_TEST_TRY(4, rmawin_lock_all(win2));
	RMAWIN_TEST_TRY(5, poison_flush());

	RMAWIN_TEST_TRY(6, rmawin_put(win, &v, 8, me, 1));
	ret = rmawin_flush(win, me);
	CHECK(ret == 0, "flush after a put to itself: %d (%s), want 0 without a system call",
	      ret, rmawin_strerror(ret));
	CHECK(rmawin_flush_all(win) == 0, "flush_all after it");
	CHECK(rmawin_flush_local(win, !me) == 0, "flush_local of the peer after it");
	RMAWIN_TEST_TRY(7, rmawin_get(win, &back, 8, me, 1));
	CHECK(rmawin_flush(win, me) == 0 && back == v, "get from itself: %#llx",
	      (unsigned long long)back);

	/* another window's operation: the first window's flush must ask */
	RMAWIN_TEST_TRY(8, rmawin_put(win2, &v, 8, me, 0));
	ret = rmawin_flush(win, me);
	CHECK(ret == -EHWPOISON, "flush after another window's put: %d, want -EHWPOISON", ret);
	/* the second window is the quiet one now */
	CHECK(rmawin_flush(win2, me) == 0, "flush of the window last used");
	ret = rmawin_flush(win2, 2);
	CHECK(ret == -EHWPOISON, "flush of rank 2 of 2: %d, want the kernel's answer", ret);

	RMAWIN_TEST_TRY(9, rmawin_unlock_all(win2));
	ret = rmawin_flush(win2, me);
	CHECK(ret == -EHWPOISON, "flush with no lock held: %d, want the kernel's answer", ret);
	RMAWIN_TEST_TRY(10, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(11, rmawin_win_free(win2));
	RMAWIN_TEST_TRY(12, rmawin_win_free(win));
	return bad ? 20 : 0;
}

/* Two ranks of @fn, each under poison_flush(); a test's whole body. */
#define RUN_POISONED(fn, deadline_s)							\
	do {										\
		if (prctl(PR_GET_SECCOMP) < 0 && errno == EINVAL)			\
			SKIP(return, "this kernel has no seccomp (CONFIG_SECCOMP): "	\
			     "flushes cannot be seen");					\
		ASSERT_EQ(2, rmawin_test_run_eps(_metadata, 2, (fn), NULL, (deadline_s)));	\
		rmawin_test_expect_no_leaks(_metadata);					\
	} while (0)

TEST_F_TIMEOUT(quiet, library_flush_without_system_call, 60)
{
	RUN_POISONED(lib_rank, 50);
}

FIXTURE(ring_quiet) {};
FIXTURE_SETUP(ring_quiet)
{
	rmawin_test_path(0);
}
FIXTURE_TEARDOWN(ring_quiet) {}

#define NRING	100

/* The endpoint of a ring_quiet test has no ring: exit status @step. */
static int no_ring_here(int step)
{
	fprintf(stderr, "#   rank %d: no ring on this endpoint (rmawin_ep_ring_active)\n",
		rmawin_test_rank);
	return step;
}

/*
 * Puts to the rank's own window through the ring, each followed by a
 * flush: the put's entry is done within the poller's pass, so its
 * completion says quiet, and the flush needs neither a FLUSH entry nor a
 * system call.  A put that went by ioctl instead (the poller yielded its
 * CPU, rmawin__ring_bypass()) takes no entry.  A flush may still take one
 * now and then, by design: when the poller raises RMAWIN_SQ_NEED_WAKEUP
 * (it looks for work once more before it sleeps) while the put's entry is
 * queued, the flush stops waiting for the entry's completion and queues
 * its own behind it (rmawin__ring_catch_up()).  So a round runs at most
 * two entries; some round must run the put's alone, and a round whose
 * flush took an entry must stay the exception: no more of them than of the
 * others.  A library whose flush always queued an entry fails both.
 */
static int ring_own_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), bad = 0, ret, i, by_ring = 0, flush_entries = 0;
	static uint64_t mem[WORDS];
	struct rmawin_win *win;
	long e0, e1;
	uint64_t v;

	(void)arg;
	if (rmawin_ep_ring_active(ep) != 1)
		return no_ring_here(1);
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	RMAWIN_TEST_TRY(4, poison_flush());
	for (i = 0; i < NRING; i++) {
		v = 0x9000 + i;
		e0 = rmawin_test_ep_stat("ring_entries");
		RMAWIN_TEST_TRY(5, rmawin_put(win, &v, 8, me, i % WORDS));
		ret = rmawin_flush(win, me);
		e1 = rmawin_test_ep_stat("ring_entries");
		CHECK(ret == 0, "round %d: flush after a put to itself: %d (%s), want 0", i, ret,
		      rmawin_strerror(ret));
		CHECK(e0 >= 0 && e1 - e0 >= 0 && e1 - e0 <= 2,
		      "round %d: ring_entries %ld -> %ld: want 0 to 2 entries", i, e0, e1);
		by_ring += e1 - e0 == 1;
		flush_entries += e1 - e0 == 2;
		CHECK(mem[i % WORDS] == v, "round %d: word %d is %#llx", i, i % WORDS,
		      (unsigned long long)mem[i % WORDS]);
	}
	fprintf(stderr, "#   rank %d: %d of %d puts through the ring with no flush entry, %d with one\n",
		me, by_ring, NRING, flush_entries);
	CHECK(by_ring > 0, "no put went through the ring without a flush entry");
	CHECK(flush_entries <= by_ring, "%d flushes took an entry, %d did not: want the exception",
	      flush_entries, by_ring);
	RMAWIN_TEST_TRY(6, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	return bad ? 20 : 0;
}

TEST_F_TIMEOUT(ring_quiet, flush_after_quiet_entry_takes_none, 120)
{
	RUN_POISONED(ring_own_rank, 100);
}

#define NLATE		60
#define LATE_WORDS	(RMAWIN_RING_COPY_MAX / 8)

/* the origin's "my flush returned" and the target's "checked" */
struct late_pipes {
	int done[2];
	int checked[2];
};

/*
 * Rank 1, each round: a fetch_and_op on rank 0's same_op window (whose
 * entry is usually quiet: the device's atomic completes within the pass),
 * then a put of RMAWIN_RING_COPY_MAX bytes (its RDMA writes left in
 * flight by the poller), then a flush, then the round's number down a
 * pipe.  Rank 0 reads it and compares its window with what the put wrote:
 * a flush that went by the atomic's quiet completion alone would return
 * with the put still on the wire.
 */
static int late_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t mem[1 + LATE_WORDS], src[LATE_WORDS];
	int me = rmawin_rank(ep), bad = 0, i, j, ret;
	struct late_pipes *p = arg;
	uint64_t one = 1, got = 0, w;
	struct rmawin_win *win;
	unsigned char c;

	if (rmawin_ep_ring_active(ep) != 1)
		return no_ring_here(1);
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	for (i = 0; i < NLATE && !bad; i++) {
		if (me == 0) {
			if (read(p->done[0], &c, 1) != 1)
				return 4;
			for (j = 0; j < LATE_WORDS && !bad; j++) {
				/* once: the device may still be writing it */
				w = __atomic_load_n(&mem[1 + j], __ATOMIC_RELAXED);
				CHECK(w == ((uint64_t)i << 32 | j),
				      "round %d: word %d is %#llx when the origin's flush returned",
				      i, j, (unsigned long long)w);
			}
			c = bad;
			if (write(p->checked[1], &c, 1) != 1)
				return 5;
			continue;
		}
		for (j = 0; j < LATE_WORDS; j++)
			src[j] = (uint64_t)i << 32 | j;
		RMAWIN_TEST_TRY(6, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
		RMAWIN_TEST_TRY(7, rmawin_fetch_and_op(win, &one, &got, RMAWIN_UINT64, 0, 0,
						      RMAWIN_SUM));
		RMAWIN_TEST_TRY(8, rmawin_put(win, src, sizeof(src), 0, 1));
		ret = rmawin_flush(win, 0);
		CHECK(ret == 0, "round %d: flush: %d (%s)", i, ret, rmawin_strerror(ret));
		CHECK(got == (uint64_t)i, "round %d: fetch_and_op fetched %llu", i,
		      (unsigned long long)got);
		c = i;
		if (write(p->done[1], &c, 1) != 1 || read(p->checked[0], &c, 1) != 1)
			return 9;
		if (c)
			bad = 1;
		RMAWIN_TEST_TRY(11, rmawin_unlock(win, 0));
	}
	RMAWIN_TEST_TRY(12, rmawin_barrier(ep));
	if (me == 0)
		CHECK(bad || mem[0] == NLATE, "counter %llu, want %d", (unsigned long long)mem[0],
		      NLATE);
	RMAWIN_TEST_TRY(13, rmawin_win_free(win));
	return bad ? 20 : 0;
}

TEST_F_TIMEOUT(ring_quiet, quiet_entry_then_one_in_flight, 120)
{
	struct late_pipes p;

	ASSERT_EQ(0, pipe(p.done));
	ASSERT_EQ(0, pipe(p.checked));
	ASSERT_EQ(2, rmawin_test_run_eps(_metadata, 2, late_rank, &p, 100));
	close(p.done[0]);
	close(p.done[1]);
	close(p.checked[0]);
	close(p.checked[1]);
	rmawin_test_expect_no_leaks(_metadata);
}

/* An endpoint and one window of the library's, in memory only: no kernel. */
struct ticket_bench {
	struct rmawin_ep ep;
	struct rmawin_win win;
};

static void ticket_bench_init(struct ticket_bench *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->ep.lock, NULL);
	t->win.ep = &t->ep;
	t->win.id = 7;
	t->win.quiet = ~0ULL;
	t->ep.wins = &t->win;
}

static void ticket_bench_fini(struct ticket_bench *t)
{
	pthread_mutex_destroy(&t->ep.lock);
}

/*
 * A call alone that the kernel said left its window quiet spares the next
 * flush, until any call takes a ticket.
 */
TEST(tickets_lone_call_keeps_quiet)
{
	struct ticket_bench t;
	uint64_t a;

	ticket_bench_init(&t);
	EXPECT_FALSE(rmawin__win_quiet(&t.win));
	a = rmawin__issue_begin(&t.ep);
	EXPECT_FALSE(rmawin__win_quiet(&t.win));
	rmawin__issue_end(&t.ep, a, &t.win);
	EXPECT_TRUE(rmawin__win_quiet(&t.win));
	a = rmawin__issue_begin(&t.ep);
	EXPECT_FALSE(rmawin__win_quiet(&t.win));	/* under way */
	rmawin__issue_end(&t.ep, a, NULL);
	EXPECT_FALSE(rmawin__win_quiet(&t.win));	/* newer than the quiet one */
	/* a queued entry's completion that says quiet, its call alone */
	a = rmawin__issue_begin(&t.ep);
	rmawin__issue_end(&t.ep, a, NULL);
	rmawin__issue_quiet(&t.ep, t.win.id, rmawin__ticket_lo(a));
	EXPECT_TRUE(rmawin__win_quiet(&t.win));
	ticket_bench_fini(&t);
}

/*
 * Thread A begins a call; thread B begins one, the kernel says B's window
 * is quiet; A's operation reaches the kernel only then, and A ends; B
 * ends last.  A's operation is in flight: a flush must not be spared.
 * (The library before this test kept B's word: nothing at B's end showed
 * that A had been under way.)
 */
TEST(tickets_overlapping_call_keeps_no_quiet)
{
	struct ticket_bench t;
	uint64_t a, b;

	ticket_bench_init(&t);
	a = rmawin__issue_begin(&t.ep);
	b = rmawin__issue_begin(&t.ep);
	rmawin__issue_end(&t.ep, a, NULL);
	rmawin__issue_end(&t.ep, b, &t.win);
	EXPECT_FALSE(rmawin__win_quiet(&t.win));
	/* A ends last: its own word is not kept either, B was under way */
	b = rmawin__issue_begin(&t.ep);
	a = rmawin__issue_begin(&t.ep);
	rmawin__issue_end(&t.ep, b, NULL);
	rmawin__issue_end(&t.ep, a, &t.win);
	EXPECT_FALSE(rmawin__win_quiet(&t.win));
	/* the same through a queued entry's completion */
	a = rmawin__issue_begin(&t.ep);
	b = rmawin__issue_begin(&t.ep);
	rmawin__issue_end(&t.ep, a, NULL);
	rmawin__issue_end(&t.ep, b, NULL);
	rmawin__issue_quiet(&t.ep, t.win.id, rmawin__ticket_lo(b));
	EXPECT_FALSE(rmawin__win_quiet(&t.win));
	/* and a call alone after them is kept again */
	a = rmawin__issue_begin(&t.ep);
	rmawin__issue_end(&t.ep, a, &t.win);
	EXPECT_TRUE(rmawin__win_quiet(&t.win));
	ticket_bench_fini(&t);
}

TEST(feature_bit)
{
	__u64 features = rmawin_test_features();

	EXPECT_NE(0, features & RMAWIN_FEAT_RMA_QUIET)
		TH_LOG("features %#llx: no RMAWIN_FEAT_RMA_QUIET", (unsigned long long)features);
	EXPECT_NE(0, features & RMAWIN_FEAT_RING_QUIET)
		TH_LOG("features %#llx: no RMAWIN_FEAT_RING_QUIET", (unsigned long long)features);
}

TEST_HARNESS_MAIN
