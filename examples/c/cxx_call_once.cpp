// cxx_call_once.cpp — lazy initialization with std::call_once: a table of
// status codes (a std::unordered_map<std::string, int>) loaded on first
// use by whichever thread gets there first, then read by every thread
// without a lock. Four threads start at once and race to the first
// lookup; each counts its lookups in a std::atomic. Correct: call_once
// runs the load exactly once and every caller returns after it finished,
// so the table is never written while it is read.
//
// mcpredict:args 4 50
// mcpredict:expect none
#undef NDEBUG
#include <atomic>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

class StatusCodes {
public:
	int code(const std::string &name);
	int loads() const { return loads_; }

private:
	void load();
	std::once_flag once_;
	std::unordered_map<std::string, int> codes_;
	int loads_ = 0;
};

void StatusCodes::load()
{
	codes_["ok"] = 200;
	codes_["not found"] = 404;
	codes_["busy"] = 503;
	loads_++;
}

int StatusCodes::code(const std::string &name)
{
	std::call_once(once_, [this] { load(); });
	auto it = codes_.find(name);
	return it == codes_.end() ? -1 : it->second;
}

static StatusCodes codes;
static std::atomic<long> lookups{0};

static void handler(int requests)
{
	static const char *names[] = {"ok", "not found", "busy", "teapot"};
	long sum = 0;
	for (int i = 0; i < requests; i++)
		sum += codes.code(names[i % 4]);
	lookups.fetch_add(requests);
	assert(sum > 0);
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 4;
	int requests = argc > 2 ? atoi(argv[2]) : 50;
	std::vector<std::thread> threads;
	for (int i = 0; i < nthreads; i++)
		threads.emplace_back(handler, requests);
	for (auto &t : threads)
		t.join();
	std::printf("%ld lookups, %d load(s)\n", lookups.load(), codes.loads());
	assert(codes.loads() == 1 && lookups.load() == (long)nthreads * requests);
	return 0;
}
