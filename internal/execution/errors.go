package execution

import (
	"errors"
	"fmt"
)

// InputError marks an error caused by what the user asked for (a flag, a study file, a
// target without data), as opposed to a failure while doing it. The command line exits
// with its usage status for these.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Inputf returns an *InputError with a formatted message.
func Inputf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// asInput wraps err as an *InputError (nil stays nil).
func asInput(err error) error {
	if err == nil {
		return nil
	}
	var ie *InputError
	if errors.As(err, &ie) {
		return err
	}
	return &InputError{Err: err}
}

// ErrInterrupted is returned when the user interrupted a run or a study; what finished
// before is stored.
var ErrInterrupted = errors.New("interrupted")
