// cxx_scoped_lock.cpp — transfers between accounts that each have their
// own std::mutex, both accounts locked at once with std::scoped_lock (C++17,
// std::lock's deadlock avoidance): one teller moves money from a to b,
// another from b to a, so the two take the same two mutexes in opposite
// orders as written. An auditor sums the balances under a scoped_lock of
// both. Correct: std::lock never waits for one mutex while it holds the
// other (it backs off and retries), so there is no deadlock and the total
// is always the same.
//
// mcpredict:args 20
// mcpredict:expect none
#undef NDEBUG
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

struct Account {
	std::mutex m;
	long balance;
};

static Account a{{}, 1000}, b{{}, 1000};

static void transfer(Account &from, Account &to, long amount)
{
	std::scoped_lock lock(from.m, to.m);
	from.balance -= amount;
	to.balance += amount;
}

static long total()
{
	std::scoped_lock lock(a.m, b.m);
	return a.balance + b.balance;
}

static void teller(Account *from, Account *to, int n)
{
	for (int i = 0; i < n; i++)
		transfer(*from, *to, 1 + i % 7);
}

static void auditor(int n)
{
	for (int i = 0; i < n; i++)
		assert(total() == 2000);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	std::thread t1(teller, &a, &b, n), t2(teller, &b, &a, n), t3(auditor, n);
	t1.join();
	t2.join();
	t3.join();
	std::printf("%ld + %ld\n", a.balance, b.balance);
	assert(a.balance + b.balance == 2000);
	return 0;
}
