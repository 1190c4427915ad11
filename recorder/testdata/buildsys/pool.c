#include "pool.h"

#include <stdlib.h>

#define PER_CHUNK 8

void pool_init(struct pool *p, size_t size)
{
	pthread_mutex_init(&p->lock, NULL);
	p->size = size < sizeof(void *) ? sizeof(void *) : size;
	p->free = NULL;
}

void *pool_get(struct pool *p, size_t size)
{
	if (size > p->size)
		return NULL;
	pthread_mutex_lock(&p->lock);
	if (!p->free) {
		char *chunk = malloc(PER_CHUNK * p->size);
		for (int i = 0; i < PER_CHUNK; i++) {
			void **b = (void **)(chunk + i * p->size);
			*b = p->free;
			p->free = b;
		}
	}
	void **b = p->free;
	p->free = *b;
	pthread_mutex_unlock(&p->lock);
	return b;
}

void pool_put(struct pool *p, void *block)
{
	pthread_mutex_lock(&p->lock);
	*(void **)block = p->free;
	p->free = block;
	pthread_mutex_unlock(&p->lock);
}
