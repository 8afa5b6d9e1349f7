// SPDX-License-Identifier: GPL-2.0
/*
 * rmarun's output.  Each rank's stdout and stderr come back through a pipe
 * (a stream) and go to rmarun's own stdout and stderr (a sink) one whole
 * line at a time, prefixed "[rank] "; rmarun's own messages go through the
 * stderr sink too, so that they stay between lines.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmarun.h"

/* "[1023] " */
#define RMARUN_PREFIX_MAX	16

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
void __printf(2, 3)
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

void stream_close(struct stream *st)
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
void stream_service(struct launcher *l, int rank, struct stream *st)
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
void stream_drain(struct launcher *l, int rank, struct stream *st)
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

void flush_sinks(struct launcher *l)
{
	int out;

	for (out = 0; out < OUT_NR; out++)
		sink_flush(&l->sinks[out]);
	drop_broken_outputs(l);
}
