/*
 * stdin_unique_ok.c — the loaders of stdin_unique.c inserting through
 * set_add_new(), which looks the key up and appends it in one critical
 * section: each key is stored once, whatever the input. Correct.
 *
 * mcpredict:args 20000
 * mcpredict:stdin stdin_unique.in
 * mcpredict:expect none
 * mcpredict:reproduce clean
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAXN 1024

struct set {
	pthread_mutex_t lock;
	int count;
	long keys[MAXN];
};

struct set set = {PTHREAD_MUTEX_INITIALIZER, 0, {0}};
static long input[MAXN];

struct share {
	long from, to; /* input[from:to] */
};

/* contains_locked reports whether k is in the set; s->lock is held. */
static int contains_locked(struct set *s, long k)
{
	for (int i = 0; i < s->count; i++)
		if (s->keys[i] == k)
			return 1;
	return 0;
}

/* add_locked appends a key not in the set; s->lock is held. */
static void add_locked(struct set *s, long k)
{
	assert(!contains_locked(s, k)); /* @add */
	s->keys[s->count++] = k;        /* @append */
}

__attribute__((noinline)) static void set_add_new(struct set *s, long k)
{
	int h = 0;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->count && !h; i++) /* @has */
		h = s->keys[i] == k;
	if (!h)
		add_locked(s, k);
	pthread_mutex_unlock(&s->lock);
}

static void *loader(void *arg)
{
	struct share *sh = arg;
	for (long i = sh->from; i < sh->to; i++)
		set_add_new(&set, input[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	long stagger = argc > 1 ? atol(argv[1]) : 20000;
	long n = 0, x;
	while (n < MAXN && scanf("%ld", &x) == 1)
		input[n++] = x;
	struct share first = {0, n / 2}, second = {n / 2, n};
	pthread_t a, b;
	pthread_create(&a, NULL, loader, &first);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, loader, &second);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld keys, %d distinct\n", n, set.count);
	return 0;
}
