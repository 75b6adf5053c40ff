/*
 * valgrind.h: a fallback that makes `#include <valgrind.h>` name Debian's Valgrind header
 * (/usr/include/valgrind/valgrind.h). Installed as build/include/scry-compat/valgrind.h, searched
 * after every other include directory (-idirafter) by `scry cc` when Valgrind is installed:
 * code annotated for pmemcheck, such as libpmemobj-cpp's, includes valgrind.h without its
 * directory, which the build systems of those projects add for pmemcheck (docs/pmemcheck.md).
 * A project's own valgrind.h, or a -I to Valgrind's directory, is found first.
 */
#include <valgrind/valgrind.h>
