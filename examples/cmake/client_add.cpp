// client_add.cpp — record_hits of cache_demo_ok, the correct twin of
// client_split.cpp: Cache::add reads and writes the count in one critical
// section. Nothing should be reported.
#include "cache.hpp"

namespace svc {

void record_hits(int page, long n)
{
	g_cache.add(page, n);
}

} // namespace svc
