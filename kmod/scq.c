// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: a group's send completion queue.
 *
 * Every queue pair of a group completes its sends (RDMA reads, writes and
 * atomics, registrations, control messages) on one CQ.  ib_core's softirq
 * CQ (IB_POLL_SOFTIRQ) is armed at all times: each completion makes the
 * device call its handler, which schedules an irq_poll, whose softirq
 * polls.  On a software device (rxe) a lone operation's whole round trip
 * runs when the system call that posted it re-enables bottom halves
 * (rmawin_post_send()), and that completion then costs a tasklet and a
 * softirq more before the system call can see it, where a user queue
 * pair's completion is there to poll.
 *
 * So a system call that posts polls the CQ itself right after (a "direct"
 * poller), and the CQ is armed only while completions may come with
 * nobody about to poll for them:
 *
 * - @out counts the work requests that may still complete here, never
 *   fewer (a chain's unsignaled requests count until its signaled one
 *   completes, rmawin_scq_settle(); ib_drain_qp()'s own is counted by
 *   rmawin_scq_drain_qp()).
 * - @direct counts the system calls between their post and their poll.
 * - A poster that will not poll (softirq context, or the ring's poller
 *   leaving a write to ksoftirqd) arms the CQ unless a direct poller is
 *   about; a direct poller that leaves last arms it if @out is not zero,
 *   and so does the softirq poller once it is done.  Both sides make their
 *   change before they read the other's count (full barriers), so at least
 *   one of them sees the other's and arms.
 * - Arming asks the device to report completions it already holds
 *   (IB_CQ_REPORT_MISSED_EVENTS); those get the softirq poller at once.
 *
 * A direct poller handles whatever completions it finds, other callers'
 * too, with bottom halves off, as the softirq poller would: the handlers
 * are the same and never sleep.  One poller at a time (@poll_lock), so
 * completions are handled in the device's order.
 */

#include <linux/bottom_half.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include "rmawin.h"

/* Take up to @budget completions and run their handlers. */
static int rmawin_scq_poll(struct rmawin_scq *s, int budget)
{
	int i, n, done = 0;

	lockdep_assert_held(&s->poll_lock);
	while (done < budget) {
		n = ib_poll_cq(s->cq, min(RMAWIN_SCQ_BATCH, budget - done), s->wc);
		if (n <= 0)
			break;
		atomic_sub(n, &s->out);
		for (i = 0; i < n; i++) {
			struct ib_wc *wc = &s->wc[i];

			/* every request we post names its handler */
			if (wc->wr_cqe)
				wc->wr_cqe->done(s->cq, wc);
		}
		done += n;
		if (n < RMAWIN_SCQ_BATCH)
			break;
	}
	return done;
}

/*
 * Have the device signal the next completion, or poll those it holds.
 * Not with bottom halves turned off and on again here: the ring's poller
 * arms before it posts, and local_bh_enable() would run there the sends it
 * leaves to ksoftirqd.
 */
static void rmawin_scq_arm(struct rmawin_scq *s)
{
	if (ib_req_notify_cq(s->cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS) > 0)
		irq_poll_sched(&s->iop);
}

/* The device signalled a completion (its tasklet). */
static void rmawin_scq_signalled(struct ib_cq *cq, void *ctx)
{
	struct rmawin_scq *s = ctx;

	irq_poll_sched(&s->iop);
}

static int rmawin_scq_iop_poll(struct irq_poll *iop, int budget)
{
	struct rmawin_scq *s = container_of(iop, struct rmawin_scq, iop);
	int done;

	spin_lock(&s->poll_lock);
	done = rmawin_scq_poll(s, budget);
	spin_unlock(&s->poll_lock);
	if (done)
		rmawin_count(s->ep, RMAWIN_CNT_SEND_CQES_SOFTIRQ, done);
	if (done < budget) {
		irq_poll_complete(iop);
		/* order the completion before we look at the others */
		smp_mb();
		if (!atomic_read(&s->direct) && atomic_read(&s->out))
			rmawin_scq_arm(s);
	}
	return done;
}

/*
 * A direct poller's own pass: its post's round trip has run (or is on its
 * way), its handlers may have posted more.  The last to leave hands the CQ
 * to the device if anything may still complete.
 */
static void rmawin_scq_leave(struct rmawin_scq *s)
{
	int pass;

	for (pass = 0; pass < RMAWIN_SCQ_DIRECT_PASSES; pass++) {
		int got;

		spin_lock_bh(&s->poll_lock);
		got = rmawin_scq_poll(s, RMAWIN_SCQ_DIRECT_BUDGET);
		spin_unlock_bh(&s->poll_lock);
		if (!got)
			break;
		rmawin_count(s->ep, RMAWIN_CNT_SEND_CQES_DIRECT, got);
		if (!atomic_read(&s->out))
			break;
	}
	if (atomic_dec_and_test(&s->direct) && atomic_read(&s->out)) {
		/* the softirq poller, if needed, runs in local_bh_enable() */
		local_bh_disable();
		rmawin_scq_arm(s);
		local_bh_enable();
	}
}

/**
 * rmawin_post_send() - post send work requests to a group's queue pair
 * @qp: the queue pair; its send CQ is a struct rmawin_scq's
 * @wr: the chain of work requests
 * @overlap: RDMA writes that nobody waits for at once: the ring's poller
 *	leaves them to ksoftirqd and goes on with its next entry meanwhile
 *
 * A software device (rxe, siw) hands a kernel QP's requests to a tasklet;
 * raised from process context with bottom halves on, that wakes ksoftirqd,
 * a thread that must then win a CPU from whatever runs there.  We post with
 * bottom halves off, so that the tasklet runs in local_bh_enable(), here,
 * as a user QP's requests do in its own system call, and then take the
 * completions the device has for us (see above).  Hardware devices pay the
 * counts and one poll of an empty CQ.
 *
 * Context: process or softirq context, interrupts enabled.
 * Return: 0 or the error of ib_post_send().
 */
int rmawin_post_send(struct ib_qp *qp, const struct ib_send_wr *wr, bool overlap)
{
	struct rmawin_scq *s = qp->send_cq->cq_context;
	bool later = overlap && (current->flags & PF_KTHREAD);
	bool direct = !later && !in_interrupt();
	const struct ib_send_wr *w, *bad = NULL;
	int n = 0, ret;

	for (w = wr; w; w = w->next)
		n++;
	if (direct) {
		/* the pass below is short: nobody else waits on a preempted one */
		preempt_disable();
		atomic_inc(&s->direct);
	}
	atomic_add(n, &s->out);
	/* our count before we look at theirs: the last direct poller's, mirrored */
	smp_mb__after_atomic();
	if (!direct && !atomic_read(&s->direct))
		rmawin_scq_arm(s);
	if (later) {
		ret = ib_post_send(qp, wr, &bad);
	} else {
		local_bh_disable();
		ret = ib_post_send(qp, wr, &bad);
		local_bh_enable();
	}
	/* those from @bad on were not posted (without @bad, count them all) */
	for (w = ret ? bad : NULL; w; w = w->next)
		atomic_dec(&s->out);
	if (direct) {
		rmawin_scq_leave(s);
		preempt_enable();
	}
	return ret;
}

/**
 * rmawin_scq_drain_qp() - ib_drain_qp() on a queue pair of the group
 * @qp: the queue pair; its send CQ is a struct rmawin_scq's
 *
 * ib_drain_qp() posts a request of its own, which we did not count: count
 * it, and arm the CQ unless a direct poller is about, so that its
 * completion ends the drain's wait.
 *
 * Context: process context; sleeps.
 */
void rmawin_scq_drain_qp(struct ib_qp *qp)
{
	struct rmawin_scq *s = qp->send_cq->cq_context;

	atomic_inc(&s->out);
	/* as in rmawin_post_send() */
	smp_mb__after_atomic();
	if (!atomic_read(&s->direct))
		rmawin_scq_arm(s);
	ib_drain_qp(qp);
}

/**
 * rmawin_scq_settle() - requests counted as posted will not complete here
 * @s: the CQ
 * @n: how many (the unsignaled requests of a chain whose signaled last
 *	request completed successfully)
 *
 * Context: a completion handler of @s.
 */
void rmawin_scq_settle(struct rmawin_scq *s, int n)
{
	atomic_sub(n, &s->out);
}

/**
 * rmawin_scq_create() - make a group's send CQ
 * @s: zeroed
 * @ep: the endpoint whose group it serves
 * @ibdev: the device
 * @cqe: entries
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int rmawin_scq_create(struct rmawin_scq *s, struct rmawin_ep *ep, struct ib_device *ibdev,
		      int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct ib_cq *cq;

	s->ep = ep;
	spin_lock_init(&s->poll_lock);
	irq_poll_init(&s->iop, RMAWIN_SCQ_IRQ_BUDGET, rmawin_scq_iop_poll);
	cq = ib_create_cq(ibdev, rmawin_scq_signalled, NULL, s, &attr);
	if (IS_ERR(cq)) {
		irq_poll_disable(&s->iop);
		return PTR_ERR(cq);
	}
	s->cq = cq;
	return 0;
}

/**
 * rmawin_scq_destroy() - free a group's send CQ, if made
 * @s: the CQ: no queue pair uses it, and every softirq poller that ran
 *	for it has returned (an RCU grace period has passed)
 *
 * Context: process context.
 */
void rmawin_scq_destroy(struct rmawin_scq *s)
{
	if (!s->cq)
		return;
	irq_poll_disable(&s->iop);
	ib_destroy_cq(s->cq);
	s->cq = NULL;
}
