/*
 * two_locks.c — one variable protected by two different locks: a lost
 * update that no lock-set discipline at each site reveals.
 *
 * A warehouse keeps its stock in one counter. Orders update it under
 * order_lock, deliveries under delivery_lock (as after a lock split that
 * missed a shared field). Each read-modify-write is in a critical
 * section, yet the two sections do not exclude each other, so a delivery
 * can come between an order's read and its write and be lost, and the
 * other way round (pattern P3, lost update: R1 W2 W1, with either path as
 * the local thread).
 *
 * With a stagger (second argument, microseconds) the deliveries start
 * after the orders are done: the recorded run loses nothing, and mcpredict
 * predicts both lost updates.
 *
 *   mcpredict cc -O1 -o two_locks two_locks.c
 *   mcpredict record -o two_locks.csv -- ./two_locks 2 20000
 *   mcpredict run two_locks.csv
 *
 * mcpredict:args 2 20000
 * mcpredict:expect P3 stock local:Read@order-read remote:Write@delivery local:Write@order-write
 * mcpredict:expect P3 stock local:Read@delivery remote:Write@order-write local:Write@delivery
 * mcpredict:notexhibited stock
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long stock = 100;
static long orders_failed;
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t delivery_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static int take_order(long qty)
{
	int ok;
	pthread_mutex_lock(&order_lock);
	long s = stock;           /* @order-read: R stock */
	ok = s >= qty;
	if (ok)
		stock = s - qty;  /* @order-write: W stock */
	else
		orders_failed++;
	pthread_mutex_unlock(&order_lock);
	return ok;
}

__attribute__((noinline)) static void receive_delivery(long qty)
{
	pthread_mutex_lock(&delivery_lock);
	stock = stock + qty;      /* @delivery: R and W stock, under the other lock */
	pthread_mutex_unlock(&delivery_lock);
}

static void *orders(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		take_order(7);
	return NULL;
}

static void *deliveries(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		receive_delivery(5);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	pthread_t o, d;
	pthread_create(&o, NULL, orders, (void *)n);
	if (stagger > 0)
		usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	pthread_create(&d, NULL, deliveries, (void *)n);
	pthread_join(o, NULL);
	pthread_join(d, NULL);
	printf("stock %ld (expected %ld)\n", stock, 100 - 7 * (n - orders_failed) + 5 * n);
	return 0;
}
