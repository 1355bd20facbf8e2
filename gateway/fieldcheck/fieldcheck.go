// Package fieldcheck names the member of a request that does not fit its
// protobuf message. The edge's JSON decoding (protojson, through
// grpc-gateway) refuses such a request with an error whose text protobuf-go
// keeps deliberately unstable; this package reads the request itself
// against the message's descriptor, so the edge can answer 400 naming the
// field as the client wrote it without parsing anyone's error text. It
// follows protojson's rules for what fits (the fuzz test holds the two to
// agreeing) and owns nothing else.
package fieldcheck

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Finding is the member that does not fit: Field is its dotted path as the
// client wrote it ("body" when the body is not JSON at all), Detail says
// why in plain words.
type Finding struct {
	Field, Detail string
}

// Body returns the first member of the JSON body, in document order, that
// does not fit md, and false when every member fits.
func Body(body []byte, md protoreflect.MessageDescriptor) (Finding, bool) {
	if !utf8.Valid(body) {
		return Finding{"body", "the request body is not valid UTF-8"}, true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := walker{dec: dec}
	f, bad := w.messageValue(md, "", md.FullName() == "google.protobuf.Value")
	if !bad {
		// One JSON value, nothing after it.
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return syntax(), true
		}
	}
	return f, bad
}

// Query returns the first query parameter whose value does not fit its
// field of md (a dotted path of proto names, as grpc-gateway reads them);
// parameters that name no field are not its concern (grpc-gateway ignores
// them).
func Query(values url.Values, md protoreflect.MessageDescriptor) (Finding, bool) {
	for key, vs := range values {
		fd := fieldByPath(md, key)
		if fd == nil || fd.IsMap() || fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
			continue
		}
		if !fd.IsList() && len(vs) > 1 {
			return Finding{key, "parameter " + key + " is given more than once"}, true
		}
		for _, v := range vs {
			if !queryText(fd, v) {
				return Finding{key, "invalid value for parameter " + key + ": want " + kindWord(fd)}, true
			}
		}
	}
	return Finding{}, false
}

// UnknownQuery returns the first query parameter, in name order, that names
// no field of md: grpc-gateway would drop it silently, so `?pagesize=3`
// would answer a default page as if the client had asked for it.
func UnknownQuery(values url.Values, md protoreflect.MessageDescriptor) (Finding, bool) {
	keys := make([]string, 0, len(values))
	for key := range values {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if fieldByPath(md, key) == nil {
			return Finding{key, "unknown query parameter " + key}, true
		}
	}
	return Finding{}, false
}

func fieldByPath(md protoreflect.MessageDescriptor, path string) protoreflect.FieldDescriptor {
	var fd protoreflect.FieldDescriptor
	for i, part := range strings.Split(path, ".") {
		if i > 0 {
			if fd == nil || fd.Message() == nil {
				return nil
			}
			md = fd.Message()
		}
		fd = lookup(md, part)
		if fd == nil {
			return nil
		}
	}
	return fd
}

// lookup finds a field by its JSON name or its proto name, as protojson
// does.
func lookup(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByJSONName(name); fd != nil {
		return fd
	}
	if fd := md.Fields().ByTextName(name); fd != nil {
		return fd
	}
	return nil
}

func syntax() Finding { return Finding{"body", "the request body is not valid JSON"} }

type walker struct{ dec *json.Decoder }

// message reads one object (or null) for md at path.
func (w walker) message(md protoreflect.MessageDescriptor, path string, nullable bool) (Finding, bool) {
	tok, err := w.dec.Token()
	if err != nil {
		return syntax(), true
	}
	if tok == nil && nullable {
		return Finding{}, false
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return invalid(path, "an object"), true
	}
	seen := map[protoreflect.FieldNumber]bool{}
	oneofs := map[protoreflect.FullName]bool{}
	for w.dec.More() {
		kt, err := w.dec.Token()
		if err != nil {
			return syntax(), true
		}
		key, _ := kt.(string)
		at := join(path, key)
		fd := lookup(md, key)
		if fd == nil {
			if key == "" {
				return Finding{"body", "the request body has a member without a name"}, true
			}
			return Finding{at, "unknown field " + at}, true
		}
		if seen[fd.Number()] {
			return Finding{at, "field " + at + " is given more than once"}, true
		}
		seen[fd.Number()] = true
		if f, bad := w.field(fd, at); bad {
			return f, bad
		}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			// A oneof may hold one member; null members do not count, but
			// telling them apart needs the value: protojson refuses a
			// second non-null one, which we cannot see here, so only
			// count what we know was set.
			if oneofs[o.FullName()] {
				return Finding{at, "field " + at + " is one of a set of which only one may be given"}, true
			}
			oneofs[o.FullName()] = true
		}
	}
	if _, err := w.dec.Token(); err != nil { // the closing brace
		return syntax(), true
	}
	return Finding{}, false
}

// field reads the value of fd at path.
func (w walker) field(fd protoreflect.FieldDescriptor, path string) (Finding, bool) {
	switch {
	case fd.IsMap():
		return w.mapValue(fd, path)
	case fd.IsList():
		return w.list(fd, path)
	}
	return w.single(fd, path, true)
}

func (w walker) list(fd protoreflect.FieldDescriptor, path string) (Finding, bool) {
	tok, err := w.dec.Token()
	if err != nil {
		return syntax(), true
	}
	if tok == nil {
		return Finding{}, false
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return invalid(path, "a list"), true
	}
	for w.dec.More() {
		// A null element is refused, except where null is the value itself.
		if f, bad := w.single(fd, path, isValue(fd)); bad {
			return f, bad
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return syntax(), true
	}
	return Finding{}, false
}

func (w walker) mapValue(fd protoreflect.FieldDescriptor, path string) (Finding, bool) {
	tok, err := w.dec.Token()
	if err != nil {
		return syntax(), true
	}
	if tok == nil {
		return Finding{}, false
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return invalid(path, "an object"), true
	}
	seen := map[string]bool{}
	for w.dec.More() {
		kt, err := w.dec.Token()
		if err != nil {
			return syntax(), true
		}
		key, _ := kt.(string)
		at := join(path, key)
		if key == "" {
			at = join(path, `""`)
		}
		if seen[key] {
			return Finding{at, "key " + at + " is given more than once"}, true
		}
		seen[key] = true
		if !scalarText(fd.MapKey(), key, false) {
			return Finding{at, "invalid key for " + path + ": want " + kindWord(fd.MapKey())}, true
		}
		if f, bad := w.single(fd.MapValue(), at, isValue(fd.MapValue())); bad {
			return f, bad
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return syntax(), true
	}
	return Finding{}, false
}

// isValue: google.protobuf.Value, where null is a value.
func isValue(fd protoreflect.FieldDescriptor) bool {
	return fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value" ||
		fd.Enum() != nil && fd.Enum().FullName() == "google.protobuf.NullValue"
}

// single reads one value of fd's kind (a list element, a map value or a
// singular field).
func (w walker) single(fd protoreflect.FieldDescriptor, path string, nullable bool) (Finding, bool) {
	if fd.Message() != nil {
		return w.messageValue(fd.Message(), path, nullable)
	}
	tok, err := w.dec.Token()
	if err != nil {
		return syntax(), true
	}
	if tok == nil {
		if nullable {
			return Finding{}, false
		}
		return invalid(path, kindWord(fd)), true
	}
	if !scalarToken(fd, tok) {
		if _, ok := tok.(json.Delim); ok {
			// Skip the object or list, to report this member and not a
			// syntax error.
			return invalid(path, kindWord(fd)), true
		}
		return invalid(path, kindWord(fd)), true
	}
	return Finding{}, false
}

// messageValue reads a message, taking the well-known types' JSON forms.
func (w walker) messageValue(md protoreflect.MessageDescriptor, path string, nullable bool) (Finding, bool) {
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		return w.stringValue(path, nullable, "an RFC 3339 date-time", func(s string) bool {
			_, err := time.Parse(time.RFC3339Nano, s)
			return err == nil && (strings.HasSuffix(s, "Z") || strings.ContainsAny(s[len(s)-6:], "+-"))
		})
	case "google.protobuf.Duration":
		return w.stringValue(path, nullable, "a duration in seconds, e.g. \"1.5s\"", func(s string) bool {
			n, ok := strings.CutSuffix(s, "s")
			_, err := strconv.ParseFloat(n, 64)
			return ok && err == nil && !strings.ContainsAny(n, "eE+") && n != "" && n != "-"
		})
	case "google.protobuf.FieldMask":
		return w.stringValue(path, nullable, "a field mask", func(string) bool { return true })
	case "google.protobuf.Value", "google.protobuf.Struct", "google.protobuf.ListValue":
		// Any JSON fits a Value; a Struct takes any object, a ListValue any
		// list.
		var raw json.RawMessage
		if err := w.dec.Decode(&raw); err != nil {
			return syntax(), true
		}
		t := bytes.TrimLeft(raw, " \t\r\n")
		switch {
		case md.FullName() == "google.protobuf.Value", len(t) > 0 && t[0] == 'n' && nullable:
		case md.FullName() == "google.protobuf.Struct" && len(t) > 0 && t[0] == '{':
		case md.FullName() == "google.protobuf.ListValue" && len(t) > 0 && t[0] == '[':
		default:
			if md.FullName() == "google.protobuf.ListValue" {
				return invalid(path, "a list"), true
			}
			return invalid(path, "an object"), true
		}
		return Finding{}, false
	}
	if strings.HasPrefix(string(md.FullName()), "google.protobuf.") && strings.HasSuffix(string(md.Name()), "Value") {
		// Wrappers: the JSON of their one field.
		return w.single(md.Fields().ByName("value"), path, nullable)
	}
	return w.message(md, path, nullable)
}

func (w walker) stringValue(path string, nullable bool, want string, ok func(string) bool) (Finding, bool) {
	tok, err := w.dec.Token()
	if err != nil {
		return syntax(), true
	}
	if tok == nil && nullable {
		return Finding{}, false
	}
	s, isString := tok.(string)
	if !isString || !ok(s) {
		return invalid(path, want), true
	}
	return Finding{}, false
}

// scalarToken reports whether a JSON token fits a scalar or enum field.
func scalarToken(fd protoreflect.FieldDescriptor, tok json.Token) bool {
	switch v := tok.(type) {
	case string:
		if fd.Kind() == protoreflect.BoolKind {
			return false
		}
		return scalarText(fd, v, false)
	case json.Number:
		switch fd.Kind() {
		case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.BoolKind:
			return false
		case protoreflect.EnumKind:
			_, err := strconv.ParseInt(string(v), 10, 32)
			return err == nil
		}
		return numberFits(fd.Kind(), string(v))
	case bool:
		return fd.Kind() == protoreflect.BoolKind
	}
	return false
}

// queryText reports whether the query parameter value s fits fd, read as
// grpc-gateway reads query parameters (strconv, enum names or numbers).
func queryText(fd protoreflect.FieldDescriptor, s string) bool {
	var err error
	switch fd.Kind() {
	case protoreflect.StringKind:
		return true
	case protoreflect.BoolKind:
		_, err = strconv.ParseBool(s)
	case protoreflect.BytesKind:
		return decodesBase64(s)
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByName(protoreflect.Name(s)) != nil {
			return true
		}
		_, err = strconv.ParseInt(s, 10, 32)
	case protoreflect.FloatKind:
		_, err = strconv.ParseFloat(s, 32)
	case protoreflect.DoubleKind:
		_, err = strconv.ParseFloat(s, 64)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		_, err = strconv.ParseInt(s, 10, 32)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		_, err = strconv.ParseUint(s, 10, 32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err = strconv.ParseInt(s, 10, 64)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		_, err = strconv.ParseUint(s, 10, 64)
	}
	return err == nil
}

// scalarText reports whether s, a JSON string or a map key, fits fd.
func scalarText(fd protoreflect.FieldDescriptor, s string, _ bool) bool {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return true
	case protoreflect.BoolKind:
		// Only as a map key.
		return s == "true" || s == "false"
	case protoreflect.BytesKind:
		return decodesBase64(s)
	case protoreflect.EnumKind:
		return fd.Enum().Values().ByName(protoreflect.Name(s)) != nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if s == "NaN" || s == "Infinity" || s == "-Infinity" {
			return true
		}
	}
	// A number in a string is written as a JSON number would be.
	if !isJSONNumber(s) {
		return false
	}
	return numberFits(fd.Kind(), s)
}

// isJSONNumber reports whether s is exactly one JSON number.
func isJSONNumber(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	tok, err := dec.Token()
	if _, ok := tok.(json.Number); !ok || err != nil {
		return false
	}
	_, err = dec.Token()
	return errors.Is(err, io.EOF)
}

// numberFits reports whether the JSON number (or numeric text) n fits the
// numeric kind k: integers must be whole and in range (an exponent is fine
// when the value is whole, as protojson allows).
func numberFits(k protoreflect.Kind, n string) bool {
	switch k {
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f, err := strconv.ParseFloat(n, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return false
		}
		return k == protoreflect.DoubleKind || math.Abs(f) <= math.MaxFloat32
	}
	var bits int
	var unsigned bool
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		bits = 32
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		bits, unsigned = 32, true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		bits = 64
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		bits, unsigned = 64, true
	default:
		return false
	}
	if unsigned {
		if _, err := strconv.ParseUint(n, 10, bits); err == nil {
			return true
		}
	} else if _, err := strconv.ParseInt(n, 10, bits); err == nil {
		return true
	}
	// 1e2, 5.0: whole numbers written otherwise.
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
		return false
	}
	if unsigned {
		return f >= 0 && f <= math.Ldexp(1, bits)-1
	}
	return f >= -math.Ldexp(1, bits-1) && f <= math.Ldexp(1, bits-1)-1
}

func decodesBase64(s string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if _, err := enc.DecodeString(s); err == nil {
			return true
		}
	}
	return false
}

func kindWord(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "a string"
	case protoreflect.BoolKind:
		return "true or false"
	case protoreflect.BytesKind:
		return "base64 text"
	case protoreflect.EnumKind:
		var names []string
		for i := range fd.Enum().Values().Len() {
			names = append(names, string(fd.Enum().Values().Get(i).Name()))
		}
		return "one of " + strings.Join(names, ", ")
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a number"
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "an object"
	}
	return fmt.Sprintf("a whole number (%s)", fd.Kind())
}

func invalid(path, want string) Finding {
	if path == "" {
		return Finding{"body", "the request body must be a JSON object"}
	}
	return Finding{path, "invalid value for field " + path + ": want " + want}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
