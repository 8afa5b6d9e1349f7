// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin_stall: a test-only module that widens a race window on purpose.
 *
 * It puts a kprobe on the entry of one kernel function (@symbol, by
 * default soft-RoCE's req_notify_cq) and, while @stall_ms is not zero,
 * holds every softirq that calls it for that long before letting the call
 * go on.  ib_core's softirq CQ poller (ib_poll_handler()) re-arms a CQ
 * only after it has given the CQ back (irq_poll_complete()), so the call
 * it makes there can overlap ib_free_cq() on another CPU; the stall turns
 * that window of a few instructions into one a test reliably lands in.
 * cq_teardown_test loads it; nothing else does.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/preempt.h>

/* Longest stall taken at once: far below the soft-lockup and RCU-stall limits. */
#define RMAWIN_STALL_MAX_MS	500

static char *symbol = "rxe_req_notify_cq";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "function whose softirq callers are held (default rxe_req_notify_cq)");

static unsigned int stall_ms;
module_param(stall_ms, uint, 0644);
MODULE_PARM_DESC(stall_ms, "hold each softirq caller this long, 0: off (at most 500)");

static atomic_t stalls = ATOMIC_INIT(0);

static int stalls_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&stalls));
}

static const struct kernel_param_ops stalls_ops = {
	.get = stalls_get,
};
module_param_cb(stalls, &stalls_ops, NULL, 0444);
MODULE_PARM_DESC(stalls, "how many calls were held so far");

static int rmawin_stall_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned int ms = READ_ONCE(stall_ms);

	if (ms && in_serving_softirq()) {
		atomic_inc(&stalls);
		mdelay(min_t(unsigned int, ms, RMAWIN_STALL_MAX_MS));
	}
	return 0;
}

static struct kprobe rmawin_stall_kp = {
	.pre_handler = rmawin_stall_pre,
};

static int __init rmawin_stall_init(void)
{
	rmawin_stall_kp.symbol_name = symbol;
	return register_kprobe(&rmawin_stall_kp);
}

static void __exit rmawin_stall_exit(void)
{
	unregister_kprobe(&rmawin_stall_kp);
}

module_init(rmawin_stall_init);
module_exit(rmawin_stall_exit);
MODULE_DESCRIPTION("rmawin selftests: hold softirq callers of one function to widen a race");
MODULE_LICENSE("GPL");
