package load

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultMix weighs metered converts most, as the platform's traffic is
// mostly conversions; every scenario has a share so one run touches each.
const DefaultMix = "convert-mt940-camt053=50,convert-camt053-mt940=10,convert-mt103-pacs008=10," +
	"convert-pacs008-mt103=10,validate=8,batch=4,finance-read=6,finance-write=2"

// Share is one scenario's weight in a mix.
type Share struct {
	Scenario string
	Weight   int
}

// maxWeight bounds one weight, so the schedule a mix expands to stays small.
const maxWeight = 1000

// ParseMix reads "name=weight,name=weight". Names must be known scenarios,
// each at most once; weights are integers from 0 to 1000 (0 leaves the
// scenario out) and at least one must be positive.
func ParseMix(s string) ([]Share, error) {
	var out []Share
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("mix: %q is not name=weight", part)
		}
		if !slices.Contains(ScenarioNames(), name) {
			return nil, fmt.Errorf("mix: unknown scenario %q (known: %s)", name, strings.Join(ScenarioNames(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("mix: scenario %q given twice", name)
		}
		seen[name] = true
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 0 || n > maxWeight {
			return nil, fmt.Errorf("mix: weight of %q must be an integer from 0 to %d", name, maxWeight)
		}
		if n > 0 {
			out = append(out, Share{Scenario: name, Weight: n})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("mix: no scenario with a positive weight")
	}
	return out, nil
}

// schedule expands shares into a sequence in which each scenario appears
// Weight times, spread evenly (smooth weighted round robin): request n runs
// schedule[n % len], so any window of the run sees the mix's proportions.
func schedule(shares []Share) []string {
	total := 0
	for _, s := range shares {
		total += s.Weight
	}
	current := make([]int, len(shares))
	out := make([]string, 0, total)
	for range total {
		best := 0
		for i, s := range shares {
			current[i] += s.Weight
			if current[i] > current[best] {
				best = i
			}
		}
		current[best] -= total
		out = append(out, shares[best].Scenario)
	}
	return out
}
