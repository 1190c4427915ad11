// cxx_cache_entry_ok.cpp — the page statistics of cxx_cache_entry.cpp, a
// struct per page (hits and bytes served) in a
// std::unordered_map<std::string, Entry> guarded by a std::mutex, with a
// request counted in one lock scope: record() finds or inserts the entry
// and adds the hit and the bytes to it in place. Correct: no request is
// lost under any schedule; get() still copies an entry out for main.
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
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

struct Entry {
	long hits = 0;
	long bytes = 0;
};

class PageCache {
public:
	std::optional<Entry> get(const std::string &page);
	void record(const std::string &page, long size);

private:
	std::mutex m_;
	std::unordered_map<std::string, Entry> pages_;
};

std::optional<Entry> PageCache::get(const std::string &page)
{
	std::lock_guard<std::mutex> lock(m_);
	auto it = pages_.find(page);
	if (it == pages_.end())
		return std::nullopt;
	return it->second;
}

void PageCache::record(const std::string &page, long size)
{
	std::lock_guard<std::mutex> lock(m_);
	Entry &e = pages_[page]; // found or inserted, and updated, in one lock scope
	e.hits++;
	e.bytes += size;
}

static PageCache cache;

static void client(std::string page, int requests)
{
	for (int i = 0; i < requests; i++)
		cache.record(page, 512);
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
	Entry e = cache.get("/index.html").value_or(Entry{});
	std::printf("%ld hits, %ld bytes\n", e.hits, e.bytes);
	assert(e.hits == 2L * requests && e.bytes == 512L * e.hits);
	return 0;
}
