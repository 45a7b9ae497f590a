package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/dblat/dblat/internal/execution"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/workload"
)

// Exit codes. They are mapped from errors here and nowhere else.
const (
	ExitOK          = 0
	ExitFailure     = 1   // the command failed
	ExitUsage       = 2   // bad flags, arguments or input
	ExitCheckFailed = 3   // a consistency or credibility check found a problem
	ExitOverload    = 4   // dblat run --fail-on-overload: the run is an overload point
	ExitInterrupted = 130 // stopped by Ctrl-C (128 + SIGINT)
)

// usageError marks an error caused by the user's input.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errCheckFailed is returned when a check ran and found failures. Bare, it says that the
// failures were printed already; wrapped, its message is printed as the error line.
var errCheckFailed = errors.New("check failed")

// errOverload is returned by `dblat run --fail-on-overload` for a run that is an overload
// point (it was stored and its summary says so).
var errOverload = errors.New("the run is an overload point: the offered rate was not sustained")

// errInterrupted is returned when the user interrupted a command (what was finished is saved).
var errInterrupted = execution.ErrInterrupted

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	var ue usageError
	var ie *execution.InputError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, errCheckFailed):
		return ExitCheckFailed
	case errors.Is(err, errOverload):
		return ExitOverload
	case errors.As(err, &ue), errors.As(err, &ie), errors.Is(err, workload.ErrNotLoaded), errors.Is(err, managed.ErrNoInstance),
		errors.Is(err, results.ErrNotFound):
		return ExitUsage
	default:
		return ExitFailure
	}
}
