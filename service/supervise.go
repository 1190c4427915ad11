package service

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpredict/mcpredict/service/store"
)

// health is what the supervisor learnt about the job store and the queue
// the last time it looked; /healthz reports it.
type health struct {
	mu sync.Mutex
	// storeErr is the last failure to write to the store (nil: the last
	// write succeeded), since when it fails.
	storeErr   error
	storeSince time.Time
	// natsErr is the last failure to reach JetStream.
	natsErr   error
	natsSince time.Time
	// idleSince is when work items started waiting with no worker taking
	// any (zero: workers are taking them).
	idleSince time.Time
	idleItems int
}

func (h *health) setStore(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil && h.storeErr == nil {
		h.storeSince = time.Now()
	}
	h.storeErr = err
}

func (h *health) setNATS(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil && h.natsErr == nil {
		h.natsSince = time.Now()
	}
	h.natsErr = err
}

func (h *health) natsFailing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.natsErr != nil
}

func (h *health) setIdle(items int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case items == 0:
		h.idleSince = time.Time{}
	case h.idleSince.IsZero():
		h.idleSince = time.Now()
	}
	h.idleItems = items
}

// problems lists why work cannot progress now, for /healthz.
func (h *health) problems(noWorkersAfter time.Duration) (storeOK bool, out []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.storeErr != nil {
		out = append(out, fmt.Sprintf("job store failing for %s: %v", now.Sub(h.storeSince).Round(time.Millisecond), h.storeErr))
	}
	if h.natsErr != nil {
		out = append(out, fmt.Sprintf("NATS unreachable for %s: %v", now.Sub(h.natsSince).Round(time.Millisecond), h.natsErr))
	}
	if !h.idleSince.IsZero() && now.Sub(h.idleSince) >= noWorkersAfter {
		out = append(out, fmt.Sprintf("%d models queued and no worker has taken one for %s", h.idleItems, now.Sub(h.idleSince).Round(time.Second)))
	}
	return h.storeErr == nil, out
}

// supervise keeps jobs moving after failures of the job store or of NATS.
// Every period it probes both (for /healthz), adopts the active jobs of
// the store that no goroutine looks after, runs again the jobs that a
// transient failure stopped (after their backoff), records the endings
// that could not be recorded, and queues again the items of NATS jobs whose
// items were lost.
func (s *Server) supervise() {
	t := time.NewTicker(s.cfg.superviseEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.superviseOnce()
	}
}

// natsTimeout bounds each NATS request of the supervisor.
const natsTimeout = 3 * time.Second

func (s *Server) superviseOnce() {
	ctx, cancel := context.WithTimeout(s.ctx, max(30*time.Second, 5*s.cfg.superviseEvery))
	defer cancel()
	storeErr := s.st.Probe(ctx)
	if s.ctx.Err() != nil {
		return
	}
	s.health.setStore(storeErr)
	natsOK := true
	if q := s.cfg.Queue; q != nil {
		// A request sent as the connection drops gets no answer: bound
		// each one, so that a round does not wait for it.
		nctx, cancel := context.WithTimeout(ctx, natsTimeout)
		err := q.Check(nctx)
		cancel()
		s.health.setNATS(err)
		natsOK = err == nil
		if natsOK {
			nctx, cancel := context.WithTimeout(ctx, natsTimeout)
			st, err := q.State(nctx)
			cancel()
			if err == nil {
				idle := 0
				if st.Pending > 0 && st.Waiting == 0 && st.AckPending == 0 {
					idle = st.Pending
				}
				s.health.setIdle(idle)
			}
		}
	}
	if storeErr != nil {
		return // nothing can progress; the jobs wait for the store
	}
	s.adopt(ctx)
	now := time.Now()
	for _, aj := range s.activeJobs() {
		aj.mu.Lock()
		due := aj.stalled && !aj.running && !now.Before(aj.retryAt)
		end := aj.ending
		aj.mu.Unlock()
		switch {
		case due && end != nil:
			aj.mu.Lock()
			aj.stalled = false
			aj.mu.Unlock()
			s.wg.Go(func() { _, _ = s.end(aj, end.state, end.msg) })
		case due:
			s.log.Info("running a job again after a transient failure", "job", aj.id)
			s.launch(aj)
		case s.cfg.Queue != nil && natsOK:
			s.recoverLost(ctx, aj)
		}
	}
}

func (s *Server) activeJobs() []*activeJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*activeJob, 0, len(s.active))
	for _, aj := range s.active {
		out = append(out, aj)
	}
	return out
}

// adopt starts the jobs that the store has queued or running but that are
// not active here: their start or their end failed to be recorded.
func (s *Server) adopt(ctx context.Context) {
	jobs, err := s.st.Jobs(ctx, 0, store.Queued, store.Running)
	if err != nil {
		return
	}
	for i := len(jobs) - 1; i >= 0; i-- {
		j := jobs[i]
		s.mu.Lock()
		_, ok := s.active[j.ID]
		s.mu.Unlock()
		if !ok {
			s.log.Info("resuming job", "job", j.ID, "name", j.Name, "state", j.State, "done", j.Done, "total", j.Total)
			s.launch(s.register(j.ID, nil))
		}
	}
}

// recoverLost queues again the missing items of a NATS job that makes no
// progress and has nothing in the streams: its items were lost (a NATS
// server restarted without its storage, a stream purged by hand). It takes
// two rounds in a row without backlog, so that an item in transit between
// the streams does not count.
func (s *Server) recoverLost(ctx context.Context, aj *activeJob) {
	aj.mu.Lock()
	skip := aj.running || aj.stalled || aj.final || aj.tasks == nil || time.Since(aj.progress) < s.cfg.superviseEvery
	aj.mu.Unlock()
	if skip {
		return
	}
	nctx, cancel := context.WithTimeout(ctx, natsTimeout)
	n, err := s.cfg.Queue.Backlog(nctx, aj.id)
	cancel()
	if err != nil {
		return
	}
	aj.mu.Lock()
	if n > 0 {
		aj.lost = 0
	} else {
		aj.lost++
	}
	lost := aj.lost >= 2
	if lost {
		aj.lost = 0
	}
	aj.mu.Unlock()
	if lost {
		s.log.Warn("the job's work items were lost; queueing them again", "job", aj.id)
		s.launch(aj)
	}
}
