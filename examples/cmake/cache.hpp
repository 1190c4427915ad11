// cache.hpp — svc::Cache, a thread-safe cache: every method takes the
// cache's mutex. cache_demo counts the hits of web pages in it.
#pragma once

#include <mutex>

namespace svc {

// Stats counts the calls of the cache's methods, under its mutex.
struct Stats {
	long lookups;
	long inserts;
};

// Cache maps int keys to long values: at most kSlots keys.
class Cache {
public:
	static constexpr int kSlots = 8;

	// lookup returns the value of key, or 0 if it has none.
	long lookup(int key);
	// insert sets the value of key, adding the key if it is new (and
	// there is room).
	void insert(int key, long value);
	// add adds n to the value of key, in one critical section.
	void add(int key, long n);

private:
	struct Entry {
		int key;
		long value;
	};
	// find returns the index of key, or -1; the caller holds mu_.
	int find(int key) const;

	std::mutex mu_;
	Entry entries_[kSlots];
	int size_ = 0;
};

extern Cache g_cache;
extern Stats g_stats;

// record_hits adds n hits of page to g_cache: client_split.cpp with a
// lookup and an insert, client_add.cpp with add.
void record_hits(int page, long n);

} // namespace svc

// serve handles a client's requests and returns how many it served: the
// program's C part (serve.c).
extern "C" long serve(int client);
