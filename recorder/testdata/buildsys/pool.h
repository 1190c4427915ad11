#include <pthread.h>
#include <stddef.h>

/* A pool of fixed-size blocks on a free list, carved from malloc'd
 * chunks. */
struct pool {
	pthread_mutex_t lock;
	size_t size;
	void *free;
};

void pool_init(struct pool *p, size_t size);
void *pool_get(struct pool *p, size_t size);
void pool_put(struct pool *p, void *block);
