/*
 * stdin_deposits.c — deposits read from standard input: whitespace-
 * separated integers, the first half deposited by one teller thread, the
 * second half by another, STAGGER µs later. A deposit reads the balance
 * through get_balance() and writes it back through set_balance(), two
 * critical sections: a deposit made in between is lost. Bug: lost update
 * (P3); main asserts the balance is the sum of the input (SIGABRT).
 *
 * The input decides the work: with an empty standard input there is no
 * deposit and the program cannot fail. The recording is made with
 * stdin_deposits.in (mcpredict:stdin), in which the second teller starts
 * after the first is done; a directed run must be given the same input.
 *
 * mcpredict:args 20000
 * mcpredict:stdin stdin_deposits.in
 * mcpredict:expect P3 balance local:Read@read remote:Write@write local:Write@write
 * mcpredict:reproduce failed
 * mcpredict:window get_balance@read set_balance@write
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAXN 1024

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
long balance;
static long amounts[MAXN];

struct share {
	long from, to; /* amounts[from:to] */
};

__attribute__((noinline)) static long get_balance(void)
{
	pthread_mutex_lock(&m);
	long b = balance; /* @read: BUG, the balance read in one critical section ... */
	pthread_mutex_unlock(&m);
	return b;
}

__attribute__((noinline)) static void set_balance(long b)
{
	pthread_mutex_lock(&m);
	balance = b; /* @write: ... and written back in another */
	pthread_mutex_unlock(&m);
}

static void *teller(void *arg)
{
	struct share *s = arg;
	for (long i = s->from; i < s->to; i++)
		set_balance(get_balance() + amounts[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	long stagger = argc > 1 ? atol(argv[1]) : 20000;
	long n = 0, sum = 0, x;
	while (n < MAXN && scanf("%ld", &x) == 1) {
		amounts[n++] = x;
		sum += x;
	}
	struct share first = {0, n / 2}, second = {n / 2, n};
	pthread_t a, b;
	pthread_create(&a, NULL, teller, &first);
	usleep((useconds_t)stagger); /* not synchronisation: the model has no order from it */
	pthread_create(&b, NULL, teller, &second);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("%ld deposits, balance %ld\n", n, balance);
	assert(balance == sum);
	return 0;
}
