package gen

import "strconv"

// Source lines of the fft workload (file fft.c).
const (
	fftFile      = "fft.c"
	fftInitLine  = 20 // main: x1[k] = input[k]
	fftCreate    = 22
	fftReadPart  = 30 // worker: a = src[partner's element]
	fftReadOwn   = 31 // worker: b = src[k]
	fftWriteOwn  = 32 // worker: dst[k] = butterfly(a, b)
	fftBarrier   = 34
	fftLock      = 36
	fftSum       = 37 // worker: sum += local
	fftUnlock    = 38
	fftJoin      = 40
	fftReadSum   = 41 // main: print(sum)
	fftRacy      = 50 // worker: racy_countB++ without the lock, line 50+B (Config.Bugs)
	fftBarrierID = "phase_bar"
	fftLockID    = "sum_lock"
	fftSumVar    = "sum"
)

// writeFFT writes the fft workload: see the package comment. Thread i owns
// elements [i*V/N, (i+1)*V/N) of both buffers x0 and x1. In phase p it
// writes its elements of buffer p%2 from its own and a partner's elements
// of the other buffer, which nobody writes during the phase; the barrier
// at the end of every phase orders and separates the phases, so no thread
// ever has two accesses of one region that another thread's write can
// split.
func writeFFT(e *emitter, r *rng, c Config) (Stats, error) {
	n := c.Threads
	if n == 0 {
		n = 4
	}
	v := c.Vars
	if v == 0 {
		v = 16
	}
	phases := c.Phases
	if phases == 0 {
		phases = 4
	}
	if c.Events > 0 {
		fixed := int64(v + n + 4*n + n + 1)
		per := int64(3*v + n + 2*n*c.Bugs)
		phases = int(max(1, (c.Events-fixed+per-1)/per))
	}
	names := [2][]string{make([]string, v), make([]string, v)}
	for k := 0; k < v; k++ {
		names[0][k] = "x0[" + strconv.Itoa(k) + "]"
		names[1][k] = "x1[" + strconv.Itoa(k) + "]"
	}
	counters := make([]string, c.Bugs) // the seeded racy counters
	for b := range counters {
		counters[b] = "racy_count" + strconv.Itoa(b)
	}
	const mainThread = "main"
	handles := make([]string, n)
	for i := range handles {
		handles[i] = "fft" + strconv.Itoa(i+1)
	}
	slice := func(i int) (int, int) { return i * v / n, (i + 1) * v / n }

	err := func() error {
		if err := e.comment("mcpredict gen --kind fft --seed %d --threads %d --vars %d --phases %d", c.Seed, n, v, phases); err != nil {
			return err
		}
		// Buffer 1 is the input of phase 0.
		for k := 0; k < v; k++ {
			if err := e.event(mainThread, fftFile, fftInitLine, "Write", names[1][k], ""); err != nil {
				return err
			}
		}
		for _, h := range handles {
			if err := e.event(mainThread, fftFile, fftCreate, "Create", h, ""); err != nil {
				return err
			}
		}
		s := &sched{e: e, r: r, file: fftFile, th: make([]sthread, n), holder: make([]int, 1)}
		for i := range s.th {
			s.th[i].handle = handles[i]
		}
		for p := 0; p < phases; p++ {
			dst, src := p%2, 1-p%2
			for i := range s.th {
				ops := s.th[i].ops[:0]
				partner := i
				if n > 1 {
					partner = (i + 1 + p%(n-1)) % n
				}
				lo, hi := slice(i)
				plo, phi := slice(partner)
				for k := lo; k < hi; k++ {
					if phi > plo {
						j := plo + (k-lo)%(phi-plo)
						ops = append(ops, op{act: "Read", obj: names[src][j], line: fftReadPart})
					}
					ops = append(ops,
						op{act: "Read", obj: names[src][k], line: fftReadOwn},
						op{act: "Write", obj: names[dst][k], line: fftWriteOwn})
				}
				for b := 0; b < c.Bugs; b++ {
					// The seeded bug: count++ with no lock, every phase.
					ctr := counters[b]
					ops = append(ops,
						op{act: "Read", obj: ctr, line: fftRacy + b},
						op{act: "Write", obj: ctr, line: fftRacy + b})
				}
				ops = append(ops, op{act: "BarrierWait", obj: fftBarrierID, line: fftBarrier})
				s.th[i].ops = ops
			}
			if err := s.run(); err != nil {
				return err
			}
		}
		// The reduction: each worker adds its part under the lock.
		for i := range s.th {
			s.th[i].ops = append(s.th[i].ops[:0],
				op{act: "Lock", obj: fftLockID, line: fftLock, kind: opLock},
				op{act: "Read", obj: fftSumVar, line: fftSum},
				op{act: "Write", obj: fftSumVar, line: fftSum},
				op{act: "Unlock", obj: fftLockID, line: fftUnlock, kind: opUnlock})
		}
		if err := s.run(); err != nil {
			return err
		}
		for _, h := range handles {
			if err := e.event(mainThread, fftFile, fftJoin, "Join", h, ""); err != nil {
				return err
			}
		}
		return e.event(mainThread, fftFile, fftReadSum, "Read", fftSumVar, "")
	}()
	st := Stats{Threads: n + 1}
	for b := 0; b < c.Bugs; b++ {
		st.Bugs = append(st.Bugs, SeededBug{Pattern: "P3", Kind: "unlocked counter increment",
			Var: "racy_count" + strconv.Itoa(b), File: fftFile, Lines: []int{fftRacy + b}})
	}
	return st, e.stopErr(err)
}
