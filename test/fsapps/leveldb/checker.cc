// LevelDB checker for the file-system corpus: run inside a crash directory, it opens db/ with
// LevelDB itself, as an application does (default Options: recovery drops a torn record at the
// log's tail; reads verify checksums; with LEVELDB_PARANOID set, paranoid_checks, as ALICE's
// checker had: a torn record fails the open), and checks that
//   - the store opens and every key it holds has its value (no torn or foreign value);
//   - init0..init2 (the initial state) are all there;
//   - every key the driver acknowledged ("ack KEY" in $SCRY_STDOUT) is there.
// Exit 0: consistent; 1: not, with the reason on standard output.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include <leveldb/db.h>

#include "../kv.h"

int main()
{
	leveldb::Options opt;
	opt.paranoid_checks = getenv("LEVELDB_PARANOID") != nullptr;
	leveldb::DB *db;
	leveldb::Status s = leveldb::DB::Open(opt, "db", &db);
	if (!s.ok()) {
		printf("open: %s\n", s.ToString().c_str());
		return 1;
	}
	std::set<std::string> present;
	leveldb::ReadOptions ro;
	ro.verify_checksums = true;
	leveldb::Iterator *it = db->NewIterator(ro);
	for (it->SeekToFirst(); it->Valid(); it->Next()) {
		std::string k = it->key().ToString();
		char want[VALUE_SIZE];
		value_of(k.c_str(), want);
		if (it->value().ToString() != std::string(want, VALUE_SIZE)) {
			printf("key %s has a wrong value\n", k.c_str());
			return 1;
		}
		present.insert(k);
	}
	if (!it->status().ok()) {
		printf("iterate: %s\n", it->status().ToString().c_str());
		return 1;
	}
	delete it;
	delete db;
	return check_keys(
	    [](void *arg, const char *key, int *found) {
		    *found = static_cast<std::set<std::string> *>(arg)->count(key) > 0;
		    return 0;
	    },
	    &present);
}
