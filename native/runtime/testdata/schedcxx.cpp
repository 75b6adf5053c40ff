// schedcxx.cpp: the C++ standard library's threads under the controlled scheduler, for
// sched_test.go: std::thread, std::mutex and std::condition_variable (libstdc++ calls the pthread
// functions), std::promise and std::future, std::atomic's wait and notify (libstdc++ waits with
// futexes through syscall(2)). Usage: schedcxx POOL (a new 64 KiB file, registered as PM).
// Prints the future's value, the atomic count and the last thread's PM store.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <scry.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

struct Pool {
	long v[8];
};

static Pool *pm;
static std::mutex mu;
static std::condition_variable cv;
static bool ready;

int main(int argc, char **argv)
{
	if (argc < 2)
		return 100;
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 1 << 16) < 0)
		return 100;
	pm = static_cast<Pool *>(mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	if (pm == MAP_FAILED)
		return 100;
	SCRY_REGISTER_PM(pm, 1 << 16, argv[1]);

	std::atomic<int> count{0};
	std::promise<long> promise;
	std::future<long> future = promise.get_future();
	std::thread waiter([&] {
		std::unique_lock<std::mutex> l(mu);
		cv.wait(l, [] { return ready; });
		pm->v[0] = 1;
		promise.set_value(pm->v[0] + 41);
	});
	std::thread notifier([&] {
		for (int i = 0; i < 100; i++)
			count.fetch_add(1);
		{
			std::lock_guard<std::mutex> g(mu);
			ready = true;
			pm->v[1] = 2;
		}
		cv.notify_all();
	});
	long got = future.get();
	waiter.join();
	notifier.join();

	std::atomic<int> flag{0};
	std::thread last([&] {
		pm->v[2] = 3;
		flag.store(1);
		flag.notify_one();
	});
	flag.wait(0);
	last.join();
	std::printf("%ld %d %ld\n", got, count.load(), pm->v[2]);
	return 0;
}
