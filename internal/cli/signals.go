package cli

import (
	"context"

	"github.com/dblat/dblat/internal/interrupt"
)

// interrupts implements the two-stage Ctrl-C (package interrupt): the first signal closes
// drain (the run stops starting transactions, finishes those in flight and is saved), the
// second cancels the returned context (stop at once; the run is saved as aborted).
//
// what says what the first interrupt does ("finishing in-flight transactions and saving the run").
func (a *app) interrupts(ctx context.Context, what string) (context.Context, <-chan struct{}, func()) {
	return interrupt.TwoStage(ctx, a.st.Signals, a.interruptStages(what))
}

// interruptCancels is interrupts for commands with nothing to drain: the first Ctrl-C
// already cancels the returned context. what says what the interrupt stops.
func (a *app) interruptCancels(ctx context.Context, what string) (context.Context, func()) {
	return interrupt.OneStage(ctx, a.st.Signals, a.interruptStages(what))
}

// interruptStages says what each stage of an interrupt does, on stderr.
func (a *app) interruptStages(what string) interrupt.Stages {
	return interrupt.Stages{
		Drain: func() { a.info("\ninterrupt: %s (Ctrl-C again to stop at once)", what) },
		Stop:  func() { a.info("\ninterrupt: stopping now") },
	}
}
