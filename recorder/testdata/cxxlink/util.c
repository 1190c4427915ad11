/* util.c — a C object: a link of it alone needs no C++ library. */
int util_twice(int x) { return 2 * x; }
