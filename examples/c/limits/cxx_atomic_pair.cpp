// cxx_atomic_pair.cpp — request statistics in two std::atomic<long>
// counters, requests and bytes, that are only consistent together: a
// worker counts each response with two fetch_adds, and a monitor reads
// the two counters with two loads to compute the average response size.
// Each counter is atomic, the pair is not: a monitor that reads between
// the worker's two fetch_adds gets a torn pair (every response is 512
// bytes; the monitor asserts the average is 512, SIGABRT). The worker
// counts its responses first, the monitor starts 20 ms later, so the
// recorded run reads consistent pairs. The twin, ../cxx_atomic_pair_ok.cpp,
// publishes immutable snapshots through one atomic pointer.
//
// A known limit (README.md): neither `mcpredict run` nor `mcpredict
// reproduce` finds it. The two counters are no inferred atomic set: every
// std::atomic<long>::load is recorded at one library line
// (atomic_base.h:488), so the monitor's loop reads "a variable twice at
// one location" and both counters are taken for polled flags; the
// seq_cst releases end the worker's region between its two fetch_adds;
// and a directed run never holds a thread at an atomic operation.
//
// mcpredict:args 3
// mcpredict:expect M5|M6 stats.requests_+stats.bytes_ local:Write@count local:Write@add remote:Read@first remote:Read@second
// mcpredict:reproduce failed
// mcpredict:window Stats::count@count Stats::count@add
#undef NDEBUG
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

class Stats {
public:
	Stats() : requests_(0), bytes_(0) {}
	void count(long size);
	double average() const;

private:
	std::atomic<long> requests_;
	std::atomic<long> bytes_;
};

void Stats::count(long size)
{
	requests_.fetch_add(1); // @count
	bytes_.fetch_add(size); // @add
}

double Stats::average() const
{
	long n = requests_.load(); // @first: BUG, one counter read ...
	long b = bytes_.load();    // @second: ... and the other, not the pair
	return n ? (double)b / n : 512;
}

static Stats stats;

static void worker(int responses)
{
	for (int i = 0; i < responses; i++)
		stats.count(512);
}

static void monitor(int polls)
{
	for (int i = 0; i < polls; i++) {
		double avg = stats.average();
		assert(avg == 512);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	std::thread w(worker, n);
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	std::thread m(monitor, n);
	w.join();
	m.join();
	std::printf("average %.0f\n", stats.average());
	return 0;
}
