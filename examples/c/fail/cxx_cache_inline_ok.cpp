// cxx_cache_inline_ok.cpp — the header-only page cache of
// cxx_cache_inline.cpp (members defined in the class, inlined into the
// client), with the hit counted in one lock scope: hit() looks the page up
// (inserting 0 when it is missing) and increments its count under one
// lock_guard. Correct: no hit is lost under any schedule or hold.
//
// mcpredict:args 3 20000
// mcpredict:expect none
// mcpredict:reproduce clean
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
	long hit(const std::string &page)
	{
		std::lock_guard<std::mutex> lock(m_);
		return ++hits_[page]; // looked up and counted in one lock scope
	}
	long lookup(const std::string &page)
	{
		std::lock_guard<std::mutex> lock(m_);
		auto it = hits_.find(page);
		return it == hits_.end() ? 0 : it->second;
	}

private:
	std::mutex m_;
	std::unordered_map<std::string, long> hits_;
};

static HitCache cache;

static void client(std::string page, int requests)
{
	for (int i = 0; i < requests; i++)
		cache.hit(page);
}

int main(int argc, char **argv)
{
	int requests = argc > 1 ? atoi(argv[1]) : 3;
	int stagger = argc > 2 ? atoi(argv[2]) : 20000;
	std::thread a(client, "/index.html", requests);
	std::this_thread::sleep_for(std::chrono::microseconds(stagger));
	std::thread b(client, "/index.html", requests);
	a.join();
	b.join();
	long hits = cache.lookup("/index.html");
	std::printf("%ld hits\n", hits);
	assert(hits == 2L * requests);
	return 0;
}
