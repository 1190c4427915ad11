/*
 * bank.c — lost update on a bank account balance.
 *
 * Two tellers deposit into one account. deposit() reads the balance and
 * writes it back without a lock, so another deposit can slip in between
 * (pattern P3, lost update: R1 W2 W1). The recorded run may or may not
 * lose an update; the predictor finds the bug either way.
 *
 * Build and check:
 *   mcpredict cc -O1 -o bank bank.c
 *   mcpredict record -o bank.csv -- ./bank
 *   mcpredict run bank.csv
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long balance;

static void deposit(long amount)
{
	long b = balance;        /* BUG: read ... */
	balance = b + amount;    /* ... and write are not one atomic step */
}

static void *teller(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		deposit(10);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2;
	pthread_t a, b;
	pthread_create(&a, NULL, teller, (void *)n);
	pthread_create(&b, NULL, teller, (void *)n);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance %ld (expected %ld)\n", balance, 2 * 10 * n);
	return 0;
}
