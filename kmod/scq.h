/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: a group's send completion queue, polled by the system call that
 * posted to it where the device completes at once, else in softirq context
 * (scq.c).  Included by rmawin.h.
 */
#ifndef RMAWIN_SCQ_H
#define RMAWIN_SCQ_H

#include <linux/irq_poll.h>
#include <linux/spinlock.h>
#include <linux/atomic.h>
#include <rdma/ib_verbs.h>

struct rmawin_ep;

/* Completions taken from the device per poll. */
#define RMAWIN_SCQ_BATCH	16
/* Completions the softirq poller takes per turn (as ib_core's). */
#define RMAWIN_SCQ_IRQ_BUDGET	256
/* Completions a system call takes per pass after its post. */
#define RMAWIN_SCQ_DIRECT_BUDGET	64
/* Passes it makes while its own posts' handlers post more. */
#define RMAWIN_SCQ_DIRECT_PASSES	4

/**
 * struct rmawin_scq - the send completion queue of a group's queue pairs
 * @ep: the endpoint, whose counters count our completions
 * @cq: the device's CQ, made with our own completion handler: armed only
 *	while completions may come with nobody about to poll for them
 * @iop: polls @cq in softirq context once the device signalled it
 * @poll_lock: one poller at a time, so that completions are handled in
 *	the order the device gave them; taken with bottom halves off
 * @out: work requests posted that may still complete here, never fewer:
 *	while it is not zero, either a direct poller is about or @cq is
 *	armed
 * @direct: system calls between their post and their own poll of @cq;
 *	while there is one, nobody else need arm @cq (the last to leave
 *	does, if @out says so)
 * @wc: the completions of one poll, under @poll_lock
 */
struct rmawin_scq {
	struct rmawin_ep *ep;
	struct ib_cq *cq;
	struct irq_poll iop;
	spinlock_t poll_lock;		/* one poller at a time */
	atomic_t out;
	atomic_t direct;
	struct ib_wc wc[RMAWIN_SCQ_BATCH];
};

int rmawin_scq_create(struct rmawin_scq *s, struct rmawin_ep *ep, struct ib_device *ibdev,
		      int cqe);
void rmawin_scq_destroy(struct rmawin_scq *s);
int rmawin_post_send(struct ib_qp *qp, const struct ib_send_wr *wr, bool overlap);
void rmawin_scq_drain_qp(struct ib_qp *qp);
void rmawin_scq_settle(struct rmawin_scq *s, int n);

#endif /* RMAWIN_SCQ_H */
