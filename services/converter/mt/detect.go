package mt

import "bytes"

// fieldSet is a set of the fields the MT detectors look for at the start of
// a line.
type fieldSet uint64

const (
	f11R fieldSet = 1 << iota
	f11S
	f12
	f19
	f25
	f28D
	f30
	f32A
	f32B
	f32C
	f32D
	f50A
	f50F
	f50K
	f58A
	f58D
	f59
	f59A
	f59F
	f71B
	f75
	f76
	// f30NL is a :30: after a line feed (not at the very start), and
	// f21Before30 a :21: after a line feed before the first of those (or
	// with none): the cash detector asks which of the two comes first.
	f30NL
	f21Before30
)

// lineFields is the set of the detectors' fields that start a line of b (at
// its start or after a line feed), as hasLinePrefix would report each, in
// one pass: the detectors run on every conversion, and asking for each
// field in turn was one pass over the head (or the whole input) per field.
func lineFields(b []byte) fieldSet {
	var set fieldSet
	for at := 0; ; at++ {
		if len(b) >= 4 && b[0] == ':' {
			f := fieldOf(b)
			if at > 0 {
				switch {
				case f == f30:
					set |= f30NL
				case len(b) >= 4 && b[1] == '2' && b[2] == '1' && b[3] == ':' && set&f30NL == 0:
					set |= f21Before30
				}
			}
			set |= f
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return set
		}
		b = b[i+1:]
	}
}

// fieldOf is the detectors' field that line (starting with ':', at least
// four bytes) starts with, 0 for any other.
func fieldOf(line []byte) fieldSet {
	if line[3] == ':' {
		switch string(line[1:3]) {
		case "12":
			return f12
		case "19":
			return f19
		case "25":
			return f25
		case "30":
			return f30
		case "59":
			return f59
		case "75":
			return f75
		case "76":
			return f76
		}
		return 0
	}
	if len(line) < 5 || line[4] != ':' {
		return 0
	}
	switch string(line[1:4]) {
	case "11R":
		return f11R
	case "11S":
		return f11S
	case "28D":
		return f28D
	case "32A":
		return f32A
	case "32B":
		return f32B
	case "32C":
		return f32C
	case "32D":
		return f32D
	case "50A":
		return f50A
	case "50F":
		return f50F
	case "50K":
		return f50K
	case "58A":
		return f58A
	case "58D":
		return f58D
	case "59A":
		return f59A
	case "59F":
		return f59F
	case "71B":
		return f71B
	}
	return 0
}
