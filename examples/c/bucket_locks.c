/*
 * bucket_locks.c — a hash table of linked lists with one mutex per bucket
 * (an array of mutexes); insert and lookup lock the key's bucket. Correct.
 * mcpredict:args 3 150
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define B 8
struct node { int key; long val; struct node *next; };
static struct node *buckets[B];
static pthread_mutex_t locks[B];
static int rounds;

static void insert(int key, long val)
{
	int h = key % B;
	pthread_mutex_lock(&locks[h]);
	struct node *n;
	for (n = buckets[h]; n; n = n->next)
		if (n->key == key) {
			n->val += val;
			break;
		}
	if (!n) {
		n = malloc(sizeof *n);
		n->key = key;
		n->val = val;
		n->next = buckets[h];
		buckets[h] = n;
	}
	pthread_mutex_unlock(&locks[h]);
}

static long lookup(int key)
{
	int h = key % B;
	long v = 0;
	pthread_mutex_lock(&locks[h]);
	for (struct node *n = buckets[h]; n; n = n->next)
		if (n->key == key)
			v = n->val;
	pthread_mutex_unlock(&locks[h]);
	return v;
}

static void *work(void *a)
{
	long id = (long)a;
	long s = 0;
	for (int i = 0; i < rounds; i++) {
		insert((i * 7 + id) % 40, i);
		s += lookup(i % 40);
	}
	return (void *)s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	rounds = argc > 2 ? atoi(argv[2]) : 150;
	for (int i = 0; i < B; i++)
		pthread_mutex_init(&locks[i], NULL);
	pthread_t t[8];
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", lookup(3));
	return 0;
}
