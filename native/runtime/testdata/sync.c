/* sync.c: synchronization the runtime records as SYNC records. Usage: sync one|two
 * one: a single thread locks and unlocks a mutex and increments an atomic counter (no SYNC).
 * two: a second thread does the same, the first joins it, then locks and unlocks the mutex. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long counter;
static long shared;

static void *work(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	shared++;
	atomic_fetch_add(&counter, 1);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	if (strcmp(argv[1], "one") == 0) {
		work(NULL);
	} else {
		pthread_t th;
		if (pthread_create(&th, NULL, work, NULL) != 0 || pthread_join(th, NULL) != 0)
			return 1;
		pthread_mutex_lock(&mu);
		shared++;
		pthread_mutex_unlock(&mu);
	}
	printf("%p %p %ld\n", (void *)&mu, (void *)&counter, shared);
	return 0;
}
