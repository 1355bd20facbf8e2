package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBatchItems(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int64
		bad  bool
	}{
		{`{"items":[{"message":"a"},{"message":"b"}]}`, 2, false},
		{`{"to":"camt.053","items":[1,"x",null,[1,[2]],{"a":{"b":[]}}],"ttl_seconds":5}`, 5, false},
		{`{"items":[]}`, 0, false},
		{`{"items":[1,2,3,4,5,6]}`, 6, false}, // the limit 5 is passed: counting stops at 6
		{`{"items":[1,2,3,4,5,6,7,8]}`, 6, false},
		{`{"to":"x"}`, 0, true},
		{`{"items":{"message":"x"}}`, 0, true},
		{`{"items":[1,2],"items":[3]}`, 0, true},
		{`{"items":[1,}`, 0, true},
		{`{"items":[1,2]`, 0, true},
		{`[1,2]`, 0, true},
		{``, 0, true},
		{`{"items":[{"message":"a"}]} trailing`, 1, false}, // the jobs service refuses what follows
	} {
		n, err := batchItems([]byte(tc.body), 5)
		if (err != nil) != tc.bad || (!tc.bad && n != tc.want) {
			t.Errorf("%s: %d %v", tc.body, n, err)
		}
	}
}

// FuzzBatchItems: any body either is refused or is counted; a body
// encoding/json reads as an object with an items array of at most the
// limit is counted exactly as long as that array.
func FuzzBatchItems(f *testing.F) {
	for _, s := range []string{`{"items":[{"message":"a"}]}`, `{"items":[]}`, `{"a":1,"items":[1,[2],{"b":3}]}`, `[]`, `{"items":[1,`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := batchItems(body, 50)
		var b struct {
			Items []json.RawMessage `json:"items"`
		}
		if json.Unmarshal(body, &b) != nil || b.Items == nil || strings.Count(string(body), `"items"`) != 1 {
			return
		}
		if err != nil || n != min(int64(len(b.Items)), 51) {
			t.Fatalf("%q: %d %v; encoding/json reads %d items", body, n, err, len(b.Items))
		}
	})
}
