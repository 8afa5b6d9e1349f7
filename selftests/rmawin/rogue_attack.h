/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rogue's parts share: rogue.c (main, the attacks on the
 * handshake), rogue_member.c (the attacks of a member that proved itself)
 * and rogue_fuzz.c (its fuzzer).  The connection layer they both use is rogue.h's.
 */
#ifndef RMAWIN_ROGUE_ATTACK_H
#define RMAWIN_ROGUE_ATTACK_H

#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "rogue.h"

extern struct rg_group G;	/* the group of the command line */
extern int failures;		/* findings: what a safe victim never shows */

#define SAY(fmt, ...)	fprintf(stderr, "rogue: " fmt "\n", ##__VA_ARGS__)
#define BAD(fmt, ...)	do { SAY("FAIL: " fmt, ##__VA_ARGS__); failures++; } while (0)

/* rogue.c */
int connect_retry(struct rg_conn *c, int peer, enum rg_auth auth, const uint8_t *nonce,
		  const uint8_t *mac, int tries);

/* A little-endian 32-bit field of a message under construction. */
static inline void put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

/* rogue_member.c */
int member_join(struct rg_conn *c);
int member_until_closed(struct rg_conn *c, int wait_ms);
int case_msgs(void);
int case_completes(void);
int case_notify(long count);
int case_barrier4(void);
int case_mute(int secs);
int case_badstatus(void);
int case_stall(int secs);
int case_huge(void);

/* rogue_fuzz.c */
int case_fuzz(uint64_t seed, long count);

#endif /* RMAWIN_ROGUE_ATTACK_H */
