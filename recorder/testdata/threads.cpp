// threads.cpp — std::thread, std::mutex and std::atomic, for
// recorder_test.go: thread creation happens inside libstdc++, which the
// recorder must still see.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

struct Account {
	long balance = 0;
	void add(long v)
	{
		std::lock_guard<std::mutex> g(mu);
		balance += v; // @add
	}
	std::mutex mu;
};

Account acct;
std::atomic<int> hits{0};

int main()
{
	std::vector<std::thread> ts;
	for (int i = 0; i < 2; i++)
		ts.emplace_back([] {
			acct.add(1);
			hits.fetch_add(1);
		});
	for (auto &t : ts)
		t.join();
	std::printf("%ld %d\n", acct.balance, hits.load());
	return 0;
}
