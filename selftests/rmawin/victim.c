// SPDX-License-Identifier: GPL-2.0
/*
 * victim - the honest side of the security tests: ranks that use
 * librmawin as any program would, while selftests/rmawin/rogue attacks.
 * Exits 0 if everything it saw is what a safe module gives: the errors it
 * was promised, its memory untouched where nobody may write.
 *
 *   victim join RANK ADDRS TIMEOUT_MS EXPECT
 *	open, expecting EXPECT (0, or an errno name); if 0, one barrier
 *   victim serve ADDRS TIMEOUT_MS intact|guards [post]
 *	rank 0, again and again while a peer comes within the timeout: open,
 *	create a window of victim_byte()s between two guard pages (with
 *	"post", post an exposure epoch on it to rank 1), loop in barriers
 *	until the peer is cut off (-EPROTO) or leaves; then the guards (and
 *	with "intact", the window) must be as they were
 *   victim notify ADDRS TOTAL
 *	rank 0: wait in a barrier while the peer sends TOTAL notifications,
 *	then take them: -EOVERFLOW with TOTAL - 4096 lost, then 4096 of them
 *   victim barrier4 RANK ADDRS
 *	one barrier of 4 ranks, the rogue rank 3: rank 0 must see -EPROTO
 *   victim mute ADDRS
 *	rank 0: a fence, then fetch_and_ops to the rogue, which never answers,
 *	on the ring, until its poller waits for room; the test kills it there
 *   victim badstatus ADDRS
 *	rank 0: a fence, a fetch_and_op to the rogue, which answers it with
 *	status -512; the fence that completes it must say -EPROTO
 *   victim regstall ADDRS
 *	rank 0: a fence, then fetch_and_ops to a rogue that takes no more
 *	messages, then a second window, whose registration waits behind
 *	them; the test kills it there
 *   victim huge ADDRS
 *	rank 0: a fence, then a put and a get of the whole 2^40 bytes that the
 *	rogue's window claims, from unmapped and from reserved memory: all
 *	-ENOMEM, its page tables and memory as they were
 *   victim ringcycle ADDR
 *	a group of one on ADDR: a ring set up, mapped and closed, which the
 *	same poller as mute's serves; it must not wait for mute's entries
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/rmawin.h>
#include <rmawin.h>

#include "rmawin_key.h"
#include "victim.h"

#define GUARD	0xc3

static int parse_errno(const char *s)
{
	static const struct { const char *name; int err; } names[] = {
		{ "0", 0 }, { "ETIMEDOUT", ETIMEDOUT }, { "EKEYREJECTED", EKEYREJECTED },
		{ "ECONNREFUSED", ECONNREFUSED }, { "EPROTO", EPROTO },
		{ "ECONNRESET", ECONNRESET }, { "ENOKEY", ENOKEY },
		{ "EADDRNOTAVAIL", EADDRNOTAVAIL },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].err;
	fprintf(stderr, "victim: unknown errno %s\n", s);
	exit(2);
}

static int open_rank(int rank, const char *addrs, unsigned int timeout_ms, struct rmawin_ep **ep)
{
	char *list = strdup(addrs), *save = NULL, *tok;
	const char *a[64];
	uint8_t key[RMAWIN_JOB_KEY_MAX];
	struct rmawin_ep_attr attr = { .rank = rank, .addrs = a, .timeout_ms = timeout_ms,
				       .job_key = key };

	/* the ring's poller adds nothing to what is tested here, and costs a thread */
	if (getenv("VICTIM_NO_RING"))
		attr.flags |= RMAWIN_EP_NO_RING;
	int ret;

	for (tok = strtok_r(list, ",", &save); tok && attr.nranks < 64;
	     tok = strtok_r(NULL, ",", &save))
		a[attr.nranks++] = tok;
	attr.job_key_len = rmawin_test_key(key);
	ret = rmawin_ep_open(&attr, ep);
	free(list);
	return ret;
}

static int do_join(int rank, const char *addrs, int timeout_ms, int expect)
{
	struct rmawin_ep *ep;
	int ret = open_rank(rank, addrs, timeout_ms, &ep);

	if (ret != -expect) {
		fprintf(stderr, "victim %d: open: %s, want %s\n", rank, rmawin_strerror(ret),
			expect ? strerror(expect) : "success");
		return 1;
	}
	if (ret)
		return 0;
	ret = rmawin_barrier(ep);
	rmawin_ep_close(ep);
	if (ret) {
		fprintf(stderr, "victim %d: barrier: %s\n", rank, rmawin_strerror(ret));
		return 1;
	}
	return 0;
}

/* A window of VICTIM_WIN bytes with a guard page before and after. */
static uint8_t *guarded(void)
{
	uint8_t *m = mmap(NULL, VICTIM_WIN + 8192, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	if (m == MAP_FAILED)
		return NULL;
	memset(m, GUARD, VICTIM_WIN + 8192);
	for (i = 0; i < VICTIM_WIN; i++)
		m[4096 + i] = victim_byte(i);
	return m + 4096;
}

/* Is the memory around (and with @intact, of) the window as it was? */
static int check_memory(const uint8_t *w, bool intact, long iter)
{
	size_t i;

	for (i = 0; i < 4096; i++) {
		if (w[-4096 + i] != GUARD || w[VICTIM_WIN + i] != GUARD) {
			fprintf(stderr, "victim: iteration %ld: guard byte %zu changed\n", iter, i);
			return 1;
		}
	}
	for (i = 0; intact && i < VICTIM_WIN; i++) {
		if (w[i] != victim_byte(i)) {
			fprintf(stderr, "victim: iteration %ld: window byte %zu is %#x, want %#x\n",
				iter, i, w[i], victim_byte(i));
			return 1;
		}
	}
	return 0;
}

static int do_serve(const char *addrs, int timeout_ms, bool intact, bool post)
{
	static const int rogue_rank = 1;
	long iter = 0, proto = 0, reset = 0, other = 0;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int ret, bad = 0;
	uint8_t *w;

	for (;;) {
		ret = open_rank(0, addrs, timeout_ms, &ep);
		if (getenv("VICTIM_VERBOSE"))
			fprintf(stderr, "victim: open %ld: %s\n", iter + 1, rmawin_strerror(ret));
		if (ret == -ETIMEDOUT && iter)
			break;		/* the peer is done */
		if (ret == -ECONNRESET) {
			/*
			 * The peer left during the join: its own join gave up
			 * on a slow link (two emulated guests) and it joins
			 * again.  Nothing of ours was exposed yet.
			 */
			fprintf(stderr, "victim: open %ld: %s: serving again\n", iter + 1,
				rmawin_strerror(ret));
			iter++;
			reset++;
			continue;
		}
		if (ret) {
			fprintf(stderr, "victim: open %ld: %s\n", iter + 1, rmawin_strerror(ret));
			return 1;
		}
		iter++;
		w = guarded();
		if (!w)
			return 1;
		ret = rmawin_win_create(ep, w, VICTIM_WIN, 1, 0, &win);
		if (!ret && post)
			ret = rmawin_post(win, &rogue_rank, 1);
		while (!ret)
			ret = rmawin_barrier(ep);
		if (getenv("VICTIM_VERBOSE"))
			fprintf(stderr, "victim: iteration %ld: %s\n", iter, rmawin_strerror(ret));
		if (ret == -EPROTO)
			proto++;
		else if (ret == -ECONNRESET)
			reset++;
		else
			other++;
		if (ret != -EPROTO && ret != -ECONNRESET) {
			fprintf(stderr, "victim: iteration %ld ended with %s\n", iter,
				rmawin_strerror(ret));
		}
		bad |= check_memory(w, intact, iter);
		rmawin_ep_close(ep);
		munmap(w - 4096, VICTIM_WIN + 8192);
	}
	printf("victim: %ld connections: %ld cut off (EPROTO), %ld left (ECONNRESET), %ld other\n",
	       iter, proto, reset, other);
	return bad || other;
}

static int do_notify(const char *addrs, long total)
{
	struct rmawin_notification n;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	long got = 0;
	int ret, bad = 0;
	uint8_t *w;

	if (open_rank(0, addrs, 60000, &ep) || !(w = guarded()) ||
	    rmawin_win_create(ep, w, VICTIM_WIN, 1, 0, &win))
		return 1;
	/* the rogue floods, then sends its barrier message */
	ret = rmawin_barrier(ep);
	if (ret) {
		fprintf(stderr, "victim: barrier: %s\n", rmawin_strerror(ret));
		return 1;
	}
	ret = rmawin_notify_wait(win, &n, 0);
	if (total > RMAWIN_NOTIFY_PER_PEER && ret != -EOVERFLOW) {
		fprintf(stderr, "victim: after %ld notifications: %s, want EOVERFLOW\n", total,
			rmawin_strerror(ret));
		bad = 1;
	}
	while ((ret = rmawin_notify_wait(win, &n, 0)) == 0)
		got++;
	if (ret != -EAGAIN || got != (total < RMAWIN_NOTIFY_PER_PEER ? total :
				      RMAWIN_NOTIFY_PER_PEER)) {
		fprintf(stderr, "victim: took %ld notifications, then %s\n", got,
			rmawin_strerror(ret));
		bad = 1;
	}
	printf("victim: %ld notifications sent, %ld kept, the rest reported lost\n", total, got);
	bad |= check_memory(w, true, 1);
	rmawin_ep_close(ep);
	return bad;
}

static int do_barrier4(int rank, const char *addrs)
{
	struct rmawin_ep *ep;
	int ret = open_rank(rank, addrs, 60000, &ep);

	/*
	 * The forged round may come while the group still forms: rank 0 then
	 * fails its join with -EPROTO, and the others lose rank 0 in theirs.
	 */
	if (ret) {
		printf("victim %d: open: %s\n", rank, rmawin_strerror(ret));
		return rank == 0 ? ret != -EPROTO : ret != -ECONNRESET && ret != -EPROTO;
	}
	ret = rmawin_barrier(ep);
	rmawin_ep_close(ep);
	printf("victim %d: barrier: %s\n", rank, rmawin_strerror(ret));
	/* nobody gets through a barrier the rogue forged or never joined */
	if (!ret || (rank == 0 && ret != -EPROTO))
		return 1;
	return 0;
}

/* A second thread's put, by ioctl: it waits for the endpoint the poller holds. */
static void *mute_put(void *win)
{
	static uint64_t v = 7;

	rmawin_put(win, &v, 8, 1, 8);
	return NULL;
}

/*
 * The library's own endpoint, then the ring by hand: fetch_and_ops written
 * to the submission ring and the poller woken with RMAWIN_ENTER_WAKEUP
 * alone, so that the poller (not this process, as a doorbell with SUBMIT
 * would) runs them, and is the one that waits for room.  Meanwhile a
 * second thread's put waits for the endpoint lock that the poller holds:
 * SIGKILL must end that wait too, or the process never exits, its file is
 * never released, and the poller waits on for ever.
 */
static int do_mute(const char *addrs)
{
	pthread_t th;
	struct rmawin_ring_enter en = { .size = sizeof(en), .flags = RMAWIN_ENTER_WAKEUP };
	struct rmawin_ring_setup rs = { .size = sizeof(rs), .sq_entries = 256 };
	struct rmawin_op_desc *sqes;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	static uint64_t one = 1, old[256];
	uint32_t *tail, i;
	uint8_t *w;
	void *ring;
	int fd;

	/* the library's ring stays off: this one is ours */
	setenv("RMAWIN_NO_RING", "1", 1);
	if (open_rank(0, addrs, 60000, &ep) || !(w = guarded()) ||
	    rmawin_win_create(ep, w, VICTIM_WIN, 1, 0, &win) || rmawin_fence(win, 0))
		return 1;
	fd = rmawin_ep_fd(ep);
	if (ioctl(fd, RMAWIN_IOC_RING_SETUP, &rs))
		return 2;
	ring = mmap(NULL, rs.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, rs.mmap_offset);
	if (ring == MAP_FAILED)
		return 3;
	sqes = (void *)((char *)ring + rs.off.sqes);
	tail = (void *)((char *)ring + rs.off.sq_tail);
	for (i = 0; i < 200; i++) {
		struct rmawin_op_desc *op = &sqes[i];

		memset(op, 0, sizeof(*op));
		op->opcode = RMAWIN_OP_FETCH_OP;
		op->acc_op = RMAWIN_ACC_SUM;
		op->datatype = RMAWIN_TYPE_UINT64;
		op->target = 1;
		op->origin = (uintptr_t)&one;
		op->result = (uintptr_t)&old[i];
		op->len = 8;
	}
	__atomic_store_n(tail, 200, __ATOMIC_RELEASE);
	if (ioctl(fd, RMAWIN_IOC_RING_ENTER, &en))
		return 4;
	if (pthread_create(&th, NULL, mute_put, win))
		return 5;
	printf("victim: 200 fetch_and_ops on the ring, to a peer that will not answer, "
	       "and a put from another thread\n");
	fflush(stdout);
	pause();	/* the test kills us while the poller waits */
	return 0;
}

static int do_badstatus(const char *addrs)
{
	static uint64_t one = 1, old;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	uint8_t *w;
	int ret;

	if (open_rank(0, addrs, 60000, &ep) || !(w = guarded()) ||
	    rmawin_win_create(ep, w, VICTIM_WIN, 1, 0, &win) || rmawin_fence(win, 0))
		return 1;
	ret = rmawin_fetch_and_op(win, &one, &old, RMAWIN_UINT64, 1, 0, RMAWIN_SUM);
	if (!ret)
		ret = rmawin_fence(win, 0);
	if (ret != -EPROTO) {
		fprintf(stderr, "victim: fetch_and_op answered with status -512: %d (%s), "
			"want -EPROTO\n", ret, rmawin_strerror(ret));
		return 2;
	}
	printf("victim: fetch_and_op answered with status -512: -EPROTO\n");
	rmawin_ep_close(ep);
	return 0;
}

/*
 * The rogue posts no receives after the fence: our fetch_and_ops beyond
 * its receive queue (64, one taken by the fence's message; our accumulate
 * window lets 64 go out unanswered) are retried for ever on its queue
 * pair, and a second window's registration, which goes out on that queue
 * pair too (any connected peer's will do), waits behind them.  The test
 * kills us there.
 */
static int do_regstall(const char *addrs)
{
	static uint64_t one = 1, old[64];
	static uint8_t w2[4096];
	struct rmawin_win *win, *win2;
	struct rmawin_ep *ep;
	uint8_t *w;
	int i, ret;

	if (open_rank(0, addrs, 60000, &ep) || !(w = guarded()) ||
	    rmawin_win_create(ep, w, VICTIM_WIN, 1, 0, &win) || rmawin_fence(win, 0))
		return 1;
	for (i = 0; i < 64; i++) {
		ret = rmawin_fetch_and_op(win, &one, &old[i], RMAWIN_UINT64, 1, 0, RMAWIN_SUM);
		if (ret) {
			fprintf(stderr, "victim: regstall: fetch_and_op %d: %s\n", i,
				rmawin_strerror(ret));
			return 2;
		}
	}
	printf("victim: 64 fetch_and_ops to a rogue that takes 63; a second window\n");
	fflush(stdout);
	ret = rmawin_win_create(ep, w2, sizeof(w2), 1, 0, &win2);
	printf("victim: regstall: the second window: %s, but we should be dead\n",
	       rmawin_strerror(ret));
	return 3;
}

/*
 * Another endpoint of the same user and cgroup as mute's: its ring joins
 * the poller that waits in mute's entry, and goes again with the
 * endpoint's close.  Neither may wait for that entry.
 */
static int do_ringcycle(const char *addr)
{
	struct rmawin_ring_setup rs = { .size = sizeof(rs), .sq_entries = 64 };
	struct rmawin_ep *ep;
	void *ring;
	int ret;

	setenv("RMAWIN_NO_RING", "1", 1);
	ret = open_rank(0, addr, 20000, &ep);
	if (ret) {
		fprintf(stderr, "victim: ringcycle: open: %s\n", rmawin_strerror(ret));
		return 1;
	}
	if (ioctl(rmawin_ep_fd(ep), RMAWIN_IOC_RING_SETUP, &rs)) {
		fprintf(stderr, "victim: ringcycle: RING_SETUP: %s\n", strerror(errno));
		return 2;
	}
	ring = mmap(NULL, rs.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, rmawin_ep_fd(ep),
		    rs.mmap_offset);
	if (ring == MAP_FAILED)
		return 3;
	munmap(ring, rs.mmap_len);
	ret = rmawin_ep_close(ep);
	printf("victim: ringcycle: a ring set up, mapped and closed (close: %d)\n", ret);
	return ret ? 4 : 0;
}

/* A put and a get of @len bytes from @buf to the rogue: both must say @want. */
static int huge_pair(struct rmawin_win *win, void *buf, uint64_t len, int want,
		     const char *what)
{
	int put = rmawin_put(win, buf, len, 1, 0), get = rmawin_get(win, buf, len, 1, 0);

	if (put != want || get != want) {
		fprintf(stderr, "victim: a put and a get of 2^40 bytes %s: %d (%s) and %d (%s), "
			"want %d\n", what, put, rmawin_strerror(put), get, rmawin_strerror(get),
			want);
		return 1;
	}
	printf("victim: a put and a get of 2^40 bytes %s: %d (%s)\n", what, want,
	       rmawin_strerror(want));
	return 0;
}

/* The process's page tables, in KiB (VmPTE), or -1 */
static long vm_pte_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/*
 * The rogue's window says it has 2^40 bytes.  A put and a get of all of
 * it are -ENOMEM, from memory mostly unmapped and from 2^40 bytes mapped
 * but never touched (reserved address space) alike: more pages than the
 * machine has can never be pinned, and the kernel must refuse them before
 * it faults the range in page by page (2^28 faults, and their page tables)
 * or sizes anything by them (page arrays of 2 GiB, past kvmalloc()'s
 * limit, which warns).  The page tables must not have grown by more than
 * 16 MiB.
 */
static int do_huge(const char *addrs)
{
	const uint64_t huge = 1ULL << 40;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	long pte0, pte;
	uint8_t *w;
	void *res;

	if (open_rank(0, addrs, 60000, &ep) || !(w = guarded()) ||
	    rmawin_win_create(ep, w, VICTIM_WIN, 1, 0, &win) || rmawin_fence(win, 0))
		return 1;
	res = mmap(NULL, huge, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED) {
		perror("victim: mmap of 2^40 bytes, reserved");
		return 2;
	}
	pte0 = vm_pte_kib();
	/* from 4 GiB on: below where a PIE process's mappings are, inside user space */
	if (huge_pair(win, (void *)(uintptr_t)(1ULL << 32), huge, -ENOMEM,
		      "from unmapped memory") ||
	    huge_pair(win, res, huge, -ENOMEM, "from reserved memory"))
		return 3;
	pte = vm_pte_kib();
	if (pte0 < 0 || pte - pte0 > 16384) {
		fprintf(stderr, "victim: page tables %ld KiB before, %ld after\n", pte0, pte);
		return 4;
	}
	munmap(res, huge);
	if (check_memory(w, true, 0))
		return 5;
	return rmawin_ep_close(ep) ? 6 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "join"))
		return do_join(atoi(argv[2]), argv[3], atoi(argv[4]), parse_errno(argv[5]));
	if (argc >= 5 && !strcmp(argv[1], "serve"))
		return do_serve(argv[2], atoi(argv[3]), !strcmp(argv[4], "intact"),
				argc >= 6 && !strcmp(argv[5], "post"));
	if (argc >= 4 && !strcmp(argv[1], "notify"))
		return do_notify(argv[2], atol(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "barrier4"))
		return do_barrier4(atoi(argv[2]), argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "mute"))
		return do_mute(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "badstatus"))
		return do_badstatus(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "regstall"))
		return do_regstall(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "huge"))
		return do_huge(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "ringcycle"))
		return do_ringcycle(argv[2]);
	fprintf(stderr, "usage: victim join|serve|notify|barrier4|mute|badstatus|regstall|huge|"
		"ringcycle ...\n");
	return 2;
}
