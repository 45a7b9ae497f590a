package interrupt_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/dblat/dblat/internal/interrupt"
)

// TestTwoStage: the first signal drains and leaves the context alone, the second cancels it;
// each stage's function is called once, before what it announces happens.
func TestTwoStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sig := make(chan os.Signal, 2)
		var drains, stops int
		ctx, drain, stop := interrupt.TwoStage(context.Background(), sig,
			interrupt.Stages{Drain: func() { drains++ }, Stop: func() { stops++ }})
		defer stop()
		sig <- syscall.SIGINT
		synctest.Wait()
		select {
		case <-drain:
		default:
			t.Fatal("the first signal did not drain")
		}
		if ctx.Err() != nil || drains != 1 || stops != 0 {
			t.Fatalf("after one signal: ctx %v, %d drains, %d stops", ctx.Err(), drains, stops)
		}
		sig <- syscall.SIGINT
		synctest.Wait()
		if ctx.Err() == nil || drains != 1 || stops != 1 {
			t.Fatalf("after two signals: ctx %v, %d drains, %d stops", ctx.Err(), drains, stops)
		}
	})
}

// TestOneStage: the first signal cancels; stop without a signal cancels too and ends the
// watch (synctest fails a test that leaves a goroutine blocked).
func TestOneStage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sig := make(chan os.Signal, 1)
		ctx, stop := interrupt.OneStage(context.Background(), sig, interrupt.Stages{})
		sig <- syscall.SIGTERM
		synctest.Wait()
		if ctx.Err() == nil {
			t.Fatal("the first signal did not cancel")
		}
		stop()
		stop() // idempotent

		ctx, stop = interrupt.OneStage(context.Background(), sig, interrupt.Stages{})
		stop()
		synctest.Wait()
		if ctx.Err() == nil {
			t.Fatal("stop did not cancel")
		}
	})
}
