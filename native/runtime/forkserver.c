//go:build ignore

/*
 * forkserver.c: a fork server for crash-image re-executions (docs/crash-exploration.md, "Fork
 * server").
 *
 * Crash exploration runs the program hundreds of times a second, each time on another image
 * with another standard input. A run of a PMDK program spends a fifth of its time before main:
 * exec, the dynamic loader, libpmemobj's and libpmem's constructors. With SCRY_FORKSRV_FD=N in
 * its environment (N a connected unix stream socket), the program instead stops just before
 * main, in the last constructor of the executable (the runtime is linked after the program's
 * objects, and constructors without a priority run in link order), and serves runs: for each
 * request it forks a child that takes the request's standard input, output and error, replaces
 * its arguments and returns into main; the server reports the child's pid, waits for it, kills
 * what is left of its process group, and reports how it ended. The program's pre-main work is
 * done once per server instead of once per run.
 *
 * Protocol (little-endian u32 fields), scry's side in internal/exec/forkserver.go:
 *   server -> scry, once:  "SCRYFSV1", u32 pid
 *   scry -> server:        u32 magic 0x53524651 ("QFRS"), u32 argc, then argc-1 strings (u32
 *                          length, bytes) replacing argv[1..argc-1], then a string for the
 *                          run's tag: one or more NAME=VALUE assignments separated by NUL
 *                          bytes, each put in the child's environment (scry sends SCRY_RUN_ID or
 *                          SCRY_LAZY first, then SCRY_CONVERGE for a converging run), with three
 *                          file descriptors (stdin, stdout, stderr) attached as SCM_RIGHTS to
 *                          the first byte
 *   server -> scry:        u32 pid of the child (0: the fork failed, then u32 errno)
 *   server -> scry:        u32 wait status of the child (as waitpid returns it)
 * A request whose argc is not the program's gets the pid 0 and errno EINVAL. The server exits
 * when scry closes its end of the socket.
 *
 * The server only starts when the runtime is inert (SCRY_INERT=1: no trace, so nothing is
 * shared between runs but what the program did before main) and the process has one thread
 * (fork copies only the calling thread).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt.h"

#define FS_HELLO "SCRYFSV1"
#define FS_MAGIC 0x53524651u
#define FS_MAX_STR (1u << 20)

extern char __libc_single_threaded __attribute__((weak));

int rt_full_write(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int full_read(int fd, void *p, size_t n)
{
	char *c = p;
	while (n > 0) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static int put_u32(int fd, uint32_t v)
{
	unsigned char b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
	return rt_full_write(fd, b, 4);
}

static int get_u32(int fd, uint32_t *v)
{
	unsigned char b[4];
	if (full_read(fd, b, 4) < 0)
		return -1;
	*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return 0;
}

/* Reads a string (u32 length, bytes) into a new NUL-terminated buffer, or NULL; its length in
 * *len when len is not NULL (the string may hold NUL bytes). */
static char *get_str(int fd, uint32_t *len)
{
	uint32_t n;
	if (get_u32(fd, &n) < 0 || n > FS_MAX_STR)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	if (full_read(fd, s, n) < 0) {
		free(s);
		return NULL;
	}
	s[n] = 0;
	if (len)
		*len = n;
	return s;
}

/* Receives the request's first 4 bytes (the magic) with its three descriptors. */
static int recv_head(int sock, uint32_t *magic, int fds[3])
{
	unsigned char b[4];
	char ctl[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {b, 4};
	struct msghdr m = {0};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl;
	m.msg_controllen = sizeof ctl;
	ssize_t r;
	do
		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;
	if (r < 4 && full_read(sock, b + r, 4 - (size_t)r) < 0)
		return -1;
	fds[0] = fds[1] = fds[2] = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(3 * sizeof(int)))
			memcpy(fds, CMSG_DATA(c), 3 * sizeof(int));
	*magic = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return 0;
}

/* Puts the tag's NAME=VALUE assignments, separated by NUL bytes, in the environment (a piece
 * without '=' or with an empty name is skipped). */
static void set_tag(char *tag, uint32_t len)
{
	for (char *s = tag, *end = tag + len; s < end; s += strlen(s) + 1) {
		char *eq = strchr(s, '=');
		if (eq && eq > s) {
			*eq = 0;
			setenv(s, eq + 1, 1);
		}
	}
}

/* Serves runs until scry closes the socket; returns only in a child, ready to run main, with
 * SIGPIPE's disposition restored to pipe_action. */
static void serve(int sock, int argc, char **argv, const struct sigaction *pipe_action)
{
	for (;;) {
		uint32_t magic, n;
		int fds[3];
		if (recv_head(sock, &magic, fds) < 0 || magic != FS_MAGIC || get_u32(sock, &n) < 0)
			_exit(0);
		int ok = n == (uint32_t)argc && fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0;
		char **args = calloc(n > 0 ? n : 1, sizeof *args);
		for (uint32_t i = 1; i < n && args; i++)
			if (!(args[i] = get_str(sock, NULL)))
				_exit(0);
		uint32_t tag_len;
		char *tag = get_str(sock, &tag_len);
		if (!tag || !args)
			_exit(0);
		pid_t pid = ok ? fork() : -1;
		if (pid == 0) {
			close(sock);
			setpgid(0, 0);
			for (int i = 0; i < 3; i++)
				if (dup2(fds[i], i) < 0)
					_exit(127);
			for (int i = 0; i < 3; i++)
				if (fds[i] > 2)
					close(fds[i]);
			for (int i = 1; i < argc; i++)
				argv[i] = args[i];
			set_tag(tag, tag_len);
			unsetenv("SCRY_FORKSRV_FD");
			lazy_reset();     /* the tag may hold SCRY_LAZY=D */
			converge_reset(); /* or SCRY_CONVERGE=... */
			sigaction(SIGPIPE, pipe_action, NULL);
			return; /* into main */
		}
		int err = errno;
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		for (uint32_t i = 1; i < n; i++)
			free(args[i]);
		free(args);
		free(tag);
		if (pid < 0) {
			if (put_u32(sock, 0) < 0 || put_u32(sock, ok ? (uint32_t)err : EINVAL) < 0)
				_exit(0);
			continue;
		}
		setpgid(pid, pid); /* also here: no race with scry killing the group early */
		if (put_u32(sock, (uint32_t)pid) < 0) {
			kill(-pid, SIGKILL);
			_exit(0);
		}
		/* Wait without reaping, so that the group id cannot be reused, kill the group's
		 * leftovers, then reap. */
		siginfo_t si;
		while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
		kill(-pid, SIGKILL);
		int status = 0;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (put_u32(sock, (uint32_t)status) < 0)
			_exit(0);
	}
}

/* The executable's last constructor (no priority: after the program's own). */
__attribute__((constructor)) static void forkserver_ctor(int argc, char **argv, char **envp)
{
	(void)envp;
	const char *v = getenv("SCRY_FORKSRV_FD");
	if (!v || !*v)
		return;
	char *end;
	long fd = strtol(v, &end, 10);
	const char *inert = getenv("SCRY_INERT");
	if (*end || fd < 3 || fd > 1 << 20 || !inert || strcmp(inert, "1") != 0 ||
	    (&__libc_single_threaded != NULL && !__libc_single_threaded)) {
		/* Not a server: run as usual (scry sees no hello and runs the program by exec). */
		unsetenv("SCRY_FORKSRV_FD");
		return;
	}
	int sock = (int)fd;
	/* A write to a closed socket is scry gone: the write fails and the server exits. */
	struct sigaction ign = {0}, old;
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	if (rt_full_write(sock, FS_HELLO, 8) < 0 || put_u32(sock, (uint32_t)getpid()) < 0)
		_exit(0);
	serve(sock, argc, argv, &old);
}

/* The mark scry looks for (internal/exec/forkserver.go) before it starts a program as a fork server. */
__attribute__((used)) const char __scry_forkserver_protocol[] = FS_HELLO;
