/*
 * check_then_use.c — a cache pointer checked and then dereferenced in
 * separate critical sections; another thread clears it in between. Bug:
 * unrepeatable read (P1) of cur.
 * mcpredict:args 40
 * mcpredict:expect P1 cur local:Read@check remote:Write@clear local:Read@use
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct entry { long val; };
static struct entry slots[2] = { { 1 }, { 2 } };
static struct entry *cur = &slots[0];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int rounds;

static long reader_step(void)
{
	long v = 0;
	int present;
	pthread_mutex_lock(&m);
	present = cur != NULL; /* @check */
	pthread_mutex_unlock(&m);
	if (present) {
		pthread_mutex_lock(&m);
		struct entry *e = cur; /* @use */
		if (e)
			v = e->val;
		pthread_mutex_unlock(&m);
	}
	return v;
}

static void *reader(void *a)
{
	long s = 0;
	for (int i = 0; i < rounds; i++)
		s += reader_step();
	return (void *)s;
}

static void *flipper(void *a)
{
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&m);
		cur = (i & 1) ? &slots[i & 1] : NULL; /* @clear */
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 40;
	pthread_t a, b;
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, flipper, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("done\n");
	return 0;
}
