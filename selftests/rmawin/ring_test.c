// SPDX-License-Identifier: GPL-2.0
/*
 * The zero-syscall path, driven by hand through the raw ABI: setup
 * validation; hostile ring contents (garbage tail, unknown opcode, other
 * endpoints' handles, unregistered or unmapped memory, bad fields) give
 * error completions and leave the ring working; data put through the ring
 * lands; the poller sleeps after its idle time (and then uses no CPU),
 * wakes on the doorbell, and is gone after close, after SIGKILL of its
 * owner and after `rdma link del` of its device.  And, through the
 * library, puts and gets that are only queued: argument errors at once,
 * transfer errors at the synchronization that completes them.
 */
#include <dirent.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "rmawin_test.h"


/* A descriptor literal in `op` */
#define OP(...) (op = (struct rmawin_op_desc){ __VA_ARGS__ }, &op)

struct raw_ring {
	int fd;
	struct rmawin_ring_setup s;
	char *m;
	uint32_t *sq_head, *sq_tail, *sq_flags, *cq_head, *cq_tail;
	struct rmawin_op_desc *sqes;
	struct rmawin_cqe *cqes;
	unsigned int wakeups;
};

static int ring_setup_raw(int fd, struct rmawin_ring_setup *s, uint32_t entries, uint32_t idle)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	s->sq_entries = entries;
	s->idle_us = idle;
	return ioctl(fd, RMAWIN_IOC_RING_SETUP, s);
}

static int ring_enter_raw(int fd, uint32_t flags)
{
	struct rmawin_ring_enter e = { .size = sizeof(e), .flags = flags };

	return ioctl(fd, RMAWIN_IOC_RING_ENTER, &e);
}

/* Set up and map the ring of @fd; 0 or -errno. */
static int raw_ring_open(struct raw_ring *r, int fd, uint32_t entries, uint32_t idle)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (ring_setup_raw(fd, &r->s, entries, idle))
		return -errno;
	r->m = mmap(NULL, r->s.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    r->s.mmap_offset);
	if (r->m == MAP_FAILED)
		return -errno;
	r->sq_head = (uint32_t *)(r->m + r->s.off.sq_head);
	r->sq_tail = (uint32_t *)(r->m + r->s.off.sq_tail);
	r->sq_flags = (uint32_t *)(r->m + r->s.off.sq_flags);
	r->cq_head = (uint32_t *)(r->m + r->s.off.cq_head);
	r->cq_tail = (uint32_t *)(r->m + r->s.off.cq_tail);
	r->sqes = (struct rmawin_op_desc *)(r->m + r->s.off.sqes);
	r->cqes = (struct rmawin_cqe *)(r->m + r->s.off.cqes);
	return 0;
}

/* Publish a new tail, waking the poller if it sleeps (the NEED_WAKEUP protocol). */
static void raw_publish(struct raw_ring *r, uint32_t tail)
{
	__atomic_store_n(r->sq_tail, tail, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(r->sq_flags, __ATOMIC_RELAXED) & RMAWIN_SQ_NEED_WAKEUP) {
		r->wakeups++;
		ring_enter_raw(r->fd, RMAWIN_ENTER_WAKEUP);
	}
}

/* Wait up to 10 s for the next completion; 0 and *cqe, or -ETIMEDOUT. */
static int raw_reap(struct raw_ring *r, struct rmawin_cqe *cqe)
{
	uint32_t head = *r->cq_head;
	int i;

	for (i = 0; i < 100000; i++) {
		if (__atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) != head) {
			*cqe = r->cqes[head & (r->s.cq_entries - 1)];
			__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
			return 0;
		}
		if (__atomic_load_n(r->sq_flags, __ATOMIC_RELAXED) & RMAWIN_SQ_NEED_WAKEUP)
			ring_enter_raw(r->fd, RMAWIN_ENTER_WAKEUP);
		usleep(100);
	}
	return -ETIMEDOUT;
}

/*
 * A completion that breaks the uAPI's rules: another entry's, a flag we do
 * not know, or RMAWIN_CQE_F_QUIET on a failed entry.
 */
static bool raw_cqe_bad(const struct rmawin_cqe *cqe, uint64_t user_data)
{
	return cqe->user_data != user_data || (cqe->flags & ~RMAWIN_CQE_F_QUIET) ||
	       ((cqe->flags & RMAWIN_CQE_F_QUIET) && cqe->res);
}

/*
 * Submit one descriptor and return its completion's result (or -ETIMEDOUT,
 * or -EPROTO for a completion raw_cqe_bad() refuses).
 */
static int raw_run(struct raw_ring *r, struct rmawin_op_desc *op, uint64_t user_data)
{
	uint32_t tail = *r->sq_tail;
	struct rmawin_cqe cqe;

	op->user_data = user_data;
	r->sqes[tail & (r->s.sq_entries - 1)] = *op;
	raw_publish(r, tail + 1);
	if (raw_reap(r, &cqe))
		return -ETIMEDOUT;
	if (raw_cqe_bad(&cqe, user_data))
		return -EPROTO;
	return cqe.res;
}

/* State letter and utime + stime (ticks) of a task. */
static int task_stat(pid_t pid, char *state, unsigned long long *ticks)
{
	char path[64], buf[512], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	/* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime" */
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 state, &ut, &st) != 3)
		return -1;
	*ticks = ut + st;
	return 0;
}

static int open_one(int port, unsigned int flags, struct rmawin_ep **ep)
{
	char addr[96];
	const char *addrs[1] = { addr };
	struct rmawin_ep_attr attr = { .rank = 0, .nranks = 1, .addrs = addrs,
				       .flags = flags, .timeout_ms = 30000 };

	snprintf(addr, sizeof(addr), "%s:%d", rmawin_test_ip(), port);
	return rmawin_ep_open(&attr, ep);
}

TEST(setup_validation)
{
	struct rmawin_ring_setup s;
	struct rmawin_ep *ep;
	struct raw_ring r;
	int fd, raw;
	void *m;

	/* before GROUP_JOIN */
	raw = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, raw);
	EXPECT_ERRNO(ENOTCONN, ring_setup_raw(raw, &s, 0, 0));
	EXPECT_ERRNO(ENXIO, ring_enter_raw(raw, RMAWIN_ENTER_WAKEUP));
	close(raw);

	ASSERT_EQ(0, open_one(rmawin_test_ports(1), RMAWIN_EP_NO_RING, &ep));
	fd = rmawin_ep_fd(ep);
	EXPECT_EQ(0, rmawin_ep_ring_active(ep));
	EXPECT_ERRNO(ENXIO, ring_enter_raw(fd, RMAWIN_ENTER_WAKEUP));
	EXPECT_ERRNO(EINVAL, ring_setup_raw(fd, &s, 3, 0));		/* not a power of 2 */
	EXPECT_ERRNO(EINVAL, ring_setup_raw(fd, &s, 8192, 0));		/* too many */
	EXPECT_ERRNO(EINVAL, ring_setup_raw(fd, &s, 0, 2000000));	/* idle too long */
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_RING_SETUP, &s));
	s.flags = 0;
	s.reserved = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_RING_SETUP, &s));
	s.reserved = 0;
	s.mmap_offset = 4096;						/* an out field */
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_RING_SETUP, &s));
	s.mmap_offset = 0;
	s.off.cqes = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_RING_SETUP, &s));
	EXPECT_EQ(0, rmawin_test_pollers(NULL, -1));

	ASSERT_EQ(0, raw_ring_open(&r, fd, 0, 0));
	EXPECT_EQ(256, r.s.sq_entries);
	EXPECT_EQ(512, r.s.cq_entries);
	EXPECT_EQ(10000, r.s.idle_us);
	EXPECT_EQ(1, rmawin_test_pollers(NULL, -1));
	EXPECT_ERRNO(EBUSY, ring_setup_raw(fd, &s, 0, 0));
	EXPECT_ERRNO(EINVAL, ring_enter_raw(fd, 0x80));
	EXPECT_EQ(0, ring_enter_raw(fd, RMAWIN_ENTER_WAKEUP));
	/* the mapping must be shared and exactly the ring's size */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, r.s.mmap_len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
				   fd, r.s.mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, r.s.mmap_len + 4096, PROT_READ, MAP_SHARED, fd, r.s.mmap_offset);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	munmap(r.m, r.s.mmap_len);
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	rmawin_test_expect_no_leaks(_metadata);
}

#define BIG	(64 * 1024)

/*
 * Rank 0's endpoint-local checks: no epoch, and the handle of another
 * endpoint (a group of one on @port).
 */
static int hostile_no_epoch(struct raw_ring *r, uint64_t *v, int port)
{
	struct rmawin_op_desc op;
	struct rmawin_win *w1, *w2;
	struct rmawin_ep *other;
	uint64_t m[2];
	int bad = 0;

	RMAWIN_TEST_WANT(-EPERM, raw_run(r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
				       .origin = (uintptr_t)v, .len = 8), 20));
	RMAWIN_TEST_WANT(-ENOLCK, raw_run(r, OP(.opcode = RMAWIN_OP_FLUSH, .win = 0, .target = 1), 21));
	/* window handles count from 0 per endpoint: the other endpoint has a
	 * window 1, this one has not
	 */
	if (open_one(port, RMAWIN_EP_NO_RING, &other) ||
	    rmawin_win_create(other, m, 8, 8, 0, &w1) ||
	    rmawin_win_create(other, m + 1, 8, 8, 0, &w2))
		return 1;
	RMAWIN_TEST_WANT(0, rmawin_lock_all(w2));
	RMAWIN_TEST_WANT(-ENOENT, raw_run(r, OP(.opcode = RMAWIN_OP_PUT, .win = 1, .target = 0,
					.origin = (uintptr_t)v, .len = 8), 22));
	RMAWIN_TEST_WANT(0, rmawin_unlock_all(w2));
	rmawin_win_free(w2);
	rmawin_win_free(w1);
	rmawin_ep_close(other);
	return bad;
}

/*
 * Rank 0 drives its ring by hand at rank 1's window; rank 1 checks the
 * data.  @arg: the port of rank 0's other endpoint.
 */
static int hostile_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), bad = 0;
	uint64_t *win_mem = calloc(1, 2 * BIG), v = 0x1122334455667788ULL;
	struct rmawin_op_desc op;
	struct rmawin_win *win;
	struct raw_ring r;
	struct rmawin_cqe cqe;
	char *big = malloc(BIG);
	uint32_t t;

	if (!win_mem || !big)
		return 9;
	memset(big, 0x5a, BIG);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, win_mem, 2 * BIG, 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(3, raw_ring_open(&r, rmawin_ep_fd(ep), 8, 0));
		bad |= hostile_no_epoch(&r, &v, *(int *)arg);
		RMAWIN_TEST_TRY(4, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(-EINVAL, raw_run(&r, OP(.opcode = 99, .win = 0, .target = 1), 1));
		RMAWIN_TEST_WANT(-EINVAL, raw_run(&r, OP(.opcode = 0), 2));
		RMAWIN_TEST_WANT(-EINVAL, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
						  .origin = (uintptr_t)&v, .len = 8,
						  .reserved = 1), 3));
		/* an operation carried by COMPLETE never comes from the ring; nor an unknown flag */
		RMAWIN_TEST_WANT(-EINVAL, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
						  .origin = (uintptr_t)&v, .len = 8,
						  .flags = RMAWIN_OP_F_EPOCH_COMPLETE), 4));
		RMAWIN_TEST_WANT(-EINVAL, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
						  .origin = (uintptr_t)&v, .len = 8, .flags = 8), 4));
		RMAWIN_TEST_WANT(-EINVAL, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 9,
						  .origin = (uintptr_t)&v, .len = 8), 5));
		RMAWIN_TEST_WANT(-ERANGE, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
						  .origin = (uintptr_t)&v, .len = 8,
						  .target_disp = ~0ULL / 4), 6));
		/* unmapped origin: refused, nothing sent */
		RMAWIN_TEST_WANT(-EFAULT, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
						  .origin = 16, .len = 8), 7));
		/* big and never registered: the poller does not pin */
		RMAWIN_TEST_WANT(-EFAULT, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
						  .origin = (uintptr_t)big, .len = BIG,
						  .target_disp = BIG / 8), 8));
		RMAWIN_TEST_WANT(-EINVAL, raw_run(&r, OP(.opcode = RMAWIN_OP_FLUSH, .win = 0, .target = 1,
						  .len = 8), 10));
		/* a tail far ahead of the head: one ring error, the ring goes on */
		t = *r.sq_tail;
		raw_publish(&r, t + r.s.sq_entries + 7);
		if (raw_reap(&r, &cqe) || cqe.flags != RMAWIN_CQE_F_RING || cqe.res != -EINVAL) {
			fprintf(stderr, "garbage tail: flags %u res %d\n", cqe.flags, cqe.res);
			bad = 1;
		}
		/* a good put through the ring */
		RMAWIN_TEST_WANT(0, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
					   .origin = (uintptr_t)&v, .len = 8, .target_disp = 3), 11));
		/* registered by an ioctl-path put first, the big buffer goes through */
		RMAWIN_TEST_WANT(0, rmawin_put(win, big, BIG, 1, BIG / 8));
		RMAWIN_TEST_WANT(0, rmawin_flush(win, 1));
		memset(big, 0xa5, BIG);
		RMAWIN_TEST_WANT(0, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 1,
					   .origin = (uintptr_t)big, .len = BIG,
					   .target_disp = BIG / 8), 12));
		RMAWIN_TEST_WANT(0, raw_run(&r, OP(.opcode = RMAWIN_OP_FLUSH, .win = 0,
					   .target = RMAWIN_ALL_RANKS), 13));
		RMAWIN_TEST_TRY(5, rmawin_unlock_all(win));
		munmap(r.m, r.s.mmap_len);
	}
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	if (me == 1) {
		memset(big, 0xa5, BIG);
		if (win_mem[3] != v || memcmp((char *)win_mem + BIG, big, BIG)) {
			fprintf(stderr, "rank 1: slot 3 holds %llx, or the big put differs\n",
				(unsigned long long)win_mem[3]);
			bad = 1;
		}
	}
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	free(big);
	free(win_mem);
	return bad ? 8 : 0;
}

TEST(hostile_ring_contents)
{
	int other = rmawin_test_ports(1);

	/* the raw ring is rank 0's own: the library must not set one up */
	setenv("RMAWIN_NO_RING", "1", 1);
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, hostile_rank, &other, 25));
	unsetenv("RMAWIN_NO_RING");
	rmawin_test_expect_no_leaks(_metadata);
}

TEST(poller_sleeps_when_idle_and_wakes_on_demand)
{
	unsigned long long t0, t1;
	struct rmawin_op_desc op;
	struct rmawin_ep *ep;
	struct rmawin_win *win;
	struct raw_ring r;
	uint64_t mem[4] = { 0 }, v = 42;
	pid_t pid = 0;
	char st;

	ASSERT_EQ(0, open_one(rmawin_test_ports(1), RMAWIN_EP_NO_RING, &ep));
	ASSERT_EQ(0, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	ASSERT_EQ(0, raw_ring_open(&r, rmawin_ep_fd(ep), 0, 1000));
	ASSERT_EQ(1, rmawin_test_pollers(&pid, -1));
	/* 1 ms idle time, then asleep: flag set, state S, no CPU over 1 s */
	usleep(200000);
	EXPECT_TRUE(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP);
	ASSERT_EQ(0, task_stat(pid, &st, &t0));
	EXPECT_EQ('S', st);
	sleep(1);
	ASSERT_EQ(0, task_stat(pid, &st, &t1));
	EXPECT_EQ('S', st);
	EXPECT_EQ(t0, t1) TH_LOG("the idle poller used %llu ticks in 1 s", t1 - t0);
	/* a submission with the flag set rings the doorbell and completes */
	ASSERT_EQ(0, rmawin_lock_all(win));
	EXPECT_EQ(0, raw_run(&r, OP(.opcode = RMAWIN_OP_PUT, .win = 0, .target = 0,
				    .origin = (uintptr_t)&v, .len = 8, .target_disp = 2), 77));
	EXPECT_EQ(1, r.wakeups);
	EXPECT_EQ(42, mem[2]);
	EXPECT_EQ(0, raw_run(&r, OP(.opcode = RMAWIN_OP_FLUSH, .win = 0, .target = 0), 78));
	ASSERT_EQ(0, rmawin_unlock_all(win));
	ASSERT_EQ(0, rmawin_win_free(win));
	munmap(r.m, r.s.mmap_len);
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0)) TH_LOG("the poller outlived close()");
	rmawin_test_expect_no_leaks(_metadata);
}

/* Write one descriptor at the tail and publish it, without any doorbell. */
static void raw_queue(struct raw_ring *r, struct rmawin_op_desc *op, uint64_t user_data)
{
	uint32_t tail = *r->sq_tail;

	op->user_data = user_data;
	r->sqes[tail & (r->s.sq_entries - 1)] = *op;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

/* Completions written and not yet read. */
static uint32_t raw_cq_ready(struct raw_ring *r)
{
	return __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) - *r->cq_head;
}

TEST(doorbell_submit_runs_entries_in_the_call)
{
	struct rmawin_op_desc op;
	struct rmawin_ep *ep;
	struct rmawin_win *win;
	struct raw_ring r;
	uint64_t mem[4] = { 0 }, v[3] = { 43, 44, 45 };
	struct rmawin_cqe cqe;
	pid_t pid = 0, child;
	int i, st;
	char state;
	unsigned long long ticks;

	ASSERT_EQ(0, open_one(rmawin_test_ports(1), RMAWIN_EP_NO_RING, &ep));
	ASSERT_EQ(0, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	/* one submission entry, so two completions fill the completion ring */
	ASSERT_EQ(0, raw_ring_open(&r, rmawin_ep_fd(ep), 1, 1000));
	EXPECT_EQ(2, r.s.cq_entries);
	ASSERT_EQ(1, rmawin_test_pollers(&pid, -1));
	ASSERT_EQ(0, rmawin_lock_all(win));
	for (i = 0; i < 100 && !(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP); i++)
		usleep(10000);
	ASSERT_TRUE(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP);
	EXPECT_ERRNO(EINVAL, ring_enter_raw(r.fd, 0x4));

	/* the poller sleeps and nothing wakes it: the call itself runs the entries */
	for (i = 0; i < 2; i++) {
		raw_queue(&r, OP(.opcode = RMAWIN_OP_PUT, .target = 0, .origin = (uintptr_t)&v[i],
				 .len = 8, .target_disp = i), 100 + i);
		EXPECT_EQ(0, ring_enter_raw(r.fd, RMAWIN_ENTER_SUBMIT));
		EXPECT_EQ(i + 1, raw_cq_ready(&r));
		EXPECT_EQ(i + 1, *r.sq_head);
	}
	EXPECT_EQ(43, mem[0]);
	EXPECT_EQ(44, mem[1]);
	EXPECT_TRUE(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP);
	ASSERT_EQ(0, task_stat(pid, &state, &ticks));
	EXPECT_EQ('S', state);

	/* the completion ring is full: the entry stays queued */
	raw_queue(&r, OP(.opcode = RMAWIN_OP_PUT, .target = 0, .origin = (uintptr_t)&v[2],
			 .len = 8, .target_disp = 2), 102);
	EXPECT_ERRNO(EBUSY, ring_enter_raw(r.fd, RMAWIN_ENTER_SUBMIT));
	EXPECT_EQ(2, *r.sq_head);
	EXPECT_EQ(0, mem[2]);
	/* puts to the rank's own window are done within the call: quiet */
	ASSERT_EQ(0, raw_reap(&r, &cqe));
	EXPECT_EQ(100, cqe.user_data);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(RMAWIN_CQE_F_QUIET, cqe.flags);
	EXPECT_EQ(0, ring_enter_raw(r.fd, RMAWIN_ENTER_SUBMIT));
	EXPECT_EQ(3, *r.sq_head);
	ASSERT_EQ(0, raw_reap(&r, &cqe));
	EXPECT_EQ(101, cqe.user_data);
	EXPECT_EQ(RMAWIN_CQE_F_QUIET, cqe.flags);
	ASSERT_EQ(0, raw_reap(&r, &cqe));
	EXPECT_EQ(102, cqe.user_data);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(RMAWIN_CQE_F_QUIET, cqe.flags);
	EXPECT_EQ(0, raw_run(&r, OP(.opcode = RMAWIN_OP_FLUSH, .target = 0), 103));
	EXPECT_EQ(45, mem[2]);

	/* another process holding the file may not run the owner's entries */
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(ring_enter_raw(r.fd, RMAWIN_ENTER_SUBMIT) == -1 && errno == EPERM ? 0 : 1);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("a child ran the owner's ring");

	ASSERT_EQ(0, rmawin_unlock_all(win));
	ASSERT_EQ(0, rmawin_win_free(win));
	munmap(r.m, r.s.mmap_len);
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST(poller_gone_after_sigkill_of_owner)
{
	int pfd[2], port = rmawin_test_ports(1);
	char c;
	pid_t child;

	ASSERT_EQ(0, pipe(pfd));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct rmawin_ep *ep;

		if (open_one(port, 0, &ep) || rmawin_ep_ring_active(ep) != 1)
			_exit(1);
		if (write(pfd[1], "r", 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	EXPECT_EQ(1, rmawin_test_pollers(NULL, -1));
	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, NULL, 0));
	EXPECT_EQ(0, rmawin_test_pollers_become(0)) TH_LOG("the poller outlived its SIGKILLed owner");
	rmawin_test_expect_no_leaks(_metadata);
}

/* Mappings of /dev/rmawin in this process. */
static int dev_mappings(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, RMAWIN_DEV_PATH) != NULL;
	if (f)
		fclose(f);
	return n;
}

TEST(fork_child_does_not_inherit_the_ring)
{
	struct rmawin_ep *ep;
	pid_t child;
	int st;

	ASSERT_EQ(0, open_one(rmawin_test_ports(1), 0, &ep));
	ASSERT_EQ(1, rmawin_ep_ring_active(ep));
	ASSERT_EQ(1, dev_mappings());
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		/* no mapping (VM_DONTCOPY), and the library knows it */
		_exit(dev_mappings() == 0 && rmawin_ep_ring_active(ep) == 0 ? 0 : 1);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(1, rmawin_ep_ring_active(ep));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
}

/* The ring's own mapping, from /proc/self/maps: its start and length. */
static int ring_mapping(void **start, size_t *len)
{
	unsigned long a, b;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, RMAWIN_DEV_PATH) && sscanf(line, "%lx-%lx", &a, &b) == 2) {
			*start = (void *)a;
			*len = b - a;
			n++;
		}
	if (f)
		fclose(f);
	return n;
}

/*
 * madvise(MADV_DOFORK) would hand a child the ring, whose entries the
 * poller runs in the parent's address space: the mapping refuses it.
 */
TEST(ring_mapping_cannot_be_made_inheritable)
{
	struct rmawin_ep *ep;
	size_t len = 0;
	void *start = NULL;
	pid_t child;
	int st;

	ASSERT_EQ(0, open_one(rmawin_test_ports(1), 0, &ep));
	ASSERT_EQ(1, rmawin_ep_ring_active(ep));
	ASSERT_EQ(1, ring_mapping(&start, &len));
	EXPECT_ERRNO(EINVAL, madvise(start, len, MADV_DOFORK));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(dev_mappings() == 0 ? 0 : 1);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("a child has the ring");
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
}

#define TMP_IBDEV	"rmwring"
#define TMP_NETDEV	"rmwring0"
#define TMP_ADDR	"198.19.77.1"

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(poller_gone_after_rdma_link_del)
{
	struct rmawin_ep *ep;
	struct rmawin_win *win;
	uint64_t mem = 0, one = 1, old;
	int ret;

	if (geteuid())
		SKIP(return, "creating an rxe device needs root");
	ASSERT_EQ(0, sh("ip link add " TMP_NETDEV " type veth peer name " TMP_NETDEV "p"
			" && ip link set " TMP_NETDEV "p up && ip link set " TMP_NETDEV " up"
			" && ip addr add " TMP_ADDR "/24 dev " TMP_NETDEV
			" && rdma link add " TMP_IBDEV " type rxe netdev " TMP_NETDEV));
	ret = rmawin_test_open_on(TMP_ADDR, TMP_IBDEV, 0, 1, rmawin_test_ports(1), 30000, &ep);
	ASSERT_EQ(0, ret) TH_LOG("open on " TMP_IBDEV ": %s", rmawin_strerror(ret));
	ASSERT_EQ(1, rmawin_ep_ring_active(ep));
	ASSERT_EQ(0, rmawin_win_create(ep, &mem, 8, 8, 0, &win));
	ASSERT_EQ(0, rmawin_lock_all(win));
	EXPECT_EQ(0, rmawin_fetch_and_op(win, &one, &old, RMAWIN_UINT64, 0, 0, RMAWIN_SUM));
	EXPECT_EQ(0, rmawin_flush_all(win));
	EXPECT_EQ(1, mem);
	EXPECT_EQ(1, rmawin_test_pollers(NULL, -1));
	ASSERT_EQ(0, sh("rdma link del " TMP_IBDEV));
	EXPECT_EQ(0, rmawin_test_pollers_become(0)) TH_LOG("the poller outlived its device");
	/* the library falls back to the ioctl, which says the device is gone */
	EXPECT_EQ(-ENODEV, rmawin_fetch_and_op(win, &one, &old, RMAWIN_UINT64, 0, 0,
					       RMAWIN_SUM));
	EXPECT_EQ(0, rmawin_ep_ring_active(ep));
	EXPECT_EQ(-ENODEV, rmawin_flush_all(win));
	rmawin_win_free(win);
	EXPECT_EQ(0, rmawin_ep_close(ep));
	sh("ip link del " TMP_NETDEV " 2>/dev/null");
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * Through the library: puts and gets on the ring are only queued.  Their
 * argument errors come back at once; a transfer's error (an origin that is
 * not mapped, a get into read-only memory) from the synchronization that
 * completes it (fence, flush, unlock), once, after which the window works
 * on.  Rank 1 serves and checks what landed.
 */
static int queued_rank(int rank, int n, void *arg)
{
	uint64_t w[512], v[4] = { 11, 22, 33, 44 }, got = 0;
	unsigned char *hole, *ro;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int bad = 0;

	memset(w, 0, sizeof(w));
	hole = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED || ro == MAP_FAILED)
		return 1;
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, *(int *)arg, &ep));
	if (rmawin_ep_ring_active(ep) != 1) {
		RMAWIN_TEST_MSG("no ring");
		return 3;
	}
	RMAWIN_TEST_TRY(4, rmawin_win_create(ep, w, sizeof(w), 8, 0, &win));
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
	if (rank == 0) {
		/* at once: rank, range (in units of 8), nothing queued */
		RMAWIN_TEST_WANT(-EINVAL, rmawin_put(win, v, 8, 2, 0));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_put(win, v, 16, 1, 511));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_get(win, &got, 8, 1, 512));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_put(win, v, 8, 1, SIZE_MAX / 4));
		/* queued: the bad origin's error waits for the fence */
		RMAWIN_TEST_WANT(0, rmawin_put(win, hole, 100, 1, 10));
		RMAWIN_TEST_WANT(0, rmawin_put(win, v, 32, 1, 100));
	}
	RMAWIN_TEST_WANT(rank == 0 ? -EFAULT : 0, rmawin_fence(win, 0));
	if (rank == 1 && (w[100] != 11 || w[103] != 44 || w[10])) {
		RMAWIN_TEST_MSG("the good put of the failed epoch: %llu..%llu, word 10 %llu",
				(unsigned long long)w[100], (unsigned long long)w[103],
				(unsigned long long)w[10]);
		bad = 1;
	}
	if (rank == 0) {
		/* reported once: the next epoch is clean */
		RMAWIN_TEST_WANT(0, rmawin_put(win, &v[1], 8, 1, 200));
		RMAWIN_TEST_WANT(0, rmawin_get(win, ro, 8, 1, 100));
	}
	RMAWIN_TEST_WANT(rank == 0 ? -EFAULT : 0, rmawin_fence(win, 0));
	if (rank == 0)
		RMAWIN_TEST_WANT(0, rmawin_get(win, &got, 8, 1, 200));
	RMAWIN_TEST_WANT(0, rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
	if (rank == 0) {
		if (got != 22) {
			RMAWIN_TEST_MSG("get after a clean epoch: %llu, want 22",
					(unsigned long long)got);
			bad = 1;
		}
		/* no epoch: -EPERM at once; then a lock epoch, its flush and unlock */
		RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, v, 8, 1, 0));
		RMAWIN_TEST_TRY(6, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, v, 8, 0, 0));	/* not locked */
		RMAWIN_TEST_WANT(0, rmawin_put(win, hole + 4096, 64, 1, 300));
		RMAWIN_TEST_WANT(-EFAULT, rmawin_flush(win, 1));
		RMAWIN_TEST_WANT(0, rmawin_put(win, &v[2], 8, 1, 301));
		RMAWIN_TEST_WANT(0, rmawin_flush(win, 1));
		RMAWIN_TEST_WANT(0, rmawin_put(win, hole, 8, 1, 302));
		RMAWIN_TEST_WANT(-EFAULT, rmawin_unlock(win, 1));
		RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, v, 8, 1, 0));
	}
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (rank == 1 && (w[301] != 33 || w[300] || w[302])) {
		RMAWIN_TEST_MSG("lock epoch: word 301 %llu (want 33), 300 %llu, 302 %llu",
				(unsigned long long)w[301], (unsigned long long)w[300],
				(unsigned long long)w[302]);
		bad = 1;
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	RMAWIN_TEST_TRY(9, rmawin_ep_close(ep));
	return bad ? 10 : 0;
}

TEST(queued_errors_come_at_the_synchronization)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, queued_rank, &port, 60));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * A queued put must reach its target without a synchronization call when
 * its caller then only waits on memory: a ping-pong of 200 rounds in which
 * each rank puts a counter and spins until the other's comes back, with
 * the poller given time to fall asleep between some rounds.  Nothing may
 * sit in the ring until the ring fills or a flush comes.
 */
static int pingpong_rank(int rank, int n, void *arg)
{
	volatile uint64_t w[2] = { 0, 0 };
	uint64_t v;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	double t0;
	int i;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, (void *)w, sizeof(w), 8, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	for (i = 1; i <= 200; i++) {
		if (rank == 0 || i > 1) {
			v = rank == 0 ? 2 * i - 1 : 2 * i - 2;
			RMAWIN_TEST_TRY(5, rmawin_put(win, &v, 8, 1 - rank, 0));
		}
		t0 = rmawin_test_now();
		while (w[0] < (uint64_t)(rank == 0 ? 2 * i : 2 * i - 1)) {
			if (rmawin_test_now() - t0 > 10) {
				RMAWIN_TEST_MSG("round %d: the peer's put never came (word %llu)", i,
						(unsigned long long)w[0]);
				return 6;
			}
		}
		/* now and then long enough for the pollers to fall asleep */
		if (i % 50 == 0)
			usleep(5000);
		if (i % 64 == 0)
			RMAWIN_TEST_TRY(7, rmawin_flush_all(win));
	}
	v = 400;
	if (rank == 1)
		RMAWIN_TEST_TRY(8, rmawin_put(win, &v, 8, 0, 0));
	RMAWIN_TEST_TRY(9, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(10, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(11, rmawin_win_free(win));
	RMAWIN_TEST_TRY(12, rmawin_ep_close(ep));
	return 0;
}

TEST(queued_put_lands_without_a_synchronization)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, pingpong_rank, &port, 120));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
