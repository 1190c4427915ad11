/*
 * refcount.c — a reference count incremented under the object's mutex but
 * decremented without it. The release path reads the count, another thread
 * updates it, and the stale value is written back; and the locked
 * increment is no protection against the unlocked decrement that runs
 * between its read and its write. Bug: P3 on obj->refs, both ways.
 *
 * mcpredict:args 2 50
 * mcpredict:expect P3 obj->refs local:Read@dec remote:Write local:Write@dec
 * mcpredict:expect P3 obj->refs local:Read@inc remote:Write@dec local:Write@inc
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct object { pthread_mutex_t m; int refs; long data; };
static struct object *obj;
static int rounds;

static void ref(struct object *o)
{
	pthread_mutex_lock(&o->m);
	o->refs++; /* @inc */
	pthread_mutex_unlock(&o->m);
}

static void unref(struct object *o)
{
	o->refs--; /* @dec */
}

static void *work(void *a)
{
	for (int i = 0; i < rounds; i++) {
		ref(obj);
		obj->data += 0;
		unref(obj);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 50;
	obj = calloc(1, sizeof *obj);
	pthread_mutex_init(&obj->m, NULL);
	obj->refs = 1;
	pthread_t t[8];
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", obj->refs);
	return 0;
}
