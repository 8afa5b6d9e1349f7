/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The byte patterns the transfer tests carry and check, and anonymous
 * mappings: rma_fault_test.c, rma_loss_test.c and device_test.c.
 */
#ifndef RMAWIN_RMA_PATTERN_H
#define RMAWIN_RMA_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define KIB	1024UL
#define MIB	(1024UL * 1024)

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

#endif /* RMAWIN_RMA_PATTERN_H */
