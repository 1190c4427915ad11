/*
 * rec_heap_names.c — heap memory named the same in every run.
 *
 * main builds a list of four counters, then two workers walk it and each
 * add their hits to the last node's count without a lock: a lost update
 * (P3, R1 W2 W1) on the fourth node.
 *
 * The recorder names heap memory after the pointer the program reached it
 * through when that path is short and runs through no list link (head,
 * head->next), and otherwise by its type and allocation site: the fourth
 * node, reached through head->next->next->next, is
 * node.count(calloc@rec_heap_names.c:LINE#4) — struct node's field count
 * of the fourth block allocated at that line — and the report adds the
 * path as a detail. The per-worker statistics blocks, reached only
 * through the thread argument (a register), get their type from the
 * pointer the worker accesses them through (struct stats *st):
 * stats.walked(calloc@…#1). No name contains an address, so two
 * recordings of this program give the same variables and the same bug
 * ids.
 *
 *   mcpredict cc -O1 -o rec_heap_names rec_heap_names.c
 *   mcpredict record -o heap.csv -- ./rec_heap_names 2 20000
 *   mcpredict run heap.csv
 *
 * mcpredict:args 2 20000
 * mcpredict:expect P3 node.count(calloc@rec_heap_names.c:52#4) local:Read@read remote:Write@write local:Write@write
 * mcpredict:notexhibited node.count(calloc@rec_heap_names.c:52#4)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct node {
	long id;
	long count;
	struct node *next;
};

struct stats {
	long walked;
	long added;
};

static struct node *head;
static long rounds;

static struct node *build(int n)
{
	struct node *tail = NULL;
	for (int i = 0; i < n; i++) {
		struct node *nd = calloc(1, sizeof *nd); /* the site of every node */
		nd->id = i;
		if (tail)
			tail->next = nd;
		else
			head = nd;
		tail = nd;
	}
	return tail;
}

__attribute__((noinline)) static void add(struct node *last, long hits)
{
	long c = last->count;  /* @read: BUG, the read ... */
	last->count = c + hits; /* @write: ... and the write are not one atomic step */
}

static void *worker(void *arg)
{
	struct stats *st = arg;
	for (long r = 0; r < rounds; r++) {
		struct node *nd = head;
		while (nd->next) {
			nd = nd->next;
			st->walked++;
		}
		add(nd, 1);
		st->added++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 2;
	long stagger = argc > 2 ? atol(argv[2]) : 0;
	struct node *last = build(4);
	pthread_t t[2];
	struct stats *st[2];
	for (int i = 0; i < 2; i++) {
		st[i] = calloc(1, sizeof(struct stats));
		pthread_create(&t[i], NULL, worker, st[i]);
		if (i == 0 && stagger > 0)
			usleep((useconds_t)stagger); /* not synchronisation: no order in the model */
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("count %ld (expected %ld), walked %ld\n", last->count, 2 * rounds, st[0]->walked + st[1]->walked);
	for (int i = 0; i < 2; i++)
		free(st[i]);
	while (head) {
		struct node *nx = head->next;
		free(head);
		head = nx;
	}
	return 0;
}
