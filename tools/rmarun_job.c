// SPDX-License-Identifier: GPL-2.0
/*
 * rmarun's job: the signals it catches and passes on to the ranks, taking
 * the job down when a rank fails or time runs out, starting the ranks, and
 * the poll() loop that reads their output, reaps them and keeps the
 * deadlines until the last one has gone.
 *
 * The self-pipe of rmarun.c's top comment is sigpipe_fds: on_signal() writes
 * to it, and the loop polls it beside the ranks' streams.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "rmarun.h"

#define RMARUN_GRACE_MS		2000
#define EXIT_TIMEOUT		124

/* Signals that a user sends to "the job"; every live rank gets them too. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

int sigpipe_fds[2] = { -1, -1 };
/* Set by the handler, read by the loop: the one right use of volatile. */
static volatile sig_atomic_t forward_pending[NSIG];

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- Signals ----------------------------------------------------------- */

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	int saved_errno = errno;
	ssize_t ret;
	char c = 0;

	(void)ctx;
	/*
	 * A signal from the terminal (Ctrl-C, hangup) went to the whole
	 * foreground process group, ranks included: sending it again would
	 * make a rank that handles the first SIGINT see a second one.
	 */
	if (sig != SIGCHLD && si->si_code != SI_KERNEL)
		forward_pending[sig] = 1;
	/* It fails only when the pipe is full: a wakeup is pending anyway. */
	ret = write(sigpipe_fds[1], &c, 1);
	(void)ret;
	errno = saved_errno;
}

int setup_signals(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP };
	size_t i;

	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(forwarded_signals); i++)
		if (sigaction(forwarded_signals[i], &sa, NULL))
			return -errno;
	if (sigaction(SIGCHLD, &sa, NULL))
		return -errno;
	/* A closed stdout is handled as EPIPE: see drop_broken_outputs(). */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void handled_signal_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < ARRAY_SIZE(forwarded_signals); i++)
		sigaddset(set, forwarded_signals[i]);
	sigaddset(set, SIGCHLD);
}

/* Exec resets handlers but keeps SIG_IGN and the mask: undo both. */
static void reset_signals_in_child(const sigset_t *set)
{
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(set, sig) == 1)
			signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, set, NULL);
}

static void signal_live_ranks(struct launcher *l, int sig)
{
	int i;

	/* An unreaped pid cannot have been reused, so this never misfires. */
	for (i = 0; i < l->o.nranks; i++)
		if (l->ranks[i].pid > 0)
			kill(l->ranks[i].pid, sig);
}

static void drain_sigpipe(void)
{
	char buf[64];

	while (read(sigpipe_fds[0], buf, sizeof(buf)) > 0)
		;
}

static void forward_signals(struct launcher *l)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(forwarded_signals); i++) {
		int sig = forwarded_signals[i];

		if (forward_pending[sig]) {
			forward_pending[sig] = 0;
			signal_live_ranks(l, sig);
		}
	}
}

/* ---- Job control ------------------------------------------------------- */

/* TERM now, KILL after the grace period for whoever ignores it. */
static void start_abort(struct launcher *l)
{
	if (l->aborting)
		return;
	l->aborting = true;
	signal_live_ranks(l, SIGTERM);
	l->kill_at = now_ms() + RMARUN_GRACE_MS;
}

void fail(struct launcher *l, int status)
{
	if (l->status < 0)
		l->status = status;
	start_abort(l);
}

static void report_signal(struct launcher *l, int rank, int status)
{
	int sig = WTERMSIG(status);
	const char *name = sigabbrev_np(sig);

	/* Death by our own TERM or KILL is the teardown working, not news. */
	if (l->aborting && (sig == SIGTERM || sig == SIGKILL))
		return;
	if (name)
		msg(l, "rank %d killed by signal SIG%s%s", rank, name,
		    WCOREDUMP(status) ? " (core dumped)" : "");
	else
		msg(l, "rank %d killed by signal %d", rank, sig);
}

static void rank_exited(struct launcher *l, int rank, int status)
{
	struct rank *r = &l->ranks[rank];
	int out;

	for (out = 0; out < OUT_NR; out++)
		stream_drain(l, rank, &r->io[out]);
	r->pid = 0;
	l->live--;

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFEXITED(status)) {
		msg(l, "rank %d exited with status %d", rank, WEXITSTATUS(status));
		fail(l, WEXITSTATUS(status));
	} else {
		report_signal(l, rank, status);
		fail(l, 128 + WTERMSIG(status));
	}
}

static int rank_of_pid(const struct launcher *l, pid_t pid)
{
	int i;

	for (i = 0; i < l->o.nranks; i++)
		if (l->ranks[i].pid == pid)
			return i;
	return -1;
}

/* Also reaps children that are not ranks (rmarun may have been exec'd). */
static void reap(struct launcher *l)
{
	pid_t pid;
	int status, rank;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		rank = rank_of_pid(l, pid);
		if (rank >= 0)
			rank_exited(l, rank, status);
	}
}

static void check_deadlines(struct launcher *l)
{
	int64_t now = now_ms();

	if (l->timeout_at && now >= l->timeout_at) {
		l->timeout_at = 0;
		if (!l->aborting) {
			msg(l, "timeout after %u s", l->o.timeout_s);
			fail(l, EXIT_TIMEOUT);
		}
	}
	if (l->kill_at && now >= l->kill_at) {
		l->kill_at = 0;
		signal_live_ranks(l, SIGKILL);
	}
}

static int poll_timeout(const struct launcher *l)
{
	int64_t next = 0, now = now_ms(), ms;

	if (l->timeout_at)
		next = l->timeout_at;
	if (l->kill_at && (!next || l->kill_at < next))
		next = l->kill_at;
	if (!next)
		return -1;
	ms = next - now;
	if (ms < 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* ---- Starting ranks ---------------------------------------------------- */

/* What rmawin_ep_open_env() reads. */
static void set_rank_env(const struct launcher *l, int rank, const char *addrs)
{
	char num[16];

	snprintf(num, sizeof(num), "%d", rank);
	setenv("RMAWIN_RANK", num, 1);
	snprintf(num, sizeof(num), "%d", l->o.nranks);
	setenv("RMAWIN_NRANKS", num, 1);
	setenv("RMAWIN_ADDRS", addrs, 1);
	/* the job's own key, never one from rmarun's environment */
	setenv("RMAWIN_JOB_KEY", l->key, 1);
	unsetenv("RMAWIN_JOB_KEY_FILE");
}

static void __noreturn
rank_exec(struct launcher *l, int rank, const char *addrs, int out_w, int err_w)
{
	int err, in = rank == 0 ? STDIN_FILENO : l->devnull;

	/*
	 * A rank never outlives rmarun, even one that is SIGKILLed: a stray
	 * rank would hold its port and hang the next job's setup.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != l->self)
		_exit(127);

	/* Like mpirun: only rank 0 reads the terminal, the others see EOF. */
	if ((in != STDIN_FILENO && dup2(in, STDIN_FILENO) < 0) ||
	    dup2(out_w, STDOUT_FILENO) < 0 || dup2(err_w, STDERR_FILENO) < 0)
		_exit(127);
	set_rank_env(l, rank, addrs);
	setrlimit(RLIMIT_NOFILE, &l->nofile);
	execvp(l->o.argv[0], l->o.argv);
	err = errno;
	/* Goes through the stderr pipe, so it shows as "[rank] rmarun: ...". */
	dprintf(STDERR_FILENO, "rmarun: %s: %s\n", l->o.argv[0], strerror(err));
	/* The shell's convention: 127 not found, 126 found but not runnable. */
	_exit(err == ENOENT ? 127 : 126);
}

/* Read ends non-blocking (they are rmarun's); write ends as programs expect. */
static int open_pipes(struct rank *r, int w[OUT_NR])
{
	int out, p[2];

	for (out = 0; out < OUT_NR; out++) {
		if (pipe2(p, O_CLOEXEC))
			return -errno;
		r->io[out].fd = p[0];
		w[out] = p[1];
		if (fcntl(p[0], F_SETFL, O_NONBLOCK))
			return -errno;
	}
	return 0;
}

static void close_write_ends(int w[OUT_NR])
{
	int out;

	for (out = 0; out < OUT_NR; out++) {
		if (w[out] >= 0)
			close(w[out]);
		w[out] = -1;
	}
}

/*
 * Handled signals are blocked across fork() so that the child cannot run
 * rmarun's handler (and write to its self-pipe) before it has reset them.
 */
static int spawn_rank(struct launcher *l, int rank, const char *addrs)
{
	struct rank *r = &l->ranks[rank];
	int w[OUT_NR] = { -1, -1 }, ret;
	sigset_t set, old;
	pid_t pid;

	ret = open_pipes(r, w);
	if (ret) {
		close_write_ends(w);
		return ret;
	}
	handled_signal_set(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	pid = fork();
	if (pid == 0) {
		reset_signals_in_child(&set);
		rank_exec(l, rank, addrs, w[OUT_STDOUT], w[OUT_STDERR]);
	}
	ret = pid < 0 ? -errno : 0;
	if (pid > 0) {
		r->pid = pid;
		l->live++;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close_write_ends(w);
	return ret;
}

static int format_addr(char *buf, size_t size, const char *ip, unsigned int port)
{
	bool v6 = strchr(ip, ':');

	return snprintf(buf, size, v6 ? "[%s]:%u" : "%s:%u", ip, port);
}

/* "IP:BASE,IP:BASE+1,...": what rmawin_ep_open_env() splits again. */
static char *build_addrs(const struct opts *o)
{
	/* "[" "]:" five digits "," and the final NUL */
	size_t size = (size_t)o->nranks * (strlen(o->addr) + 9) + 1, len = 0;
	char *s = malloc(size);
	int i;

	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; i < o->nranks; i++) {
		if (i)
			s[len++] = ',';
		len += format_addr(s + len, size - len, o->addr, o->port + i);
	}
	return s;
}

int spawn_all(struct launcher *l)
{
	char *addrs = build_addrs(&l->o);
	int i, ret = -ENOMEM;

	if (!addrs)
		return ret;
	for (i = 0; i < l->o.nranks; i++) {
		ret = spawn_rank(l, i, addrs);
		if (ret)
			break;
	}
	free(addrs);
	return ret;
}

/* ---- The loop ---------------------------------------------------------- */

static int build_pollfds(struct launcher *l)
{
	int i, out, n = 1;

	l->pfds[0] = (struct pollfd){ .fd = sigpipe_fds[0], .events = POLLIN };
	for (i = 0; i < l->o.nranks; i++) {
		for (out = 0; out < OUT_NR; out++) {
			struct stream *st = &l->ranks[i].io[out];

			if (st->fd < 0)
				continue;
			l->pfds[n] = (struct pollfd){ .fd = st->fd, .events = POLLIN };
			l->pstreams[n] = st;
			l->prank[n] = i;
			n++;
		}
	}
	return n;
}

static void service_streams(struct launcher *l, int n)
{
	int i;

	for (i = 1; i < n; i++)
		if (l->pfds[i].revents)
			stream_service(l, l->prank[i], l->pstreams[i]);
}

/* Until every rank is reaped; output left by their orphans is not waited for. */
void run_loop(struct launcher *l)
{
	int n;

	while (l->live > 0) {
		n = build_pollfds(l);
		if (poll(l->pfds, n, poll_timeout(l)) < 0 && errno != EINTR) {
			/* Only ENOMEM can get here: end the job, without spinning. */
			msg(l, "poll: %s", strerror(errno));
			fail(l, 1);
			usleep(10000);
		}
		service_streams(l, n);
		drain_sigpipe();
		forward_signals(l);
		reap(l);
		check_deadlines(l);
		flush_sinks(l);
	}
}
