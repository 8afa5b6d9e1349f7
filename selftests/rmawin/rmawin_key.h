/* SPDX-License-Identifier: GPL-2.0 */
/* The selftests' job key, for test programs with or without the harness. */
#ifndef RMAWIN_SELFTEST_KEY_H
#define RMAWIN_SELFTEST_KEY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rmawin.h>

/*
 * The job key of the test run: tools/vm hands every guest the same fresh
 * one in RMAWIN_JOB_KEY (hex).  Fills @key (RMAWIN_JOB_KEY_MAX bytes) and
 * returns its length; a fixed key outside the VM runner.
 */
static inline size_t rmawin_test_key(uint8_t *key)
{
	const char *hex = getenv("RMAWIN_JOB_KEY");
	size_t n = 0;
	unsigned int b;

	while (hex && n < RMAWIN_JOB_KEY_MAX && sscanf(hex + 2 * n, "%2x", &b) == 1)
		key[n++] = b;
	if (n >= RMAWIN_JOB_KEY_MIN)
		return n;
	memset(key, 0x5a, RMAWIN_JOB_KEY_MIN);
	return RMAWIN_JOB_KEY_MIN;
}

#endif /* RMAWIN_SELFTEST_KEY_H */
