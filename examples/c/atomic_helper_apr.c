/*
 * atomic_helper_apr.c — a reference count kept with "atomic" helpers the
 * way APR 0.9 writes them on x86_64 (Apache bug 21287): a wrapper mutex
 * whose unlock reads its own nested field, a decrement that re-reads the
 * new value before unlocking (new = *mem), an increment that reads the
 * old value and then increments (prev = *mem; (*mem)++). The release path
 * ignores the decrement's result and reads the count again, plainly, to
 * decide whether to free the object. Two holders release it; the second
 * 20 ms later, so the recorded run frees it once. Bug: the plain read sees
 * the other holder's decrement (P2, or P1 with the helper's re-read) on
 * obj->refs.
 *
 * mcpredict:expect P2|P1 obj->refs remote:Write@dec local:Read@check
 * mcpredict:notexhibited obj->refs
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct wrapped_mutex {
	pthread_mutex_t mutex;
	int nested; /* set once, read by every unlock */
};

static struct wrapped_mutex *hash_mutex;

__attribute__((noinline)) static void wm_lock(struct wrapped_mutex *m) { pthread_mutex_lock(&m->mutex); }

__attribute__((noinline)) static void wm_unlock(struct wrapped_mutex *m)
{
	if (m->nested) /* never: the mutex is not recursive */
		puts("nested");
	pthread_mutex_unlock(&m->mutex);
}

__attribute__((noinline)) static int atomic_dec(volatile int *mem)
{
	wm_lock(hash_mutex);
	(*mem)--;         /* @dec */
	int new = *mem;   /* the new value, returned */
	wm_unlock(hash_mutex);
	return new;
}

__attribute__((noinline)) static int atomic_inc(volatile int *mem)
{
	wm_lock(hash_mutex);
	int prev = *mem;
	(*mem)++;
	wm_unlock(hash_mutex);
	return prev;
}

struct object { volatile int refs; char *data; };
static struct object *obj;

__attribute__((noinline)) static void release(struct object *o)
{
	atomic_dec(&o->refs);
	if (o->refs == 0) { /* @check */
		free(o->data);
		free(o);
		puts("freed");
	}
}

static void *holder(void *arg)
{
	usleep((long)arg);
	release(obj);
	return NULL;
}

int main(void)
{
	hash_mutex = calloc(1, sizeof *hash_mutex);
	pthread_mutex_init(&hash_mutex->mutex, NULL);
	obj = calloc(1, sizeof *obj);
	obj->data = malloc(64);
	atomic_inc(&obj->refs); /* one reference for each holder */
	atomic_inc(&obj->refs);
	pthread_t a, b;
	pthread_create(&a, NULL, holder, (void *)0);
	pthread_create(&b, NULL, holder, (void *)20000);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
