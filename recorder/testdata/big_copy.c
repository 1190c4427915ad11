/* A worker thread copies an array of 4,375 structs (70 KB) with one
 * memcpy while the main thread reads the last one: the whole copy must be
 * in the trace, up to the last element's last field. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct rec {
	int id, len;
	long offset;
};

#define N 4375
static struct rec live[N], saved[N];

static void *saver(void *arg)
{
	(void)arg;
	memcpy(saved, live, sizeof live); /* @copy */
	return NULL;
}

int main(void)
{
	for (int i = 0; i < N; i++)
		live[i].id = i;
	pthread_t t;
	pthread_create(&t, NULL, saver, NULL);
	pthread_join(t, NULL);
	printf("%d\n", saved[N - 1].id + (int)sizeof live);
	return 0;
}
