/*
 * set_transfer_ok.c — the bank of set_transfer.c done right: the teller
 * moves money from checking to savings with the debit and the credit in
 * one critical section, and the auditor reads both balances in one
 * critical section of the same lock. Nobody can see the money in flight,
 * and the sum is always the bank's total. Correct: nothing should be
 * reported.
 * mcpredict:args 30
 * mcpredict:expect none
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define TOTAL 10000

static pthread_mutex_t bank = PTHREAD_MUTEX_INITIALIZER;
static long checking = TOTAL / 2, savings = TOTAL / 2;
static int rounds;
static int mismatches;

static void transfer(long amount)
{
	pthread_mutex_lock(&bank);
	checking -= amount;
	savings += amount;
	pthread_mutex_unlock(&bank);
}

static long audit(void)
{
	pthread_mutex_lock(&bank);
	long sum = checking + savings;
	pthread_mutex_unlock(&bank);
	return sum;
}

static void *teller(void *arg)
{
	for (int i = 0; i < rounds; i++)
		transfer(10);
	return NULL;
}

static void *auditor(void *arg)
{
	for (int i = 0; i < rounds; i++)
		if (audit() != TOTAL)
			mismatches++;
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 30;
	pthread_t a, t;
	pthread_create(&a, NULL, auditor, NULL);
	pthread_create(&t, NULL, teller, NULL);
	pthread_join(a, NULL);
	pthread_join(t, NULL);
	printf("checking %ld, savings %ld, %d mismatches\n", checking, savings, mismatches);
	return 0;
}
