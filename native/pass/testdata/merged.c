// A store sunk out of both arms of an if at -O1 and above gets a merged debug location of line 0
// (TestMergedLocation: line numbers matter).
#include <stdint.h>

struct rec { uint64_t x, y; };
extern uint64_t f(uint64_t), g(uint64_t);

void set(struct rec *p, int c, uint64_t a)
{
	if (c) {
		p->x = f(a);
	} else {
		p->x = g(a);
	}
	p->y = 1;
}
