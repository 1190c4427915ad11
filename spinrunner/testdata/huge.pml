/*
 * A state space far too big to search in a test (250^3 counter values,
 * ~1 µs per state): used to exercise timeouts and cancellation.
 */
byte a[3];

active [3] proctype p() {
	do
	:: a[_pid] = (a[_pid] + 1) % 250
	od
}

ltl unreachable { !<> (a[0] == 7 && a[1] == 251) }
