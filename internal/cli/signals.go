package cli

import (
	"context"
	"sync"
)

// interrupts implements the two-stage Ctrl-C: the first signal closes drain (the run stops
// starting transactions, finishes those in flight and is saved), the second cancels the
// returned context (stop at once; the run is saved as aborted).
//
// what says what the first interrupt does ("finishing in-flight transactions and saving the run").
func (a *app) interrupts(ctx context.Context, what string) (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(ctx)
	drain := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-a.st.Signals:
				n++
				if n == 1 {
					a.info("\ninterrupt: %s (Ctrl-C again to stop at once)", what)
					close(drain)
					continue
				}
				a.info("\ninterrupt: stopping now")
				cancel()
				return
			}
		}
	}()
	return ctx, drain, func() { once.Do(func() { close(done); cancel() }) }
}

// interruptCancels is interrupts for commands with nothing to drain: the first Ctrl-C
// already cancels the returned context. what says what the interrupt stops.
func (a *app) interruptCancels(ctx context.Context, what string) (context.Context, func()) {
	ctx, drain, stop := a.interrupts(ctx, what)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-drain:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(); stop() }
}
