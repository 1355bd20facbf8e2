package admission

import (
	"testing"
	"time"
)

func TestPeriod(t *testing.T) {
	d := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name       string
		calendar   bool
		anchor     string
		now        string
		start, end string
	}{
		{"calendar month", true, "2025-03-17T10:00:00Z", "2026-02-14T23:59:59Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"},
		{"calendar month, first instant", true, "", "2026-12-01T00:00:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"anniversary after the day", false, "2025-03-17T10:00:00Z", "2026-02-20T00:00:00Z", "2026-02-17T00:00:00Z", "2026-03-17T00:00:00Z"},
		{"anniversary before the day", false, "2025-03-17T10:00:00Z", "2026-02-10T00:00:00Z", "2026-01-17T00:00:00Z", "2026-02-17T00:00:00Z"},
		{"anniversary across new year", false, "2025-03-17T10:00:00Z", "2026-01-05T00:00:00Z", "2025-12-17T00:00:00Z", "2026-01-17T00:00:00Z"},
		{"anchor on the 31st, short month", false, "2025-01-31T00:00:00Z", "2026-04-30T12:00:00Z", "2026-04-30T00:00:00Z", "2026-05-31T00:00:00Z"},
		{"anchor on the 31st, February", false, "2025-01-31T00:00:00Z", "2026-03-01T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var anchor time.Time
			if tt.anchor != "" {
				anchor = d(tt.anchor)
			}
			s, e := Period(tt.calendar, anchor, d(tt.now))
			if !s.Equal(d(tt.start)) || !e.Equal(d(tt.end)) {
				t.Fatalf("Period = [%s, %s), want [%s, %s)", s, e, tt.start, tt.end)
			}
		})
	}
}
