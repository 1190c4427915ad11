/*
 * rec_atomic_ref.c — a reference count dropped atomically, then read
 * plainly: the classic double free.
 *
 * Two threads each hold a reference to a shared object. obj_put() drops
 * one with an atomic decrement, then reads the count again, plainly, to
 * see whether it was the last one:
 *
 *     __atomic_fetch_sub(&o->ref, 1, __ATOMIC_ACQ_REL);
 *     if (o->ref == 0)
 *         free(o);
 *
 * If the other thread's decrement comes between the two, both threads
 * read 0 and free the object twice (pattern P2, stale read after local
 * write: W1 W2 R1). The correct code uses the value the atomic returns:
 * if (__atomic_fetch_sub(&o->ref, 1, __ATOMIC_ACQ_REL) == 1) free(o).
 *
 * The recorder keeps the plain read analysable: the atomic operations'
 * release and acquire order would be written on the object
 * atomic:shared->ref (Signal, Wait; a decrement that reads the other's
 * decrement orders nothing), and since the program also reads shared->ref
 * plainly,
 * each atomic operation is a data access of shared->ref as well (the
 * read-modify-write as one Write). A variable only ever accessed
 * atomically stays synchronisation only.
 *
 * With a stagger (second argument, in microseconds) the second thread
 * drops its reference after the first has finished: only it frees the
 * object in the recorded run, and mcpredict still predicts the double
 * free.
 *
 *   mcpredict cc -O1 -o rec_atomic_ref rec_atomic_ref.c
 *   mcpredict record -o ref.csv -- ./rec_atomic_ref 1 20000
 *   mcpredict run ref.csv
 *
 * mcpredict:args 1 20000
 * mcpredict:expect P2 shared->ref local:Write@dec remote:Write@dec local:Read@check
 * mcpredict:notexhibited shared->ref
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct obj {
	int ref; /* changed with atomic builtins (and, wrongly, read plainly) */
	long uses;
	pthread_mutex_t lock;
};

static struct obj *shared;
static atomic_int freed;

__attribute__((noinline)) static void obj_put(struct obj *o)
{
	__atomic_fetch_sub(&o->ref, 1, __ATOMIC_ACQ_REL); /* @dec: drops our reference ... */
	if (o->ref == 0) {            /* @check: BUG, a plain re-read of the count */
		atomic_fetch_add(&freed, 1);
		free(o);
	}
}

static void *user(void *arg)
{
	long n = (long)arg;
	struct obj *o = shared;
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&o->lock);
		o->uses++;
		pthread_mutex_unlock(&o->lock);
	}
	obj_put(o);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	shared = malloc(sizeof *shared);
	shared->ref = 2;
	shared->uses = 0;
	pthread_mutex_init(&shared->lock, NULL);
	pthread_t a, b;
	pthread_create(&a, NULL, user, (void *)n);
	if (stagger > 0)
		usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	pthread_create(&b, NULL, user, (void *)n);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("freed %d time(s)\n", atomic_load(&freed));
	return 0;
}
