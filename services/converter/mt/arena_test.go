package mt

import (
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// TestParseArenasNotShared: Parse recycles its lexer arenas and hands out
// statements from shared slices; a result must not change when later or
// concurrent parses reuse that memory.
func TestParseArenasNotShared(t *testing.T) {
	inputs := [][]byte{benchInput(t, 64<<10), benchInput(t, 2000)}
	for _, f := range sampleFilesQuiet() {
		if in, err := os.ReadFile(f); err == nil {
			inputs = append(inputs, in)
		}
	}
	type result struct {
		st    []*statement.Statement
		warns []statement.Warning
		err   error
	}
	parse := func(in []byte) result {
		st, warns, err := Parse(in, statement.Options{Field86Profile: "german"})
		return result{st, warns, err}
	}
	first := make([]result, len(inputs))
	for i, in := range inputs {
		first[i] = parse(in)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, in := range inputs {
				if got := parse(in); !reflect.DeepEqual(got, first[i]) {
					t.Errorf("input %d: concurrent parse differs", i)
				}
			}
		}()
	}
	wg.Wait()
	for i, in := range inputs {
		if !reflect.DeepEqual(parse(in), first[i]) {
			t.Errorf("input %d: result changed after later parses", i)
		}
	}
}
