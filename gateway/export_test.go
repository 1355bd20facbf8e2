package gateway

import "time"

// SetBodyReadGraceForTest shortens bodyReadGrace (and the per-byte
// allowance) until the returned function restores them.
func SetBodyReadGraceForTest(d time.Duration) func() {
	grace, floor := bodyReadGrace, bodyReadFloor
	bodyReadGrace, bodyReadFloor = d, 1<<40
	return func() { bodyReadGrace, bodyReadFloor = grace, floor }
}
