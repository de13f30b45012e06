// Package paging implements the page-numbered lists of the legacy contract
// (spec section 4, rule 1): pages count from 1 and the metadata describes the
// page returned.
package paging

import (
	"context"

	"github.com/propertyrecords/inventory/internal/apperr"
)

const (
	// DefaultPageSize is the spec's default.
	DefaultPageSize = 20
	// MaxPageSize bounds the work one request can ask for (see docs/decisions.md).
	MaxPageSize = 100
	// MaxNodes bounds the ids of one nodes lookup: each id is a bound
	// parameter, and databases cap those.
	MaxNodes = 100
)

// Meta describes one page of a list.
type Meta struct {
	Page            int
	PageSize        int
	TotalRecords    int
	TotalPages      int
	HasPreviousPage bool
	HasNextPage     bool
}

// Validate checks a requested page; names are those of the legacy parameters.
func Validate(page, pageSize int) error {
	if page < 1 {
		return apperr.InvalidField("page", "must be 1 or more, got %d", page)
	}
	if pageSize < 1 || pageSize > MaxPageSize {
		return apperr.InvalidField("pageSize", "must be from 1 to %d, got %d", MaxPageSize, pageSize)
	}
	return nil
}

// Count validates the requested page, counts the records with count and
// describes the page. A page past the end is valid: it is empty, and its
// metadata still tells the truth about the list.
func Count(ctx context.Context, page, pageSize int, count func(context.Context) (int, error)) (Meta, error) {
	if err := Validate(page, pageSize); err != nil {
		return Meta{}, err
	}
	total, err := count(ctx)
	if err != nil {
		return Meta{}, err
	}
	totalPages := (total + pageSize - 1) / pageSize
	return Meta{
		Page:            page,
		PageSize:        pageSize,
		TotalRecords:    total,
		TotalPages:      totalPages,
		HasPreviousPage: page > 1,
		HasNextPage:     page < totalPages,
	}, nil
}

// Offset is the number of records before the page.
func (m Meta) Offset() int { return (m.Page - 1) * m.PageSize }

// DefaultFirst is first as a root connection applies it: DefaultPageSize
// when neither first nor last is given, so that no list is ever unbounded.
// Their maximum is checked with every other list's, by the cost check of
// package graph, before any resolver runs.
func DefaultFirst(first, last *int) *int {
	if first == nil && last == nil {
		n := DefaultPageSize
		return &n
	}
	return first
}

// Rows is the number of records a Relay page holds when it is full.
func Rows(first, last *int) int {
	switch {
	case first != nil:
		return *first
	case last != nil:
		return *last
	}
	return 0
}

// CountAfterRows is a connection's totalCount once its page is read: rows
// is how many the page's statement returned (one past the page when another
// follows). A page at an end of the set, not after a cursor, that came back
// shorter than it asked holds the whole set, so rows is the count and the
// database is not asked again; otherwise count asks it.
func CountAfterRows(ctx context.Context, count func(context.Context) (int, error), rows int, cursored bool, first, last *int) (int, error) {
	if !cursored && (first != nil && rows <= *first || last != nil && rows <= *last) {
		return rows, nil
	}
	return count(ctx)
}
