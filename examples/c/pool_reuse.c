/*
 * pool_reuse.c — a program's own allocator: a free list of fixed-size
 * blocks carved from a static array, shared by the threads of a small
 * request pipeline, so the same memory holds one object after another.
 * Correct: nothing should be reported.
 *
 * The reader thread allocates a block, fills in a request and queues it;
 * the handler dequeues it, computes the reply, frees the request block
 * and allocates another for the reply, which it queues to main; main
 * prints the reply and frees the block. With fewer blocks than requests,
 * each block is used for requests and replies of different requests in
 * turn. The free list is protected by pool_lock, each queue by its own
 * mutex and condition variables; a block belongs to one thread at a time,
 * and passes to the next through a queue. The reader never takes the
 * last free block, so the handler always gets one for its reply.
 *
 *   mcpredict cc -O1 -o pool_reuse pool_reuse.c
 *   mcpredict record -o pool.csv -- ./pool_reuse 5
 *   mcpredict run pool.csv
 *
 * mcpredict:args 5
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NBLOCKS 3
#define QCAP 4

struct request {
	int id;
	int len;
	char path[16];
};

struct reply {
	int id;
	int status;
	long bytes;
};

union block {
	union block *next; /* while on the free list */
	struct request req;
	struct reply rep;
};

static union block pool[NBLOCKS];
static union block *free_list;
static int nfree;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;

static void pool_init(void)
{
	for (int i = 0; i < NBLOCKS; i++) {
		pool[i].next = free_list;
		free_list = &pool[i];
	}
	nfree = NBLOCKS;
}

/* Takes a block, waiting until more than reserve blocks are free. */
static union block *block_alloc(int reserve)
{
	pthread_mutex_lock(&pool_lock);
	while (nfree <= reserve)
		pthread_cond_wait(&pool_cv, &pool_lock);
	union block *b = free_list;
	free_list = b->next;
	nfree--;
	pthread_mutex_unlock(&pool_lock);
	return b;
}

static void block_free(union block *b)
{
	pthread_mutex_lock(&pool_lock);
	b->next = free_list;
	free_list = b;
	nfree++;
	pthread_cond_broadcast(&pool_cv); /* waiters want different counts */
	pthread_mutex_unlock(&pool_lock);
}

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	union block *slot[QCAP];
	int head, count;
};

static struct queue requests = {.lock = PTHREAD_MUTEX_INITIALIZER, .not_empty = PTHREAD_COND_INITIALIZER, .not_full = PTHREAD_COND_INITIALIZER};
static struct queue replies = {.lock = PTHREAD_MUTEX_INITIALIZER, .not_empty = PTHREAD_COND_INITIALIZER, .not_full = PTHREAD_COND_INITIALIZER};

static void enqueue(struct queue *q, union block *b)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == QCAP)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->slot[(q->head + q->count) % QCAP] = b;
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

static union block *dequeue(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == 0)
		pthread_cond_wait(&q->not_empty, &q->lock);
	union block *b = q->slot[q->head];
	q->head = (q->head + 1) % QCAP;
	q->count--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return b;
}

static void *reader(void *arg)
{
	long n = (long)arg;
	for (int i = 0; i < n; i++) {
		/* Leave one block for the handler's reply: with every block a
		 * queued request, the pipeline would deadlock. */
		union block *b = block_alloc(1);
		b->req.id = i;
		b->req.len = 0;
		for (const char *s = "/index.html"; *s != '\0'; s++)
			b->req.path[b->req.len++] = *s;
		enqueue(&requests, b);
	}
	return NULL;
}

static void *handler(void *arg)
{
	long n = (long)arg;
	for (int i = 0; i < n; i++) {
		union block *b = dequeue(&requests);
		int id = b->req.id;
		long bytes = 0;
		for (int j = 0; j < b->req.len; j++)
			bytes += b->req.path[j];
		block_free(b);

		union block *r = block_alloc(0);
		r->rep.id = id;
		r->rep.status = 200;
		r->rep.bytes = bytes * (id + 1);
		enqueue(&replies, r);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5;
	pool_init();
	pthread_t rd, hd;
	pthread_create(&rd, NULL, reader, (void *)n);
	pthread_create(&hd, NULL, handler, (void *)n);
	long total = 0;
	for (int i = 0; i < n; i++) {
		union block *b = dequeue(&replies);
		printf("reply %d: %d, %ld bytes\n", b->rep.id, b->rep.status, b->rep.bytes);
		total += b->rep.bytes;
		block_free(b);
	}
	pthread_join(rd, NULL);
	pthread_join(hd, NULL);
	printf("total %ld bytes\n", total);
	return 0;
}
