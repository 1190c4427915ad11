// cxx_shared_table_ok.cpp — the inventory of cxx_shared_table.cpp, a
// stock table guarded by a std::shared_mutex, with a reservation made in
// one scope: reserve() checks and lowers the level under one
// std::unique_lock; level() still reads under a std::shared_lock (main's
// check, and a reader thread's audit of the whole table). Correct.
//
// mcpredict:args 3
// mcpredict:expect none
#undef NDEBUG
#include <array>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <thread>

class Inventory {
public:
	Inventory() { stock_.fill(100); }
	long level(int item) const;
	bool reserve(int item, long n);

private:
	mutable std::shared_mutex mu_;
	std::array<long, 8> stock_;
};

long Inventory::level(int item) const
{
	std::shared_lock<std::shared_mutex> lock(mu_);
	return stock_[item];
}

bool Inventory::reserve(int item, long n)
{
	std::unique_lock<std::shared_mutex> lock(mu_);
	if (stock_[item] < n) // checked and lowered under one exclusive lock
		return false;
	stock_[item] -= n;
	return true;
}

static Inventory inventory;

static void client(int item, int orders)
{
	for (int i = 0; i < orders; i++)
		inventory.reserve(item, 2);
}

static void auditor(int rounds)
{
	for (int r = 0; r < rounds; r++) {
		long total = 0;
		for (int item = 0; item < 8; item++)
			total += inventory.level(item);
		assert(total <= 800);
	}
}

int main(int argc, char **argv)
{
	int orders = argc > 1 ? atoi(argv[1]) : 3;
	std::thread a(client, 2, orders);
	std::thread audit(auditor, 2);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	std::thread b(client, 2, orders);
	a.join();
	b.join();
	audit.join();
	long left = inventory.level(2);
	std::printf("%ld left\n", left);
	assert(left == 100 - 2L * 2 * orders);
	return 0;
}
