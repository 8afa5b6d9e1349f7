/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rma_fault_test.c and rma_loss_test.c share: the byte patterns
 * their transfers carry and check, anonymous mappings (rma_pattern.h),
 * and the fixture that runs a test on both of the library's paths.
 */
#ifndef RMAWIN_RMA_FAULT_TEST_H
#define RMAWIN_RMA_FAULT_TEST_H

#include <rmawin.h>

#include "rmawin_test.h"
#include "rma_pattern.h"

/* Every test through the library on both of its paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

#endif /* RMAWIN_RMA_FAULT_TEST_H */
