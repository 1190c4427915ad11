// cxx_pool.cpp — a C++ work queue: std::thread workers, std::mutex +
// std::condition_variable queue of std::function tasks, results in a
// std::vector guarded by a mutex, std::atomic counters, a shared_ptr
// configuration read by every task. Correct.
// mcpredict:args 3 200
// mcpredict:expect none
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

struct Config {
	int scale;
	int offset;
};

class Queue {
public:
	void push(std::function<void()> f)
	{
		{
			std::lock_guard<std::mutex> g(m_);
			q_.push_back(std::move(f));
		}
		cv_.notify_one();
	}
	bool pop(std::function<void()> &f)
	{
		std::unique_lock<std::mutex> g(m_);
		cv_.wait(g, [this] { return !q_.empty() || closed_; });
		if (q_.empty())
			return false;
		f = std::move(q_.front());
		q_.pop_front();
		return true;
	}
	void close()
	{
		{
			std::lock_guard<std::mutex> g(m_);
			closed_ = true;
		}
		cv_.notify_all();
	}

private:
	std::mutex m_;
	std::condition_variable cv_;
	std::deque<std::function<void()>> q_;
	bool closed_ = false;
};

int main(int argc, char **argv)
{
	int nworkers = argc > 1 ? atoi(argv[1]) : 3;
	int ntasks = argc > 2 ? atoi(argv[2]) : 200;
	auto cfg = std::make_shared<const Config>(Config{3, 7});
	Queue q;
	std::mutex results_m;
	std::vector<long> results;
	std::atomic<long> done{0};
	std::vector<std::thread> workers;
	for (int i = 0; i < nworkers; i++)
		workers.emplace_back([&q] {
			std::function<void()> f;
			while (q.pop(f))
				f();
		});
	for (int i = 0; i < ntasks; i++)
		q.push([i, cfg, &results_m, &results, &done] {
			long v = (long)i * cfg->scale + cfg->offset;
			{
				std::lock_guard<std::mutex> g(results_m);
				results.push_back(v);
			}
			done.fetch_add(1);
		});
	q.close();
	for (auto &w : workers)
		w.join();
	long s = 0;
	for (long v : results)
		s += v;
	std::printf("%ld %ld\n", s, done.load());
	return 0;
}
