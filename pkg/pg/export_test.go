package pg

import "time"

// NoConflictBackoff takes RetryConflicts' pause out for a test.
func NoConflictBackoff() (restore func()) {
	old := conflictBackoff
	conflictBackoff = func(int) time.Duration { return 0 }
	return func() { conflictBackoff = old }
}
