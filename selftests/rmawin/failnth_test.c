// SPDX-License-Identifier: GPL-2.0
/*
 * Every error path walked: for each ioctl (and open), with N = 1, 2, ...
 * written to /proc/thread-self/fail-nth, the Nth fault point the call
 * reaches (a slab or page allocation, a copy from or to user memory)
 * fails.  The call must then fail cleanly with an errno, or succeed; the
 * endpoint must be usable or cleanly dead after it; and once everything
 * is closed, nothing of the module's is left.  The sweep of a call ends at
 * the first N its call does not reach.  As syzkaller's and the iommufd
 * selftests' fail-nth tests do.
 *
 * Needs a kernel with fault injection (CONFIG_FAULT_INJECTION,
 * CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_USERCOPY):
 * make check-debug's.  Elsewhere it is skipped, saying so.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <arpa/inet.h>
#include <rmawin.h>

#include "rmawin_test.h"

#define MAX_POINTS	4000

static int failnth_fd = -1;

static void *failnth_helper(void *unused);

/* Make failslab and fail_page_alloc honour fail-nth for sleeping allocations too. */
static int failnth_setup(void)
{
	static const char *const knobs[] = {
		"/sys/kernel/debug/failslab/ignore-gfp-wait",
		"/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait",
		"/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem",
	};
	pthread_t helper;
	char path[64];
	unsigned int i;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		f = fopen(knobs[i], "w");
		if (!f)
			return -1;
		fputs("N\n", f);
		fclose(f);
	}
	f = fopen("/sys/kernel/debug/fail_page_alloc/min-order", "w");
	if (f) {
		fputs("0\n", f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth", (long)syscall(SYS_gettid));
	failnth_fd = open(path, O_RDWR);
	if (failnth_fd < 0 || pthread_create(&helper, NULL, failnth_helper, NULL))
		return -1;
	return 0;
}

static void failnth_arm(int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	if (pwrite(failnth_fd, buf, len, 0) != len)
		abort();
}

/*
 * Read and clear the count from another thread: the file is this task's,
 * but anything this task does while the count is armed (a read's copy to
 * user memory, creating a thread, writing a pipe) is itself a fault
 * point.  So a helper thread, started before anything is armed, does it
 * when asked through memory alone, and this task only spins.
 */
static int failnth_req, failnth_left;

static void *failnth_helper(void *unused)
{
	char buf[16];

	for (;;) {
		while (!__atomic_load_n(&failnth_req, __ATOMIC_ACQUIRE))
			usleep(50);
		memset(buf, 0, sizeof(buf));
		if (pread(failnth_fd, buf, sizeof(buf) - 1, 0) <= 0 ||
		    pwrite(failnth_fd, "0", 1, 0) != 1)
			abort();
		failnth_left = atoi(buf);
		__atomic_store_n(&failnth_req, 0, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Disarm; true if the armed fault was reached (and injected). */
static bool failnth_disarm(void)
{
	__atomic_store_n(&failnth_req, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&failnth_req, __ATOMIC_ACQUIRE))
		;
	return failnth_left == 0;
}

/* A fresh endpoint in a group of one, ready for the call under test. */
struct state {
	int fd;
	int port;		/* of the group of one */
	__u32 win;
	unsigned char *mem;
	unsigned char buf[64];
};

static int join_one(int fd, int port)
{
	struct rmawin_addr a = { .family = AF_INET, .port = port };
	struct rmawin_group_join j = { .size = sizeof(j), .nranks = 1 };

	inet_pton(AF_INET, rmawin_test_ip(), a.addr);
	j.addrs_ptr = (uintptr_t)&a;
	return ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j);
}

static int create_win(struct state *s)
{
	struct rmawin_win_create c = { .size = sizeof(c), .base = (uintptr_t)s->mem,
				       .length = 8192, .disp_unit = 1 };
	int ret = ioctl(s->fd, RMAWIN_IOC_WIN_CREATE, &c);

	s->win = c.win;
	return ret;
}

static int fence(struct state *s)
{
	struct rmawin_fence f = { .size = sizeof(f), .win = s->win };

	return ioctl(s->fd, RMAWIN_IOC_FENCE, &f);
}

/* Set up to @level: 0 open, 1 joined, 2 with a window, 3 in a fence epoch. */
static int state_up(struct state *s, int level)
{
	memset(s->buf, 0x5a, sizeof(s->buf));
	s->fd = open(RMAWIN_DEV_PATH, O_RDWR);
	if (s->fd < 0)
		return -1;
	if (level >= 1 && join_one(s->fd, s->port))
		return -1;
	if (level >= 2 && create_win(s))
		return -1;
	if (level >= 3 && fence(s))
		return -1;
	return 0;
}

static int call_join(struct state *s)
{
	return join_one(s->fd, s->port);
}

static int call_win_create(struct state *s)
{
	return create_win(s);
}

static int call_win_allocate(struct state *s)
{
	struct rmawin_win_create c = { .size = sizeof(c), .flags = RMAWIN_WIN_ALLOCATE,
				       .length = 3 * 4096, .disp_unit = 1 };

	return ioctl(s->fd, RMAWIN_IOC_WIN_CREATE, &c);
}

static int rma(struct state *s, __u8 opcode, __u64 len)
{
	static __u64 result;
	struct rmawin_op_desc op = {
		.opcode = opcode, .win = s->win, .origin = (uintptr_t)s->buf, .len = len,
		.target_disp = 8,
	};
	struct rmawin_rma r = { .size = sizeof(r), .ops_ptr = (uintptr_t)&op, .nops = 1,
				.op_size = sizeof(op) };

	if (opcode == RMAWIN_OP_FETCH_OP) {
		op.datatype = RMAWIN_TYPE_INT64;
		op.result = (uintptr_t)&result;
	}
	return ioctl(s->fd, RMAWIN_IOC_RMA, &r);
}

static int call_put(struct state *s)
{
	return rma(s, RMAWIN_OP_PUT, 64);
}

static int call_get(struct state *s)
{
	return rma(s, RMAWIN_OP_GET, 64);
}

static int call_fetch_op(struct state *s)
{
	return rma(s, RMAWIN_OP_FETCH_OP, 8);
}

static int call_put_notify(struct state *s)
{
	return rma(s, RMAWIN_OP_PUT_NOTIFY, 16);
}

static int call_fence(struct state *s)
{
	return fence(s);
}

static int call_lock_unlock(struct state *s)
{
	struct rmawin_passive p = { .size = sizeof(p), .win = s->win,
				    .type = RMAWIN_LOCK_TYPE_EXCLUSIVE };

	if (ioctl(s->fd, RMAWIN_IOC_LOCK, &p))
		return -1;
	p.type = 0;
	return ioctl(s->fd, RMAWIN_IOC_UNLOCK, &p);
}

static int call_win_free(struct state *s)
{
	struct rmawin_win_free f = { .size = sizeof(f), .win = s->win };

	return ioctl(s->fd, RMAWIN_IOC_WIN_FREE, &f);
}

static int call_win_info(struct state *s)
{
	struct rmawin_win_rank r[1];
	struct rmawin_win_info w = { .size = sizeof(w), .win = s->win, .nranks = 1,
				     .ranks_ptr = (uintptr_t)r };

	return ioctl(s->fd, RMAWIN_IOC_WIN_INFO, &w);
}

static int call_ring_setup(struct state *s)
{
	struct rmawin_ring_setup r = { .size = sizeof(r) };

	return ioctl(s->fd, RMAWIN_IOC_RING_SETUP, &r);
}

static int call_query(struct state *s)
{
	struct rmawin_dev_info devs[4];
	struct rmawin_query q;

	return rmawin_query_raw(s->fd, &q, devs, 4);
}

static int call_bind(struct state *s)
{
	return rmawin_bind_raw(s->fd, rmawin_test_ibdev(), 0);
}

static const struct {
	const char *name;
	int level;
	int (*call)(struct state *s);
} calls[] = {
	{ "QUERY", 0, call_query },
	{ "EP_BIND", 0, call_bind },
	{ "GROUP_JOIN", 0, call_join },
	{ "WIN_CREATE", 1, call_win_create },
	{ "WIN_CREATE (allocate)", 1, call_win_allocate },
	{ "FENCE", 2, call_fence },
	{ "RMA put", 3, call_put },
	{ "RMA get", 3, call_get },
	{ "RMA fetch_and_op", 3, call_fetch_op },
	{ "RMA put_notify", 3, call_put_notify },
	{ "LOCK, UNLOCK", 2, call_lock_unlock },
	{ "WIN_INFO", 2, call_win_info },
	{ "WIN_FREE", 2, call_win_free },
	{ "RING_SETUP", 1, call_ring_setup },
};

/* After the call, at whatever N: the endpoint answers, or is cleanly dead. */
static bool still_answers(struct state *s)
{
	struct rmawin_query q = { .size = sizeof(q) };

	return !ioctl(s->fd, RMAWIN_IOC_QUERY, &q);
}

TEST(fail_nth_every_call)
{
	int n, ret, err, port = rmawin_test_ports(1);
	unsigned int i;
	long swept = 0;
	struct state s;

	if (access("/proc/self/fail-nth", F_OK))
		SKIP(return, "the kernel has no fail-nth (CONFIG_FAULT_INJECTION): make check-debug runs this");
	ASSERT_EQ(0, failnth_setup()) TH_LOG("fault injection knobs: %s", strerror(errno));
	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		for (n = 1; n < MAX_POINTS; n++) {
			memset(&s, 0, sizeof(s));
			s.port = port;
			s.mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			ASSERT_NE(MAP_FAILED, s.mem) TH_LOG("%s, fault %d: mmap: %s", calls[i].name,
							     n, strerror(errno));
			ASSERT_EQ(0, state_up(&s, calls[i].level))
				TH_LOG("%s: setup: %s", calls[i].name, strerror(errno));
			failnth_arm(n);
			ret = calls[i].call(&s);
			err = errno;
			if (!failnth_disarm()) {
				/* the call has fewer fault points than n: it must work */
				EXPECT_EQ(0, ret) TH_LOG("%s with no fault: %s", calls[i].name,
							 strerror(err));
				close(s.fd);
				munmap(s.mem, 8192);
				break;
			}
			/* a fault at point n: success or a clean errno */
			if (ret)
				EXPECT_TRUE(err == ENOMEM || err == EFAULT || err == EIO ||
					    err == EINTR || err == EAGAIN || err == ENODEV)
					TH_LOG("%s, fault %d: %s", calls[i].name, n, strerror(err));
			EXPECT_TRUE(still_answers(&s)) TH_LOG("%s, fault %d", calls[i].name, n);
			close(s.fd);
			munmap(s.mem, 8192);
			swept++;
		}
		EXPECT_LT(n, MAX_POINTS) TH_LOG("%s: more than %d fault points?", calls[i].name,
						MAX_POINTS);
		TH_LOG("%s: %d fault points", calls[i].name, n - 1);
		rmawin_test_expect_no_leaks(_metadata);
	}
	TH_LOG("%ld faults injected in all", swept);
}

TEST_HARNESS_MAIN
