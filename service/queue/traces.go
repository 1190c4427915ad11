package queue

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/nats.go/jetstream"
)

// TraceBucket is the JetStream object store of the traces of sharded jobs
// (work.Shard): the server puts a job's trace there before it queues the
// job's shards, the workers fetch it, and the server deletes it when the
// job ends.
const TraceBucket = "MCPREDICT_TRACES"

// traceStore returns the trace bucket, creating it if needed.
func traceStore(ctx context.Context, js jetstream.JetStream, storage jetstream.StorageType) (jetstream.ObjectStore, error) {
	os, err := js.ObjectStore(ctx, TraceBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		os, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      TraceBucket,
			Description: "mcpredict traces of jobs whose models the workers project",
			Storage:     storage,
		})
	}
	if err != nil {
		return nil, fmt.Errorf("trace store %s: %w", TraceBucket, err)
	}
	return os, nil
}

// PutTrace stores the file at path as object name, unless an object of
// that name and size is there already (a job resumed after a restart).
func (q *Queue) PutTrace(ctx context.Context, name, path string) error {
	st, err := traceStore(ctx, q.js, q.storage)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("storing trace %s: %w", name, err)
	}
	if info, err := st.GetInfo(ctx, name); err == nil && int64(info.Size) == fi.Size() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("storing trace %s: %w", name, err)
	}
	defer f.Close()
	if _, err := st.Put(ctx, jetstream.ObjectMeta{Name: name}, f); err != nil {
		return fmt.Errorf("storing trace %s (%d bytes) in %s: %w", name, fi.Size(), TraceBucket, err)
	}
	return nil
}

// DeleteTrace removes object name; a missing one, or a missing bucket, is
// no error.
func (q *Queue) DeleteTrace(ctx context.Context, name string) error {
	st, err := q.js.ObjectStore(ctx, TraceBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("trace store %s: %w", TraceBucket, err)
	}
	if err := st.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		return fmt.Errorf("deleting trace %s: %w", name, err)
	}
	return nil
}

// errTraceGone is the error of a fetch whose trace is not in the store: its
// job has ended (done or cancelled), and its shard is dropped.
var errTraceGone = errors.New("the trace is no longer in the store: its job has ended")

// fetchTrace copies object name of the trace store to the file dst.
func fetchTrace(ctx context.Context, js jetstream.JetStream, name, dst string) error {
	st, err := js.ObjectStore(ctx, TraceBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return fmt.Errorf("fetching trace %s: %w", name, errTraceGone)
	}
	if err != nil {
		return fmt.Errorf("trace store %s: %w", TraceBucket, err)
	}
	if err := st.GetFile(ctx, name, dst); err != nil {
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			err = errTraceGone
		}
		return fmt.Errorf("fetching trace %s: %w", name, err)
	}
	return nil
}
