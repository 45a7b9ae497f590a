// Package cli is dblat's command line: one file per command, built on cobra. It is the only
// package that prints. It parses flags into what the core needs (a spec.Run, whose fields
// declare their flags; an observe.SessionConfig for `dblat proxy --observe`), hands it to
// the core (execution.Core runs runs and studies and stores runs and observations; an
// observe.Session runs an observation, SIGUSR1 and Ctrl-C becoming calls of its Snapshot
// and Stop), and prints what the core reports and hands back; a run's summary and a study's
// report are rendered by package report. Errors map to exit codes in one place (exit.go).
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
