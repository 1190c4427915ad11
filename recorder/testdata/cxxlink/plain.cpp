// plain.cpp — compiled as C++ but with C linkage and no use of the C++
// library: a C driver links it.
extern "C" int plain_add(int a, int b) { return a + b; }
