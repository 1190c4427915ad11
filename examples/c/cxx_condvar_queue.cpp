// cxx_condvar_queue.cpp — a bounded blocking queue of jobs in C++17: a
// std::deque guarded by a std::mutex, two std::condition_variables
// (not_full_, not_empty_) waited on with a predicate under a
// std::unique_lock, notified after the lock scope, and a closed_ flag that
// ends the consumers' loop. Two producers hand jobs to two consumers, each
// consumer adds its results up in a local and hands the sum over with
// one locked add to a total; main checks the total. Correct: nothing to
// report, under any schedule.
//
// mcpredict:args 40
// mcpredict:expect none
#undef NDEBUG
#include <cassert>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

template <typename T> class BoundedQueue {
public:
	explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}
	void push(T item);
	bool pop(T &item); // false once the queue is closed and empty
	void close();

private:
	const size_t capacity_;
	std::mutex m_;
	std::condition_variable not_full_, not_empty_;
	std::deque<T> items_;
	bool closed_ = false;
};

template <typename T> void BoundedQueue<T>::push(T item)
{
	{
		std::unique_lock<std::mutex> lock(m_);
		not_full_.wait(lock, [this] { return items_.size() < capacity_; });
		items_.push_back(std::move(item));
	}
	not_empty_.notify_one();
}

template <typename T> bool BoundedQueue<T>::pop(T &item)
{
	{
		std::unique_lock<std::mutex> lock(m_);
		not_empty_.wait(lock, [this] { return !items_.empty() || closed_; });
		if (items_.empty())
			return false;
		item = std::move(items_.front());
		items_.pop_front();
	}
	not_full_.notify_one();
	return true;
}

template <typename T> void BoundedQueue<T>::close()
{
	{
		std::lock_guard<std::mutex> lock(m_);
		closed_ = true;
	}
	not_empty_.notify_all();
}

struct Job {
	int id;
	long weight;
};

static BoundedQueue<Job> queue(4);
static std::mutex total_m;
static long total;

static void producer(int first, int n)
{
	for (int i = first; i < first + n; i++)
		queue.push(Job{i, 2L * i});
}

static void consumer()
{
	long sum = 0;
	Job job;
	while (queue.pop(job))
		sum += job.weight;
	std::lock_guard<std::mutex> lock(total_m);
	total += sum;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	std::vector<std::thread> consumers;
	for (int i = 0; i < 2; i++)
		consumers.emplace_back(consumer);
	std::thread p1(producer, 0, n / 2), p2(producer, n / 2, n - n / 2);
	p1.join();
	p2.join();
	queue.close();
	for (auto &c : consumers)
		c.join();
	std::printf("total %ld\n", total);
	assert(total == (long)n * (n - 1)); // 2 * (0 + 1 + ... + n-1)
	return 0;
}
