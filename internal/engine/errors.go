package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
)

// ErrorClass sorts errors by how a benchmark must react to them.
type ErrorClass int

const (
	// ClassOther is an unexpected error: counted, and the terminal goes on.
	ClassOther ErrorClass = iota
	// ClassRetryable is a serialization failure, deadlock, or lock/update conflict: the
	// transaction may succeed if retried. Counted separately; its rate says whether the test
	// logic, not the engine, is being measured.
	ClassRetryable
	// ClassConnection means the connection was lost; the pool replaces it.
	ClassConnection
	// ClassCanceled means the run's context ended; not counted at all.
	ClassCanceled
)

// String names the class as stored in results.
func (c ErrorClass) String() string {
	switch c {
	case ClassRetryable:
		return "retryable"
	case ClassConnection:
		return "connection"
	case ClassCanceled:
		return "canceled"
	default:
		return "other"
	}
}

// IsCanceled reports whether err comes from a canceled or expired context.
func IsCanceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// IsConnectionLost reports whether err says, in terms any database/sql driver may use, that
// the connection is broken: a bad or closed connection, the server's end of the stream
// (EOF), a reset, broken pipe or refused connection, or another network error. Engines
// check their driver's own errors first, then this.
func IsConnectionLost(err error) bool {
	var netErr net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &netErr)
}
