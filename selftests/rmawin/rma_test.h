/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rma_test.c (the put/get matrix) and rma_shapes_test.c (epochs,
 * windows and groups of unusual shape) share: the fill bytes of untouched
 * memory, the byte patterns that transfers carry and are checked against,
 * window memory of each kind, and the fixture that runs a test on both of
 * the library's paths.
 */
#ifndef RMAWIN_RMA_TEST_H
#define RMAWIN_RMA_TEST_H

#include <stdint.h>
#include <sys/mman.h>
#include <rmawin.h>

#include "rmawin_test.h"

#define WFILL	0xa5		/* untouched window bytes */
#define GFILL	0x5a		/* untouched bytes of get buffers */

/* Every test through the library on both of its paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

/* ---- patterns ---------------------------------------------------------- */

enum { PUT_DATA = 1, GET_DATA = 2, MISC_DATA = 3 };

static inline uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A seed naming one transfer: what, from whom, to whom, how big, where. */
static inline uint64_t seed_of(int what, int origin, int target, size_t size, size_t where,
			       unsigned int unit)
{
	return mix64(((uint64_t)what << 56) ^ ((uint64_t)origin << 44) ^
		     ((uint64_t)target << 32) ^ mix64(size) ^ mix64(where * 131 + unit));
}

/* Byte @i of the pattern of @seed; never WFILL or GFILL. */
static inline unsigned char pat_fix(unsigned char v)
{
	return v == WFILL || v == GFILL ? v ^ 0x0f : v;
}

static inline uint64_t pat_word(uint64_t seed, size_t i)
{
	return mix64(seed + (i >> 3) * 0x9e3779b97f4a7c15ULL);
}

static inline unsigned char pat_byte(uint64_t seed, size_t i)
{
	return pat_fix(pat_word(seed, i) >> ((i & 7) * 8));
}

static inline void fill_pat(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t w = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = pat_word(seed, i);
		p[i] = pat_fix(w >> ((i & 7) * 8));
	}
}

/* Index of the first byte that is not the pattern, or -1. */
static inline long check_pat(const unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t w = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = pat_word(seed, i);
		if (p[i] != pat_fix(w >> ((i & 7) * 8)))
			return i;
	}
	return -1;
}

/* ---- window memory ----------------------------------------------------- */

enum mem_kind { MEM_MALLOC, MEM_MMAP, MEM_MMAP_SHARED, MEM_STACK, MEM_ALLOCATE };

/* Heap or mapped memory of the kind (stack and allocate use malloc here). */
static inline void *mem_get(enum mem_kind kind, size_t len)
{
	void *p;

	if (!len)
		len = 1;
	if (kind == MEM_MMAP || kind == MEM_MMAP_SHARED) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 (kind == MEM_MMAP ? MAP_PRIVATE : MAP_SHARED) | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	return malloc(len);
}

static inline void mem_put(enum mem_kind kind, void *p, size_t len)
{
	if (!len)
		len = 1;
	if (kind == MEM_MMAP || kind == MEM_MMAP_SHARED)
		munmap(p, len);
	else
		free(p);
}

#endif /* RMAWIN_RMA_TEST_H */
