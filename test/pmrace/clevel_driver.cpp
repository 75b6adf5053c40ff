/*
 * clevel_driver.cpp: scry's two-thread driver for Clevel hashing (chenzhangyu/Clevel-Hashing,
 * with PMRace's patch), in place of PMRace's tests/clevel_hash/clevel_hash_ycsb.cpp
 * (test/pmrace/pmrace.sh says why). The map type, hasher, layout name and pool set-up are those
 * of PMRace's driver: open the pool if it exists and its root holds a map, else create it and
 * make the map in a transaction with set_thread_num(2). Commands (PMRace's letters; keys and
 * values are strings):
 *   i K V  insert(value_type(K, V), tid, 0)   prints "i K <ret.found>"
 *   s K    search(K)                          prints "s K <ret.found>"
 *   u K V  update(value_type(K, V), tid)      prints "u K <ret.found>"
 *   e K    erase(K, tid)                      prints "e K <ret.found>"
 * The map's constructor starts its background expansion thread; PMRace's driver stops it at the
 * end with the destructor. A reopened map has no such thread and its std::thread member, kept in
 * PM, is stale, so the destructor is called only in the run that created the map.
 * Usage: clevel_driver POOL < workload
 */
#include <libpmemobj++/make_persistent.hpp>
#include <libpmemobj++/p.hpp>
#include <libpmemobj++/persistent_ptr.hpp>
#include <libpmemobj++/pool.hpp>
#include <libpmemobj++/transaction.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#include "polymorphic_string.h"
#include <libpmemobj++/experimental/clevel_hash.hpp>

#include "pmrace_rounds.h"

#define LAYOUT "clevel_hash"
#define HASH_POWER 12

namespace nvobj = pmem::obj;

namespace
{
class key_equal {
public:
	template <typename M, typename U>
	bool operator()(const M &lhs, const U &rhs) const { return lhs == rhs; }
};
class string_hasher {
	static const size_t hash_multiplier = 11400714819323198485ULL;

public:
	using transparent_key_equal = key_equal;
	size_t operator()(const polymorphic_string &str) const
	{
		size_t h = 0;
		for (size_t i = 0; i < str.size(); ++i)
			h = static_cast<size_t>(str.c_str()[i]) ^ (h * hash_multiplier);
		return h;
	}
};
typedef nvobj::experimental::clevel_hash<polymorphic_string, polymorphic_string, string_hasher,
					 std::equal_to<polymorphic_string>, HASH_POWER>
	persistent_map_type;
struct root {
	nvobj::persistent_ptr<persistent_map_type> cons;
};
}

static nvobj::persistent_ptr<persistent_map_type> map;

static void op(int tid, const char *line, char *out, size_t n)
{
	char c, kb[64] = "", vb[64] = "";
	if (sscanf(line, " %c %63s %63s", &c, kb, vb) < 2) {
		snprintf(out, n, "bad line\n");
		return;
	}
	std::string k(kb), v(vb);
	switch (c) {
	case 'i':
		snprintf(out, n, "i %s %d\n", kb,
			 map->insert(persistent_map_type::value_type(k, v), tid, 0).found);
		break;
	case 's':
		snprintf(out, n, "s %s %d\n", kb, map->search(persistent_map_type::key_type(k)).found);
		break;
	case 'u':
		snprintf(out, n, "u %s %d\n", kb,
			 map->update(persistent_map_type::value_type(k, v), tid).found);
		break;
	case 'e':
		snprintf(out, n, "e %s %d\n", kb, map->erase(persistent_map_type::key_type(k), tid).found);
		break;
	default: snprintf(out, n, "bad op %c\n", c);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s POOL < workload\n", argv[0]);
		return 2;
	}
	nvobj::pool<root> pop;
	bool created = false;
	if (access(argv[1], F_OK) == 0) {
		pop = nvobj::pool<root>::open(argv[1], LAYOUT);
		if (pop.root()->cons == nullptr) {
			fprintf(stderr, "the pool has no map\n");
			return 1;
		}
	} else {
		/* PMRace's driver: PMEMOBJ_MIN_POOL * 16 */
		pop = nvobj::pool<root>::create(argv[1], LAYOUT, PMEMOBJ_MIN_POOL * 2, S_IWUSR | S_IRUSR);
		nvobj::transaction::run(pop, [&] {
			pop.root()->cons = nvobj::make_persistent<persistent_map_type>();
			pop.root()->cons->set_thread_num(2);
		});
		created = true;
	}
	map = pop.root()->cons;
	pmrace_run(op, NULL);
	if (created)
		map->~clevel_hash();
	pop.close();
	return 0;
}
