/*
 * rwlock_table.c — a small key/value table read under a read lock and
 * updated under a write lock. Correct.
 * mcpredict:args 3 300
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 8
static struct entry { int key; long value; int version; } table[SLOTS];
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int rounds;

static long lookup(int key)
{
	long v = -1;
	pthread_rwlock_rdlock(&rw);
	for (int i = 0; i < SLOTS; i++)
		if (table[i].key == key) {
			v = table[i].value + table[i].version;
			break;
		}
	pthread_rwlock_unlock(&rw);
	return v;
}

static void update(int key, long value)
{
	pthread_rwlock_wrlock(&rw);
	struct entry *e = &table[key % SLOTS];
	e->key = key;
	e->value = value;
	e->version++;
	pthread_rwlock_unlock(&rw);
}

static void *reader(void *a)
{
	long s = 0;
	for (int i = 0; i < rounds; i++)
		s += lookup(i % SLOTS);
	return (void *)s;
}

static void *writer(void *a)
{
	for (int i = 0; i < rounds; i++)
		update(i % SLOTS, i);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	rounds = argc > 2 ? atoi(argv[2]) : 300;
	pthread_t w, r[8];
	pthread_create(&w, NULL, writer, NULL);
	for (int i = 0; i < n; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	pthread_join(w, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(r[i], NULL);
	printf("%ld\n", table[1].value);
	return 0;
}
