/* sighandlers.c: a program with a SIGSEGV handler of its own, which the runtime's handler must
 * not let replace it (writer.c, "the program's own handlers"). Usage: sighandlers POOL MODE, with
 * MODE the way the handler is installed: sigaction (SA_SIGINFO), signal (BSD semantics) or sysv
 * (sysv_signal: one-shot). POOL is mapped as PM through SCRY_PM_GLOBS, so that it is write-
 * protected and its first write on each page faults. The PM writes must not reach the program's
 * handler; a genuine fault (a PROT_NONE page) must, once; the handler the program gets back when
 * it restores the default is its own. Exit 0, or the number of the check that failed. */
#include <setjmp.h>
#include <signal.h>

#include "common.h"

enum { S_MMAP, S_MUNMAP, N_SITES };
static const struct scry_site sites[N_SITES] = {
	SITE(SCRY_SITE_LIBCALL, "main", 1, "mmap"),
	SITE(SCRY_SITE_LIBCALL, "main", 2, "munmap"),
};

static sigjmp_buf env;
static volatile sig_atomic_t faults;
static void *volatile fault_addr;

static void on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(env, 1);
}

static void on_segv_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	fault_addr = si->si_addr;
	on_segv(sig);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 100;
	const char *mode = argv[2];
	uint32_t b = __scry_register_module(sites, N_SITES);
	const size_t len = 3 * 4096;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
		return 100;
	char *pm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	__scry_post_mmap(b + S_MMAP, pm, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pm == MAP_FAILED)
		return 100;
	char *guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED)
		return 100;

	/* 1: install the handler; 2: asking for the action gives it back. */
	struct sigaction sa, cur;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	if (strcmp(mode, "sigaction") == 0) {
		sa.sa_sigaction = on_segv_info;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(SIGSEGV, &sa, NULL) != 0)
			return 1;
	} else if (strcmp(mode, "signal") == 0) {
		if (signal(SIGSEGV, on_segv) == SIG_ERR)
			return 1;
	} else if (strcmp(mode, "sysv") == 0) {
		if (sysv_signal(SIGSEGV, on_segv) == SIG_ERR)
			return 1;
	} else {
		return 100;
	}
	if (sigaction(SIGSEGV, NULL, &cur) != 0 ||
	    (cur.sa_flags & SA_SIGINFO ? (void *)cur.sa_sigaction != (void *)on_segv_info : (void *)cur.sa_handler != (void *)on_segv))
		return 2;

	/* 3: writes into protected PM are the runtime's faults, not the program's. */
	if (sigsetjmp(env, 1) == 0) {
		pm[0] = 'a';
		pm[4096] = 'b';
	}
	if (faults != 0)
		return 3;

	/* 4: a genuine fault (SEGV_ACCERR, as the runtime's own) reaches the program's handler. */
	if (sigsetjmp(env, 1) == 0) {
		*(volatile char *)guard = 1;
		return 4;
	}
	if (faults != 1 || (strcmp(mode, "sigaction") == 0 && fault_addr != guard))
		return 4;

	/* 5: restoring the default gives back the program's handler (SIG_DFL for the one-shot
	 * sysv_signal, which the fault reset). */
	void *want = strcmp(mode, "sigaction") == 0 ? (void *)on_segv_info : strcmp(mode, "signal") == 0 ? (void *)on_segv : (void *)SIG_DFL;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &cur) != 0 ||
	    (cur.sa_flags & SA_SIGINFO ? (void *)cur.sa_sigaction : (void *)cur.sa_handler) != want)
		return 5;

	/* 6: with the default action, PM writes still work. */
	pm[2 * 4096] = 'c';
	__scry_pre_munmap(b + S_MUNMAP, pm, len);
	munmap(pm, len);
	return 0;
}
