/*
 * counter_server.c — a small TCP counter server with memcached 1.4.4's
 * incr bug (bug 127; examples/c/prove/incr_grow.c is the same bug in a
 * plain program).
 *
 *   counter_server PORT
 *
 * Listens on 127.0.0.1:PORT and prints "listening on 127.0.0.1:PORT" when
 * it accepts connections. The main thread accepts and queues connections;
 * a pool of 2 worker threads serves them, one connection at a time each.
 * A connection sends lines
 *
 *   incr KEY     the new value of KEY (a missing KEY counts from 0)
 *   get KEY      the value of KEY, or NOT_FOUND
 *
 * and gets one line back for each. SIGTERM (or SIGINT) stops the server:
 * it stops accepting, ends the open connections, joins its workers and
 * exits 0. It exits 2 when it cannot listen on PORT.
 *
 * Values are decimal strings in heap items sized to fit, in a hash table
 * of chains under one cache lock. incr looks the item up in one critical
 * section (item_get(), which takes a reference) and updates it in the next
 * (add_delta()); an increment that needs one more digit ("9" -> "10",
 * "99" -> "100") allocates a new item and replaces the old one in the
 * table. BUG: when another worker's growing increment replaces the item
 * between item_get() and add_delta(), add_delta() works on the stale,
 * unlinked item and an increment is lost. load.sh runs two clients at
 * once and checks the total.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NWORKERS 2
#define QSIZE 16
#define NBUCKETS 16
#define KEYLEN 32

struct item {
	struct item *next; /* hash chain */
	int refcount;      /* holders, the table not counted */
	int linked;        /* in the table */
	int nbytes;        /* size of data: the digits and the NUL */
	char key[KEYLEN];
	char data[];
};

static struct {
	pthread_mutex_t lock;
	struct item *bucket[NBUCKETS];
} cache = { PTHREAD_MUTEX_INITIALIZER };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	int fds[QSIZE], head, count;
	int stop;
	int serving[NWORKERS]; /* each worker's connection, -1 if none */
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static volatile sig_atomic_t stopping;

static unsigned hash(const char *key)
{
	unsigned h = 5381;
	while (*key)
		h = h * 33 + (unsigned char)*key++;
	return h % NBUCKETS;
}

static struct item *item_alloc(const char *key, const char *val, int len)
{
	struct item *it = calloc(1, sizeof *it + (size_t)len + 1);
	snprintf(it->key, sizeof it->key, "%s", key);
	it->nbytes = len + 1;
	memcpy(it->data, val, (size_t)len + 1);
	return it;
}

static struct item *do_item_find(const char *key) /* under cache.lock */
{
	struct item *it = cache.bucket[hash(key)];
	while (it && strcmp(it->key, key) != 0)
		it = it->next;
	return it;
}

static void do_item_link(struct item *it) /* under cache.lock */
{
	unsigned b = hash(it->key);
	it->next = cache.bucket[b];
	cache.bucket[b] = it;
	it->linked = 1;
}

static void do_item_unlink(struct item *it) /* under cache.lock */
{
	struct item **pp = &cache.bucket[hash(it->key)];
	while (*pp && *pp != it)
		pp = &(*pp)->next;
	if (*pp)
		*pp = it->next;
	it->linked = 0;
}

/* The item of key, created as "0" when missing, with a reference taken. */
__attribute__((noinline)) static struct item *item_get(const char *key)
{
	pthread_mutex_lock(&cache.lock);
	struct item *it = do_item_find(key);
	if (!it) {
		it = item_alloc(key, "0", 1);
		do_item_link(it);
	}
	it->refcount++;
	pthread_mutex_unlock(&cache.lock);
	return it;
}

__attribute__((noinline)) static void item_remove(struct item *it)
{
	pthread_mutex_lock(&cache.lock);
	if (--it->refcount == 0 && !it->linked)
		free(it);
	pthread_mutex_unlock(&cache.lock);
}

static unsigned long parse(const char *s)
{
	unsigned long v = 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned long)(*s++ - '0');
	return v;
}

/* BUG: it was looked up in another critical section and may be stale. */
__attribute__((noinline)) static unsigned long add_delta(struct item *it, unsigned long delta)
{
	char buf[24];
	pthread_mutex_lock(&cache.lock);
	unsigned long v = parse(it->data) + delta;
	int len = snprintf(buf, sizeof buf, "%lu", v);
	if (len + 1 > it->nbytes) { /* one more digit: a new item replaces it */
		struct item *nit = item_alloc(it->key, buf, len);
		if (it->linked) /* item_replace(): unlink the old, link the new */
			do_item_unlink(it);
		do_item_link(nit);
	} else {
		memcpy(it->data, buf, (size_t)len + 1); /* in place */
	}
	pthread_mutex_unlock(&cache.lock);
	return v;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static void command(int fd, char *line)
{
	char reply[64], key[KEYLEN];
	if (sscanf(line, "incr %31s", key) == 1) {
		struct item *it = item_get(key);
		unsigned long v = add_delta(it, 1);
		item_remove(it);
		snprintf(reply, sizeof reply, "%lu\n", v);
	} else if (sscanf(line, "get %31s", key) == 1) {
		pthread_mutex_lock(&cache.lock);
		struct item *it = do_item_find(key);
		snprintf(reply, sizeof reply, "%s\n", it ? it->data : "NOT_FOUND");
		pthread_mutex_unlock(&cache.lock);
	} else {
		snprintf(reply, sizeof reply, "ERROR\n");
	}
	write_all(fd, reply, strlen(reply));
}

static void serve(int fd)
{
	char buf[1024];
	size_t have = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		have += (size_t)r;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			command(fd, line);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf - 1) /* a line too long */
			return;
	}
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	for (;;) {
		pthread_mutex_lock(&q.lock);
		while (q.count == 0 && !q.stop)
			pthread_cond_wait(&q.nonempty, &q.lock);
		if (q.stop) {
			pthread_mutex_unlock(&q.lock);
			return NULL;
		}
		int fd = q.fds[q.head];
		q.head = (q.head + 1) % QSIZE;
		q.count--;
		q.serving[id] = fd;
		pthread_mutex_unlock(&q.lock);

		serve(fd);

		pthread_mutex_lock(&q.lock);
		q.serving[id] = -1;
		pthread_mutex_unlock(&q.lock);
		close(fd);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

int main(int argc, char **argv)
{
	int port = argc > 1 ? atoi(argv[1]) : 0;
	if (port <= 0 || port > 65535) {
		fprintf(stderr, "usage: counter_server PORT\n");
		return 2;
	}
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(lfd, 16) < 0) {
		fprintf(stderr, "counter_server: 127.0.0.1:%d: %s\n", port, strerror(errno));
		return 2;
	}

	/* SIGTERM and SIGINT are blocked everywhere but in main's ppoll(). */
	sigset_t stopsigs, waitmask;
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stopsigs, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	pthread_t th[NWORKERS];
	for (int i = 0; i < NWORKERS; i++) {
		q.serving[i] = -1;
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	}
	printf("listening on 127.0.0.1:%d\n", port);
	fflush(stdout);

	while (!stopping) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		if (ppoll(&p, 1, NULL, &waitmask) <= 0)
			continue; /* EINTR: a signal, tested above */
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&q.lock);
		if (q.count < QSIZE) {
			q.fds[(q.head + q.count) % QSIZE] = fd;
			q.count++;
			pthread_cond_signal(&q.nonempty);
			fd = -1;
		}
		pthread_mutex_unlock(&q.lock);
		if (fd >= 0) /* the queue is full */
			close(fd);
	}

	pthread_mutex_lock(&q.lock);
	q.stop = 1;
	for (int i = 0; i < NWORKERS; i++)
		if (q.serving[i] >= 0)
			shutdown(q.serving[i], SHUT_RDWR); /* ends its read() */
	pthread_cond_broadcast(&q.nonempty);
	pthread_mutex_unlock(&q.lock);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(th[i], NULL);
	for (; q.count > 0; q.count--, q.head = (q.head + 1) % QSIZE)
		close(q.fds[q.head]);
	close(lfd);
	for (int b = 0; b < NBUCKETS; b++)
		for (struct item *it = cache.bucket[b], *next; it; it = next) {
			next = it->next;
			free(it);
		}
	printf("stopped\n");
	return 0;
}
