/* mcpredict model of a[0]
 * trace:    splash-barrier.csv
 * t1:       thread 2 of the trace (handle 2)
 * t2:       thread 3 of the trace (handle 3)
 *
 * v packs the last access to the variable (bits 0-6: read by tN = N,
 * write by tN = 64+N) and, since each thread's last access, whether it
 * blocked on synchronization (brk: t1 128, t2 256) or released a lock
 * after accessing v (pub: t1 512, t2 1024). An access sets the value and
 * clears its thread's flags in one assignment.
 */
short v = 0;
byte prog1 = 0; /* progress of t1 that t2 waits for (causal order) */
byte prog2 = 0; /* progress of t2 that t1 waits for (causal order) */

proctype t1() { /* thread 2, handle 2 */
  v = (v & 1280) | 65; /* Write fft.c:20 (trace line 17) */
  atomic { v = v | 128; prog1 = 1 } /* Boundary fft.c:22 (trace line 19, BarrierWait) */
  atomic { prog2 >= 1 -> v = (v & 1280) | 1 } /* Read fft.c:32 (trace line 33) */
  v = (v & 1280) | 65; /* Write fft.c:32 (trace line 34) */
}

proctype t2() { /* thread 3, handle 3 */
  atomic { prog1 >= 1 -> v = (v & 640) | 2; prog2 = 1 } /* Read fft.c:24 (trace line 21) */
}

init { atomic { run t1(); run t2() } }

/* P2 stale read after local write, local thread t1: W1 R1* A2* W2 A2* R1 */
ltl P2_1 { !<> (((v & 767) == 65) && (((v & 767) == 65) U (((v & 767) == 1) U ((((v & 767) == 2) || ((v & 767) == 66)) U (((v & 767) == 66) && (((v & 767) == 66) U ((((v & 767) == 2) || ((v & 767) == 66)) U (((v & 767) == 1) && ((v & 2048) == 0))))))))) }

/* P2 stale read after local write, local thread t2: W1 R1* A2* W2 A2* R1 */
ltl P2_2 { !<> (((v & 1407) == 66) && (((v & 1407) == 66) U (((v & 1407) == 2) U ((((v & 1407) == 1) || ((v & 1407) == 65)) U (((v & 1407) == 65) && (((v & 1407) == 65) U ((((v & 1407) == 1) || ((v & 1407) == 65)) U (((v & 1407) == 2) && ((v & 4096) == 0))))))))) }
