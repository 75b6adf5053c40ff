// kvstore: a fixed table of key-value slots in a file mapped with libpmem.
#pragma once

#include <cstdint>
#include <string>

class KVStore {
public:
	// Opens (creating it, 4 KiB) the pool at path; throws std::runtime_error on failure.
	explicit KVStore(const std::string &path);
	~KVStore();
	KVStore(const KVStore &) = delete;
	KVStore &operator=(const KVStore &) = delete;

	// Stores value under key (slot key % slots); the slot is valid once put returns.
	void put(std::uint64_t key, std::uint64_t value);

private:
	struct Slot;
	Slot *slots_;
	std::size_t mapped_;
};
