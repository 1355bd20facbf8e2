package finance

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/problem"
)

// MaxCustomCategories is how many custom categories one user may have. The
// spec leaves the number open; 250 is far beyond any real budget tree and
// keeps the category list one small response.
const MaxCustomCategories = 250

// MaxCategoryName is the longest category name, in characters.
const MaxCategoryName = 64

// customSortOrder places new custom categories after the system ones, whose
// sort orders run from 10 to 119.
const customSortOrder = 1000

var (
	materialIcon = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)
	hexColor     = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
)

// NewCategory is POST /v1/categories. Empty strings are fields not sent.
type NewCategory struct {
	Name     string
	ParentID string
	Icon     string
	Color    string
}

// CategoryPatch is PATCH /v1/categories/{id}; nil fields are not sent.
type CategoryPatch struct {
	ID        string
	Name      *string
	Icon      *string
	Color     *string
	ParentID  *string // "" moves the category to the top level
	SortOrder *int32
}

// CategoryDeleteResult is the answer of DELETE /v1/categories/{id}.
type CategoryDeleteResult struct {
	Deleted            bool
	TransactionsMerged int
}

// CreateCategory answers POST /v1/categories.
func (s *Service) CreateCategory(ctx context.Context, c Caller, in NewCategory) (Result[Category], error) {
	var res Result[Category]
	sc, err := s.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	name, err := categoryName(in.Name)
	if err != nil {
		return res, err
	}
	if err := checkIconColor(in.Icon, in.Color); err != nil {
		return res, err
	}
	cat := Category{ID: uuid.NewString(), UserID: c.UserID, Name: name, Icon: in.Icon,
		Color: strings.ToUpper(in.Color), TypeTag: CategoryExpense, SortOrder: customSortOrder}
	if in.ParentID != "" {
		parent, err := s.topLevelParent(ctx, c, sc, in.ParentID)
		if err != nil {
			return res, err
		}
		cat.ParentID, cat.TypeTag = parent.ID, parent.TypeTag
	}
	now := s.now()
	cat.CreatedAt, cat.UpdatedAt = now, now
	switch err := s.store.CreateCustomCategory(ctx, cat, MaxCustomCategories); {
	case errors.Is(err, ErrLimitReached):
		return res, problem.New(problem.CategoryLimit,
			"you have 250 custom categories, the most allowed: delete one first")
	case err != nil:
		return res, Internal("create category", err)
	}
	return s.categoryResult(ctx, c, cat.ID)
}

// UpdateCategory answers PATCH /v1/categories/{id}.
func (s *Service) UpdateCategory(ctx context.Context, c Caller, p CategoryPatch) (Result[Category], error) {
	var res Result[Category]
	sc, err := s.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	cat, err := s.ownCategory(ctx, c, sc, p.ID)
	if err != nil {
		return res, err
	}
	if p.Name != nil {
		if cat.Name, err = categoryName(*p.Name); err != nil {
			return res, err
		}
	}
	icon, color := "", ""
	if p.Icon != nil {
		icon, cat.Icon = *p.Icon, *p.Icon
	}
	if p.Color != nil {
		color, cat.Color = *p.Color, strings.ToUpper(*p.Color)
	}
	if err := checkIconColor(icon, color); err != nil {
		return res, err
	}
	if p.SortOrder != nil {
		if *p.SortOrder < 0 {
			return res, Invalid("sort_order", "sort_order must not be negative")
		}
		cat.SortOrder = *p.SortOrder
	}
	if p.ParentID != nil && *p.ParentID != cat.ParentID {
		if *p.ParentID == "" {
			cat.ParentID = ""
		} else {
			if strings.EqualFold(*p.ParentID, cat.ID) {
				return res, Invalid("parent_id", "a category cannot be its own parent")
			}
			parent, err := s.topLevelParent(ctx, c, sc, *p.ParentID)
			if err != nil {
				return res, err
			}
			if err := s.noChildren(ctx, c, cat.ID); err != nil {
				return res, err
			}
			cat.ParentID = parent.ID
		}
	}
	cat.UpdatedAt = s.now()
	switch err := s.store.UpdateCategory(ctx, cat); {
	case errors.Is(err, ErrNotFound):
		return res, problem.New(problem.NotFound, "category not found")
	case err != nil:
		return res, Internal("update category", err)
	}
	return s.categoryResult(ctx, c, cat.ID)
}

// DeleteCategory answers DELETE /v1/categories/{id}. The category's rows
// become uncategorized, or move to mergeInto when it is set. Only the moved
// rows the grant shows are counted, so the answer reveals nothing hidden.
func (s *Service) DeleteCategory(ctx context.Context, c Caller, id string, mergeInto *string) (Result[CategoryDeleteResult], error) {
	var res Result[CategoryDeleteResult]
	sc, err := s.WriteScope(ctx, c)
	if err != nil {
		return res, err
	}
	cat, err := s.ownCategory(ctx, c, sc, id)
	if err != nil {
		return res, err
	}
	target := ""
	if mergeInto != nil {
		if !IsUUID(*mergeInto) {
			return res, Invalid("merge_into_category_id", "merge_into_category_id must be a UUID")
		}
		target = strings.ToLower(*mergeInto)
		if target == cat.ID {
			return res, Invalid("merge_into_category_id", "a category cannot be merged into itself")
		}
		if ok, err := s.categoryVisible(ctx, c, sc, target); err != nil {
			return res, err
		} else if !ok {
			return res, Invalid("merge_into_category_id", "merge_into_category_id names no category")
		}
	}
	// The announcement commits with the moved rows (the outbox); the store
	// fills in their accounts.
	var notes []Note
	if n, ok := s.Note(NoteTransactions, c.UserID); ok {
		notes = append(notes, n)
	}
	moved, err := s.store.DeleteCategory(ctx, c.UserID, cat.ID, target, s.now(), notes...)
	switch {
	case errors.Is(err, ErrHasChildren):
		return res, hasChildren()
	case errors.Is(err, ErrNotFound):
		// The category, or the target, went away meanwhile.
		return res, problem.New(problem.NotFound, "category not found")
	case err != nil:
		return res, Internal("delete category", err)
	}
	if len(moved) > 0 {
		s.notifier.Written(ctx, c.UserID)
	}
	n := 0
	for _, acct := range moved {
		if !sc.HidesAccount(acct) {
			n++
		}
	}
	res.Data = CategoryDeleteResult{Deleted: true, TransactionsMerged: n}
	res.Filtered = len(sc.excludedAccounts) > 0
	return res, nil
}

// ownCategory loads a category the caller may change: visible, and the
// user's own (a system category is 409, never editable).
func (s *Service) ownCategory(ctx context.Context, c Caller, sc Scope, id string) (Category, error) {
	id, err := RequiredUUID(id, "id")
	if err != nil {
		return Category{}, err
	}
	cat, err := s.store.GetCategory(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && sc.HidesCategory(cat.ID)) {
		return Category{}, problem.New(problem.NotFound, "category not found")
	}
	if err != nil {
		return Category{}, Internal("get category", err)
	}
	if cat.IsSystem() {
		return Category{}, problem.New(problem.SystemCategory, "system categories cannot be changed or deleted")
	}
	return cat, nil
}

// topLevelParent checks that id names a visible top-level category.
func (s *Service) topLevelParent(ctx context.Context, c Caller, sc Scope, id string) (Category, error) {
	if !IsUUID(id) {
		return Category{}, Invalid("parent_id", "parent_id must be a UUID")
	}
	id = strings.ToLower(id)
	parent, err := s.store.GetCategory(ctx, c.UserID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && sc.HidesCategory(parent.ID)) {
		return Category{}, Invalid("parent_id", "parent_id names no category")
	}
	if err != nil {
		return Category{}, Internal("get category", err)
	}
	if parent.ParentID != "" {
		return Category{}, Invalid("parent_id", "parent_id must name a top-level category: categories nest one level")
	}
	return parent, nil
}

// noChildren refuses to nest a category that has subcategories itself.
func (s *Service) noChildren(ctx context.Context, c Caller, id string) error {
	all, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return Internal("list categories", err)
	}
	for _, other := range all {
		if other.ParentID == id {
			return hasChildren()
		}
	}
	return nil
}

func hasChildren() error {
	return problem.New(problem.CategoryHasChildren, "the category has subcategories: move or delete them first")
}

func (s *Service) categoryResult(ctx context.Context, c Caller, id string) (Result[Category], error) {
	cat, err := s.store.GetCategory(ctx, c.UserID, id)
	if err != nil {
		return Result[Category]{}, Internal("reread category", err)
	}
	return Result[Category]{Data: cat}, nil
}

func categoryName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxCategoryName || !Printable(name) {
		return "", Invalid("name", "name is required: 1 to 64 printable characters")
	}
	return name, nil
}

// checkIconColor validates the icon and color when given (non-empty).
func checkIconColor(icon, color string) error {
	if icon != "" && !validIcon(icon) {
		return Invalid("icon", `icon must be a Material icon name (a-z, 0-9, _) or "emoji:" followed by one emoji`)
	}
	if color != "" && !hexColor.MatchString(color) {
		return Invalid("color", "color must be a hex color #RRGGBB")
	}
	return nil
}

func validIcon(icon string) bool {
	if e, ok := strings.CutPrefix(icon, "emoji:"); ok {
		return singleEmoji(e)
	}
	return materialIcon.MatchString(icon)
}

// ListCategories answers GET /v1/categories: the system categories and the
// user's own, less those the grant excludes (with their subcategories). The
// spec gives this endpoint no paging, so it is one page.
func (s *Service) ListCategories(ctx context.Context, c Caller) (Page[Category], error) {
	var page Page[Category]
	sc, err := s.Scope(ctx, c, false)
	if err != nil {
		return page, err
	}
	all, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return page, Internal("list categories", err)
	}
	hidden := expandCategories(sc.grant.ExcludedCategoryIDs, all)
	for _, cat := range all {
		if !slices.Contains(hidden, cat.ID) {
			page.Data = append(page.Data, cat)
		}
	}
	page.Filtered = len(sc.grant.ExcludedCategoryIDs) > 0
	return page, nil
}

// VisibleCategories are the system categories and the user's own that the
// grant shows (budgets and goals read them).
func (s *Service) VisibleCategories(ctx context.Context, c Caller, sc Scope) ([]Category, error) {
	all, err := s.store.ListCategories(ctx, c.UserID)
	if err != nil {
		return nil, Internal("list categories", err)
	}
	return slices.DeleteFunc(all, func(cat Category) bool { return sc.HidesCategory(cat.ID) }), nil
}

// singleEmoji reports whether s is exactly one emoji as people type them:
// a pictograph with an optional skin-tone modifier and variation selector,
// several joined by zero-width joiners (a family, a profession), a flag of
// two regional indicators, a subdivision flag with its tag characters, or a
// keycap. It is a structural check on code point ranges, not a lookup in
// the Unicode emoji list, so an unassigned code point inside an emoji block
// passes; what it refuses is text, two emoji, or stray joiners.
func singleEmoji(s string) bool {
	rs := []rune(s)
	if len(rs) == 0 || len(rs) > 16 {
		return false
	}
	switch {
	case len(rs) == 2 && isRegional(rs[0]) && isRegional(rs[1]):
		return true
	case isKeycapBase(rs[0]):
		// 1️⃣: digit, optional VS16, combining keycap.
		rest := rs[1:]
		if len(rest) > 0 && rest[0] == 0xFE0F {
			rest = rest[1:]
		}
		return len(rest) == 1 && rest[0] == 0x20E3
	case rs[0] == 0x1F3F4 && len(rs) > 2:
		// 🏴 followed by tag letters and a cancel tag: a subdivision flag.
		for i, r := range rs[1:] {
			last := i == len(rs)-2
			if last && r != 0xE007F || !last && (r < 0xE0020 || r > 0xE007E) {
				return false
			}
		}
		return true
	}
	// element (ZWJ element)*
	i := 0
	for {
		if i >= len(rs) || !isPictograph(rs[i]) {
			return false
		}
		i++
		if i < len(rs) && isSkinTone(rs[i]) {
			i++
		}
		if i < len(rs) && rs[i] == 0xFE0F {
			i++
		}
		if i == len(rs) {
			return true
		}
		if rs[i] != 0x200D {
			return false
		}
		i++
	}
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

func isSkinTone(r rune) bool { return r >= 0x1F3FB && r <= 0x1F3FF }

func isKeycapBase(r rune) bool { return r == '#' || r == '*' || (r >= '0' && r <= '9') }

// isPictograph covers the blocks emoji are drawn from.
func isPictograph(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF && !isRegional(r) && !isSkinTone(r):
		return true
	case r >= 0x2600 && r <= 0x27BF, // misc symbols, dingbats
		r >= 0x2300 && r <= 0x23FF, // misc technical (⌚, ⏰)
		r >= 0x2B00 && r <= 0x2BFF, // arrows, ⭐, ⬛
		r >= 0x2190 && r <= 0x21FF, // arrows
		r >= 0x25A0 && r <= 0x25FF, // geometric shapes
		r >= 0x2900 && r <= 0x297F:
		return true
	}
	switch r {
	case 0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x24C2, 0x3030, 0x303D, 0x3297, 0x3299:
		return true
	}
	return false
}
