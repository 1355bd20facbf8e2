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
// opens its pages with OpenList.
type Pager[P CursorPosition] struct {
	// Size is the page size: the sent page_size, or DefaultPageSize.
	Size   int
	s      *Service
	cursor string
	bound  string
}

// newPager checks q's page_size (invalid-input naming page_size outside 1
// to MaxPageSize) and keeps its cursor for after.
func newPager[P CursorPosition](s *Service, q PageQuery) (*Pager[P], error) {
	size, err := pageSize(q.PageSize)
	if err != nil {
		return nil, err
	}
	return &Pager[P]{Size: size, s: s, cursor: q.Cursor}, nil
}

// after binds the pages to c, route and the filter values (validated by
// then: they cannot contain the separator) and returns the position the
// request's cursor names, nil without one. A cursor signed for another
// user, grant, route or filter, or holding a malformed position, is
// invalid-input naming cursor.
func (p *Pager[P]) after(c Caller, route string, filters ...string) (*P, error) {
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

// ListRoute is what a list route tells OpenList about itself.
type ListRoute struct {
	// Path names the route; its cursors are bound to it.
	Path string
	// WithCategories resolves the grant's category exclusions down to
	// subcategories (Service.Scope), for routes whose rows have categories.
	WithCategories bool
	// Check, when set, refuses what the route must refuse before paging
	// (search's query), once the grant is known.
	Check func(Scope) error
	// Filters, when set, checks the route's own filters once page_size is
	// known and returns their values ("name=value"), to which the route's
	// cursors are bound.
	Filters func(Scope) ([]string, error)
}

// Listing is a list request once opened: the caller's scope, the pager,
// and the position the request's cursor names (nil on the first page).
type Listing[P CursorPosition] struct {
	Scope Scope
	Pager *Pager[P]
	After *P
}

// OpenList is the opening every list route shares (the kernel's and the
// subdomains'), answering refusals in one order: the caller's grant (401,
// 403), the route's Check, page_size, the route's Filters, then the cursor
// (each 400 naming its field).
func OpenList[P CursorPosition](ctx context.Context, s *Service, c Caller, q PageQuery, r ListRoute) (Listing[P], error) {
	var l Listing[P]
	var err error
	if l.Scope, err = s.Scope(ctx, c, r.WithCategories); err != nil {
		return l, err
	}
	if r.Check != nil {
		if err := r.Check(l.Scope); err != nil {
			return l, err
		}
	}
	if l.Pager, err = newPager[P](s, q); err != nil {
		return l, err
	}
	var filters []string
	if r.Filters != nil {
		if filters, err = r.Filters(l.Scope); err != nil {
			return l, err
		}
	}
	l.After, err = l.Pager.after(c, r.Path, filters...)
	return l, err
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
