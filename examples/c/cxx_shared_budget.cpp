// cxx_shared_budget.cpp — a spending budget, one member guarded by a
// std::shared_mutex, "upgraded" by hand: spend() reads what is left under
// a std::shared_lock, checks it, then takes a std::unique_lock in a second
// scope and writes what is left minus the amount. Between the two scopes
// another thread's spending is lost (the budget spent twice). Two
// clients spending in a loop, the second started 20 ms after the first,
// so the recorded run loses nothing; main asserts the budget left is what
// was not spent (SIGABRT). main sets the budget before and reads it after
// the clients, so its exit status, not a notexhibited line, checks the
// recording clean.
//
// mcpredict:args 3
// mcpredict:expect P3 budget.remaining_ local:Read@read remote:Write@write local:Write@write
// mcpredict:reproduce failed
// mcpredict:window Budget::spend@read Budget::spend@write
#undef NDEBUG
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <thread>

class Budget {
public:
	explicit Budget(long total) : remaining_(total) {}
	bool spend(long amount);
	long remaining() const;

private:
	mutable std::shared_mutex mu_;
	long remaining_;
};

bool Budget::spend(long amount)
{
	long left;
	{
		std::shared_lock<std::shared_mutex> read(mu_);
		left = remaining_; // @read: BUG, checked under the shared lock ...
	}
	if (left < amount)
		return false;
	{
		std::unique_lock<std::shared_mutex> write(mu_);
		remaining_ = left - amount; // @write: ... and written in a second scope
	}
	return true;
}

long Budget::remaining() const
{
	std::shared_lock<std::shared_mutex> read(mu_);
	return remaining_;
}

static Budget budget(1000);

static void client(int purchases, long price)
{
	for (int i = 0; i < purchases; i++)
		budget.spend(price);
}

int main(int argc, char **argv)
{
	int purchases = argc > 1 ? atoi(argv[1]) : 3;
	std::thread a(client, purchases, 10);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	std::thread b(client, purchases, 10);
	a.join();
	b.join();
	long left = budget.remaining();
	std::printf("%ld left\n", left);
	assert(left == 1000 - 2L * 10 * purchases);
	return 0;
}
