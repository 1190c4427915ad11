/*
 * typenames.c — heap blocks a reader recognizes by type, not by path.
 *
 * Three shapes real servers have, each with an unlocked update so that
 * the variables are shared:
 *   - a log buffer reached only through a void * handle and accessed
 *     through a typed local (Apache's buffered_log): named
 *     buffered_log.outcnt(malloc@typenames.c:LINE);
 *   - objects kept on an intrusive list whose link is in the middle of
 *     the struct (session) or at its start in a bigger struct (conn):
 *     the list's pointers point at the link, not at a session or a conn,
 *     so their type says nothing; the code's typed locals name them;
 *   - a singly linked list of jobs reached through jobs->next->next: a
 *     path through list links, named by type and site with the path kept
 *     as a detail.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	int fd;
	size_t outcnt;
	char outbuf[64];
} buffered_log;

struct list {
	struct list *next, *prev;
};

struct session {
	long id;
	struct list link; /* in the middle */
	long hits;
};

struct conn {
	struct list link; /* at the start of a bigger struct */
	long bytes;
	char peer[40];
};

struct job {
	struct job *next;
	long done;
};

#define container_of(p, T, m) ((T *)((char *)(p) - offsetof(T, m)))

static void *log_handle; /* the log is only ever reached through this */
static struct list sessions = {&sessions, &sessions};
static struct list conns = {&conns, &conns};
static struct job *jobs;
static int rounds = 200;

static void list_add(struct list *head, struct list *l)
{
	l->next = head->next;
	l->prev = head;
	head->next->prev = l;
	head->next = l;
}

__attribute__((noinline)) static void log_write(void *handle, const char *s)
{
	buffered_log *buf = handle;
	size_t n = strlen(s);
	if (buf->outcnt + n > sizeof buf->outbuf)
		buf->outcnt = 0;
	memcpy(&buf->outbuf[buf->outcnt], s, n);
	buf->outcnt += n; /* unlocked, like Apache 25520 */
}

__attribute__((noinline)) static void hit_sessions(void)
{
	for (struct list *l = sessions.next; l != &sessions; l = l->next) {
		struct session *s = container_of(l, struct session, link);
		s->hits++;
	}
}

__attribute__((noinline)) static void count_bytes(long n)
{
	for (struct list *l = conns.next; l != &conns; l = l->next) {
		struct conn *c = (struct conn *)l;
		c->bytes += n;
	}
}

__attribute__((noinline)) static void finish_last_job(void)
{
	struct job *j = jobs;
	while (j->next)
		j = j->next;
	j->done++;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < rounds; r++) {
		log_write(log_handle, "GET / 200\n");
		hit_sessions();
		count_bytes(10);
		finish_last_job();
	}
	return NULL;
}

int main(void)
{
	buffered_log *log = calloc(1, sizeof *log); /* @log */
	log->fd = 2;
	log_handle = log;
	for (int i = 0; i < 2; i++) {
		struct session *s = calloc(1, sizeof *s); /* @session */
		s->id = i;
		list_add(&sessions, &s->link);
		struct conn *c = calloc(1, sizeof *c); /* @conn */
		list_add(&conns, &c->link);
	}
	struct job **tail = &jobs;
	for (int i = 0; i < 3; i++) {
		*tail = calloc(1, sizeof **tail); /* @job */
		tail = &(*tail)->next;
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
