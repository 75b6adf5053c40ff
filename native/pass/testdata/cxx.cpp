// C++: methods (demangled names), calls through invoke, a hooked call inside try.
#include <libpmem.h>
#include <stdexcept>

namespace kv {
struct Node {
	long key, value;
	void set(long k, long v);
};

void Node::set(long k, long v) {
	key = k; // want: store
	value = v; // want: store
	pmem_persist(this, sizeof(*this)); // want: libcall=pmem_persist
}

void may_throw(long k);

long update(Node *n, long k) {
	try {
		may_throw(k); // want: call=kv::may_throw(long)
		pmem_persist(n, sizeof(*n)); // want: libcall=pmem_persist
		n->set(k, k); // inlined at -O2
	} catch (const std::exception &) {
		return -1;
	}
	return n->key; // want: load
}
} // namespace kv
