// Package apperr is the one error vocabulary of the service. GraphQL's error
// presenter and the REST adapter both turn errors into a Code with this
// package, so a client sees the same code for the same failure everywhere.
package apperr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// Code is a stable, machine-readable error class. Clients switch on it.
type Code string

const (
	Invalid          Code = "INVALID_ARGUMENT"
	Unauthenticated  Code = "UNAUTHENTICATED"
	Forbidden        Code = "FORBIDDEN"
	Conflict         Code = "CONFLICT"
	NotFound         Code = "NOT_FOUND"
	MethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	Internal         Code = "INTERNAL"
	// DeadlineExceeded: the request ran past its deadline and its work was
	// stopped. Cancelled: the client went away before the answer.
	DeadlineExceeded Code = "DEADLINE_EXCEEDED"
	Cancelled        Code = "CANCELLED"
	// Unavailable: the database cannot answer now (down, restarting, or every
	// connection busy). Nothing about the request is wrong: the client should
	// retry after RetryAfterSeconds.
	Unavailable Code = "UNAVAILABLE"
	// RateLimited: the caller sent more than its rate allows; it may retry
	// after the Retry-After the answer gives.
	RateLimited Code = "RATE_LIMITED"
	// ResponseTooLarge: the answer grew past the service's bound on what one
	// request may write; the client should ask for less.
	ResponseTooLarge Code = "RESPONSE_TOO_LARGE"
	// The query limits' refusals of an operation before it runs
	// (graph/querylimits), request errors as gqlgen's parse and
	// validation errors are: a document (or a body) too large, nested too
	// deep, or priced over the limit.
	QueryTooLarge Code = "QUERY_TOO_LARGE"
	QueryTooDeep  Code = "QUERY_TOO_DEEP"
	TooComplex    Code = "COMPLEXITY_LIMIT_EXCEEDED"
	// BadRequest: the transport refused the request before reading any
	// GraphQL (no JSON, no query, a method or media type not served).
	BadRequest Code = "BAD_REQUEST"
)

// LimitRefusal reports whether code is one of the query limits' refusals.
func LimitRefusal(code string) bool {
	switch Code(code) {
	case QueryTooLarge, QueryTooDeep, TooComplex:
		return true
	}
	return false
}

// RetryAfterSeconds is the Retry-After given with Unavailable: long enough
// for a restarting PostgreSQL or a freed connection, short enough that a
// client retrying does not wait for nothing.
const RetryAfterSeconds = 2

// retryAfter is RetryAfterSeconds as the header's value.
var retryAfter = strconv.Itoa(RetryAfterSeconds)

// SetRetryAfter tells the client of an Unavailable answer when to try again.
func SetRetryAfter(h http.Header) { h.Set("Retry-After", retryAfter) }

// httpStatus is the single table from code to HTTP status.
var httpStatus = map[Code]int{
	Invalid:          http.StatusBadRequest,
	Unauthenticated:  http.StatusUnauthorized,
	Forbidden:        http.StatusForbidden,
	Conflict:         http.StatusConflict,
	NotFound:         http.StatusNotFound,
	MethodNotAllowed: http.StatusMethodNotAllowed,
	Internal:         http.StatusInternalServerError,
	DeadlineExceeded: http.StatusGatewayTimeout,
	Cancelled:        499, // no client reads it: the status of a request its client closed
	Unavailable:      http.StatusServiceUnavailable,
	RateLimited:      http.StatusTooManyRequests,
	ResponseTooLarge: http.StatusBadRequest,
	QueryTooLarge:    http.StatusRequestEntityTooLarge,
	QueryTooDeep:     http.StatusBadRequest,
	TooComplex:       http.StatusBadRequest,
	BadRequest:       http.StatusBadRequest,
}

// Error is an error a client may see: its Message is written for the client,
// and Field names the argument, header or parameter at fault, if any.
type Error struct {
	Code    Code
	Field   string
	Message string
	// Cause is the failure behind it, for logs only: never shown to the client.
	Cause error
	// RetryAfter, when set, is when the client may try again (the
	// Retry-After header of a RATE_LIMITED answer).
	RetryAfter time.Duration
}

// SetRetryAfterFor sets the Retry-After of err's answer, if it has one: its
// own RetryAfter, or RetryAfterSeconds for UNAVAILABLE. It reports whether
// it set one.
func SetRetryAfterFor(h http.Header, err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch {
	case e.RetryAfter > 0:
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	case e.Code == Unavailable:
		SetRetryAfter(h)
	default:
		return false
	}
	return true
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Message)
	}
	return e.Message
}

// Errorf returns a client-facing error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidField reports that the named input is wrong, and how.
func InvalidField(field, format string, args ...any) *Error {
	return &Error{Code: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Public returns the client-facing form of err. Anything that is not an *Error
// in err's chain is internal: its text may hold SQL or driver detail, so the
// client gets only "internal error" and the caller is told to log it.
func Public(err error) (e *Error, internal bool) {
	if errors.As(err, &e) {
		return e, false
	}
	return &Error{Code: Internal, Message: "internal error"}, true
}

// Expired returns the client-facing error of a request whose context ended
// (its deadline passed, or its client went away), whatever error its work
// failed with: a cancelled database call fails in the driver's own words.
func Expired(ctx context.Context) (*Error, bool) {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return &Error{Code: DeadlineExceeded, Message: "the request ran past its deadline and was stopped: ask for less, or try again later"}, true
	case context.Canceled:
		return &Error{Code: Cancelled, Message: "the request was cancelled by its client"}, true
	}
	return nil, false
}

// HTTPStatus maps a code to its HTTP status.
func HTTPStatus(code Code) int {
	if s, ok := httpStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// CodeOf is the code of err's *Error, or Internal.
func CodeOf(err error) Code {
	e, _ := Public(err)
	return e.Code
}

// QuoteBytes is the most of a client's input an error message quotes: enough
// to recognise it, never so much that an answer grows with its request (a
// megabyte id in 150 aliases was once 150 megabytes of errors).
const QuoteBytes = 64

// Quote is s quoted as %q does, cut to its first QuoteBytes bytes (at a
// character's start) with "…" after when it is longer.
func Quote(s string) string {
	if len(s) <= QuoteBytes {
		return strconv.Quote(s)
	}
	cut := QuoteBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// MessageBytes bounds an error message, whoever wrote it (gqlgen's parser
// and validator quote the document's values whole): past it the message is
// cut, the rest being the client's own input.
const MessageBytes = 1_000

// Cut bounds message to MessageBytes, cut at a character's start.
func Cut(message string) string {
	if len(message) <= MessageBytes {
		return message
	}
	cut := MessageBytes
	for cut > 0 && !utf8.RuneStart(message[cut]) {
		cut--
	}
	return message[:cut] + "…"
}
