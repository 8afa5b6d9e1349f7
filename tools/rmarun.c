// SPDX-License-Identifier: GPL-2.0
/*
 * rmarun - start N ranks of a program on this host for rmawin_ep_open_env()
 *
 *   rmarun -n N [--addr IP] [--port BASE] [--timeout S] -- PROGRAM ARGS...
 *
 * Each rank gets RMAWIN_RANK, RMAWIN_NRANKS and RMAWIN_ADDRS (every rank on
 * IP, ports BASE..BASE+N-1), and RMAWIN_JOB_KEY: a fresh random 256-bit key
 * for this job alone, with which its ranks prove to each other that they
 * belong to it.  The ranks' stdout and stderr come back through
 * pipes and are copied, one whole line at a time prefixed with "[rank] ", to
 * rmarun's stdout and stderr.  The first rank to fail takes the others down
 * with it, as an MPI job would.  See Documentation/rmarun.rst.
 *
 * One process, one poll() loop: child exits and signals reach the loop
 * through a self-pipe, so there is no work in signal handlers and no race
 * between "a child died" and "wait for output".
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#define __noreturn		__attribute__((noreturn))

#define RMARUN_MAX_RANKS	1024
#define RMARUN_DEFAULT_PORT	18515
#define RMARUN_GRACE_MS		2000
/* A longer line is split into pieces of this size, each with its prefix. */
#define RMARUN_LINE_MAX		(64 * 1024)
/* Room for one maximal line, its prefix and newline, with no flush between. */
#define RMARUN_SINK_SIZE	(2 * RMARUN_LINE_MAX)
/* "[1023] " */
#define RMARUN_PREFIX_MAX	16
/* One entry of RMAWIN_VM_ADDRS: IPv6 "%" interface */
#define RMARUN_ADDR_MAX		(INET6_ADDRSTRLEN + IF_NAMESIZE + 1)

#define EXIT_USAGE		2
#define EXIT_TIMEOUT		124

enum { OUT_STDOUT, OUT_STDERR, OUT_NR };

/* Signals that a user sends to "the job"; every live rank gets them too. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* One rank's stdout or stderr, as read by rmarun. */
struct stream {
	int fd;			/* read end, -1 once closed */
	size_t len;		/* bytes of an unfinished line in buf */
	char *buf;		/* RMARUN_LINE_MAX bytes, allocated on first data */
};

struct rank {
	pid_t pid;		/* 0 once reaped */
	struct stream io[OUT_NR];
};

/* rmarun's own stdout or stderr, written in whole lines. */
struct sink {
	int fd;
	bool broken;		/* a write failed: output to it is discarded */
	size_t len;
	char buf[RMARUN_SINK_SIZE];
};

struct opts {
	int nranks;
	const char *addr;
	unsigned int port;
	unsigned int timeout_s;
	char **argv;
};

/* Bytes of the job key rmarun makes: 256 bits. */
#define JOB_KEY_BYTES	32

struct launcher {
	struct opts o;
	struct rank *ranks;
	pid_t self;		/* rmarun's pid, as its ranks should see it */
	int live;		/* ranks not reaped yet */
	int devnull;
	int64_t timeout_at;	/* CLOCK_MONOTONIC ms; 0 = none */
	int64_t kill_at;	/* when TERMed ranks get SIGKILL; 0 = none */
	struct rlimit nofile;	/* as rmarun found it, for the ranks */
	bool aborting;		/* the job is being torn down */
	int status;		/* rmarun's exit status; -1 = no failure yet */
	struct sink sinks[OUT_NR];
	struct pollfd *pfds;	/* the signal pipe, then every open stream */
	struct stream **pstreams;
	int *prank;		/* rank of pfds[i], i >= 1 */
	char key[2 * JOB_KEY_BYTES + 1];	/* the job's key, in hex */
};

static int sigpipe_fds[2] = { -1, -1 };
/* Set by the handler, read by the loop: the one right use of volatile. */
static volatile sig_atomic_t forward_pending[NSIG];

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- Output ------------------------------------------------------------ */

/* Blocks even on an inherited O_NONBLOCK stdout, so that no line is cut. */
static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, -1);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

static void sink_flush(struct sink *s)
{
	if (!s->broken && s->len && write_all(s->fd, s->buf, s->len))
		s->broken = true;
	s->len = 0;
}

/* Lines are only ever appended whole, so a flush never splits one. */
static void sink_line(struct sink *s, const char *prefix, const char *p, size_t len)
{
	size_t plen = strlen(prefix);

	if (s->broken)
		return;
	if (s->len + plen + len + 1 > sizeof(s->buf))
		sink_flush(s);
	memcpy(s->buf + s->len, prefix, plen);
	memcpy(s->buf + s->len + plen, p, len);
	s->buf[s->len + plen + len] = '\n';
	s->len += plen + len + 1;
}

/* rmarun's own messages go through the stderr sink to stay between lines. */
static void __printf(2, 3)
msg(struct launcher *l, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	sink_line(&l->sinks[OUT_STDERR], "rmarun: ", line, n);
	sink_flush(&l->sinks[OUT_STDERR]);
}

/* ---- Streams ----------------------------------------------------------- */

static void stream_close(struct stream *st)
{
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	free(st->buf);
	st->buf = NULL;
	st->len = 0;
}

/* Emit every complete line; a full buffer with no newline is one line. */
static void stream_emit_lines(struct stream *st, struct sink *s, const char *prefix)
{
	char *start = st->buf, *end = st->buf + st->len, *nl;

	while ((nl = memchr(start, '\n', end - start))) {
		sink_line(s, prefix, start, nl - start);
		start = nl + 1;
	}
	st->len = end - start;
	if (st->len == RMARUN_LINE_MAX) {
		sink_line(s, prefix, start, st->len);
		st->len = 0;
	}
	memmove(st->buf, start, st->len);
}

/* Return: bytes read, 0 at end of file, -errno (-EAGAIN: nothing now). */
static ssize_t stream_read(struct stream *st, struct sink *s, const char *prefix)
{
	ssize_t n;

	if (!st->buf) {
		st->buf = malloc(RMARUN_LINE_MAX);
		if (!st->buf)
			return -ENOMEM;
	}
	do
		n = read(st->fd, st->buf + st->len, RMARUN_LINE_MAX - st->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	st->len += n;
	stream_emit_lines(st, s, prefix);
	return n;
}

/* The rank has gone: its last line may have no newline; write it anyway. */
static void stream_finish(struct stream *st, struct sink *s, const char *prefix)
{
	if (st->len)
		sink_line(s, prefix, st->buf, st->len);
	stream_close(st);
}

static void rank_prefix(char *prefix, int rank)
{
	snprintf(prefix, RMARUN_PREFIX_MAX, "[%d] ", rank);
}

/* One read; at end of file or on error the stream is done. */
static void stream_service(struct launcher *l, int rank, struct stream *st)
{
	struct sink *s = &l->sinks[st - l->ranks[rank].io];
	char prefix[RMARUN_PREFIX_MAX];
	ssize_t n;

	rank_prefix(prefix, rank);
	n = stream_read(st, s, prefix);
	if (n == 0 || (n < 0 && n != -EAGAIN))
		stream_finish(st, s, prefix);
}

/*
 * Read what a reaped rank left in its pipes.  Its writes all completed before
 * it exited, so they are in the pipe now; a background process of the rank
 * may keep the pipe open and keep writing, which is why this stops at the
 * first "nothing more now" and after 1 MiB (the default pipe-max-size)
 * rather than at end of file.
 */
static void stream_drain(struct launcher *l, int rank, struct stream *st)
{
	struct sink *s = &l->sinks[st - l->ranks[rank].io];
	char prefix[RMARUN_PREFIX_MAX];
	int i;

	if (st->fd < 0)
		return;
	rank_prefix(prefix, rank);
	for (i = 0; i < 16; i++)
		if (stream_read(st, s, prefix) <= 0)
			break;
	stream_finish(st, s, prefix);
}

/*
 * rmarun's stdout is gone (say, "rmarun ... | head"): close the ranks' end
 * of their stdout pipes too, so that they get EPIPE/SIGPIPE exactly as if
 * they had written to the closed pipe themselves.
 */
static void drop_broken_outputs(struct launcher *l)
{
	int out, i;

	for (out = 0; out < OUT_NR; out++) {
		if (!l->sinks[out].broken)
			continue;
		for (i = 0; i < l->o.nranks; i++)
			stream_close(&l->ranks[i].io[out]);
	}
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

static int setup_signals(void)
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

static void fail(struct launcher *l, int status)
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

static int spawn_all(struct launcher *l)
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

static void flush_sinks(struct launcher *l)
{
	int out;

	for (out = 0; out < OUT_NR; out++)
		sink_flush(&l->sinks[out]);
	drop_broken_outputs(l);
}

/* Until every rank is reaped; output left by their orphans is not waited for. */
static void run_loop(struct launcher *l)
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

/* ---- Options ----------------------------------------------------------- */

#define RMARUN_SYNOPSIS \
	"usage: rmarun -n N [--addr IP] [--port BASE] [--timeout S] -- PROGRAM [ARGS...]\n"

static void usage(FILE *f)
{
	fprintf(f, RMARUN_SYNOPSIS
		"  -n N           number of ranks, 1..%d\n"
		"  --addr IP      address of every rank (IPv4 or IPv6); default: this node's\n"
		"                 entry of RMAWIN_VM_ADDRS, else 127.0.0.1\n"
		"  --port BASE    rank i listens on BASE+i (default %d)\n"
		"  --timeout S    kill the job after S seconds, exit 124 (default 0: none)\n",
		RMARUN_MAX_RANKS, RMARUN_DEFAULT_PORT);
}

static void __noreturn __printf(1, 2)
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("rmarun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n" RMARUN_SYNOPSIS, stderr);
	exit(EXIT_USAGE);
}

/* Digits only: strtoul() would also take blanks, signs and "". */
static bool parse_uint(const char *s, unsigned long min, unsigned long max,
		       unsigned int *val)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*val = v;
	return true;
}

/* Numeric IPv4 or IPv6, the latter with an optional "%interface" as librmawin takes. */
static bool valid_ip(const char *ip)
{
	char host[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;
	const char *scope = strchr(ip, '%');
	size_t len = scope ? (size_t)(scope - ip) : strlen(ip);
	unsigned int idx;

	if (inet_pton(AF_INET, ip, &a4) == 1)
		return true;
	if (len >= sizeof(host))
		return false;
	memcpy(host, ip, len);
	host[len] = '\0';
	if (inet_pton(AF_INET6, host, &a6) != 1)
		return false;
	if (!scope)
		return true;
	scope++;
	return parse_uint(scope, 0, UINT32_MAX, &idx) || if_nametoindex(scope);
}

/*
 * In the test VM, this node's address: the RMAWIN_VM_NODE'th entry of
 * RMAWIN_VM_ADDRS (a private copy, as getenv() memory must not be edited).
 */
static const char *default_addr(void)
{
	const char *list = getenv("RMAWIN_VM_ADDRS"), *node = getenv("RMAWIN_VM_NODE");
	static char addr[RMARUN_ADDR_MAX];
	unsigned int idx = 0;
	const char *p;
	size_t len;

	if (!list || !*list)
		return "127.0.0.1";
	if (node && *node && !parse_uint(node, 0, RMARUN_MAX_RANKS, &idx))
		usage_error("RMAWIN_VM_NODE=%s is not a node index", node);
	for (p = list; idx && p; idx--) {
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		usage_error("RMAWIN_VM_ADDRS=%s has no entry for RMAWIN_VM_NODE", list);
	len = strcspn(p, ",");
	if (len >= sizeof(addr))
		usage_error("RMAWIN_VM_ADDRS=%s: address too long", list);
	memcpy(addr, p, len);
	addr[len] = '\0';
	return addr;
}

static void parse_option(struct opts *o, int c, const char *arg)
{
	unsigned int n;

	switch (c) {
	case 'n':
		if (!parse_uint(arg, 1, RMARUN_MAX_RANKS, &n))
			usage_error("-n %s: not a rank count in 1..%d", arg, RMARUN_MAX_RANKS);
		o->nranks = n;
		break;
	case 'a':
		o->addr = arg;
		break;
	case 'p':
		if (!parse_uint(arg, 1, 65535, &o->port))
			usage_error("--port %s: not a port in 1..65535", arg);
		break;
	case 't':
		if (!parse_uint(arg, 0, INT_MAX, &o->timeout_s))
			usage_error("--timeout %s: not a number of seconds", arg);
		break;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		/* getopt_long() has said what is wrong. */
		fputs(RMARUN_SYNOPSIS, stderr);
		exit(EXIT_USAGE);
	}
}

static void parse_options(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->port = RMARUN_DEFAULT_PORT;
	/* "+": stop at PROGRAM, whose own options are not rmarun's. */
	while ((c = getopt_long(argc, argv, "+n:h", longopts, NULL)) != -1)
		parse_option(o, c, optarg);
	if (!o->nranks)
		usage_error("-n N is required");
	if (optind >= argc)
		usage_error("no PROGRAM given");
	o->argv = argv + optind;
	if (!o->addr)
		o->addr = default_addr();
	if (!valid_ip(o->addr))
		usage_error("%s is not a numeric IPv4 or IPv6 address", o->addr);
	if (o->port + o->nranks - 1 > 65535)
		usage_error("ports %u..%u do not fit below 65536", o->port,
			    o->port + o->nranks - 1);
}

/* ---- Setup ------------------------------------------------------------- */

/*
 * With 0, 1 or 2 closed at startup, a pipe could land there and a rank's
 * dup2() would then clobber it.
 */
static void ensure_std_fds(void)
{
	int fd;

	do
		fd = open("/dev/null", O_RDWR);
	while (fd >= 0 && fd <= STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

/*
 * 1024 ranks need 2048 pipe read ends, over the usual soft limit of 1024.
 * Ranks get the original limit back: select() users depend on it.
 */
static void raise_nofile(struct launcher *l, int nfds)
{
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &l->nofile);
	rl = l->nofile;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= (rlim_t)nfds + 64)
		return;
	rl.rlim_cur = (rlim_t)nfds + 64;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* A fresh key for this job from the kernel's random pool, in hex. */
static int make_job_key(struct launcher *l)
{
	unsigned char raw[JOB_KEY_BYTES];
	size_t got = 0;
	ssize_t r;
	int i;

	while (got < sizeof(raw)) {
		r = getrandom(raw + got, sizeof(raw) - got, 0);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			got += r;
	}
	for (i = 0; i < JOB_KEY_BYTES; i++)
		snprintf(l->key + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

static int launcher_init(struct launcher *l)
{
	int n = 1 + OUT_NR * l->o.nranks, i, out, ret;

	l->status = -1;
	l->self = getpid();
	l->sinks[OUT_STDOUT].fd = STDOUT_FILENO;
	l->sinks[OUT_STDERR].fd = STDERR_FILENO;
	l->ranks = calloc(l->o.nranks, sizeof(*l->ranks));
	l->pfds = calloc(n, sizeof(*l->pfds));
	l->pstreams = calloc(n, sizeof(*l->pstreams));
	l->prank = calloc(n, sizeof(*l->prank));
	if (!l->ranks || !l->pfds || !l->pstreams || !l->prank)
		return -ENOMEM;
	for (i = 0; i < l->o.nranks; i++)
		for (out = 0; out < OUT_NR; out++)
			l->ranks[i].io[out].fd = -1;
	l->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (l->devnull < 0)
		return -errno;
	raise_nofile(l, n);
	ret = make_job_key(l);
	if (ret)
		return ret;
	if (l->o.timeout_s)
		l->timeout_at = now_ms() + (int64_t)l->o.timeout_s * 1000;
	return setup_signals();
}

static void launcher_fini(struct launcher *l)
{
	int i, out;

	for (i = 0; i < l->o.nranks && l->ranks; i++)
		for (out = 0; out < OUT_NR; out++)
			stream_close(&l->ranks[i].io[out]);
	if (l->devnull >= 0)
		close(l->devnull);
	for (i = 0; i < 2; i++)
		if (sigpipe_fds[i] >= 0)
			close(sigpipe_fds[i]);
	free(l->ranks);
	free(l->pfds);
	free(l->pstreams);
	free(l->prank);
	explicit_bzero(l->key, sizeof(l->key));
}

int main(int argc, char **argv)
{
	static struct launcher l = { .devnull = -1 };
	int ret;

	ensure_std_fds();
	parse_options(&l.o, argc, argv);
	ret = launcher_init(&l);
	if (ret) {
		fprintf(stderr, "rmarun: %s\n", strerror(-ret));
		launcher_fini(&l);
		return 1;
	}
	ret = spawn_all(&l);
	if (ret) {
		/* The ranks already started would wait forever for the rest. */
		msg(&l, "cannot start rank %d: %s", l.live, strerror(-ret));
		fail(&l, 1);
	}
	run_loop(&l);
	flush_sinks(&l);
	launcher_fini(&l);
	return l.status < 0 ? 0 : l.status;
}
