/*
 * count.h — how a worker counts a request it served: the one function in
 * which hitcount (count_split.c) and hitcount_ok (count_add.c) differ.
 */
#ifndef COUNT_H
#define COUNT_H

#include "pagestats.h"

void count_request(struct page_table *t, const char *path);

#endif
