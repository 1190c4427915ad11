// cxx_shared_table.cpp — an inventory table (stock per item) guarded by a
// std::shared_mutex: level() reads an item's stock under a
// std::shared_lock, set_level() writes it under a std::unique_lock. A
// client reserves items by reading the level in one scope and writing
// the level minus its quantity in a second one: a reservation of another
// client in between is lost (the stock is counted twice). Two clients of
// one item, the second started 20 ms after the first, so the recorded run
// loses nothing; main asserts the stock left is what was not reserved
// (SIGABRT). main fills the table before and reads it after the clients,
// so its exit status, not a notexhibited line, checks the recording clean.
//
// mcpredict:args 3
// mcpredict:expect P3 inventory.stock_._M_elems[2] local:Read@read remote:Write@write local:Write@write
// mcpredict:reproduce failed
// mcpredict:window Inventory::level@read Inventory::set_level@write
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
	void set_level(int item, long n);

private:
	mutable std::shared_mutex mu_;
	std::array<long, 8> stock_;
};

long Inventory::level(int item) const
{
	std::shared_lock<std::shared_mutex> lock(mu_);
	return stock_[item]; // @read: BUG, the level read under the shared lock ...
}

void Inventory::set_level(int item, long n)
{
	std::unique_lock<std::shared_mutex> lock(mu_);
	stock_[item] = n; // @write: ... and written under the exclusive lock, in another scope
}

static Inventory inventory;

static void client(int item, int orders)
{
	for (int i = 0; i < orders; i++) {
		long left = inventory.level(item);
		if (left >= 2)
			inventory.set_level(item, left - 2);
	}
}

int main(int argc, char **argv)
{
	int orders = argc > 1 ? atoi(argv[1]) : 3;
	std::thread a(client, 2, orders);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	std::thread b(client, 2, orders);
	a.join();
	b.join();
	long left = inventory.level(2);
	std::printf("%ld left\n", left);
	assert(left == 100 - 2L * 2 * orders);
	return 0;
}
