/* A block typed by a stale pointer of another type (issue 38: Apache
 * 2.0.48's cache_object_t blocks named mem_cache_object_t[1].notes): a
 * struct entry on a list is freed, malloc hands its address to a struct
 * obj of the same size, and the program still compares the list's stale
 * link with the new block. That 8-byte read of a typed pointer to the
 * block's start would decide the block's type (entry, whose 8-byte notes
 * covers complete and refcount); the code that uses the block accesses it
 * through a struct obj *, and every access fits obj: the block is an obj.
 * Two workers race on refcount (a real lost update); only one writes
 * complete. */
#include <pthread.h>
#include <stdlib.h>

struct entry {
	long key;
	const char *notes;
	struct entry *next;
};

struct obj {
	long key;
	int complete;
	int refcount;
	long cleanup;
};

static struct entry head;       /* head.next is stale after the free */
static void *volatile slot;     /* void *, so that no path names the obj */

__attribute__((noinline)) static void use_entry(void)
{
	struct entry *e = malloc(sizeof *e);
	e->key = 1;
	e->notes = "note";
	e->next = NULL;
	head.next = e;
	free(e);
}

static void *worker(void *arg)
{
	struct obj *o = slot;
	for (int i = 0; i < 3; i++)
		o->refcount++;                  /* racy: @race */
	if (arg)
		o->complete = 1;                /* @complete */
	o->cleanup = 0;                         /* @cleanup */
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	use_entry();
	struct obj *o = malloc(sizeof *o);      /* @alloc */
	if ((void *)head.next == (void *)o)     /* the stale link: @stale */
		o->key = 7;
	else
		o->key = 8;
	o->complete = 0;
	o->refcount = 1;                        /* @refcount */
	slot = o;
	pthread_create(&t1, NULL, worker, NULL);
	pthread_create(&t2, NULL, worker, &t1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return o->refcount == 7 ? 0 : 1;
}
