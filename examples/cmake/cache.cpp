// cache.cpp — svc::Cache, shared by cache_demo and cache_demo_ok.
#include "cache.hpp"

namespace svc {

Cache g_cache;
Stats g_stats;

int Cache::find(int key) const
{
	for (int i = 0; i < size_; i++)
		if (entries_[i].key == key)
			return i;
	return -1;
}

long Cache::lookup(int key)
{
	std::lock_guard<std::mutex> lock(mu_);
	g_stats.lookups++;
	int i = find(key);
	return i >= 0 ? entries_[i].value : 0; // @lookup
}

void Cache::insert(int key, long value)
{
	std::lock_guard<std::mutex> lock(mu_);
	g_stats.inserts++;
	int i = find(key);
	if (i < 0) {
		if (size_ == kSlots)
			return;
		i = size_++;
		entries_[i].key = key;
	}
	entries_[i].value = value; // @insert
}

void Cache::add(int key, long n)
{
	std::lock_guard<std::mutex> lock(mu_);
	g_stats.lookups++;
	g_stats.inserts++;
	int i = find(key);
	if (i < 0) {
		if (size_ == kSlots)
			return;
		i = size_++;
		entries_[i].key = key;
		entries_[i].value = 0;
	}
	entries_[i].value += n; // @add
}

} // namespace svc
