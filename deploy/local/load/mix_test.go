package load

import (
	"strings"
	"testing"
)

func TestParseMix(t *testing.T) {
	tests := []struct {
		in      string
		want    []Share
		wantErr string
	}{
		{in: "validate=3", want: []Share{{"validate", 3}}},
		{in: " validate = 3 , batch=1,", want: []Share{{"validate", 3}, {"batch", 1}}},
		{in: "validate=0,batch=2", want: []Share{{"batch", 2}}},
		{in: DefaultMix, want: nil},
		{in: "", wantErr: "no scenario"},
		{in: "validate=0", wantErr: "no scenario"},
		{in: "validate", wantErr: "not name=weight"},
		{in: "nope=1", wantErr: "unknown scenario"},
		{in: "validate=1,validate=2", wantErr: "twice"},
		{in: "validate=-1", wantErr: "weight"},
		{in: "validate=1001", wantErr: "weight"},
		{in: "validate=1.5", wantErr: "weight"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMix(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseMix(%q) = %v, %v; want error with %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil && len(got) != len(tt.want) {
				t.Fatalf("ParseMix(%q) = %v, want %v", tt.in, got, tt.want)
			}
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Fatalf("ParseMix(%q) = %v, want %v", tt.in, got, tt.want)
				}
			}
		})
	}
}

// checkSchedule holds for any mix: each scenario appears exactly its weight
// times, and no scenario's occurrences bunch up (between two of them there
// are never more than 2*total/weight+1 positions).
func checkSchedule(t *testing.T, shares []Share) {
	t.Helper()
	sched := schedule(shares)
	total, counts := 0, map[string]int{}
	for _, s := range shares {
		total += s.Weight
	}
	if len(sched) != total {
		t.Fatalf("schedule of %v has %d entries, want %d", shares, len(sched), total)
	}
	last := map[string]int{}
	for i, name := range sched {
		counts[name]++
		if j, ok := last[name]; ok {
			for _, s := range shares {
				if s.Scenario == name && i-j > 2*total/s.Weight+1 {
					t.Fatalf("schedule of %v: %s at %d and %d, gap above %d", shares, name, j, i, 2*total/s.Weight+1)
				}
			}
		}
		last[name] = i
	}
	for _, s := range shares {
		if counts[s.Scenario] != s.Weight {
			t.Fatalf("schedule of %v has %s %d times, want %d", shares, s.Scenario, counts[s.Scenario], s.Weight)
		}
	}
}

func TestScheduleKeepsProportions(t *testing.T) {
	for _, mix := range []string{DefaultMix, "validate=1", "validate=1,batch=1", "validate=997,batch=3,finance-read=13"} {
		shares, err := ParseMix(mix)
		if err != nil {
			t.Fatal(err)
		}
		checkSchedule(t, shares)
	}
}

// FuzzParseMix: any input is either refused with an error or yields known
// scenarios with weights in range, whose schedule keeps the proportions.
func FuzzParseMix(f *testing.F) {
	for _, s := range []string{DefaultMix, "validate=1", "validate=,", "=1", "batch=1000,validate=1", "a=b=c", "validate=1\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		shares, err := ParseMix(in)
		if err != nil {
			return
		}
		for _, s := range shares {
			if _, ok := scenarios[s.Scenario]; !ok || s.Weight < 1 || s.Weight > maxWeight {
				t.Fatalf("ParseMix(%q) = %v", in, shares)
			}
		}
		checkSchedule(t, shares)
	})
}
