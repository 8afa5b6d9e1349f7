/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ports the selftests' groups listen on, for test programs with or
 * without the harness: no test names a port number.
 *
 * rmawin_test_ports(n) returns the first of n consecutive ports that no
 * other call has had in this run of the program.  Its counter lives in a
 * shared page mapped before main(), so the harness's forked test children
 * and their ranks all draw from it.  A test takes its ports once, in its
 * own process before it forks any rank, and hands them to its ranks: rank
 * r of a group listens at the first port + r.
 *
 * Where a program's ports start: at RMAWIN_TEST_PORT_BASE if that is set;
 * otherwise in a block of RMAWIN_TEST_PORT_BLOCK ports picked by a hash of
 * the program's name, so that test programs run one after another mostly
 * use different ports.  The program claims its block for as long as any of
 * its processes lives (an abstract unix socket named after the block) and
 * takes the next free block if a program running side by side has that
 * one.
 *
 * No port is in the kernel's ephemeral range (net.ipv4.ip_local_port_range,
 * 32768..60999 by default): rdma_cm gives every connection that was not
 * bound first, such as the module's own connects to its peers, a port from
 * that range, so a listen port there can be taken by whichever connection
 * drew it a moment before (EADDRINUSE).  Ports come from the larger of the
 * two stretches of RMAWIN_TEST_PORT_MIN .. RMAWIN_TEST_PORT_MAX left beside
 * the ephemeral range (20000..32767 by default).
 */
#ifndef RMAWIN_SELFTEST_PORTS_H
#define RMAWIN_SELFTEST_PORTS_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#define RMAWIN_TEST_PORT_MIN	20000
#define RMAWIN_TEST_PORT_MAX	65535
#define RMAWIN_TEST_PORT_BLOCK	500

/* The next port to hand out, in a page this process shares with its children. */
static unsigned int *rmawin_test_port_next;
/* The stretch ports come from, beside the ephemeral range */
static unsigned int rmawin_test_port_lo = RMAWIN_TEST_PORT_MIN;
static unsigned int rmawin_test_port_hi = RMAWIN_TEST_PORT_MAX;

/* The kernel's ephemeral ports, [*lo, *hi]: 0, or -1 if it cannot tell. */
static inline int rmawin_test_ephemeral(unsigned int *lo, unsigned int *hi)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%u %u", lo, hi);
	fclose(f);
	return n == 2 && *lo <= *hi ? 0 : -1;
}

/* Pick the larger stretch of MIN..MAX outside the ephemeral range. */
static inline void rmawin_test_port_stretch(void)
{
	unsigned int lo = 32768, hi = 60999, below, above;

	if (rmawin_test_ephemeral(&lo, &hi))
		fprintf(stderr, "rmawin_test_ports: no ip_local_port_range: assuming %u..%u\n",
			lo, hi);
	below = lo > RMAWIN_TEST_PORT_MIN ? lo - RMAWIN_TEST_PORT_MIN : 0;
	above = hi < RMAWIN_TEST_PORT_MAX ? RMAWIN_TEST_PORT_MAX - hi : 0;
	if (below < RMAWIN_TEST_PORT_BLOCK && above < RMAWIN_TEST_PORT_BLOCK) {
		fprintf(stderr, "rmawin_test_ports: ephemeral range %u..%u leaves no block in %d..%d: using it anyway\n",
			lo, hi, RMAWIN_TEST_PORT_MIN, RMAWIN_TEST_PORT_MAX);
		return;
	}
	if (below >= above)
		rmawin_test_port_hi = lo - 1;
	else
		rmawin_test_port_lo = hi + 1;
}

/* Claim block @b for this program: 0, or -1 if a program running now holds it. */
static inline int rmawin_test_port_claim(unsigned int b)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), len;

	if (fd < 0)
		return 0;	/* nothing to tell by: take it */
	len = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "rmawin-test-ports/%u", b);
	if (!bind(fd, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 1 + len))
		return 0;	/* the socket stays open: the claim ends with the program */
	close(fd);
	return errno == EADDRINUSE ? -1 : 0;
}

static void __attribute__((constructor)) rmawin_test_ports_init(void)
{
	unsigned int nblocks;
	const char *s = getenv("RMAWIN_TEST_PORT_BASE"), *p;
	unsigned int h = 2166136261u, b = 0, i;
	char *end;
	long base;

	rmawin_test_port_next = mmap(NULL, sizeof(*rmawin_test_port_next),
				     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rmawin_test_port_next == MAP_FAILED) {
		perror("rmawin_test_ports: mmap");
		exit(1);
	}
	rmawin_test_port_stretch();
	nblocks = (rmawin_test_port_hi + 1 - rmawin_test_port_lo) / RMAWIN_TEST_PORT_BLOCK;
	if (!nblocks)
		nblocks = 1;
	if (s && *s) {
		base = strtol(s, &end, 10);
		if (*end || base < rmawin_test_port_lo || base > rmawin_test_port_hi) {
			fprintf(stderr, "RMAWIN_TEST_PORT_BASE=%s: not a port in %u..%u\n", s,
				rmawin_test_port_lo, rmawin_test_port_hi);
			exit(1);
		}
	} else {
		/* FNV-1a of the program's name */
		for (p = program_invocation_short_name; *p; p++)
			h = (h ^ (unsigned char)*p) * 16777619u;
		for (i = 0; i < nblocks; i++) {
			b = (h % nblocks + i) % nblocks;
			if (!rmawin_test_port_claim(b))
				break;
		}
		if (i == nblocks)	/* all taken: share our own */
			b = h % nblocks;
		base = rmawin_test_port_lo + (long)b * RMAWIN_TEST_PORT_BLOCK;
	}
	*rmawin_test_port_next = base;
}

/*
 * The first of @n (at least 1) consecutive ports that no other call has
 * returned in this run of the program, counting every process it forked.
 */
static inline int rmawin_test_ports(int n)
{
	unsigned int first = __atomic_load_n(rmawin_test_port_next, __ATOMIC_SEQ_CST), start;

	if (n < 1)
		n = 1;
	do {
		start = first + n > rmawin_test_port_hi + 1 ? rmawin_test_port_lo : first;
	} while (!__atomic_compare_exchange_n(rmawin_test_port_next, &first, start + n, 0,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return start;
}

#endif /* RMAWIN_SELFTEST_PORTS_H */
