// SPDX-License-Identifier: GPL-2.0
/*
 * Notified put: every rank notifies rank 0, which waits with poll() on the
 * endpoint's fd and with notify_wait; data verified when the notification
 * arrives (no fence), tags and sources correct, none lost over 10 000.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test on both of the library's paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

#define TOTAL	10000
#define SLOTS	64

/*
 * Ranks 1..n-1 send TOTAL/(n-1) notified puts each to rank 0: slot
 * (seq % SLOTS) of the sender's region gets seq, tag = seq.  Rank 0 checks
 * each slot holds the tag when its notification comes, and that every
 * sender's sequence arrives complete and in order.
 */
static int notify_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), per = TOTAL / (n - 1);
	static uint32_t win_mem[16 * SLOTS];
	uint32_t next[16] = { 0 }, v;
	struct rmawin_notification note;
	struct rmawin_win *win;
	struct pollfd pfd;
	int i, got = 0, polled = 0;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, win_mem, me ? 0 : sizeof(win_mem), 4, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_lock_all(win));
	/* nothing yet: a zero timeout answers at once */
	if (me == 0 && rmawin_notify_wait(win, &note, 0) != -EAGAIN)
		return 3;
	/* the senders start only after that check */
	RMAWIN_TEST_TRY(16, rmawin_barrier(ep));
	if (me == 0) {
		pfd.fd = rmawin_ep_fd(ep);
		pfd.events = POLLIN;
		while (got < per * (n - 1)) {
			/* every other one through poll(), the rest blocking in notify_wait */
			if (got % 2 == 0) {
				if (poll(&pfd, 1, 20000) != 1 || !(pfd.revents & POLLIN))
					return 4;
				polled++;
				RMAWIN_TEST_TRY(5, rmawin_notify_wait(win, &note, 0));
			} else {
				RMAWIN_TEST_TRY(6, rmawin_notify_wait(win, &note, 20000));
			}
			if (note.source < 1 || note.source >= n || note.len != 4 ||
			    note.tag != next[note.source] ||
			    note.target_disp != (size_t)note.source * SLOTS + note.tag % SLOTS) {
				fprintf(stderr, "bad notification: source %d tag %u (want %u) disp %zu\n",
					note.source, note.tag, next[note.source], note.target_disp);
				return 7;
			}
			/*
			 * The data is there already, with no synchronization
			 * call: the slot holds this put's value or a later one
			 * of the same sender (slots are reused).
			 */
			v = win_mem[note.target_disp];
			if (v < note.tag || v % SLOTS != note.tag % SLOTS)
				return 8;
			next[note.source]++;
			got++;
		}
		if (rmawin_notify_wait(win, &note, 10) != -ETIMEDOUT)
			return 9;
		if (!polled)
			return 10;
	} else {
		for (i = 0; i < per; i++) {
			v = i;
			RMAWIN_TEST_TRY(11, rmawin_put_notify(win, &v, 4, 0,
							      me * SLOTS + i % SLOTS, i));
			/* v may change after the put completes */
			RMAWIN_TEST_TRY(12, rmawin_flush(win, 0));
		}
	}
	RMAWIN_TEST_TRY(13, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(14, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(15, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, ten_thousand_notifications_to_rank_0, 300)
{
	EXPECT_EQ(5, rmawin_test_run_eps(_metadata, 5, notify_rank, NULL, 280));
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

#define RECV_DELAY_PATH	RMAWIN_HOOK_DIR "recv_delay_ms"

/* The module's test hook: each received message waits @ms before dispatch. */
static int set_recv_delay(int ms)
{
	return rmawin_test_set_hook("recv_delay_ms", ms);
}

/*
 * Rank 1 notifies rank 0, completes the epoch and leaves (closes) while
 * rank 0's kernel is slow to dispatch what it received: the disconnect is
 * handled before the notification is.  The notification must still be
 * delivered, and only then is rank 1 gone.
 */
static int last_word_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t win_mem[8];
	uint64_t v = 0x1a57;
	struct rmawin_notification note;
	struct rmawin_win *win;
	int bad = 0;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, win_mem, sizeof(win_mem), 8, 0, &win));
	if (rmawin_rank(ep) == 0)
		RMAWIN_TEST_TRY(2, set_recv_delay(1000));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (rmawin_rank(ep) == 1) {
		RMAWIN_TEST_TRY(4, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
		RMAWIN_TEST_TRY(5, rmawin_put_notify(win, &v, 8, 0, 3, 77));
		RMAWIN_TEST_TRY(6, rmawin_unlock(win, 0));
		return 0;	/* and closes, its window with it */
	}
	RMAWIN_TEST_WANT(0, rmawin_notify_wait(win, &note, 20000));
	RMAWIN_TEST_TRY(7, set_recv_delay(0));
	if (!bad && (note.source != 1 || note.tag != 77 || note.target_disp != 3 ||
		     note.len != 8 || win_mem[3] != v)) {
		fprintf(stderr, "notification source %d tag %u disp %zu len %zu, data %#llx\n",
			note.source, note.tag, note.target_disp, note.len,
			(unsigned long long)win_mem[3]);
		bad = 1;
	}
	/* rank 1 is gone now: the collective free says so, and frees all the same */
	RMAWIN_TEST_WANT(-ECONNRESET, rmawin_win_free(win));
	return bad ? 8 : 0;
}

TEST_F_TIMEOUT(path, notification_sent_just_before_leaving_is_delivered, 120)
{
	if (access(RECV_DELAY_PATH, W_OK))
		SKIP(return, "%s: %s (debugfs not mounted?)", RECV_DELAY_PATH, strerror(errno));
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, last_word_rank, NULL, 100));
	EXPECT_EQ(0, set_recv_delay(0));
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

TEST_HARNESS_MAIN
