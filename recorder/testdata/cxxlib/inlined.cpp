// Library code that every optimizing build inlines into the program's own
// functions: std::lock_guard's constructor and destructor (std::mutex's
// lock and unlock, gthr-default.h's __gthread_mutex_lock), and
// std::atomic's operations (always inlined, at any -O).
#include <atomic>
#include <mutex>
#include <thread>

struct Limiter {
  std::atomic<int> active_;
  Limiter() { active_.store(0); }
  bool try_acquire() {
    int n = active_.load(); // @load
    if (n >= 4)
      return false;
    active_.store(n + 1); // @store
    return true;
  }
};

Limiter lim;
std::mutex m;
int a, b;

void client() {
  { std::lock_guard<std::mutex> g(m); a++; } // @first
  { std::lock_guard<std::mutex> g(m); b = a; } // @second
  lim.try_acquire();
}

int main() {
  std::thread t1(client), t2(client);
  t1.join();
  t2.join();
  return 0;
}
