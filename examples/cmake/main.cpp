// main.cpp — cache_demo [CLIENTS]: CLIENTS threads (default 2) serve
// requests for page 1 and add the hits they served to its count in
// svc::g_cache; client i starts 20*i ms after the first. Then the count
// must be the sum of the hits: the program aborts if some were lost.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "cache.hpp"

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 2;
	if (n < 1 || n > 64) {
		std::fprintf(stderr, "usage: %s [CLIENTS (1 to 64)]\n", argv[0]);
		return 2;
	}
	const int page = 1;
	svc::g_cache.insert(page, 0);
	std::vector<std::thread> clients;
	std::vector<long> served(n);
	for (int i = 0; i < n; i++)
		clients.emplace_back([i, &served] {
			std::this_thread::sleep_for(std::chrono::milliseconds(20 * i));
			served[i] = serve(i);
			svc::record_hits(page, served[i]);
		});
	long sum = 0;
	for (int i = 0; i < n; i++) {
		clients[i].join();
		sum += served[i];
	}
	long hits = svc::g_cache.lookup(page);
	std::printf("page %d: %ld hits\n", page, hits);
	if (hits != sum) {
		std::fprintf(stderr, "cache_demo: %ld hits of %ld lost\n", sum - hits, sum);
		std::abort();
	}
	return 0;
}
