// Arm's persistence instructions as a program writes them (built for aarch64 by TestArm).
#include <stdatomic.h>
#include <stdint.h>

static inline void cvap(volatile void *p) { __asm__ volatile("dc cvap, %0" : : "r"(p) : "memory"); }
static inline void cvadp(volatile void *p) { __asm__ volatile("dc cvadp, %0" : : "r"(p) : "memory"); }
static inline void cvac(volatile void *p) { __asm__ volatile("DC CVAC, %0" : : "r"(p) : "memory"); }
static inline void civac(volatile void *p) { __asm__ volatile("dc civac, %0" : : "r"(p) : "memory"); }
static inline void cvau(volatile void *p) { __asm__ volatile("dc cvau, %0" : : "r"(p) : "memory"); }

void persist_all(uint64_t *p)
{
	p[0] = 1;
	cvap(p);
	__asm__ volatile("dsb ish" : : : "memory");
	p[8] = 2;
	cvadp(p + 8);
	__asm__ volatile("dmb ishst" : : : "memory");
	p[16] = 3;
	cvac(p + 16);
	__asm__ volatile("dmb ishld" : : : "memory"); /* load-only: orders no clean */
	civac(p + 16);
	__asm__ volatile("dsb sy" : : : "memory");
	cvau(p + 24); /* to the point of unification: not a clean to memory */
	atomic_thread_fence(memory_order_release); /* dmb ish */
	atomic_thread_fence(memory_order_acquire); /* dmb ishld */
}

/* A PMEMoid passes by value as [2 x i64] on aarch64: its libpmemobj calls are still hooked. */
#include <libpmemobj.h>

PMEMoid add_and_alloc(PMEMoid oid)
{
	pmemobj_tx_add_range(oid, 0, 8);
	return pmemobj_tx_alloc(64, 1);
}
