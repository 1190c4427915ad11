/*
 * rec_pool_alloc.c — messages from the program's own pool allocator,
 * handed from a producer to a consumer and back. Correct: nothing should
 * be reported.
 *
 * The pool carves fixed-size messages out of one malloc'd chunk and keeps
 * the free ones on a list; pool_get() takes one (waiting while none is
 * free), pool_put() gives it back. The producer gets a message, fills it
 * in and queues it; the consumer dequeues it, reads it and puts it back.
 * With two messages and more rounds, the same memory carries one message
 * after another, without any malloc or free.
 *
 * Built with
 *
 *   mcpredict cc --alloc-func pool_get:2 --free-func pool_put:2 -O1 \
 *       -o rec_pool_alloc rec_pool_alloc.c
 *
 * the recorder records each pool_get as an Alloc of the message (of the
 * size in argument 2) and each pool_put as a Free, so each message is a
 * variable of its own: q.items[0]->len, q.items[0]#2->len … (named after
 * the queue slot that carried it), instead of one variable per piece of
 * the chunk for every message that used it. Without the options the
 * program is recorded too, as the chunk's memory.
 *
 *   mcpredict record -o pool.csv -- ./rec_pool_alloc 5
 *   mcpredict run pool.csv
 *
 * mcpredict:args 5
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMSG 2
#define QCAP 4

struct msg {
	int id;
	int len;
	char text[24];
	struct msg *next_free; /* the pool's link while the message is free */
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	struct msg *free;
	char *chunk;
};

static struct pool pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	struct msg *items[QCAP];
	int head, count;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {NULL}, 0, 0};

static void pool_init(struct pool *p)
{
	p->chunk = malloc(NMSG * sizeof(struct msg));
	for (int i = 0; i < NMSG; i++) {
		struct msg *m = (struct msg *)(p->chunk + i * sizeof(struct msg));
		m->next_free = p->free;
		p->free = m;
	}
}

/* The allocation function: a message of at least size bytes. */
__attribute__((noinline)) void *pool_get(struct pool *p, size_t size)
{
	if (size > sizeof(struct msg))
		return NULL;
	pthread_mutex_lock(&p->lock);
	while (!p->free)
		pthread_cond_wait(&p->freed, &p->lock);
	struct msg *m = p->free;
	p->free = m->next_free;
	pthread_mutex_unlock(&p->lock);
	return m;
}

/* The deallocation function. */
__attribute__((noinline)) void pool_put(struct pool *p, void *ptr)
{
	struct msg *m = ptr;
	pthread_mutex_lock(&p->lock);
	m->next_free = p->free;
	p->free = m;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

static void enqueue(struct msg *m)
{
	pthread_mutex_lock(&q.lock);
	q.items[(q.head + q.count) % QCAP] = m;
	q.count++;
	pthread_cond_signal(&q.nonempty);
	pthread_mutex_unlock(&q.lock);
}

static struct msg *dequeue(void)
{
	pthread_mutex_lock(&q.lock);
	while (q.count == 0)
		pthread_cond_wait(&q.nonempty, &q.lock);
	struct msg *m = q.items[q.head];
	q.head = (q.head + 1) % QCAP;
	q.count--;
	pthread_mutex_unlock(&q.lock);
	return m;
}

static void *producer(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		struct msg *m = pool_get(&pool, sizeof *m);
		m->id = (int)i;
		m->len = snprintf(m->text, sizeof m->text, "message %ld", i);
		enqueue(m);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long n = (long)arg, bytes = 0;
	for (long i = 0; i < n; i++) {
		struct msg *m = dequeue();
		bytes += m->len + m->id;
		pool_put(&pool, m);
	}
	return (void *)bytes;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5;
	pool_init(&pool);
	pthread_t p, c;
	pthread_create(&p, NULL, producer, (void *)n);
	pthread_create(&c, NULL, consumer, (void *)n);
	void *bytes;
	pthread_join(p, NULL);
	pthread_join(c, &bytes);
	printf("%ld messages, %ld\n", n, (long)bytes);
	free(pool.chunk);
	return 0;
}
