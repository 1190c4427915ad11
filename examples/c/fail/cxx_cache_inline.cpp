// cxx_cache_inline.cpp — the page cache of ../cxx_cache_hits.cpp written
// header-only: the members are defined in the class, so the compiler
// inlines them into the client. A client looks its page's count up in one
// lock scope (lookup()) and inserts count + 1 in a second one (insert()):
// another client's hit in between is lost. Bug: lost update; main asserts
// that every hit was counted (SIGABRT). Two clients of one page, the
// second started 20 ms after the first, so the recorded run loses nothing.
//
// `mcpredict run` does not predict it: both lock_guards are inlined into
// client(), and the recorder writes each Lock at the library's line,
// gthr-default.h:749, for both scopes. The region-scope rule takes the
// second scope's Lock, the same action, location and mutex as the first
// one in the same invocation, for the next iteration of a loop, and ends
// the region between the read and the write (found with --no-scope; with
// the members defined out of the class, ../cxx_cache_hits.cpp, it is
// predicted). The directed runs expose it: a relaxed model predicts the
// lost update and holding a client between the two scopes fails main's
// check.
//
// mcpredict:args 3 20000
// mcpredict:expect none
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
	long lookup(const std::string &page)
	{
		std::lock_guard<std::mutex> lock(m_);
		auto it = hits_.find(page);
		return it == hits_.end() ? 0 : it->second; // @read: BUG, the count read in one lock scope ...
	}
	void insert(const std::string &page, long hits)
	{
		std::lock_guard<std::mutex> lock(m_);
		hits_[page] = hits; // @write: ... and written back in another
	}

private:
	std::mutex m_;
	std::unordered_map<std::string, long> hits_;
};

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
