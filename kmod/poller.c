// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the poller threads that consume the submission rings (ring.c).
 *
 * One poller serves every ring whose owner has the same effective user and
 * sits in the same cgroups (one css_set) as the process that made it, up
 * to RMAWIN_POLLER_MAX_RINGS rings: the ranks of a job on one node, and
 * the several endpoints of one process, share one polling thread instead
 * of spinning one CPU each.  The thread joins its first owner's cgroups,
 * as vhost's workers do, so the CPU time and memory it spends are charged
 * where those processes' own are; each ring's share of the time is
 * counted in its endpoint's poll_ns counter, and allocations made for a
 * ring are charged to its endpoint's memory cgroup.
 *
 * The thread works in one owner's address space at a time
 * (kthread_use_mm), switching to the next ring's when that one has work,
 * and it holds none while it sleeps, so an exiting process is never held
 * up.  It never waits for one ring's endpoint lock (the owner's own call
 * may hold it) nor for a flush whose window still has operations in flight
 * (the flush stays at the head of its ring until they complete): one
 * process's round trips do not stall the others' rings.  An operation
 * still waits for room (send queue slots, bounce buffers) that the
 * network holds, bounded by it and ended by the owner's close; rings of
 * one user and cgroup accept that their entries wait meanwhile.  Their
 * owners do not: the thread consumes a ring without its own lock, so
 * they attach, detach and close as they like.  An accumulate that
 * goes to its target's kernel and takes more than a round trip (a long one
 * in fragments, one through the inbox) would wait here for the answers:
 * librmawin issues those by ioctl instead (Documentation/ring.rst).
 *
 * Idle policy.  The thread polls while any ring has work, and for the
 * largest idle_us of its rings after the last of it; then it sets
 * RMAWIN_SQ_NEED_WAKEUP in every ring and sleeps until a doorbell.  It
 * only pays to poll on a CPU of one's own.  When another task waits for
 * the poller's CPU while it has nothing to do, the poller naps for
 * RMAWIN_POLL_NAP_US, flag unset, and lets that task run: a softirq thread
 * sending what the poller posted, a kworker, are done by then, and the
 * submitters never noticed.  A task that is still there after a grace of
 * RMAWIN_POLL_GRACE_NS is a competitor (a rank spinning on its memory,
 * which the scheduler would otherwise give the CPU back a time slice
 * later): the thread sets the flag and sleeps for RMAWIN_POLL_REPROBE_NS,
 * doubling up to RMAWIN_POLL_REPROBE_MAX_NS each time it finds its CPU
 * taken again, back to the start once it has had the CPU to itself for a
 * grace.  Meanwhile the rings say RMAWIN_SQ_YIELDED too: the library
 * issues an operation on an empty ring by ioctl, and the doorbells run
 * their entries themselves (RMAWIN_ENTER_SUBMIT) without waking the
 * poller; a plain wake-up does.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>

#include "ring.h"

/* rings one poller serves at most */
#define RMAWIN_POLLER_MAX_RINGS		64
/* another task wants the CPU while we have nothing to do: let it run this long */
#define RMAWIN_POLL_NAP_US		50
/* ...and if it still waits after this long, sleep */
#define RMAWIN_POLL_GRACE_NS		(1 * NSEC_PER_MSEC)
/* a poller that gave its CPU away tries it again after... */
#define RMAWIN_POLL_REPROBE_NS		(2 * NSEC_PER_MSEC)
/* ...doubling each time it had to give it away again, up to */
#define RMAWIN_POLL_REPROBE_MAX_NS	(128 * NSEC_PER_MSEC)
/* rmawin_poll_force_yield's sleep */
#define RMAWIN_POLL_FORCED_NS		(3600 * NSEC_PER_SEC)

/**
 * struct rmawin_poller - a thread consuming rings
 * @node: in rmawin_pollers, under rmawin_pollers_lock
 * @rcu: frees it once no doorbell can be looking at it
 * @id: the number in the thread's name
 * @euid: the effective user of the processes it serves
 * @nrings: rings attached, and rings being detached, under rmawin_pollers_lock
 * @task: the thread
 * @lock: @rings and @busy; the thread holds it for each pass over them,
 *	but for the time it consumes one ring
 * @rings: the rings it consumes, by &rmawin_ring.pl_node
 * @busy: the ring the thread consumes with @lock dropped, or NULL: it
 *	stays on @rings until then
 * @done: rmawin_poller_detach() of @busy waits here for the pass to leave it
 * @wait: the sleeping thread waits here for @kicked
 * @kicked: a doorbell (or a new ring) wants the thread awake
 * @reprobe_at: local_clock() from which a doorbell that ran its entries
 *	itself wakes the sleeping thread too (0: at once); the thread wakes
 *	by itself then anyway
 * @mm: the thread's: the address space it is in (mmget'ed), or NULL
 * @backoff_ns: the thread's: how long its CPU is left alone next time
 */
struct rmawin_poller {
	struct list_head node;
	struct rcu_head rcu;
	u32 id;
	kuid_t euid;
	u32 nrings;
	struct task_struct *task;
	struct mutex lock;		/* rings, busy */
	struct list_head rings;
	struct rmawin_ring *busy;
	wait_queue_head_t done;
	wait_queue_head_t wait;
	bool kicked;
	u64 reprobe_at;
	struct mm_struct *mm;
	u64 backoff_ns;
};

static LIST_HEAD(rmawin_pollers);
static DEFINE_MUTEX(rmawin_pollers_lock);	/* the list, and every nrings */
static atomic_t rmawin_poller_ids;

static void rmawin_poller_kick(struct rmawin_poller *pl)
{
	WRITE_ONCE(pl->kicked, true);
	wake_up(&pl->wait);
}

static void rmawin_poller_leave_mm(struct rmawin_poller *pl)
{
	if (!pl->mm)
		return;
	kthread_unuse_mm(pl->mm);
	mmput(pl->mm);
	pl->mm = NULL;
}

/* Into the ring owner's address space; false if it is exiting. */
static bool rmawin_poller_use_mm(struct rmawin_poller *pl, struct rmawin_ring *ring)
{
	if (pl->mm == ring->mm)
		return true;
	rmawin_poller_leave_mm(pl);
	if (!mmget_not_zero(ring->mm)) {
		/* its file is released soon; until then the ring is not looked at */
		ring->mm_gone = true;
		return false;
	}
	kthread_use_mm(ring->mm);
	pl->mm = ring->mm;
	return true;
}

/*
 * One pass over every ring.  Return: entries consumed.  *@pending says
 * whether a ring had entries that could not be taken now (its owner held
 * its lock, or a flush waits for its window), *@idle_ns is the largest
 * idle time of the rings.
 */
static u32 rmawin_poller_pass(struct rmawin_poller *pl, bool *pending, u64 *idle_ns)
{
	struct mem_cgroup *old_memcg;
	const struct cred *old_cred;
	struct rmawin_ring *ring;
	bool keep_mm = false;
	u64 t0, idle = 0;
	u32 did = 0;
	int n;

	*pending = false;
	mutex_lock(&pl->lock);
	list_for_each_entry(ring, &pl->rings, pl_node) {
		idle = max(idle, ring->idle_ns);
		if (ring->pl_leaving || ring->mm_gone || !rmawin_ring_has_work(ring) ||
		    !rmawin_poller_use_mm(pl, ring))
			continue;
		/*
		 * An entry may wait for room the network holds: meanwhile the
		 * owners of the other rings attach, detach and close at will.
		 * The ring itself stays on the list until we are back.
		 */
		WRITE_ONCE(pl->busy, ring);
		mutex_unlock(&pl->lock);
		t0 = local_clock();
		old_memcg = set_active_memcg(ring->ep->memcg);
		/* faults and copies in the owner's name: quotas, FUSE, rlimits */
		old_cred = override_creds(ring->cred);
		n = rmawin_ring_consume(ring, true);
		revert_creds(old_cred);
		set_active_memcg(old_memcg);
		rmawin_count(ring->ep, RMAWIN_CNT_POLL_NS, local_clock() - t0);
		mutex_lock(&pl->lock);
		WRITE_ONCE(pl->busy, NULL);
		/* full barrier: a detach's sleep is seen, or it sees @busy */
		if (wq_has_sleeper(&pl->done))
			wake_up_all(&pl->done);
		if (n)
			did += n;
		else
			*pending = true;
	}
	/* keep an address space only while one of our rings is in it */
	list_for_each_entry(ring, &pl->rings, pl_node)
		keep_mm |= pl->mm == ring->mm && !ring->mm_gone;
	if (!keep_mm)
		rmawin_poller_leave_mm(pl);
	mutex_unlock(&pl->lock);
	*idle_ns = idle;
	return did;
}

/*
 * Sleep until kicked or stopped, unless a ring has work after all: every
 * ring says RMAWIN_SQ_NEED_WAKEUP meanwhile.  @reprobe_ns: 0, or how long
 * to sleep at most, a doorbell that ran its entries itself not waking us
 * meanwhile.  @count: counted as the sleep begins.  Return: true if we
 * slept.
 */
static bool rmawin_poller_sleep(struct rmawin_poller *pl, u64 reprobe_ns, atomic_long_t *count)
{
	struct rmawin_ring *ring;
	bool work = false;

	rmawin_poller_leave_mm(pl);
	WRITE_ONCE(pl->reprobe_at, reprobe_ns ? local_clock() + reprobe_ns : 0);
	WRITE_ONCE(pl->kicked, false);
	mutex_lock(&pl->lock);
	list_for_each_entry(ring, &pl->rings, pl_node)
		rmawin_ring_set_flags(ring, RMAWIN_SQ_NEED_WAKEUP |
				      (reprobe_ns ? RMAWIN_SQ_YIELDED : 0), 0);
	/* pairs with the submitter's barrier between its tail and its flag read */
	smp_mb();
	list_for_each_entry(ring, &pl->rings, pl_node)
		work |= !ring->pl_leaving && !ring->mm_gone && rmawin_ring_has_work(ring);
	mutex_unlock(&pl->lock);
	if (!work)
		atomic_long_inc(count);
	if (!work && !reprobe_ns)
		wait_event_interruptible(pl->wait, READ_ONCE(pl->kicked) || kthread_should_stop());
	else if (!work)
		wait_event_interruptible_timeout(pl->wait,
						 READ_ONCE(pl->kicked) || kthread_should_stop(),
						 nsecs_to_jiffies(reprobe_ns) + 1);
	mutex_lock(&pl->lock);
	list_for_each_entry(ring, &pl->rings, pl_node)
		rmawin_ring_set_flags(ring, 0, RMAWIN_SQ_NEED_WAKEUP | RMAWIN_SQ_YIELDED);
	mutex_unlock(&pl->lock);
	WRITE_ONCE(pl->reprobe_at, 0);
	return !work;
}

static int rmawin_poller_thread(void *data)
{
	struct rmawin_poller *pl = data;
	u64 now, last = local_clock(), shared_since = 0, alone_since = 0, idle_ns;
	bool pending;

	pl->backoff_ns = RMAWIN_POLL_REPROBE_NS;
	while (!kthread_should_stop()) {
		if (rmawin_poller_pass(pl, &pending, &idle_ns)) {
			last = local_clock();
			cond_resched();
			continue;
		}
		now = local_clock();
		if (!pending && now - last >= idle_ns) {
			rmawin_poller_sleep(pl, 0, &rmawin_stats.poll_sleeps_idle);
			last = local_clock();
			shared_since = 0;
			alone_since = 0;
			continue;
		}
		/*
		 * Another task runnable here: one just woken that is owed the
		 * CPU has need_resched() set and runs at cond_resched(); one
		 * that still waits for its turn gets a nap of ours, and if it
		 * is still there after a grace, it is a competitor: sleep.
		 * Polled with preemption on: a stale answer costs one more spin.
		 */
		if ((!single_task_running() && !need_resched()) ||
		    READ_ONCE(rmawin_poll_force_yield)) {
			alone_since = 0;
			if (!shared_since)
				shared_since = now;
			if (now - shared_since < RMAWIN_POLL_GRACE_NS) {
				usleep_range_state(RMAWIN_POLL_NAP_US, 2 * RMAWIN_POLL_NAP_US,
						   TASK_INTERRUPTIBLE);
				continue;
			}
			/* the test hook keeps it asleep until a plain doorbell */
			if (rmawin_poller_sleep(pl, READ_ONCE(rmawin_poll_force_yield) ?
						RMAWIN_POLL_FORCED_NS : pl->backoff_ns,
						&rmawin_stats.poll_sleeps_shared))
				pl->backoff_ns = min_t(u64, 2 * pl->backoff_ns,
						       RMAWIN_POLL_REPROBE_MAX_NS);
			shared_since = 0;
			continue;
		}
		shared_since = 0;
		if (!alone_since)
			alone_since = now;
		else if (now - alone_since >= RMAWIN_POLL_GRACE_NS)
			pl->backoff_ns = RMAWIN_POLL_REPROBE_NS;
		cond_resched();
		cpu_relax();
	}
	rmawin_poller_leave_mm(pl);
	return 0;
}

/* May @pl serve the calling process: the same effective user and cgroups? */
static bool rmawin_poller_serves(struct rmawin_poller *pl)
{
	bool same;

	if (pl->nrings >= RMAWIN_POLLER_MAX_RINGS || !uid_eq(pl->euid, current_euid()))
		return false;
	rcu_read_lock();
	same = task_css_set(pl->task) == task_css_set(current);
	rcu_read_unlock();
	return same;
}

/* A new poller for the calling process, in its cgroups.  Pollers lock held. */
static struct rmawin_poller *rmawin_poller_create(void)
{
	struct rmawin_poller *pl;
	struct task_struct *task;
	int ret;

	lockdep_assert_held(&rmawin_pollers_lock);
	pl = kzalloc(sizeof(*pl), GFP_KERNEL_ACCOUNT);
	if (!pl)
		return ERR_PTR(-ENOMEM);
	pl->id = atomic_inc_return(&rmawin_poller_ids);
	pl->euid = current_euid();
	mutex_init(&pl->lock);
	INIT_LIST_HEAD(&pl->rings);
	init_waitqueue_head(&pl->wait);
	init_waitqueue_head(&pl->done);
	task = kthread_create(rmawin_poller_thread, pl, "rmawin_poll/%u", pl->id);
	if (IS_ERR(task)) {
		kfree(pl);
		return ERR_CAST(task);
	}
	/*
	 * The poller works for processes of these cgroups (CPU, memory), as
	 * vhost's workers do, so that nothing it does escapes them.
	 */
	ret = cgroup_attach_task_all(current, task);
	if (ret) {
		kthread_stop(task);
		kfree(pl);
		return ERR_PTR(ret);
	}
	get_task_struct(task);
	pl->task = task;
	atomic_inc(&rmawin_stats.pollers);
	wake_up_process(task);
	return pl;
}

/**
 * rmawin_poller_attach() - have a poller consume a new ring
 * @ring: the ring, set up, not yet published
 *
 * A poller of the caller's user and cgroups takes it, or a new one.
 *
 * Context: process context of the ring's owner, endpoint lock held.
 * Return: 0, -ENOMEM, or why no thread could be started.
 */
int rmawin_poller_attach(struct rmawin_ring *ring)
{
	struct rmawin_poller *pl;
	bool found = false;

	mutex_lock(&rmawin_pollers_lock);
	list_for_each_entry(pl, &rmawin_pollers, node) {
		found = rmawin_poller_serves(pl);
		if (found)
			break;
	}
	if (!found) {
		pl = rmawin_poller_create();
		if (IS_ERR(pl)) {
			mutex_unlock(&rmawin_pollers_lock);
			return PTR_ERR(pl);
		}
		list_add(&pl->node, &rmawin_pollers);
	}
	/* counted: it cannot be stopped under us once the lock is dropped */
	pl->nrings++;
	rcu_assign_pointer(ring->pl, pl);
	mutex_unlock(&rmawin_pollers_lock);

	mutex_lock(&pl->lock);
	list_add_tail(&ring->pl_node, &pl->rings);
	mutex_unlock(&pl->lock);
	/* a sleeping poller never set this ring's NEED_WAKEUP: have it look */
	rmawin_poller_kick(pl);
	return 0;
}

/**
 * rmawin_poller_detach() - the ring's poller lets go of it, for good
 * @ring: the ring
 *
 * On return the poller no longer looks at the ring; the last ring of a
 * poller stops its thread.  Safe to call twice.
 *
 * Context: process context, the ring's endpoint lock not held (the poller
 * may be consuming the ring), and its waits ended (a closing endpoint or a
 * dead device).
 */
void rmawin_poller_detach(struct rmawin_ring *ring)
{
	struct rmawin_poller *pl;
	bool last;

	mutex_lock(&rmawin_pollers_lock);
	pl = rcu_dereference_protected(ring->pl, lockdep_is_held(&rmawin_pollers_lock));
	if (!pl) {
		mutex_unlock(&rmawin_pollers_lock);
		return;
	}
	RCU_INIT_POINTER(ring->pl, NULL);
	mutex_unlock(&rmawin_pollers_lock);

	/*
	 * Waits for the pass to leave this ring, if it is in it (the
	 * owner's release has ended its waits), not for a pass over the
	 * others.  The ring still counts in @pl->nrings here, so that the
	 * detach of the poller's last other ring, running meanwhile, cannot
	 * stop and free the poller under us.
	 */
	mutex_lock(&pl->lock);
	/* no pass takes it up again: else each could, while we wait for the last */
	ring->pl_leaving = true;
	while (pl->busy == ring) {
		mutex_unlock(&pl->lock);
		wait_event(pl->done, READ_ONCE(pl->busy) != ring);
		mutex_lock(&pl->lock);
	}
	list_del_init(&ring->pl_node);
	mutex_unlock(&pl->lock);

	mutex_lock(&rmawin_pollers_lock);
	last = !--pl->nrings;
	if (last)
		list_del(&pl->node);
	mutex_unlock(&rmawin_pollers_lock);
	if (!last)
		return;
	kthread_stop(pl->task);
	put_task_struct(pl->task);
	atomic_dec(&rmawin_stats.pollers);
	mutex_destroy(&pl->lock);
	/* a doorbell may still be looking at it */
	kfree_rcu(pl, rcu);
}

/**
 * rmawin_poller_wake() - the doorbell: wake the ring's poller
 * @ring: the ring
 * @submitted: the caller ran the ring's entries itself (RMAWIN_ENTER_SUBMIT)
 *
 * A poller that went to sleep because its CPU was taken is not woken by a
 * doorbell that did the work itself until its time to try again comes.
 * Waking clears the ring's RMAWIN_SQ_NEED_WAKEUP, so that the submissions
 * that follow ring no doorbell of their own; the poller sets it again
 * before it next sleeps.
 *
 * Context: process context.
 * Return: true if the poller was woken.
 */
bool rmawin_poller_wake(struct rmawin_ring *ring, bool submitted)
{
	struct rmawin_poller *pl;
	bool woke = false;

	rcu_read_lock();
	pl = rcu_dereference(ring->pl);
	if (pl && (!submitted || local_clock() >= READ_ONCE(pl->reprobe_at))) {
		rmawin_ring_set_flags(ring, 0, RMAWIN_SQ_NEED_WAKEUP | RMAWIN_SQ_YIELDED);
		rmawin_poller_kick(pl);
		woke = true;
	}
	rcu_read_unlock();
	return woke;
}

/**
 * rmawin_poller_id() - which poller consumes a ring
 * @ring: the ring
 *
 * Return: the poller's id (its thread's name is rmawin_poll/<id>), or -1.
 */
int rmawin_poller_id(struct rmawin_ring *ring)
{
	struct rmawin_poller *pl;
	int id = -1;

	rcu_read_lock();
	pl = rcu_dereference(ring->pl);
	if (pl)
		id = pl->id;
	rcu_read_unlock();
	return id;
}
