package cli

import (
	"context"
	"sync"
)

// interrupts implements the two-stage Ctrl-C: the first signal closes drain (the run stops
// starting transactions, finishes those in flight and is saved), the second cancels the
// returned context (stop at once; the run is saved as aborted).
func (a *app) interrupts(ctx context.Context) (context.Context, <-chan struct{}, func()) {
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
					a.info("\ninterrupt: finishing in-flight transactions and saving the run (Ctrl-C again to stop at once)")
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
