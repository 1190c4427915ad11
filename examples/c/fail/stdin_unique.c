/*
 * stdin_unique.c — a set of keys filled from standard input: integers,
 * the first half inserted by one loader thread, the second half by
 * another, STAGGER µs later. The set is a locked array scanned up to its
 * count; a loader asks set_has() in one critical section and calls
 * set_add() in the next, which asserts that the key is not in the set yet
 * (each key is stored once). Two loaders with the same key can both find
 * it absent, and the second set_add() fails its assertion (SIGABRT)
 * before it appends.
 *
 * The input decides the work: with an empty standard input nothing is
 * inserted, and with no key in both halves the loaders never meet. The
 * recording is made with stdin_unique.in (mcpredict:stdin), whose second
 * half repeats the first, in the same order, and adds one key: the second
 * loader, started after the first is done, finds the first half's keys
 * there and appends only its own. Holding the first loader between its
 * check and its append, at any key, lets the second append that key
 * first; the first then aborts in set_add() after reading the count, and
 * before writing it.
 *
 * mcpredict:args 20000
 * mcpredict:stdin stdin_unique.in
 * mcpredict:expect none
 * mcpredict:reproduce failed
 * mcpredict:window set_has@has set_add@add
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

__attribute__((noinline)) static int set_has(struct set *s, long k)
{
	int h = 0;
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->count && !h; i++) /* @has: BUG, the key looked up in one critical section ... */
		h = s->keys[i] == k;
	pthread_mutex_unlock(&s->lock);
	return h;
}

__attribute__((noinline)) static void set_add(struct set *s, long k)
{
	pthread_mutex_lock(&s->lock);
	assert(!contains_locked(s, k)); /* @add: ... and appended in another */
	s->keys[s->count++] = k;        /* @append */
	pthread_mutex_unlock(&s->lock);
}

static void *loader(void *arg)
{
	struct share *sh = arg;
	for (long i = sh->from; i < sh->to; i++)
		if (!set_has(&set, input[i]))
			set_add(&set, input[i]);
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
