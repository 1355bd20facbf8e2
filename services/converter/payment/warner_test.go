package payment

import (
	"strconv"
	"testing"
)

// TestWarnerFolds: a repeat of a code at a path folds into one warning with
// a count, whether the list is still scanned or already indexed; a cut
// never folds; past maxWarnings a code folds whatever its path.
func TestWarnerFolds(t *testing.T) {
	for _, distinct := range []int{1, scanWarnings - 1, scanWarnings, scanWarnings + 1, 3 * scanWarnings} {
		t.Run(strconv.Itoa(distinct), func(t *testing.T) {
			var w Warner
			for round := 0; round < 3; round++ {
				for i := 0; i < distinct; i++ {
					w.Add(CodeFieldDropped, "Path"+strconv.Itoa(i), i, "dropped %d", i)
				}
			}
			w.Add(CodeTruncated, "Cut", 0, "cut")
			w.Add(CodeTruncated, "Cut", 0, "cut")
			got := w.Result()
			if len(got) != distinct+2 {
				t.Fatalf("%d warnings, want %d", len(got), distinct+2)
			}
			for i := 0; i < distinct; i++ {
				if want := "dropped " + strconv.Itoa(i) + " (3 times)"; got[i].Message != want || got[i].Line != i {
					t.Fatalf("warning %d = %+v, want %q", i, got[i], want)
				}
			}
			if got[distinct].Message != "cut" || got[distinct+1].Message != "cut" {
				t.Fatalf("cuts folded: %+v", got[distinct:])
			}
		})
	}
	t.Run("past the bound", func(t *testing.T) {
		var w Warner
		for i := 0; i < maxWarnings+50; i++ {
			w.Add(CodeFieldDropped, "Path"+strconv.Itoa(i), 0, "dropped %d", i)
			w.Add(CodeTruncated, "Cut"+strconv.Itoa(i), 0, "cut %d", i)
		}
		got := w.Result()
		if len(got) != maxWarnings+2 {
			t.Fatalf("%d warnings, want %d", len(got), maxWarnings+2)
		}
		if last := got[len(got)-1]; last.Code != CodeTruncated || last.Message != "cut 100 (150 times)" {
			t.Fatalf("last = %+v", last)
		}
	})
}

// TestWarnerAddText: a written-out message is kept as it is (a '%' too),
// and folds with Add's of the same code and path.
func TestWarnerAddText(t *testing.T) {
	var w Warner
	w.AddText(CodeFieldDropped, "A", 3, "100% of A dropped")
	w.Add(CodeFieldDropped, "A", 3, "%s", "again")
	w.Add(CodeFieldDropped, "B", 0, "100%")
	got := w.Result()
	if len(got) != 2 || got[0].Message != "100% of A dropped (2 times)" || got[0].Line != 3 || got[1].Message != "100%!(NOVERB)" {
		t.Fatalf("got %+v", got)
	}
}
