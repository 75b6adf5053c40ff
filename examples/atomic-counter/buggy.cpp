// atomic-counter (buggy): a C++ append-only log in PM whose length is a std::atomic counter,
// incremented with ++ (the store happens inside libstdc++'s <atomic>, bits/atomic_base.h). Each
// entry is persisted before the counter counts it, but the counter itself is never flushed: the
// log may come back shorter than acknowledged. scry reports the increment at this file's line,
// the frame the program wrote, not inside the system header.
// scry: pm *.pool
// scry: args {pool}
// scry: opt -O0 -O2
#include <atomic>
#include <cstdint>

#include "example.h"

template <typename T, int N>
struct plog {
	alignas(64) std::atomic<uint64_t> count; // cache line 0
	alignas(64) T items[N];                  // from cache line 1

	bool append(const T &v)
	{
		uint64_t n = count.load(std::memory_order_acquire);
		if (n == N)
			return false;
		items[n] = v;
		pmem_persist(&items[n], sizeof(T));
		++count; // want "unpersisted-store"
		return true;
	}
};

int main(int argc, char *argv[])
{
	using log_t = plog<uint64_t, 8>;
	auto *log = static_cast<log_t *>(example_pmem(argc, argv, sizeof(log_t), nullptr));
	log->append(100);
	pmem_unmap(log, sizeof(log_t));
	return 0;
}
