// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Parsers for what users hand the library as text: numbers and "ip:port"
 * addresses from the environment, address lists.  Strict: anything that is
 * not exactly what is expected is -EINVAL, never a best guess.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <net/if.h>
#include <netinet/in.h>

#include "rmawin_priv.h"

/* Digits only: strtol() alone would accept leading blanks, signs and "". */
static int rmawin_parse_ulong(const char *s, unsigned long max, unsigned long *val)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

/**
 * rmawin__parse_int() - parse a non-negative decimal int
 * @s: the text, digits only
 * @val: the value
 *
 * Return: 0, or -EINVAL for anything but digits, or a value above INT_MAX.
 */
int rmawin__parse_int(const char *s, int *val)
{
	unsigned long v;
	int ret;

	ret = rmawin_parse_ulong(s, INT_MAX, &v);
	if (ret)
		return ret;
	*val = (int)v;
	return 0;
}

/* "%eth0" or "%2" after an IPv6 address: the interface of a link-local one. */
static int rmawin_parse_scope(const char *s, uint32_t *scope_id)
{
	unsigned long v;

	if (!rmawin_parse_ulong(s, UINT32_MAX, &v)) {
		*scope_id = v;
		return 0;
	}
	*scope_id = if_nametoindex(s);
	return *scope_id ? 0 : -EINVAL;
}

/**
 * rmawin__parse_addr() - parse a listen address
 * @s: "a.b.c.d:port", or "[ipv6]:port" with an optional "%scope" inside the
 *	brackets; numeric only, no host names
 * @ss: filled with a sockaddr_in or sockaddr_in6, the rest zeroed
 *
 * Return: 0, or -EINVAL for a malformed address or a port missing or
 * outside 1..65535.
 */
int rmawin__parse_addr(const char *s, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN + 1 + IF_NAMESIZE];
	const char *h, *port_str, *sep;
	unsigned long port;
	size_t hlen;
	int v6;

	if (!s || !ss)
		return -EINVAL;

	v6 = s[0] == '[';
	if (v6) {
		h = s + 1;
		sep = strchr(h, ']');
		if (!sep || sep[1] != ':')
			return -EINVAL;
		hlen = sep - h;
		port_str = sep + 2;
	} else {
		h = s;
		sep = strrchr(h, ':');
		if (!sep)
			return -EINVAL;
		hlen = sep - h;
		port_str = sep + 1;
	}
	if (!hlen || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';

	if (rmawin_parse_ulong(port_str, 65535, &port) || !port)
		return -EINVAL;

	memset(ss, 0, sizeof(*ss));
	if (v6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		char *scope = strchr(host, '%');

		if (scope) {
			*scope++ = '\0';
			if (rmawin_parse_scope(scope, &sin6->sin6_scope_id))
				return -EINVAL;
		}
		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	}
	return 0;
}

/**
 * rmawin__split_list() - split "a,b,c" into its items
 * @list: the text
 * @items: on success, a NULL-terminated array of the items; one allocation,
 *	to be released with free(*items)
 *
 * Return: the number of items, or -EINVAL if one is empty, -ENOMEM.
 */
int rmawin__split_list(const char *list, char ***items)
{
	size_t n = 1, len, i;
	char **v, *copy, *p;

	if (!list || !items)
		return -EINVAL;
	len = strlen(list);
	for (i = 0; i < len; i++)
		n += list[i] == ',';
	if (n > INT_MAX)
		return -EINVAL;

	v = malloc((n + 1) * sizeof(*v) + len + 1);
	if (!v)
		return -ENOMEM;
	copy = (char *)(v + n + 1);
	memcpy(copy, list, len + 1);

	for (i = 0, p = copy; i < n; i++) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (!*p) {
			free(v);
			return -EINVAL;
		}
		v[i] = p;
		if (comma)
			p = comma + 1;
	}
	v[n] = NULL;
	*items = v;
	return (int)n;
}

/* "0a1b..." into bytes: hex digits only, an even number, a whole key's worth. */
static int rmawin_parse_hex_key(const char *hex, size_t n, uint8_t *key, size_t size)
{
	size_t i;

	if (n % 2 || n / 2 < RMAWIN_JOB_KEY_MIN || n / 2 > RMAWIN_JOB_KEY_MAX || n / 2 > size)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char c = hex[i];
		int v = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (v < 0)
			return -EINVAL;
		if (i % 2)
			key[i / 2] |= v;
		else
			key[i / 2] = v << 4;
	}
	return (int)(n / 2);
}

/*
 * The key file: a regular file of ours that nobody else may read or
 * write, holding the key in hex (a final newline is allowed).
 */
static int rmawin_read_key_file(const char *path, uint8_t *key, size_t size)
{
	char buf[2 * RMAWIN_JOB_KEY_MAX + 2];
	struct stat st;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		ret = -EACCES;
		goto out_close;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		ret = -errno;
		goto out_close;
	}
	if ((size_t)n == sizeof(buf)) {
		ret = -EINVAL;
		goto out_wipe;
	}
	if (n && buf[n - 1] == '\n')
		n--;
	ret = rmawin_parse_hex_key(buf, n, key, size);
out_wipe:
	explicit_bzero(buf, sizeof(buf));
out_close:
	close(fd);
	return ret;
}

/**
 * rmawin__env_key() - the job key from the environment
 * @key: filled with the key
 * @size: room at @key, at least RMAWIN_JOB_KEY_MAX
 *
 * RMAWIN_JOB_KEY holds it in hex (32 to 128 digits); else
 * RMAWIN_JOB_KEY_FILE names a file that holds it so, readable and writable
 * by its owner alone, who must be us.
 *
 * Return: the key's length in bytes, 0 if neither variable is set,
 * -EINVAL for a malformed key, -EACCES for a file others may read or that
 * is not ours, another -errno if the file cannot be read.
 */
int rmawin__env_key(uint8_t *key, size_t size)
{
	const char *hex = getenv("RMAWIN_JOB_KEY"), *file = getenv("RMAWIN_JOB_KEY_FILE");

	if (hex && *hex)
		return rmawin_parse_hex_key(hex, strlen(hex), key, size);
	if (file && *file)
		return rmawin_read_key_file(file, key, size);
	return 0;
}
