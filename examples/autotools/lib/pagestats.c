/*
 * pagestats.c — the table of page hit counts (pagestats.h).
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdlib.h>
#include <string.h>

#include "pagestats.h"

void pagestats_init(struct page_table *t)
{
	pthread_mutex_init(&t->lock, NULL);
	t->pages = NULL;
	t->npages = 0;
}

void pagestats_destroy(struct page_table *t)
{
	struct page *p, *next;

	for (p = t->pages; p != NULL; p = next) {
		next = p->next;
		free(p->path);
		free(p);
	}
	t->pages = NULL;
	t->npages = 0;
	pthread_mutex_destroy(&t->lock);
}

/* The page of path, or NULL; the caller holds the lock. */
static struct page *find(const struct page_table *t, const char *path)
{
	struct page *p;

	for (p = t->pages; p != NULL; p = p->next)
		if (strcmp(p->path, path) == 0)
			return p;
	return NULL;
}

int pagestats_register(struct page_table *t, const char *path)
{
	int ret = 0;

	pthread_mutex_lock(&t->lock);
	if (find(t, path) == NULL) {
		struct page *p = calloc(1, sizeof *p);
		if (p == NULL || (p->path = strdup(path)) == NULL) {
			free(p);
			ret = -1;
		} else {
			p->next = t->pages;
			t->pages = p;
			t->npages++;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

int pagestats_hits(struct page_table *t, const char *path, long *hits)
{
	pthread_mutex_lock(&t->lock);
	struct page *p = find(t, path);
	if (p != NULL)
		*hits = p->hits; /* @get */
	pthread_mutex_unlock(&t->lock);
	return p != NULL ? 0 : -1;
}

int pagestats_set_hits(struct page_table *t, const char *path, long hits)
{
	pthread_mutex_lock(&t->lock);
	struct page *p = find(t, path);
	if (p != NULL)
		p->hits = hits; /* @set */
	pthread_mutex_unlock(&t->lock);
	return p != NULL ? 0 : -1;
}

int pagestats_hit(struct page_table *t, const char *path)
{
	pthread_mutex_lock(&t->lock);
	struct page *p = find(t, path);
	if (p != NULL)
		p->hits++; /* @add */
	pthread_mutex_unlock(&t->lock);
	return p != NULL ? 0 : -1;
}

long pagestats_total(struct page_table *t)
{
	struct page *p;
	long sum = 0;

	pthread_mutex_lock(&t->lock);
	for (p = t->pages; p != NULL; p = p->next)
		sum += p->hits;
	pthread_mutex_unlock(&t->lock);
	return sum;
}
