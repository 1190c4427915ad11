// cxx_cache_hits_ok.cpp — the page cache of cxx_cache_hits.cpp, a
// std::unordered_map<std::string, long> of hit counts guarded by a
// std::mutex, with the hit counted in one lock scope: hit() looks the page
// up (inserting 0 when it is missing) and increments its count under one
// lock_guard. Correct: no hit is lost under any schedule.
//
// mcpredict:args 3
// mcpredict:expect none
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
	long hit(const std::string &page);
	long lookup(const std::string &page);

private:
	std::mutex m_;
	std::unordered_map<std::string, long> hits_;
};

long HitCache::hit(const std::string &page)
{
	std::lock_guard<std::mutex> lock(m_);
	return ++hits_[page]; // looked up and counted in one lock scope
}

long HitCache::lookup(const std::string &page)
{
	std::lock_guard<std::mutex> lock(m_);
	auto it = hits_.find(page);
	return it == hits_.end() ? 0 : it->second;
}

static HitCache cache;

static void client(std::string page, int requests)
{
	for (int i = 0; i < requests; i++)
		cache.hit(page);
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
