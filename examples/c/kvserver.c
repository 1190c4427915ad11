/*
 * kvserver.c — a small in-memory key/value server with the structure of a
 * real one, correctly synchronized except for one statistic: a dispatcher
 * thread parses requests into a bounded queue (mutex + two condition
 * variables); workers serve them against a hash table with one rwlock per
 * bucket, whose values are heap strings replaced (malloc/free) on every
 * update; an admin thread swaps the configuration under an rwlock; a
 * logger thread drains a log ring that workers append to under a mutex
 * and signal; statistics are C11 atomics, per-thread counters merged at
 * exit, and shutdown is a flag under the queue mutex with a broadcast.
 * The bug: `slow_requests` is counted with a plain ++ by every worker.
 *
 * mcpredict:args 3 400
 * mcpredict:expect P3|P5 slow_requests local:Read@slow remote:Write@slow local:Write@slow
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- configuration, swapped by the admin thread ---- */
struct config {
	int max_value_len;
	int slow_threshold;
	char greeting[16];
};
static struct config *config;
static pthread_rwlock_t config_lock = PTHREAD_RWLOCK_INITIALIZER;

static struct config *config_new(int gen)
{
	struct config *c = malloc(sizeof *c);
	c->max_value_len = 24 + gen % 8;
	c->slow_threshold = 5 + gen % 3;
	snprintf(c->greeting, sizeof c->greeting, "gen%d", gen);
	return c;
}

/* ---- the store: buckets of entries, one rwlock each ---- */
#define NBUCKETS 16
struct entry {
	struct entry *next;
	char key[16];
	char *value;
	int version;
};
static struct bucket {
	pthread_rwlock_t lock;
	struct entry *head;
} store[NBUCKETS];

static unsigned hash(const char *s)
{
	unsigned h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

static int store_get(const char *key, char *out, int cap)
{
	struct bucket *b = &store[hash(key)];
	int found = 0;
	pthread_rwlock_rdlock(&b->lock);
	for (struct entry *e = b->head; e; e = e->next)
		if (strcmp(e->key, key) == 0) {
			snprintf(out, cap, "%s/%d", e->value, e->version);
			found = 1;
			break;
		}
	pthread_rwlock_unlock(&b->lock);
	return found;
}

static void store_put(const char *key, const char *value, int maxlen)
{
	struct bucket *b = &store[hash(key)];
	char *copy = strndup(value, maxlen);
	pthread_rwlock_wrlock(&b->lock);
	struct entry *e;
	for (e = b->head; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			break;
	if (!e) {
		e = calloc(1, sizeof *e);
		snprintf(e->key, sizeof e->key, "%s", key);
		e->next = b->head;
		b->head = e;
	}
	char *old = e->value;
	e->value = copy;
	e->version++;
	pthread_rwlock_unlock(&b->lock);
	free(old);
}

/* ---- the request queue ---- */
enum op { GET, PUT };
struct request {
	enum op op;
	char key[16];
	char value[32];
	int cost;
};
#define QCAP 8
static struct {
	pthread_mutex_t m;
	pthread_cond_t nonempty, nonfull;
	struct request *slots[QCAP];
	int head, count, closed;
} queue = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };

static void enqueue(struct request *r)
{
	pthread_mutex_lock(&queue.m);
	while (queue.count == QCAP)
		pthread_cond_wait(&queue.nonfull, &queue.m);
	queue.slots[(queue.head + queue.count) % QCAP] = r;
	queue.count++;
	pthread_cond_signal(&queue.nonempty);
	pthread_mutex_unlock(&queue.m);
}

static struct request *dequeue(void)
{
	struct request *r = NULL;
	pthread_mutex_lock(&queue.m);
	while (queue.count == 0 && !queue.closed)
		pthread_cond_wait(&queue.nonempty, &queue.m);
	if (queue.count > 0) {
		r = queue.slots[queue.head];
		queue.head = (queue.head + 1) % QCAP;
		queue.count--;
		pthread_cond_signal(&queue.nonfull);
	}
	pthread_mutex_unlock(&queue.m);
	return r;
}

/* ---- the log ring, drained by the logger thread ---- */
#define LOGCAP 16
static struct {
	pthread_mutex_t m;
	pthread_cond_t more;
	char lines[LOGCAP][48];
	int head, count, done;
	long dropped;
} logring = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };
static long log_bytes; /* the logger's own */

static void log_line(const char *what, const char *key)
{
	pthread_mutex_lock(&logring.m);
	if (logring.count == LOGCAP) {
		logring.dropped++;
	} else {
		snprintf(logring.lines[(logring.head + logring.count) % LOGCAP], 48, "%s %s", what, key);
		logring.count++;
		pthread_cond_signal(&logring.more);
	}
	pthread_mutex_unlock(&logring.m);
}

static void *logger(void *arg)
{
	char line[48];
	for (;;) {
		pthread_mutex_lock(&logring.m);
		while (logring.count == 0 && !logring.done)
			pthread_cond_wait(&logring.more, &logring.m);
		if (logring.count == 0) {
			pthread_mutex_unlock(&logring.m);
			break;
		}
		memcpy(line, logring.lines[logring.head], sizeof line);
		logring.head = (logring.head + 1) % LOGCAP;
		logring.count--;
		pthread_mutex_unlock(&logring.m);
		log_bytes += strlen(line);
	}
	return NULL;
}

/* ---- statistics ---- */
static atomic_long served, misses;
static long slow_requests; /* the bug: plain ++ from every worker */
static struct worker_stats {
	long gets, puts;
} per_worker[8];
static long total_gets, total_puts;
static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;

static void serve(struct request *r, struct worker_stats *st)
{
	char out[64];
	pthread_rwlock_rdlock(&config_lock);
	int maxlen = config->max_value_len;
	int slow = config->slow_threshold;
	pthread_rwlock_unlock(&config_lock);
	if (r->op == GET) {
		st->gets++;
		if (!store_get(r->key, out, sizeof out))
			atomic_fetch_add(&misses, 1);
	} else {
		st->puts++;
		store_put(r->key, r->value, maxlen);
		log_line("put", r->key);
	}
	if (r->cost > slow)
		slow_requests++; /* @slow */
	atomic_fetch_add(&served, 1);
}

static void *worker(void *arg)
{
	struct worker_stats *st = arg;
	struct request *r;
	while ((r = dequeue()) != NULL) {
		serve(r, st);
		free(r);
	}
	pthread_mutex_lock(&totals_lock);
	total_gets += st->gets;
	total_puts += st->puts;
	pthread_mutex_unlock(&totals_lock);
	return NULL;
}

static int nrequests;
static void *dispatcher(void *arg)
{
	unsigned seed = 7;
	for (int i = 0; i < nrequests; i++) {
		struct request *r = calloc(1, sizeof *r);
		seed = seed * 1103515245 + 12345;
		r->op = (seed >> 16) % 3 == 0 ? PUT : GET;
		snprintf(r->key, sizeof r->key, "k%u", (seed >> 8) % 40);
		snprintf(r->value, sizeof r->value, "value-%d", i);
		r->cost = (seed >> 4) % 10;
		enqueue(r);
	}
	pthread_mutex_lock(&queue.m);
	queue.closed = 1;
	pthread_cond_broadcast(&queue.nonempty);
	pthread_mutex_unlock(&queue.m);
	return NULL;
}

static void *admin(void *arg)
{
	for (int gen = 1; gen <= 5; gen++) {
		struct config *c = config_new(gen);
		pthread_rwlock_wrlock(&config_lock);
		struct config *old = config;
		config = c;
		pthread_rwlock_unlock(&config_lock);
		free(old);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nworkers = argc > 1 ? atoi(argv[1]) : 3;
	nrequests = argc > 2 ? atoi(argv[2]) : 400;
	if (nworkers > 8)
		nworkers = 8;
	config = config_new(0);
	for (int i = 0; i < NBUCKETS; i++)
		pthread_rwlock_init(&store[i].lock, NULL);

	pthread_t lg, disp, adm, w[8];
	pthread_create(&lg, NULL, logger, NULL);
	for (int i = 0; i < nworkers; i++)
		pthread_create(&w[i], NULL, worker, &per_worker[i]);
	pthread_create(&adm, NULL, admin, NULL);
	pthread_create(&disp, NULL, dispatcher, NULL);

	pthread_join(disp, NULL);
	pthread_join(adm, NULL);
	for (int i = 0; i < nworkers; i++)
		pthread_join(w[i], NULL);
	pthread_mutex_lock(&logring.m);
	logring.done = 1;
	pthread_cond_signal(&logring.more);
	pthread_mutex_unlock(&logring.m);
	pthread_join(lg, NULL);

	printf("served %ld misses %ld slow %ld gets %ld puts %ld logged %ld dropped %ld greeting %s\n",
	       atomic_load(&served), atomic_load(&misses), slow_requests, total_gets, total_puts,
	       log_bytes, logring.dropped, config->greeting);
	return 0;
}
