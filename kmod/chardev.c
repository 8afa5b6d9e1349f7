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
 * @out: the struct carries results back: copy it out on success (and, for
 *	NOTIFY_WAIT, with -EOVERFLOW); an input-only struct is never written,
 *	so it may live in read-only memory
 */
struct rmawin_ioctl_op {
	int (*handler)(struct rmawin_ep *ep, void *arg);
	u32 size;
	u32 min_size;
	bool out;
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
	struct rmawin_win_info win_info;
};

/* The first command number; the table is indexed from it. */
#define RMAWIN_CMD_FIRST	RMAWIN_CMD_QUERY

/*
 * One line per command: its handler, its struct, the last field of the
 * struct's first revision, and whether it has output.  Every struct starts
 * with size and flags, and is padded to 8 bytes, as the build checks.
 */
#define RMAWIN_IOCTL(cmd, fn, type, first_last, has_out)				\
	[RMAWIN_CMD_##cmd - RMAWIN_CMD_FIRST] = {					\
		.handler = (fn),							\
		.size = sizeof(struct type) +						\
			BUILD_BUG_ON_ZERO(offsetof(struct type, size) != 0 ||		\
					  offsetof(struct type, flags) != 4 ||		\
					  sizeof(struct type) % 8 ||			\
					  sizeof(struct type) > sizeof(union rmawin_ioctl_buf)), \
		.min_size = offsetofend(struct type, first_last),			\
		.out = (has_out),							\
	}

static const struct rmawin_ioctl_op rmawin_ioctl_ops[] = {
	RMAWIN_IOCTL(QUERY, rmawin_ioctl_query, rmawin_query, dev_entry_size, true),
	RMAWIN_IOCTL(EP_BIND, rmawin_ioctl_ep_bind, rmawin_ep_bind, reserved, false),
	RMAWIN_IOCTL(GROUP_JOIN, rmawin_ioctl_group_join, rmawin_group_join, key_len, false),
	RMAWIN_IOCTL(BARRIER, rmawin_ioctl_barrier, rmawin_barrier, flags, false),
	RMAWIN_IOCTL(WIN_CREATE, rmawin_ioctl_win_create, rmawin_win_create, mmap_offset, true),
	RMAWIN_IOCTL(WIN_FREE, rmawin_ioctl_win_free, rmawin_win_free, reserved, false),
	RMAWIN_IOCTL(RMA, rmawin_ioctl_rma, rmawin_rma, op_size, false),
	RMAWIN_IOCTL(FENCE, rmawin_ioctl_fence, rmawin_fence, reserved, false),
	RMAWIN_IOCTL(LOCK, rmawin_ioctl_lock, rmawin_passive, reserved, false),
	RMAWIN_IOCTL(UNLOCK, rmawin_ioctl_unlock, rmawin_passive, reserved, false),
	RMAWIN_IOCTL(FLUSH, rmawin_ioctl_flush, rmawin_passive, reserved, false),
	RMAWIN_IOCTL(POST, rmawin_ioctl_post, rmawin_pscw, reserved, false),
	RMAWIN_IOCTL(START, rmawin_ioctl_start, rmawin_pscw, reserved, false),
	RMAWIN_IOCTL(COMPLETE, rmawin_ioctl_complete, rmawin_pscw, reserved, false),
	RMAWIN_IOCTL(WAIT, rmawin_ioctl_wait, rmawin_pscw, reserved, true),
	RMAWIN_IOCTL(NOTIFY_WAIT, rmawin_ioctl_notify_wait, rmawin_notify_wait, len, true),
	RMAWIN_IOCTL(RING_SETUP, rmawin_ioctl_ring_setup, rmawin_ring_setup, off, true),
	RMAWIN_IOCTL(RING_ENTER, rmawin_ioctl_ring_enter, rmawin_ring_enter, flags, false),
	RMAWIN_IOCTL(WIN_INFO, rmawin_ioctl_win_info, rmawin_win_info, ranks_ptr, false),
};

/* Larger structs than this are refused without reading their tail. */
#define RMAWIN_IOCTL_MAX_SIZE	PAGE_SIZE

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
	/*
	 * An endpoint reaches its owner's memory: another process that got
	 * the file (fork, SCM_RIGHTS) may only ask what the module is.
	 */
	if (nr != RMAWIN_CMD_QUERY && current->mm != ep->owner)
		return -EPERM;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	/* a tail of unknown fields is checked for zeroes: only so far */
	if (usize > RMAWIN_IOCTL_MAX_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&buf, op->size, uarg, usize);
	if (ret)
		return ret;

	ret = op->handler(ep, &buf);
	/* NOTIFY_WAIT's -EOVERFLOW comes with the count of what was lost */
	if (!op->out || (ret && ret != -EOVERFLOW))
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
	struct rmawin_ep *ep = filp->private_data;

	if (current->mm != ep->owner)
		return -EPERM;
	if (vma->vm_pgoff == RMAWIN_RING_MMAP_OFFSET >> PAGE_SHIFT)
		return rmawin_ring_mmap(filp->private_data, vma);
	return rmawin_win_mmap(filp->private_data, vma);
}

static int rmawin_open(struct inode *inode, struct file *filp)
{
	struct rmawin_ep *ep;

	ep = rmawin_ep_alloc();
	if (IS_ERR(ep))
		return PTR_ERR(ep);
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
