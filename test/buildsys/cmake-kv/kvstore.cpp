// kvstore (buggy): put writes a slot's value, then its key and valid flag on the next cache line,
// and persists only that line: the value may never reach PM though the slot says it is valid.
#include "kvstore.h"

#include <libpmem.h>

#include <mutex>
#include <stdexcept>

struct KVStore::Slot {
	alignas(64) std::uint64_t value; // cache line 0
	alignas(64) std::uint64_t key;   // cache line 1
	std::uint64_t valid;
};

namespace {
constexpr std::size_t poolSize = 4096;
std::mutex lock; // one writer at a time
} // namespace

KVStore::KVStore(const std::string &path)
{
	int is_pmem;
	void *p = pmem_map_file(path.c_str(), poolSize, PMEM_FILE_CREATE, 0644, &mapped_, &is_pmem);
	if (!p)
		throw std::runtime_error(path + ": " + pmem_errormsg());
	slots_ = static_cast<Slot *>(p);
}

KVStore::~KVStore() { pmem_unmap(slots_, mapped_); }

void KVStore::put(std::uint64_t key, std::uint64_t value)
{
	std::lock_guard<std::mutex> guard(lock);
	Slot &s = slots_[key % (mapped_ / sizeof(Slot))];
	s.value = value; // want "unpersisted-store"
	s.key = key;
	s.valid = 1;
	pmem_persist(&s.key, sizeof s.key + sizeof s.valid);
}
