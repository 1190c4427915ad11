/*
 * bank.c — lost update on a bank account balance.
 *
 * Two tellers deposit into one account. deposit() reads the balance and
 * writes it back without a lock, so the other teller's deposit can come
 * in between and be lost (pattern P3, lost update: R1 W2 W1).
 *
 * With a stagger (second argument, in microseconds) the second teller
 * starts after the first has finished: the recorded run then loses no
 * update, and mcpredict still predicts the bug from it.
 *
 *   mcpredict cc -O1 -o bank bank.c
 *   mcpredict record -o bank.csv -- ./bank 2 20000
 *   mcpredict run bank.csv
 *
 * mcpredict:args 2 20000
 * mcpredict:expect P3 balance local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited balance
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long balance;

__attribute__((noinline)) static void deposit(long amount)
{
	long b = balance;     /* @read: BUG, the read ... */
	balance = b + amount; /* @write: ... and the write are not one atomic step */
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
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t a, b;
	pthread_create(&a, NULL, teller, (void *)n);
	if (stagger > 0)
		usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	pthread_create(&b, NULL, teller, (void *)n);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("balance %ld (expected %ld)\n", balance, 2 * 10 * n);
	return 0;
}
