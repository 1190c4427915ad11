/*
 * join_retval.c — each thread builds a result on the heap and returns it
 * through pthread_exit; main gets it from pthread_join, reads it, and
 * frees it. Between rounds, main rewrites the shared input. Correct.
 * mcpredict:args 3 4
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct res { long sum; long max; };
static int input[32];

static void *work(void *a)
{
	long id = (long)a;
	struct res *r = malloc(sizeof *r);
	r->sum = 0;
	r->max = 0;
	for (int i = id; i < 32; i += 4) {
		r->sum += input[i];
		if (input[i] > r->max)
			r->max = input[i];
	}
	pthread_exit(r);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int rounds = argc > 2 ? atoi(argv[2]) : 4;
	long total = 0;
	for (int k = 0; k < rounds; k++) {
		for (int i = 0; i < 32; i++)
			input[i] = i * (k + 1);
		pthread_t t[8];
		for (long i = 0; i < n; i++)
			pthread_create(&t[i], NULL, work, (void *)i);
		for (int i = 0; i < n; i++) {
			struct res *r;
			pthread_join(t[i], (void **)&r);
			total += r->sum + r->max;
			free(r);
		}
	}
	printf("%ld\n", total);
	return 0;
}
