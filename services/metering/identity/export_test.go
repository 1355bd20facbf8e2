package identity

// HashWithProductionCost hashes as a binary built without `go test` does.
func HashWithProductionCost(password string) string {
	return hashPassword(password, argonMemory, argonTime)
}

// CostInTests is the cost a test binary hashes with.
func CostInTests() (memory, time uint32) { return argonCost() }
