// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the misc device /dev/rmawin and the ioctl dispatch table.
 *
 * Every ioctl takes one struct that starts with { __u32 size; __u32 flags; }.
 * The table below says, per command, how big the kernel's struct is and how
 * much of it the first ABI revision had; copy_struct_from_user() then gives
 * us forward and backward compatibility in one place.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/poll.h>

#include "rmawin.h"

/**
 * struct rmawin_ioctl_op - one entry of the dispatch table
 * @handler: does the work on the kernel copy of the struct
 * @size: sizeof() the kernel's struct
 * @min_size: size of the struct in the ABI revision that introduced it
 */
struct rmawin_ioctl_op {
	int (*handler)(struct rmawin_ep *ep, void *arg);
	u32 size;
	u32 min_size;
};

/* Big enough for any ioctl's struct. */
union rmawin_ioctl_buf {
	struct rmawin_query query;
	struct rmawin_ep_bind ep_bind;
	struct rmawin_group_join group_join;
	struct rmawin_barrier barrier;
	struct rmawin_win_create win_create;
	struct rmawin_win_free win_free;
	struct rmawin_rma rma;
	struct rmawin_fence fence;
	struct rmawin_passive passive;
	struct rmawin_pscw pscw;
	struct rmawin_notify_wait notify_wait;
	struct rmawin_ring_setup ring_setup;
	struct rmawin_ring_enter ring_enter;
};

/* The first command number; the table is indexed from it. */
#define RMAWIN_CMD_FIRST	RMAWIN_CMD_QUERY

static const struct rmawin_ioctl_op rmawin_ioctl_ops[] = {
	[RMAWIN_CMD_QUERY - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_query,
		.size = sizeof(struct rmawin_query),
		.min_size = offsetofend(struct rmawin_query, dev_entry_size),
	},
	[RMAWIN_CMD_EP_BIND - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_ep_bind,
		.size = sizeof(struct rmawin_ep_bind),
		.min_size = offsetofend(struct rmawin_ep_bind, reserved),
	},
	[RMAWIN_CMD_GROUP_JOIN - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_group_join,
		.size = sizeof(struct rmawin_group_join),
		.min_size = offsetofend(struct rmawin_group_join, key_len),
	},
	[RMAWIN_CMD_BARRIER - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_barrier,
		.size = sizeof(struct rmawin_barrier),
		.min_size = offsetofend(struct rmawin_barrier, flags),
	},
	[RMAWIN_CMD_WIN_CREATE - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_win_create,
		.size = sizeof(struct rmawin_win_create),
		.min_size = offsetofend(struct rmawin_win_create, mmap_offset),
	},
	[RMAWIN_CMD_WIN_FREE - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_win_free,
		.size = sizeof(struct rmawin_win_free),
		.min_size = offsetofend(struct rmawin_win_free, reserved),
	},
	[RMAWIN_CMD_RMA - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_rma,
		.size = sizeof(struct rmawin_rma),
		.min_size = offsetofend(struct rmawin_rma, op_size),
	},
	[RMAWIN_CMD_FENCE - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_fence,
		.size = sizeof(struct rmawin_fence),
		.min_size = offsetofend(struct rmawin_fence, reserved),
	},
	[RMAWIN_CMD_LOCK - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_lock,
		.size = sizeof(struct rmawin_passive),
		.min_size = offsetofend(struct rmawin_passive, reserved),
	},
	[RMAWIN_CMD_UNLOCK - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_unlock,
		.size = sizeof(struct rmawin_passive),
		.min_size = offsetofend(struct rmawin_passive, reserved),
	},
	[RMAWIN_CMD_FLUSH - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_flush,
		.size = sizeof(struct rmawin_passive),
		.min_size = offsetofend(struct rmawin_passive, reserved),
	},
	[RMAWIN_CMD_POST - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_post,
		.size = sizeof(struct rmawin_pscw),
		.min_size = offsetofend(struct rmawin_pscw, reserved),
	},
	[RMAWIN_CMD_START - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_start,
		.size = sizeof(struct rmawin_pscw),
		.min_size = offsetofend(struct rmawin_pscw, reserved),
	},
	[RMAWIN_CMD_COMPLETE - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_complete,
		.size = sizeof(struct rmawin_pscw),
		.min_size = offsetofend(struct rmawin_pscw, reserved),
	},
	[RMAWIN_CMD_WAIT - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_wait,
		.size = sizeof(struct rmawin_pscw),
		.min_size = offsetofend(struct rmawin_pscw, reserved),
	},
	[RMAWIN_CMD_NOTIFY_WAIT - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_notify_wait,
		.size = sizeof(struct rmawin_notify_wait),
		.min_size = offsetofend(struct rmawin_notify_wait, len),
	},
	[RMAWIN_CMD_RING_SETUP - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_ring_setup,
		.size = sizeof(struct rmawin_ring_setup),
		.min_size = offsetofend(struct rmawin_ring_setup, off),
	},
	[RMAWIN_CMD_RING_ENTER - RMAWIN_CMD_FIRST] = {
		.handler = rmawin_ioctl_ring_enter,
		.size = sizeof(struct rmawin_ring_enter),
		.min_size = offsetofend(struct rmawin_ring_enter, flags),
	},
};

static long rmawin_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct rmawin_ep *ep = filp->private_data;
	void __user *uarg = (void __user *)arg;
	const struct rmawin_ioctl_op *op;
	union rmawin_ioctl_buf buf;
	unsigned int nr = _IOC_NR(cmd);
	u32 usize;
	int ret;

	BUILD_BUG_ON(ARRAY_SIZE(rmawin_ioctl_ops) !=
		     RMAWIN_CMD_LAST - RMAWIN_CMD_FIRST);

	if (cmd != _IO(RMAWIN_IOC_TYPE, nr) || nr < RMAWIN_CMD_FIRST ||
	    nr >= RMAWIN_CMD_LAST)
		return -ENOTTY;
	op = &rmawin_ioctl_ops[nr - RMAWIN_CMD_FIRST];

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;

	ret = op->handler(ep, &buf);
	/* NOTIFY_WAIT's -EOVERFLOW comes with the count of what was lost */
	if (ret && ret != -EOVERFLOW)
		return ret;
	/* a caller that knows a smaller struct gets only what it knows */
	if (copy_to_user(uarg, &buf, min_t(u32, usize, op->size)))
		return -EFAULT;
	return ret;
}

/* Readable while a notified put waits in the endpoint's queue. */
static __poll_t rmawin_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct rmawin_ep *ep = filp->private_data;

	poll_wait(filp, &ep->wq, wait);
	return rmawin_notify_pending(ep) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int rmawin_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff == RMAWIN_RING_MMAP_OFFSET >> PAGE_SHIFT)
		return rmawin_ring_mmap(filp->private_data, vma);
	return rmawin_win_mmap(filp->private_data, vma);
}

static int rmawin_open(struct inode *inode, struct file *filp)
{
	struct rmawin_ep *ep;

	ep = rmawin_ep_alloc();
	if (!ep)
		return -ENOMEM;
	filp->private_data = ep;
	return nonseekable_open(inode, filp);
}

static int rmawin_release(struct inode *inode, struct file *filp)
{
	rmawin_ep_release(filp->private_data);
	return 0;
}

static const struct file_operations rmawin_fops = {
	.owner = THIS_MODULE,
	.open = rmawin_open,
	.release = rmawin_release,
	.unlocked_ioctl = rmawin_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = rmawin_mmap,
	.poll = rmawin_poll,
	.llseek = no_llseek,
};

static struct miscdevice rmawin_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "rmawin",
	.fops = &rmawin_fops,
	.mode = 0666,
};

int rmawin_chardev_init(void)
{
	return misc_register(&rmawin_miscdev);
}

void rmawin_chardev_exit(void)
{
	misc_deregister(&rmawin_miscdev);
}
