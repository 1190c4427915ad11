short v = 0;

proctype t1() {
	v = = 1
}

init { run t1() }

ltl P1_1 { !<> (v==1) }
