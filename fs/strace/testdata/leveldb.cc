// A C++ program whose file-system calls are made inside libleveldb (Debian's, stripped: its
// frames have only the symbols strace finds) and inside the program's own templates, lambdas
// and anonymous namespace (built with -g: its frames have source lines).
#include <leveldb/db.h>

#include <cstdio>
#include <functional>
#include <string>

namespace {
struct Writer {
  template <typename T> void put(leveldb::DB *db, T key) {
    auto f = [&](int n) { db->Put(leveldb::WriteOptions(), key, std::to_string(n)); };
    std::function<void(int)> g = f;
    g(1);
  }
  void operator()(const char *path) {
    FILE *f = std::fopen(path, "w");
    std::fputs("x\n", f);
    std::fclose(f);
  }
};
}  // namespace

int main() {
  leveldb::DB *db;
  leveldb::Options o;
  o.create_if_missing = true;
  leveldb::Status s = leveldb::DB::Open(o, "db", &db);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  Writer w;
  w.put(db, std::string("k"));
  w("plain.txt");
  delete db;
  return 0;
}
