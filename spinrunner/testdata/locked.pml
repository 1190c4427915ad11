/*
 * The same accesses as lost_update.pml, but t1's read and write are one
 * critical section under lock 0 (the Lock/Unlock inlines of the paper's
 * Fig. 3), so no claim of the lost-update pattern can be violated.
 */
short v = 0;
bit brk1 = 0;
bit brk2 = 0;
byte lk[1];

inline Lock(l, tid)   { atomic { lk[l] == 0 -> lk[l] = tid } }
inline Unlock(l)      { lk[l] = 0 }

proctype t1() {
	Lock(0, 1);
	d_step { v = 1; brk1 = 0 }
	d_step { v = 65; brk1 = 0 }
	Unlock(0)
}

proctype t2() {
	Lock(0, 2);
	d_step { v = 66; brk2 = 0 }
	Unlock(0)
}

init {
	atomic { run t1(); run t2() }
}

ltl P3_1 { !<> ((v==1 && !brk1) && ((v==1 && !brk1) U ((v==66 && !brk1) && ((v==66 && !brk1) U (v==65 && !brk1))))) }
ltl P3_2 { !<> ((v==2 && !brk2) && ((v==2 && !brk2) U ((v==65 && !brk2) && ((v==65 && !brk2) U (v==66 && !brk2))))) }
