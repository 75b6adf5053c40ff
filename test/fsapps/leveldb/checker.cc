// LevelDB checker for the file-system corpus: run inside a crash directory, it opens db/ with
// LevelDB itself, as an application does (default Options: recovery drops a torn record at the
// log's tail; reads verify checksums), and checks that
//   - the store opens and every key it holds has its value (no torn or foreign value);
//   - init0..init2 (the initial state) are all there;
//   - every key the driver acknowledged ("ack KEY" in $SCRY_STDOUT) is there.
// Exit 0: consistent; 1: not, with the reason on standard output.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <leveldb/db.h>

#include "common.h"

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
		if (it->value().ToString() != value_of(k)) {
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
	for (int i = 0; i < NKEYS; i++) {
		std::string k = "init" + std::to_string(i);
		if (!present.count(k)) {
			printf("initial key %s lost\n", k.c_str());
			return 1;
		}
	}
	const char *out = getenv("SCRY_STDOUT");
	if (out == nullptr) {
		printf("SCRY_STDOUT is not set\n");
		return 1;
	}
	std::ifstream f(out);
	std::string word, key;
	while (f >> word >> key) {
		if (word == "ack" && !present.count(key)) {
			printf("acknowledged key %s lost\n", key.c_str());
			return 1;
		}
	}
	return 0;
}
