// Shared by the LevelDB driver and checker: how many keys each phase writes and the value each
// key holds (long enough that a torn write shows, short enough to keep the run small).
#include <string>

enum { NKEYS = 3 };

static inline std::string value_of(const std::string &key)
{
	std::string v;
	while (v.size() < 200)
		v += "value-of-" + key + ";";
	return v;
}
