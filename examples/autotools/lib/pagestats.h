/*
 * pagestats.h — the hit counts of a web server's pages: a table of pages
 * shared by the workers. Every function takes the table's lock, so each
 * call alone is atomic; a sequence of two calls is not.
 */
#ifndef PAGESTATS_H
#define PAGESTATS_H

#include <pthread.h>

struct page {
	struct page *next;
	char *path;
	long hits;
};

struct page_table {
	pthread_mutex_t lock;
	struct page *pages; /* a list, the latest registered first */
	int npages;
};

void pagestats_init(struct page_table *t);
void pagestats_destroy(struct page_table *t);
/* Adds a page with no hits, unless it is there; -1 when out of memory. */
int pagestats_register(struct page_table *t, const char *path);
/* Sets *hits to the page's hits; -1 for an unknown page. */
int pagestats_hits(struct page_table *t, const char *path, long *hits);
/* Sets the page's hits; -1 for an unknown page. */
int pagestats_set_hits(struct page_table *t, const char *path, long hits);
/* Adds one hit to the page; -1 for an unknown page. */
int pagestats_hit(struct page_table *t, const char *path);
/* The hits of all pages. */
long pagestats_total(struct page_table *t);

#endif
