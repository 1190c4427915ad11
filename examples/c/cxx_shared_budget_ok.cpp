// cxx_shared_budget_ok.cpp — the budget of cxx_shared_budget.cpp, one
// member guarded by a std::shared_mutex, with spend() checking and writing
// under one std::unique_lock; remaining() reads under a std::shared_lock.
// Correct: no spending is lost under any schedule.
//
// mcpredict:args 3
// mcpredict:expect none
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
	std::unique_lock<std::shared_mutex> write(mu_);
	if (remaining_ < amount) // checked and written in one exclusive scope
		return false;
	remaining_ -= amount;
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
