// Package cli is dblat's command line: one file per command, built on cobra. It is the only
// package that prints. It resolves targets, wires engines, workloads, the runner and the
// results store together, and maps errors to exit codes in one place (exit.go).
//
// All process state (output streams, environment, signals, clock) comes in through State,
// so tests run the whole CLI in-process.
package cli

import (
	"io"
	"os"
	"os/signal"
	"syscall"
)

// State is what the CLI needs from the process. Tests build their own.
type State struct {
	Stdout, Stderr io.Writer
	// Getenv reads the environment.
	Getenv func(string) string
	// Signals delivers interrupts (SIGINT, SIGTERM). The first drains the current run and saves
	// it; the second cancels at once.
	Signals <-chan os.Signal
	// Report delivers requests for a status report (SIGUSR1): `dblat proxy` prints its
	// counters.
	Report <-chan os.Signal
	// IsTerminal reports whether Stderr is an interactive terminal (progress bars redraw).
	IsTerminal bool
}

// NewState returns the State of the real process.
func NewState() *State {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	fi, _ := os.Stderr.Stat()
	return &State{
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Getenv:     os.Getenv,
		Signals:    sig,
		Report:     usr1,
		IsTerminal: fi != nil && fi.Mode()&os.ModeCharDevice != 0,
	}
}
