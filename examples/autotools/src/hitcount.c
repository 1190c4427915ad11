/*
 * hitcount.c — N workers serve the same short access log and count each
 * request in the shared page table (count_request, count.h); then main
 * checks that every hit was counted. Worker i starts 20·i ms after the
 * first, so in a normal run the workers never count at the same time and
 * no hit is lost: hitcount prints the hits and exits 0. When hits were
 * lost it says so and exits 1.
 *
 * usage: hitcount [WORKERS]   (1 to 8, default 2)
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "count.h"
#include "pagestats.h"

#define MAX_WORKERS 8

static const char *const access_log[] = {
	"/index.html", "/style.css", "/index.html", "/logo.png", "/index.html", "/about.html",
};
#define NREQUESTS (sizeof access_log / sizeof access_log[0])

static struct page_table site;

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;

	usleep(20000 * id);
	for (size_t i = 0; i < NREQUESTS; i++)
		count_request(&site, access_log[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	if (n < 1 || n > MAX_WORKERS) {
		fprintf(stderr, "usage: %s [WORKERS] (1 to %d)\n", argv[0], MAX_WORKERS);
		return 2;
	}

	pagestats_init(&site);
	for (size_t i = 0; i < NREQUESTS; i++)
		if (pagestats_register(&site, access_log[i]) < 0) {
			perror("pagestats_register");
			return 2;
		}

	pthread_t tids[MAX_WORKERS];
	for (int i = 0; i < n; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i) != 0) {
			fprintf(stderr, "%s: cannot create a worker\n", argv[0]);
			return 2;
		}
	for (int i = 0; i < n; i++)
		pthread_join(tids[i], NULL);

	long hits = pagestats_total(&site), want = (long)n * NREQUESTS;
	pagestats_destroy(&site);
	printf("%ld hits\n", hits);
	if (hits != want) {
		fprintf(stderr, "hitcount: %ld hits of %ld lost\n", want - hits, want);
		return 1;
	}
	return 0;
}
