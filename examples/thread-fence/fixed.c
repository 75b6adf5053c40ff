// thread-fence (fixed): the worker thread fences after its own clwb, so its value is durable
// before it returns; main() then writes, writes back and fences a value of its own. Both fences
// are needed: each orders only the write-backs of its own thread, so neither is redundant.
// scry: pm *.pool
// scry: args {pool}
#include <fcntl.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

struct pair {
	_Alignas(64) uint64_t worker; /* cache line 0 */
	_Alignas(64) uint64_t main;   /* cache line 1 */
};

static void *work(void *arg)
{
	struct pair *p = arg;
	p->worker = 42;
	_mm_clwb(&p->worker);
	_mm_sfence();
	return NULL;
}

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL\n", argv[0]);
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror(argv[1]);
		return 1;
	}
	struct pair *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, work, p) != 0 || pthread_join(t, NULL) != 0) {
		fprintf(stderr, "thread failed\n");
		return 1;
	}
	p->main = 7;
	_mm_clwb(&p->main);
	_mm_sfence();

	munmap(p, 4096);
	close(fd);
	return 0;
}
