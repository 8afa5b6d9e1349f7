/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rma_fault_test.c and rma_loss_test.c share: the byte patterns
 * their transfers carry and check, anonymous mappings, and the fixture
 * that runs a test on both of the library's paths.
 */
#ifndef RMAWIN_RMA_FAULT_TEST_H
#define RMAWIN_RMA_FAULT_TEST_H

#include <stdint.h>
#include <sys/mman.h>
#include <rmawin.h>

#include "rmawin_test.h"

#define KIB	1024UL
#define MIB	(1024UL * 1024)

/* Every test through the library on both of its paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

/* Byte i of pattern @seed: differs between seeds at almost every byte. */
static inline unsigned char pat(unsigned int seed, size_t i)
{
	uint32_t x = (uint32_t)(i >> 2) * 2654435761u + seed * 40503u;

	x ^= x >> 15;
	x *= 0x2c1b3c6d;
	x ^= x >> 12;
	return (unsigned char)(x >> ((i & 3) * 8)) | 1;	/* never 0 */
}

static inline void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

/* First byte that is not pattern @seed, or -1. */
static inline long check(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			return i;
	return -1;
}

static inline void *map_rw(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

#endif /* RMAWIN_RMA_FAULT_TEST_H */
