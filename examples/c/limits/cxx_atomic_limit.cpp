// cxx_atomic_limit.cpp — a connection limiter on one std::atomic<int>:
// try_acquire() loads the count, checks it against the limit and takes a
// slot by storing the count + 1; release() gives it back with fetch_sub.
// Every operation is atomic, their sequence is not: another thread's
// acquire or release between the load and the store is lost (the count
// ends off by one; release() asserts it gave back a slot it had). Two
// clients, the second started 20 ms after the first, so the recorded run
// loses nothing; main asserts the count is back to 0 (SIGABRT). The
// limiter's constructor initializes the count with a plain store (it is
// not constexpr), so the recorder writes its atomic operations as reads
// and writes too (docs/recorder.md, Atomics); main's store before and load
// after the clients leave the recording's cleanness to its exit status.
//
// A known limit (README.md): `mcpredict run` predicts the lost update, but
// at the client's calls of try_acquire() and release(), not at the load
// and the store (std::atomic's operations are inlined from atomic_base.h
// into try_acquire(), and an event of library code is shown at the call
// of the user's function it is in); `mcpredict reproduce` never holds a
// thread at an atomic operation, so no directed run fails.
//
// mcpredict:args 3
// mcpredict:expect P3 limiter.active_ local:Read@check remote:Write local:Write@act
// mcpredict:reproduce failed
// mcpredict:window ConnLimiter::try_acquire@check ConnLimiter::try_acquire@act
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
	int n = active_.load(); // @check: BUG, read and checked with one atomic operation ...
	if (n >= max_)
		return false;
	active_.store(n + 1); // @act: ... and taken with another
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
