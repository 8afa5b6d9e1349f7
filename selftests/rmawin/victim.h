/* SPDX-License-Identifier: GPL-2.0 */
/* What the rogue (rogue_member.c) and its victims (victim.c) agree on. */
#ifndef RMAWIN_VICTIM_H
#define RMAWIN_VICTIM_H

#include <stdint.h>

/* The victim's window: this many bytes of victim_byte(), guarded on both sides. */
#define VICTIM_WIN	4096

static inline uint8_t victim_byte(uint64_t i)
{
	return (uint8_t)(i * 13 + 7);
}

#endif /* RMAWIN_VICTIM_H */
