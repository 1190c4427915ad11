// cxx_cache_entry.cpp — a page cache's statistics, a struct per page
// (hits and bytes served) in a std::unordered_map<std::string, Entry>
// guarded by a std::mutex. A request copies its page's entry out in one
// lock scope (get(), a std::optional<Entry>), adds its hit and its bytes
// to the copy, and stores the copy back in a second lock scope (put()):
// a request of another client in between is lost, both of its fields.
// Bug: lost update; main asserts every hit and byte was counted
// (SIGABRT). Two clients of one page, the second started 20 ms after the
// first, so the recorded run loses nothing.
//
// `mcpredict run` does not predict it: the entry is two variables, hits
// and bytes, read together and written together, and in the model of
// each the other's data flow (the second client read the bytes the first
// one wrote) keeps the second client after the first. The directed runs
// expose it: a relaxed model (dataflow) predicts the lost update, and
// holding a client between get() and put() makes main's check fail.
//
// mcpredict:args 3 20000
// mcpredict:expect none
// mcpredict:reproduce failed
// mcpredict:window PageCache::get@read PageCache::put@write
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
	void put(const std::string &page, const Entry &e);

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
	return it->second; // @read: BUG, the entry copied out in one lock scope ...
}

void PageCache::put(const std::string &page, const Entry &e)
{
	std::lock_guard<std::mutex> lock(m_);
	pages_[page] = e; // @write: ... and stored back in another
}

static PageCache cache;

static void serve(const std::string &page, long size)
{
	Entry e = cache.get(page).value_or(Entry{});
	e.hits++;
	e.bytes += size;
	cache.put(page, e);
}

static void client(std::string page, int requests)
{
	for (int i = 0; i < requests; i++)
		serve(page, 512);
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
