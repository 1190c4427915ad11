// client_split.cpp — record_hits of cache_demo, with an atomicity
// violation: it reads the page's count with one call of the cache and
// writes the sum with another, two critical sections. Each is locked; the
// two together are not: a client whose lookup comes between another's
// lookup and insert reads the old count, and one of the two clients'
// hits is lost (P3, a lost update of the page's entry). In the recorded
// run the second client starts 20 ms after the first and nothing is lost;
// mcpredict predicts the lost update, and mcpredict reproduce makes it
// happen.
#include "cache.hpp"

namespace svc {

void record_hits(int page, long n)
{
	long v = g_cache.lookup(page);
	g_cache.insert(page, v + n);
}

} // namespace svc
