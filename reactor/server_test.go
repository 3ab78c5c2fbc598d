package reactor

import "testing"

func TestProcs_LeavesPsForTheShards(t *testing.T) {
	for _, c := range []struct{ loops, ncpu, want int }{
		{2, 2, 3}, // this machine: one P beyond the two loops
		{1, 1, 2},
		{8, 8, 12},
		{4, 16, 12}, // fewer loops than CPUs: the loops' Ps plus half the CPUs
	} {
		if got := Procs(c.loops, c.ncpu); got != c.want {
			t.Errorf("Procs(%d, %d) = %d, want %d", c.loops, c.ncpu, got, c.want)
		}
	}
}
