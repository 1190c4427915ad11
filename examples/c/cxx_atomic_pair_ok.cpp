// cxx_atomic_pair_ok.cpp — the request statistics of
// limits/cxx_atomic_pair.cpp published through one atomic: the worker
// fills a new immutable snapshot (requests and bytes) for every response
// and publishes it with one std::atomic<const Snapshot *> store; the
// monitor loads the pointer once and reads both numbers from the snapshot
// it got. Correct: a snapshot is never written after it is published, so
// the monitor always sees a consistent pair (every response is 512 bytes;
// it asserts the average is 512). The worker keeps every snapshot it made
// and frees them after both threads are joined.
//
// mcpredict:args 3
// mcpredict:expect none
#undef NDEBUG
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

struct Snapshot {
	long requests;
	long bytes;
};

class Stats {
public:
	Stats() : current_(&zero_) {}
	void count(long size);
	double average() const;

private:
	static constexpr Snapshot zero_{0, 0};
	std::atomic<const Snapshot *> current_;
	std::vector<std::unique_ptr<Snapshot>> made_; // the worker's only
};

void Stats::count(long size)
{
	const Snapshot *old = current_.load();
	made_.push_back(std::make_unique<Snapshot>(Snapshot{old->requests + 1, old->bytes + size}));
	current_.store(made_.back().get()); // filled, then published with one store
}

double Stats::average() const
{
	const Snapshot *s = current_.load(); // one load: a consistent pair
	return s->requests ? (double)s->bytes / s->requests : 512;
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
