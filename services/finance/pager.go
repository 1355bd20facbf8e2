package finance

import (
	"context"
	"strconv"
	"strings"
)

// Paging: one pager for every list route.

// Page sizes of list endpoints. The spec sets only the minimum (1); 200 is
// our maximum, large enough for a screen of transactions and small enough to
// bound one query.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// Page is one page of a list response with its envelope members.
type Page[T any] struct {
	Data           []T
	NextCursor     string // empty on the last page
	HasMore        bool
	RedactedFields []string
	Filtered       bool
}

// PageQuery is the paging input of a list endpoint. A nil PageSize means the
// default; a sent page_size must be between 1 and MaxPageSize.
type PageQuery struct {
	Cursor   string
	PageSize *int32
}

// CursorPosition is what a list route's cursor carries: the keyset position
// of the last row of a page. Valid reports whether a decoded position is
// well formed (its ids are UUIDs, its times parse).
type CursorPosition interface {
	Valid() bool
}

// Pager is the opening and the cut every list route shares: it checks
// page_size, binds the route's cursors to the caller, the route and its
// filter values, decodes the position a cursor names, and cuts rows read
// one over the page size into a page with the next page's cursor. A route
// makes one with NewPager before it checks its own filters, then asks
// After once the filters are known.
type Pager[P CursorPosition] struct {
	// Size is the page size: the sent page_size, or DefaultPageSize.
	Size   int
	s      *Service
	cursor string
	bound  string
}

// NewPager checks q's page_size (invalid-input naming page_size outside 1
// to MaxPageSize) and keeps its cursor for After.
func NewPager[P CursorPosition](s *Service, q PageQuery) (*Pager[P], error) {
	size, err := pageSize(q.PageSize)
	if err != nil {
		return nil, err
	}
	return &Pager[P]{Size: size, s: s, cursor: q.Cursor}, nil
}

// After binds the pages to c, route and the filter values (validated by
// then: they cannot contain the separator) and returns the position the
// request's cursor names, nil without one. A cursor signed for another
// user, grant, route or filter, or holding a malformed position, is
// invalid-input naming cursor.
func (p *Pager[P]) After(c Caller, route string, filters ...string) (*P, error) {
	p.bound = scopeString(c, route, filters...)
	if p.cursor == "" {
		return nil, nil
	}
	var pos P
	if err := p.s.cursors.Decode(p.cursor, p.bound, &pos); err != nil || !pos.Valid() {
		return nil, badCursor()
	}
	return &pos, nil
}

// Cut trims rows, read one over the page size, to the page and returns it
// with the cursor of the next page: the position at of its last row, or ""
// when no row follows.
func Cut[T any, P CursorPosition](ctx context.Context, p *Pager[P], rows []T, at func(T) P) ([]T, string, error) {
	if len(rows) <= p.Size {
		return rows, "", nil
	}
	rows = rows[:p.Size]
	next, err := p.s.cursors.Encode(p.bound, at(rows[p.Size-1]))
	if err != nil {
		return rows, "", Internal("encode cursor", err)
	}
	return rows, next, nil
}

// Paging: one pager for every list route.

// scopeString binds a cursor to the user, the grant, the route and the
// filter values, so a cursor replayed under another query, grant or user
// fails its signature check. Values are validated before they get here and
// cannot contain the separator.
func scopeString(c Caller, route string, filters ...string) string {
	parts := append([]string{"finance.v1", route, "user=" + c.UserID, "grant=" + c.GrantID}, filters...)
	return strings.Join(parts, "|")
}

func pageSize(n *int32) (int, error) {
	switch {
	case n == nil:
		return DefaultPageSize, nil
	case *n < 1 || *n > MaxPageSize:
		return 0, Invalid("page_size", "page_size must be between 1 and "+strconv.Itoa(MaxPageSize))
	}
	return int(*n), nil
}

func badCursor() error {
	return Invalid("cursor", "cursor is invalid or belongs to another query")
}
