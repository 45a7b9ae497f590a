// Package interrupt turns a process's interrupt signals into what a command does with them:
// the two-stage Ctrl-C of a run or a study (the first signal drains: no new transaction
// starts, those in flight end and what was measured is saved; the second cancels at once),
// and the one-stage stop of a command with nothing to drain.
//
// It owns the goroutines that wait for the signals, so that the command line starts none.
// It does not install signal handlers (the process's State does, with signal.Notify, and
// hands the channel down) and prints nothing: what a stage means is said by the caller's
// functions, called as the stage begins. Its neighbours: package cli, which passes the
// channel and says what each stage does; the execution core, which takes the drain channel
// and the context.
package interrupt

import (
	"context"
	"os"
	"sync"
)

// Stages are what the caller does as each stage of an interrupt begins; nil does nothing.
// They are called on the goroutine that watches the signals, at most once each.
type Stages struct {
	// Drain is called at the first signal, before the drain channel closes.
	Drain func()
	// Stop is called at the second signal, before the context is cancelled.
	Stop func()
}

// TwoStage watches sig until stop is called: the first signal closes drain, the second
// cancels the returned context. stop ends the watch and cancels the context; it is
// idempotent, and must be called once the command no longer needs the context.
func TwoStage(ctx context.Context, sig <-chan os.Signal, st Stages) (_ context.Context, drain <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	drained := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-sig:
				n++
				if n == 1 {
					call(st.Drain)
					close(drained)
					continue
				}
				call(st.Stop)
				cancel()
				return
			}
		}
	}()
	return ctx, drained, func() { once.Do(func() { close(done); cancel() }) }
}

// OneStage is TwoStage for a command with nothing to drain: the first signal already
// cancels the returned context (after st.Drain is called; a second signal, if it comes
// before stop, calls st.Stop).
func OneStage(ctx context.Context, sig <-chan os.Signal, st Stages) (_ context.Context, stop func()) {
	ctx, drain, stopWatch := TwoStage(ctx, sig, st)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-drain:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(); stopWatch() }
}

func call(f func()) {
	if f != nil {
		f()
	}
}
