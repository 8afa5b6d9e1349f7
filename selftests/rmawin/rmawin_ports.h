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
 * one.  Every port is within RMAWIN_TEST_PORT_MIN .. RMAWIN_TEST_PORT_MAX.
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
#define RMAWIN_TEST_PORT_MAX	59999
#define RMAWIN_TEST_PORT_BLOCK	500

/* The next port to hand out, in a page this process shares with its children. */
static unsigned int *rmawin_test_port_next;

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
	const unsigned int nblocks =
		(RMAWIN_TEST_PORT_MAX + 1 - RMAWIN_TEST_PORT_MIN) / RMAWIN_TEST_PORT_BLOCK;
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
	if (s && *s) {
		base = strtol(s, &end, 10);
		if (*end || base < RMAWIN_TEST_PORT_MIN || base > RMAWIN_TEST_PORT_MAX) {
			fprintf(stderr, "RMAWIN_TEST_PORT_BASE=%s: not a port in %d..%d\n", s,
				RMAWIN_TEST_PORT_MIN, RMAWIN_TEST_PORT_MAX);
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
		base = RMAWIN_TEST_PORT_MIN + (long)b * RMAWIN_TEST_PORT_BLOCK;
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
		start = first + n > RMAWIN_TEST_PORT_MAX + 1 ? RMAWIN_TEST_PORT_MIN : first;
	} while (!__atomic_compare_exchange_n(rmawin_test_port_next, &first, start + n, 0,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return start;
}

#endif /* RMAWIN_SELFTEST_PORTS_H */
