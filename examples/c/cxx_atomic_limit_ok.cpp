// cxx_atomic_limit_ok.cpp — the connection limiter of
// limits/cxx_atomic_limit.cpp on one std::atomic<int>, with the slot taken
// by compare_exchange_strong: try_acquire() loads the count, checks it
// against the limit and swaps in the count + 1 only if no other thread
// changed it since the load (else it checks the count it was given
// again); release() gives the slot back with fetch_sub. Correct: no
// acquire or release is lost under any schedule.
//
// mcpredict:args 3
// mcpredict:expect none
#undef NDEBUG
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

class ConnLimiter {
public:
	explicit ConnLimiter(int max) : max_(max) {}
	bool try_acquire();
	void release();
	int active() const { return active_.load(); }

private:
	const int max_;
	std::atomic<int> active_{0};
};

bool ConnLimiter::try_acquire()
{
	int n = active_.load();
	do {
		if (n >= max_)
			return false;
	} while (!active_.compare_exchange_strong(n, n + 1)); // taken only if still n
	return true;
}

void ConnLimiter::release()
{
	int before = active_.fetch_sub(1);
	assert(before > 0);
}

static ConnLimiter limiter(4);

static void client(int connections)
{
	for (int i = 0; i < connections; i++) {
		if (!limiter.try_acquire())
			continue;
		std::this_thread::yield(); // serve the connection
		limiter.release();
	}
}

int main(int argc, char **argv)
{
	int connections = argc > 1 ? atoi(argv[1]) : 3;
	std::thread a(client, connections);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	std::thread b(client, connections);
	a.join();
	b.join();
	std::printf("%d active\n", limiter.active());
	assert(limiter.active() == 0);
	return 0;
}
