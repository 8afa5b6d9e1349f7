/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzers' random numbers (ioctl_fuzz.c, rogue_fuzz.c): xorshift64*,
 * reproducible from a seed, nothing more asked of it.
 */
#ifndef RMAWIN_SELFTEST_XORSHIFT_H
#define RMAWIN_SELFTEST_XORSHIFT_H

#include <stdint.h>

/* The next number from *@state (never 0: seed it with a non-zero value). */
static inline uint64_t xorshift64s(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

#endif /* RMAWIN_SELFTEST_XORSHIFT_H */
