// atomic-counter (fixed): the same C++ append-only log in PM with a std::atomic length; the
// counter is persisted after each increment, so every acknowledged entry is counted after a
// crash.
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
		++count;
		pmem_persist(&count, sizeof(count));
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
