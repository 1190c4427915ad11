/*
 * request_id.c — every request gets an id from a counter under a lock
 * (id = next_id++), and so does the backend call it makes when it is
 * done; the ids are only stored in the request and printed. The ids are
 * right; the bug is the cache's entry count, read in one critical section
 * and written back in the next. The second request arrives 20 ms later:
 * the recorded run loses no entry, and only the ids order the requests.
 * Bug: lost update (P3) of cache_entries.
 *
 * mcpredict:expect P3 cache_entries local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited cache_entries
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

	/* Cache the reply: the count is read, then written back. */
	pthread_mutex_lock(&cache_lock);
	int n = cache_entries; /* @read */
	pthread_mutex_unlock(&cache_lock);
	pthread_mutex_lock(&cache_lock);
	cache_entries = n + 1; /* @write */
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
