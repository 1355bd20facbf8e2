package cursor

import (
	"errors"
	"testing"
)

type pos struct {
	Date string `json:"d"`
	ID   string `json:"i"`
}

func TestRoundTripAndRejections(t *testing.T) {
	c := New([]byte("k1"))
	tok, err := c.Encode("user-1|/v1/transactions", pos{"2026-01-02", "abc"})
	if err != nil {
		t.Fatal(err)
	}
	var got pos
	if err := c.Decode(tok, "user-1|/v1/transactions", &got); err != nil || got.ID != "abc" {
		t.Fatalf("round trip: %v %+v", err, got)
	}
	tampered := "x" + tok[1:]
	cases := map[string]struct {
		codec *Codec
		tok   string
		scope string
	}{
		"foreign scope": {c, tok, "user-2|/v1/transactions"},
		"other key":     {New([]byte("k2")), tok, "user-1|/v1/transactions"},
		"tampered":      {c, tampered, "user-1|/v1/transactions"},
		"no signature":  {c, "eyJkIjoiMSJ9", "user-1|/v1/transactions"},
		"garbage":       {c, "%%%.%%%", "user-1|/v1/transactions"},
		"empty":         {c, "", "user-1|/v1/transactions"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var p pos
			if err := tc.codec.Decode(tc.tok, tc.scope, &p); !errors.Is(err, ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	c := New([]byte("k"))
	tok, _ := c.Encode("s", pos{"d", "i"})
	f.Add(tok)
	f.Add("a.b")
	f.Fuzz(func(t *testing.T, s string) {
		var p pos
		_ = c.Decode(s, "s", &p) // must never panic
	})
}
