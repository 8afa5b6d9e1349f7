/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rogue's two halves share: rogue.c (main, the attacks on the
 * handshake) and rogue_member.c (the attacks of a member that proved
 * itself).  The connection layer they both use is rogue.h's.
 */
#ifndef RMAWIN_ROGUE_ATTACK_H
#define RMAWIN_ROGUE_ATTACK_H

#include <stdio.h>

#include "rogue.h"

extern struct rg_group G;	/* the group of the command line */
extern int failures;		/* findings: what a safe victim never shows */

#define SAY(fmt, ...)	fprintf(stderr, "rogue: " fmt "\n", ##__VA_ARGS__)
#define BAD(fmt, ...)	do { SAY("FAIL: " fmt, ##__VA_ARGS__); failures++; } while (0)

/* rogue.c */
int connect_retry(struct rg_conn *c, int peer, enum rg_auth auth, const uint8_t *nonce,
		  const uint8_t *mac, int tries);

/* rogue_member.c */
int member_until_closed(struct rg_conn *c, int wait_ms);
int case_msgs(void);
int case_completes(void);
int case_fuzz(uint64_t seed, long count);
int case_notify(long count);
int case_barrier4(void);
int case_mute(int secs);
int case_badstatus(void);
int case_stall(int secs);
int case_huge(void);

#endif /* RMAWIN_ROGUE_ATTACK_H */
