/*
 * request_id_ok.c — every request gets an id from a counter under a lock
 * (id = next_id++), and so does the backend call it makes when it is
 * done; the ids are only stored in the request and printed. The cache's
 * entry count is incremented in one critical section. The twin of
 * request_id.c (the second request arrives 20 ms later).
 * Correct: nothing should be reported.
 *
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct request { int delay; long id, backend_id; };

static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;
static long next_id = 1;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int cache_entries;

static long new_id(void)
{
	pthread_mutex_lock(&id_lock);
	long id = next_id++;
	pthread_mutex_unlock(&id_lock);
	return id;
}

static void *serve(void *arg)
{
	struct request *r = arg;
	if (r->delay)
		usleep(r->delay);
	r->id = new_id();

	/* Cache the reply. */
	pthread_mutex_lock(&cache_lock);
	cache_entries++;
	pthread_mutex_unlock(&cache_lock);

	r->backend_id = new_id();
	return NULL;
}

static struct request reqs[2] = { { 0 }, { 20000 } };

int main(void)
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, serve, &reqs[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++)
		printf("request %ld (backend %ld)\n", reqs[i].id, reqs[i].backend_id);
	printf("%d cache entries\n", cache_entries);
	return 0;
}
