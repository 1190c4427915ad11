/*
 * threadpool.c — a thread pool: main allocates tasks and pushes them on a
 * locked queue; workers pop them, compute, store the result in the task
 * and mark it done under the task's own mutex; main waits for each task's
 * done flag on the task's condition variable, reads the result and frees
 * the task. Correct.
 * mcpredict:args 3 60
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct task {
	struct task *next;
	int input;
	long result;
	int done;
	pthread_mutex_t m;
	pthread_cond_t cv;
};

static struct {
	pthread_mutex_t m;
	pthread_cond_t nonempty;
	struct task *head, *tail;
	int closed;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0 };

static void push(struct task *t)
{
	pthread_mutex_lock(&q.m);
	t->next = NULL;
	if (q.tail)
		q.tail->next = t;
	else
		q.head = t;
	q.tail = t;
	pthread_cond_signal(&q.nonempty);
	pthread_mutex_unlock(&q.m);
}

static struct task *pop(void)
{
	pthread_mutex_lock(&q.m);
	while (!q.head && !q.closed)
		pthread_cond_wait(&q.nonempty, &q.m);
	struct task *t = q.head;
	if (t) {
		q.head = t->next;
		if (!q.head)
			q.tail = NULL;
	}
	pthread_mutex_unlock(&q.m);
	return t;
}

static void *worker(void *a)
{
	struct task *t;
	while ((t = pop()) != NULL) {
		long r = 0;
		for (int i = 0; i <= t->input; i++)
			r += i;
		pthread_mutex_lock(&t->m);
		t->result = r;
		t->done = 1;
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int nw = argc > 1 ? atoi(argv[1]) : 3;
	int nt = argc > 2 ? atoi(argv[2]) : 60;
	pthread_t w[8];
	for (int i = 0; i < nw; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	long total = 0;
	struct task *batch[8];
	for (int i = 0; i < nt; i += 8) {
		int k = 0;
		for (; k < 8 && i + k < nt; k++) {
			struct task *t = calloc(1, sizeof *t);
			pthread_mutex_init(&t->m, NULL);
			pthread_cond_init(&t->cv, NULL);
			t->input = i + k;
			batch[k] = t;
			push(t);
		}
		for (int j = 0; j < k; j++) {
			struct task *t = batch[j];
			pthread_mutex_lock(&t->m);
			while (!t->done)
				pthread_cond_wait(&t->cv, &t->m);
			pthread_mutex_unlock(&t->m);
			total += t->result;
			pthread_mutex_destroy(&t->m);
			pthread_cond_destroy(&t->cv);
			free(t);
		}
	}
	pthread_mutex_lock(&q.m);
	q.closed = 1;
	pthread_cond_broadcast(&q.nonempty);
	pthread_mutex_unlock(&q.m);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i], NULL);
	printf("%ld\n", total);
	return 0;
}
