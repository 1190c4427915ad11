package main

import (
	"context"
	"testing"
	"time"
)

func TestWatchHeap(t *testing.T) {
	ctx, over := watchHeap(context.Background(), 1) // any heap is over a byte
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a heap over its bound did not cancel the context")
	}
	if !over() {
		t.Error("over() = false after the bound was passed")
	}
	ctx, over = watchHeap(context.Background(), 1<<50)
	time.Sleep(120 * time.Millisecond)
	if ctx.Err() != nil || over() {
		t.Error("a heap under its bound cancelled the context")
	}
	if ctx, over := watchHeap(context.Background(), 0); ctx.Err() != nil || over() {
		t.Error("no bound cancelled the context")
	}
}
