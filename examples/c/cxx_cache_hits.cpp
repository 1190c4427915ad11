// cxx_cache_hits.cpp — a page cache's hit counts in a
// std::unordered_map<std::string, long> guarded by a std::mutex. A client
// looks its page's count up in one lock scope (lookup()) and inserts
// count + 1 in a second one (insert()): another client's hit that lands in
// between is lost. Two clients of one page, the second started 20 ms after
// the first, so the recorded run loses nothing; main asserts that every
// hit was counted (SIGABRT when one was lost).
//
// The members are defined out of the class, as in a header and its .cpp.
//
// mcpredict:args 3
// mcpredict:expect P3 __hashtable._M_rehash_policy._M_next_resize(new@new_allocator.h:137#1) local:Read@read remote:Write@write local:Write@write
// mcpredict:notexhibited __hashtable._M_rehash_policy._M_next_resize(new@new_allocator.h:137#1)
// mcpredict:reproduce failed
// mcpredict:window HitCache::lookup@read HitCache::insert@write
#undef NDEBUG
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

class HitCache {
public:
	long lookup(const std::string &page);
	void insert(const std::string &page, long hits);

private:
	std::mutex m_;
	std::unordered_map<std::string, long> hits_;
};

long HitCache::lookup(const std::string &page)
{
	std::lock_guard<std::mutex> lock(m_);
	auto it = hits_.find(page);
	return it == hits_.end() ? 0 : it->second; // @read: BUG, the count read in one lock scope ...
}

void HitCache::insert(const std::string &page, long hits)
{
	std::lock_guard<std::mutex> lock(m_);
	hits_[page] = hits; // @write: ... and written back in another
}

static HitCache cache;

static void client(std::string page, int requests)
{
	for (int i = 0; i < requests; i++) {
		long hits = cache.lookup(page);
		cache.insert(page, hits + 1);
	}
}

int main(int argc, char **argv)
{
	int requests = argc > 1 ? atoi(argv[1]) : 3;
	std::thread a(client, "/index.html", requests);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	std::thread b(client, "/index.html", requests);
	a.join();
	b.join();
	long hits = cache.lookup("/index.html");
	std::printf("%ld hits\n", hits);
	assert(hits == 2L * requests);
	return 0;
}
