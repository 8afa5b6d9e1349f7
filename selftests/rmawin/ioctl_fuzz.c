// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl_fuzz SEED CALLS [PROCS] - a seeded fuzzer of /dev/rmawin.
 *
 * PROCS processes (default 3), each with its own stream of the SEED's
 * random numbers, make CALLS system calls in all on endpoints of their own:
 * every ioctl with random and mutated structs (sizes, flags, reserved
 * fields, pointers to nothing, to read-only memory, to the middle of a
 * mapping's end), groups of one and of two (two endpoints of one process,
 * joined by two threads), windows created, allocated and freed, with and
 * without RMAWIN_WIN_SAME_OP (the device's atomics and, in a pair, the
 * queue pair to itself), every
 * operation between them, the submission ring filled with random
 * descriptors and rung, mmap and munmap of rings and windows while
 * operations run, forks whose children use the parent's endpoints, and
 * endpoints passed to another process with SCM_RIGHTS.
 *
 * What is checked: nothing here crashes (a signal fails the run); the
 * kernel log stays clean (the VM runner); once every process has exited,
 * nothing of the module's is left (fuzz.sh's leak check).  A run is
 * reproducible from its SEED (modulo timing between processes).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/rmawin.h>

#include "rmawin_key.h"
#include "rmawin_ports.h"
#include "xorshift.h"

#define NFDS		4
#define ARENA		(64 * 4096)
/* Ports of a process: pairs at +0 .. +399, groups of one at +500 .. +699 */
#define PROC_PORTS	700

static uint64_t rng_state;

static uint64_t rnd(void)
{
	return xorshift64s(&rng_state);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* Memory to point at: read-write, read-only, and a page that is gone. */
static unsigned char *arena, *ro_page, *gone_page;
static const char *ip;
static uint8_t key[RMAWIN_JOB_KEY_MAX];
static size_t key_len;
static unsigned long port_base;	/* this process's PROC_PORTS ports */

struct ep {
	int fd;
	int joined;		/* 0, or the group's size */
	__u32 wins[8];
	int nwins;
	void *ring;
	size_t ring_len;
	struct rmawin_ring_setup rs;
};

static struct ep eps[NFDS];
/* children (fork, SCM_RIGHTS) that could do more than QUERY with our endpoints */
static long bad_children;

static void reap(pid_t pid)
{
	int st;

	if (pid > 0 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)))
		bad_children++;
}

/* A pointer as a fuzzer would pass it. */
static __u64 fuzz_ptr(size_t len)
{
	switch (below(8)) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)ro_page;
	case 2:
		return (uintptr_t)gone_page;
	case 3:
		return (uintptr_t)arena + ARENA - below(64);	/* runs off the end */
	case 4:
		return rnd();
	default:
		return (uintptr_t)arena + below(ARENA - (len < ARENA ? len : 0));
	}
}

/* A value as a fuzzer would pass it: small, a boundary, or anything. */
static __u64 fuzz_val(__u64 good)
{
	static const __u64 edge[] = { 0, 1, 2, 7, 8, 64, 4095, 4096, 4097, 0x7fffffff,
				      0xffffffff, 1ULL << 32, 1ULL << 40, ~0ULL };

	switch (below(6)) {
	case 0:
		return edge[below(sizeof(edge) / sizeof(edge[0]))];
	case 1:
		return rnd();
	default:
		return good;
	}
}

static void fuzz_bytes(void *p, size_t len, unsigned int flips)
{
	unsigned char *b = p;

	while (flips--)
		b[below(len)] ^= 1 << below(8);
}

static int join(int fd, int rank, int n, unsigned long port)
{
	struct rmawin_addr a[2];
	struct rmawin_group_join j = { .size = sizeof(j), .rank = rank, .nranks = n,
				       .timeout_ms = 3000 };
	int i;

	memset(a, 0, sizeof(a));
	for (i = 0; i < n; i++) {
		a[i].family = AF_INET;
		a[i].port = port + i;
		inet_pton(AF_INET, ip, a[i].addr);
	}
	j.addrs_ptr = (uintptr_t)a;
	if (n > 1) {
		j.key_ptr = (uintptr_t)key;
		j.key_len = key_len;
	}
	if (!below(16))
		fuzz_bytes(&j, sizeof(j), 1 + below(3));
	return ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j);
}

struct pair_join {
	int fd, rank;
	unsigned long port;
	int ret;
};

static void *join_thread(void *arg)
{
	struct pair_join *p = arg;

	p->ret = join(p->fd, p->rank, 2, p->port);
	return NULL;
}

/* The pair's window: the same flags on both ranks, same_op (the device's atomics) or not. */
static __u32 pair_win_flags;

static void *win_thread(void *arg)
{
	struct ep *e = arg;
	struct rmawin_win_create c = { .size = sizeof(c), .length = 8 * 4096, .disp_unit = 1,
				       .flags = pair_win_flags };

	if (!ioctl(e->fd, RMAWIN_IOC_WIN_CREATE, &c))
		e->wins[e->nwins++] = c.win;
	return NULL;
}

/* Two fresh endpoints of this process joined as ranks 0 and 1 of a group. */
static void join_pair(struct ep *a, struct ep *b)
{
	unsigned long port = port_base + 2 * below(200);
	struct pair_join pa = { .fd = a->fd, .rank = 0, .port = port };
	struct pair_join pb = { .fd = b->fd, .rank = 1, .port = port };
	pthread_t t;

	if (pthread_create(&t, NULL, join_thread, &pb))
		return;
	join_thread(&pa);
	pthread_join(t, NULL);
	if (pa.ret || pb.ret)
		return;
	a->joined = b->joined = 2;
	/* and one window on both, the pair's only collective after the join */
	pair_win_flags = RMAWIN_WIN_ALLOCATE | (below(2) ? RMAWIN_WIN_SAME_OP : 0);
	if (pair_win_flags & RMAWIN_WIN_SAME_OP && below(2))
		pair_win_flags |= RMAWIN_WIN_NIC_SMALL_INTS;
	if (pthread_create(&t, NULL, win_thread, b))
		return;
	win_thread(a);
	pthread_join(t, NULL);
}

static void reopen(struct ep *e)
{
	if (e->ring)
		munmap(e->ring, e->ring_len);
	if (e->fd >= 0)
		close(e->fd);
	memset(e, 0, sizeof(*e));
	e->fd = open("/dev/rmawin", O_RDWR | O_CLOEXEC);
}

static __u32 some_win(struct ep *e)
{
	return e->nwins && below(8) ? e->wins[below(e->nwins)] : fuzz_val(0);
}

static void fuzz_win_create(struct ep *e)
{
	struct rmawin_win_create c = { .size = sizeof(c), .disp_unit = 1 + below(8) };
	void *m;

	if (e->joined == 2)
		return;		/* collective: made in join_pair() */
	if (below(3)) {
		c.base = (uintptr_t)arena + 4096 * below(32);
		c.length = 4096 * below(16) + below(100);
	} else {
		c.flags = RMAWIN_WIN_ALLOCATE;
		c.length = 4096 * below(8);
	}
	if (!below(4))
		c.flags |= RMAWIN_WIN_SAME_OP;
	if (!below(4))
		c.flags |= RMAWIN_WIN_NIC_SMALL_INTS;
	if (!below(8)) {
		c.base = fuzz_ptr(c.length);
		c.length = fuzz_val(c.length);
		c.flags = fuzz_val(c.flags);
		c.disp_unit = fuzz_val(c.disp_unit);
	}
	if (ioctl(e->fd, RMAWIN_IOC_WIN_CREATE, &c))
		return;
	if (e->nwins < 8)
		e->wins[e->nwins++] = c.win;
	/* map an allocated window, and sometimes leave it mapped past its free */
	if (c.mmap_offset && below(2)) {
		m = mmap(NULL, c.length ?: 4096, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd,
			 c.mmap_offset);
		if (m != MAP_FAILED && below(2))
			munmap(m, c.length ?: 4096);
	}
}

static void fill_op(struct ep *e, struct rmawin_op_desc *op)
{
	static const __u8 types[] = { RMAWIN_TYPE_INT32, RMAWIN_TYPE_INT64, RMAWIN_TYPE_DOUBLE };

	memset(op, 0, sizeof(*op));
	op->opcode = 1 + below(RMAWIN_OP_LAST - 1);
	op->win = some_win(e);
	op->target = below(e->joined ?: 1);
	op->origin = (uintptr_t)arena + below(ARENA / 2);
	op->len = below(3) ? 8 * below(64) : below(64 * 1024);
	op->target_disp = below(64);
	if (op->opcode >= RMAWIN_OP_ACC && op->opcode <= RMAWIN_OP_CAS) {
		op->datatype = types[below(3)];
		op->acc_op = op->opcode == RMAWIN_OP_CAS ? 0 : below(RMAWIN_ACC_LAST);
		op->len = op->opcode >= RMAWIN_OP_FETCH_OP ? 8 : 8 * (1 + below(32));
		if (op->opcode != RMAWIN_OP_ACC)
			op->result = (uintptr_t)arena + ARENA / 2 + below(ARENA / 4);
		if (op->opcode == RMAWIN_OP_CAS)
			op->compare = (uintptr_t)arena + below(4096);
	}
	if (op->opcode == RMAWIN_OP_PUT_NOTIFY)
		op->tag = rnd();
	if (op->opcode == RMAWIN_OP_FLUSH) {
		op->origin = op->len = op->target_disp = 0;
	}
	if (!below(6))
		fuzz_bytes(op, sizeof(*op), 1 + below(4));
	if (!below(10))
		op->origin = fuzz_ptr(op->len);
}

static void fuzz_rma(struct ep *e)
{
	struct rmawin_op_desc ops[4];
	struct rmawin_rma r = { .size = sizeof(r), .ops_ptr = (uintptr_t)ops, .nops = 1 + below(4),
				.op_size = sizeof(ops[0]) };
	unsigned int i;

	for (i = 0; i < r.nops; i++)
		fill_op(e, &ops[i]);
	if (!below(8)) {
		r.op_size = fuzz_val(r.op_size);
		r.nops = fuzz_val(r.nops);
		r.ops_ptr = fuzz_ptr(sizeof(ops));
	}
	ioctl(e->fd, RMAWIN_IOC_RMA, &r);
}

static void fuzz_ring(struct ep *e)
{
	struct rmawin_ring_enter en = { .size = sizeof(en) };
	struct rmawin_op_desc *sqes;
	__u32 *tail, head, t, n, i;

	if (!e->ring) {
		memset(&e->rs, 0, sizeof(e->rs));
		e->rs.size = sizeof(e->rs);
		e->rs.sq_entries = 1U << below(6);
		if (ioctl(e->fd, RMAWIN_IOC_RING_SETUP, &e->rs))
			return;
		e->ring = mmap(NULL, e->rs.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd,
			       e->rs.mmap_offset);
		if (e->ring == MAP_FAILED) {
			e->ring = NULL;
			return;
		}
		e->ring_len = e->rs.mmap_len;
	}
	sqes = (void *)((char *)e->ring + e->rs.off.sqes);
	tail = (void *)((char *)e->ring + e->rs.off.sq_tail);
	head = __atomic_load_n((__u32 *)((char *)e->ring + e->rs.off.sq_head), __ATOMIC_ACQUIRE);
	t = *tail;
	n = 1 + below(8);
	for (i = 0; i < n && t - head < e->rs.sq_entries; i++, t++)
		fill_op(e, &sqes[t & (e->rs.sq_entries - 1)]);
	/* a tail that lies, sometimes */
	if (!below(16))
		t += below(3) ? e->rs.sq_entries + below(100) : -below(5);
	__atomic_store_n(tail, t, __ATOMIC_RELEASE);
	en.flags = below(4);
	ioctl(e->fd, RMAWIN_IOC_RING_ENTER, &en);
	/* the completion ring is ours to consume: take all */
	*(__u32 *)((char *)e->ring + e->rs.off.cq_head) =
		__atomic_load_n((__u32 *)((char *)e->ring + e->rs.off.cq_tail), __ATOMIC_ACQUIRE);
	if (!below(20)) {
		munmap(e->ring, e->ring_len);	/* while the poller may run */
		e->ring = NULL;
	}
}

/* Any command, its struct random but for a plausible size now and then. */
static void fuzz_raw(struct ep *e)
{
	__u64 buf[64];
	unsigned int nr = RMAWIN_CMD_QUERY + below(RMAWIN_CMD_LAST - RMAWIN_CMD_QUERY + 1);
	size_t i;

	/*
	 * Calls that wait for a peer (or for this process) would wait for
	 * ever here: one thread drives both ends of a pair.  They are fuzzed
	 * where they cannot block: fuzz_sync() and the singletons.
	 */
	if (nr == RMAWIN_CMD_START || nr == RMAWIN_CMD_WAIT || nr == RMAWIN_CMD_NOTIFY_WAIT ||
	    (e->joined == 2 && (nr == RMAWIN_CMD_BARRIER || nr == RMAWIN_CMD_FENCE ||
				nr == RMAWIN_CMD_WIN_CREATE || nr == RMAWIN_CMD_WIN_FREE ||
				nr == RMAWIN_CMD_LOCK)))
		nr = RMAWIN_CMD_QUERY;

	for (i = 0; i < sizeof(buf) / sizeof(buf[0]); i++)
		buf[i] = below(3) ? 0 : rnd();
	buf[0] = below(2) ? 8 * (1 + below(16)) : fuzz_val(64);
	ioctl(e->fd, _IO(RMAWIN_IOC_TYPE, nr), below(16) ? (void *)buf : (void *)fuzz_ptr(64));
}

/* A lock epoch around an operation or two: what a pair may do without waiting. */
static void fuzz_locked_rma(struct ep *e)
{
	struct rmawin_passive p = { .size = sizeof(p), .win = some_win(e),
				    .target = below(4) ? below(e->joined ?: 1) : RMAWIN_ALL_RANKS };

	p.type = p.target == RMAWIN_ALL_RANKS ? 0 : below(2);
	if (ioctl(e->fd, RMAWIN_IOC_LOCK, &p))
		return;
	fuzz_rma(e);
	if (below(2)) {
		p.type = 0;
		ioctl(e->fd, RMAWIN_IOC_FLUSH, &p);
	}
	fuzz_rma(e);
	p.type = 0;
	ioctl(e->fd, RMAWIN_IOC_UNLOCK, &p);
}

static void fuzz_sync(struct ep *e)
{
	struct rmawin_fence f = { .size = sizeof(f), .win = some_win(e) };
	struct rmawin_pscw ps = { .size = sizeof(ps), .win = some_win(e) };
	struct rmawin_notify_wait nw = { .size = sizeof(nw), .win = some_win(e) };
	struct rmawin_win_free wf = { .size = sizeof(wf), .win = some_win(e) };
	__u32 self = 0;

	if (e->joined == 2) {
		/* collectives need both ends: only what one end does alone */
		fuzz_locked_rma(e);
		return;
	}
	switch (below(5)) {
	case 0:
		f.flags = below(4) ? RMAWIN_MODE_NOPRECEDE : fuzz_val(0);
		ioctl(e->fd, RMAWIN_IOC_FENCE, &f);
		break;
	case 1:
		fuzz_locked_rma(e);
		break;
	case 2:
		/* a whole post/start/complete/wait on itself: START waits for the POST */
		ps.n = 1;
		ps.ranks_ptr = (uintptr_t)&self;
		if (ioctl(e->fd, RMAWIN_IOC_POST, &ps))
			break;
		if (!ioctl(e->fd, RMAWIN_IOC_START, &ps)) {
			fuzz_rma(e);
			ps.n = 0;
			ps.ranks_ptr = 0;
			ioctl(e->fd, RMAWIN_IOC_COMPLETE, &ps);
		}
		ps.n = 0;
		ps.ranks_ptr = 0;
		ps.flags = RMAWIN_WAIT_TEST;
		ioctl(e->fd, RMAWIN_IOC_WAIT, &ps);
		break;
	case 3:
		nw.timeout_ms = 0;
		ioctl(e->fd, RMAWIN_IOC_NOTIFY_WAIT, &nw);
		break;
	default:
		if (!ioctl(e->fd, RMAWIN_IOC_WIN_FREE, &wf) && e->nwins)
			e->nwins--;
		break;
	}
}

/* A child that got our endpoints by fork: it may only query through them. */
static void fuzz_fork(void)
{
	struct rmawin_barrier b = { .size = sizeof(b) };
	pid_t pid = fork();
	int i;

	if (pid == 0) {
		for (i = 0; i < NFDS; i++) {
			if (eps[i].fd < 0)
				continue;
			if (ioctl(eps[i].fd, RMAWIN_IOC_BARRIER, &b) != -1 || errno != EPERM)
				_exit(3);
			if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, eps[i].fd, 0) != MAP_FAILED)
				_exit(4);
		}
		_exit(0);
	}
	reap(pid);
}

/* Our endpoint to another process through a socket: EPERM there too. */
static void fuzz_scm(struct ep *e)
{
	char cbuf[CMSG_SPACE(sizeof(int))], c = 'x';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int sv[2], fd;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		return;
	pid = fork();
	if (pid == 0) {
		struct rmawin_barrier b = { .size = sizeof(b) };

		close(sv[0]);
		if (recvmsg(sv[1], &m, 0) < 1)
			_exit(1);
		cm = CMSG_FIRSTHDR(&m);
		if (!cm)
			_exit(1);
		memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		_exit(ioctl(fd, RMAWIN_IOC_BARRIER, &b) == -1 && errno == EPERM ? 0 : 5);
	}
	close(sv[1]);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &e->fd, sizeof(int));
	sendmsg(sv[0], &m, 0);
	close(sv[0]);
	reap(pid);
}

static void run(uint64_t seed, long calls)
{
	long i;
	struct ep *e;

	rng_state = seed ?: 1;
	for (i = 0; i < NFDS; i++)
		eps[i].fd = -1;
	for (i = 0; i < calls; i++) {
		e = &eps[below(NFDS)];
		if (e->fd < 0 || !below(200)) {
			reopen(e);
			continue;
		}
		switch (below(20)) {
		case 0:
			if (!e->joined && !join(e->fd, 0, 1, port_base + 500 + below(200)))
				e->joined = 1;
			break;
		case 1: {
			struct ep *o = &eps[(e - eps + 1) % NFDS];

			if (!below(4)) {
				reopen(e);
				reopen(o);
				if (e->fd >= 0 && o->fd >= 0)
					join_pair(e, o);
			}
			break;
		}
		case 2:
		case 3:
			fuzz_win_create(e);
			break;
		case 4:
		case 5:
		case 6:
		case 7:
			fuzz_rma(e);
			break;
		case 8:
		case 9:
			fuzz_ring(e);
			break;
		case 10:
		case 11:
		case 12:
			fuzz_sync(e);
			break;
		case 13:
			if (!below(10))
				fuzz_fork();
			else if (!below(10))
				fuzz_scm(e);
			break;
		default:
			fuzz_raw(e);
			break;
		}
	}
	for (i = 0; i < NFDS; i++)
		reopen(&eps[i]);
	for (i = 0; i < NFDS; i++)
		if (eps[i].fd >= 0)
			close(eps[i].fd);
}

int main(int argc, char **argv)
{
	const char *addrs = getenv("RMAWIN_VM_ADDRS");
	uint64_t seed;
	long calls, procs = 3, p, ok = 0;
	static char ipbuf[64];
	int st, ports;

	if (argc < 3) {
		fprintf(stderr, "usage: ioctl_fuzz SEED CALLS [PROCS]\n");
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	calls = atol(argv[2]);
	if (argc > 3)
		procs = atol(argv[3]);
	if (procs < 1 || procs > 50) {
		fprintf(stderr, "ioctl_fuzz: PROCS is 1 to 50\n");
		return 2;
	}
	snprintf(ipbuf, sizeof(ipbuf), "%s", addrs && *addrs ? addrs : "198.18.0.1");
	ipbuf[strcspn(ipbuf, ",")] = 0;
	ip = ipbuf;
	key_len = rmawin_test_key(key);
	ports = rmawin_test_ports(PROC_PORTS * procs);
	signal(SIGPIPE, SIG_IGN);
	for (p = 0; p < procs; p++) {
		if (fork() == 0) {
			arena = mmap(NULL, ARENA + 2 * 4096, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (arena == MAP_FAILED)
				_exit(1);
			memset(arena, 0x11, ARENA);
			ro_page = arena + ARENA;
			gone_page = ro_page + 4096;
			mprotect(ro_page, 4096, PROT_READ);
			munmap(gone_page, 4096);
			port_base = ports + PROC_PORTS * p;
			/* rounded up: at least CALLS calls in all */
			run(seed * 1000 + p, (calls + procs - 1) / procs);
			if (bad_children)
				fprintf(stderr, "ioctl_fuzz: %ld children used another's endpoint\n",
					bad_children);
			_exit(bad_children ? 1 : 0);
		}
	}
	for (p = 0; p < procs; p++)
		if (wait(&st) > 0 && WIFEXITED(st) && !WEXITSTATUS(st))
			ok++;
		else if (WIFSIGNALED(st))
			fprintf(stderr, "ioctl_fuzz: a process died of signal %d\n", WTERMSIG(st));
	printf("ioctl_fuzz: seed %llu: %ld calls in %ld processes, %ld finished cleanly\n",
	       (unsigned long long)seed, (calls + procs - 1) / procs * procs, procs, ok);
	return ok == procs ? 0 : 1;
}
