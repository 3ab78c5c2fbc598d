package bench

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestCompare_ScheduleAlternatesABBA(t *testing.T) {
	if got := Schedule(3, true); !reflect.DeepEqual(got, []int{0, 1, 1, 0, 0, 1}) {
		t.Fatalf("Schedule(3) = %v", got)
	}
	if got := Schedule(4, true); !reflect.DeepEqual(got, []int{0, 1, 1, 0, 0, 1, 1, 0}) {
		t.Fatalf("Schedule(4) = %v", got)
	}
	if got := Schedule(2, false); !reflect.DeepEqual(got, []int{0, 0}) {
		t.Fatalf("Schedule(2, one server) = %v", got)
	}
	// Each server runs first in half of the pairs.
	s := Schedule(10, true)
	firstA := 0
	for i := 0; i < len(s); i += 2 {
		if s[i] == 0 {
			firstA++
		}
	}
	if firstA != 5 {
		t.Fatalf("A first in %d of 10 pairs", firstA)
	}
}

func TestCompare_Median(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{7}, 7}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{5, 5, 100}, 5}} {
		in := append([]float64(nil), c.in...)
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		if !reflect.DeepEqual(in, c.in) {
			t.Errorf("Median reordered its input")
		}
	}
}

func fakeRun(server string, ops, p50, p99 float64, errs uint64) RunSummary {
	s := Summary{Type: "Gets", OpsSec: ops, P50Ms: p50, P99Ms: p99, Errors: errs}
	tot := s
	tot.Type = "Totals"
	return RunSummary{Server: server, Seconds: 1, Types: []Summary{s}, Totals: tot}
}

func TestCompare_MedianRunAndRatio(t *testing.T) {
	a := MedianRun([]RunSummary{fakeRun("a", 100, 1, 9, 0), fakeRun("a", 300, 3, 7, 0), fakeRun("a", 200, 2, 8, 0)})
	b := MedianRun([]RunSummary{fakeRun("b", 50, 4, 20, 1), fakeRun("b", 150, 2, 10, 3)})
	if a.Server != "a" || a.Totals.OpsSec != 200 || a.Totals.P50Ms != 2 || a.Totals.P99Ms != 8 {
		t.Fatalf("median A %+v", a.Totals)
	}
	if b.Totals.OpsSec != 100 || b.Totals.P50Ms != 3 || b.Totals.P99Ms != 15 || b.Totals.Errors != 2 {
		t.Fatalf("median B %+v", b.Totals)
	}
	r := Ratios(a, b)
	if len(r) != 2 || r[0].Type != "Gets" || r[1].Type != "Totals" {
		t.Fatalf("ratios %+v", r)
	}
	if r[1].OpsSec != 2 || math.Abs(float64(r[1].P50Ms)-2.0/3) > 1e-12 || math.Abs(float64(r[1].P99Ms)-8.0/15) > 1e-12 {
		t.Fatalf("totals ratio %+v", r[1])
	}
	// B at zero: the ratio is undefined, printed n/a and written as null.
	zero := fakeRun("b", 0, 0, 0, 0)
	r = Ratios(a, zero)
	if !math.IsNaN(float64(r[1].OpsSec)) || fmtRatio(r[1].OpsSec) != "n/a" || fmtRatio(2) != "2.00x" {
		t.Fatalf("ratio against zero %+v", r[1])
	}
	js, err := json.Marshal(r[1])
	if err != nil || !strings.Contains(string(js), `"ops_sec":null`) {
		t.Fatalf("json %s, %v", js, err)
	}
	var back Ratio
	if err := json.Unmarshal(js, &back); err != nil || !math.IsNaN(float64(back.OpsSec)) {
		t.Fatalf("unmarshal %+v %v", back, err)
	}
	var out strings.Builder
	PrintComparison(&out, 2, a, b)
	if !strings.Contains(out.String(), "order A B B A") || !strings.Contains(out.String(), "2.00x") {
		t.Fatalf("comparison:\n%s", out.String())
	}
}
