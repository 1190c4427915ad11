// A hit counter kept in a std::unordered_map of std::shared_ptr, guarded
// by a std::mutex: every access to shared data is inside the C++ standard
// library's code. With -DSPLIT, a client looks the count up and inserts
// the next one in two lock scopes (a lost update); without, in one.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace svc {
struct Entry {
  int hits;
};

class Cache {
public:
  int lookup(const std::string &k) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(k);
    return it == map_.end() ? 0 : it->second->hits; // @lookup
  }
  void insert(const std::string &k, int hits) {
    std::lock_guard<std::mutex> g(mu_);
    auto e = std::make_shared<Entry>();
    e->hits = hits;
    map_[k] = e; // @insert
  }
  void add(const std::string &k) {
    std::lock_guard<std::mutex> g(mu_);
    auto &e = map_[k];
    auto n = std::make_shared<Entry>();
    n->hits = e ? e->hits + 1 : 1;
    e = n; // @add
  }

private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> map_;
};

Cache g_cache;
} // namespace svc

static void client(int i) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20 * i));
#ifdef SPLIT
  int h = svc::g_cache.lookup("page");
  svc::g_cache.insert("page", h + 1);
#else
  svc::g_cache.add("page");
#endif
}

int main() {
  svc::g_cache.insert("page", 0);
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; i++)
    ts.emplace_back(client, i);
  for (auto &t : ts)
    t.join();
  return svc::g_cache.lookup("page") == 2 ? 0 : 1;
}
