// skiplist-size.cpp: a C++ list in PM keeps its element count in a std::atomic that recovery
// recomputes, so its increments are never flushed; like libpmemobj-cpp's concurrent skip list
// (concurrent_skip_list_impl.hpp), it declares them flushed to pmemcheck with
// VALGRIND_PMC_DO_FLUSH under libpmemobj-cpp's macro LIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED, and
// includes the headers as libpmemobj-cpp does (<valgrind.h>, then <pmemcheck.h>). Usage:
// skiplist-size POOL
#include <atomic>
#include <cstdint>
#include <libpmem.h>
#if LIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED
#include <valgrind.h>
#include <pmemcheck.h>
#endif

struct list {
	uint64_t keys[8];
	alignas(64) std::atomic<uint64_t> size;
};

static void insert(list *l, uint64_t key)
{
	uint64_t n = l->size.load();
	l->keys[n] = key;
	pmem_persist(&l->keys[n], sizeof(l->keys[n]));
	++l->size;
#if LIBPMEMOBJ_CPP_VG_PMEMCHECK_ENABLED
	VALGRIND_PMC_DO_FLUSH(&l->size, sizeof(l->size));
#endif
}

int main(int argc, char *argv[])
{
	if (argc != 2)
		return 2;
	size_t len;
	auto *l = static_cast<list *>(pmem_map_file(argv[1], 4096, PMEM_FILE_CREATE, 0600, &len, nullptr));
	if (l == nullptr)
		return 1;
	for (uint64_t k = 1; k <= 3; k++)
		insert(l, k);
	pmem_drain();
	pmem_unmap(l, len);
	return 0;
}
