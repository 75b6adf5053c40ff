/* shim.h: included (-include) in every libpmemobj-cpp example the harness builds; declares what
 * the sed substitutions of run.sh put in place of the pool paths fixed in the examples' sources.
 * Defined in lines.cpp. */
#ifndef SCRY_PMEMOBJ_CPP_SHIM_H
#define SCRY_PMEMOBJ_CPP_SHIM_H
const char *scry_shim_pool(void);                /* "example_pool" -> the driver's POOL */
const char *scry_shim_fresh(const char *path);   /* create("poolfile" -> unlinked first */
#endif
