// Package clock is the time source every service takes in its Config: a
// func() time.Time, so tests move periods, TTLs and retries without
// sleeping. It owns only the default.
package clock

import "time"

// Or returns c, or time.Now when c is nil.
func Or[C ~func() time.Time](c C) C {
	if c == nil {
		return time.Now
	}
	return c
}
