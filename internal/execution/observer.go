package execution

import (
	"time"

	"github.com/dblat/dblat/internal/results"
)

// Observer is told what a Core does, as it happens, so that the command line can print it
// (and a metrics endpoint can publish it). Its methods are called from the goroutine that
// called the Core, except Samples, which the runner's ticker calls; they must return quickly.
type Observer interface {
	// Info reports a step or a warning ("starting postgres server pg1 ...").
	Info(msg string)
	// LoadProgress returns the function a load reports its rows to (done of total).
	LoadProgress(label string) func(done, total int64)
	// RunStarted is called when a run has been stored as running, before its warm-up.
	RunStarted(run *results.Run)
	// Samples receives each interval's samples of the running run.
	Samples(run *results.Run, s []results.Sample)
	// RunEnded is called once a run is stored with its final status.
	RunEnded(run *results.Run)
	// StudyStep is called before each run of a study.
	StudyStep(s StudyStep)
}

// StudyStep describes the run a study is about to start.
type StudyStep struct {
	Study string
	// Index is the run's position in this invocation's plan (1-based), of Total.
	Index, Total int
	// Cell labels the cell by its factors' levels; Repeat is which repeat of Repeats.
	Cell            string
	Repeat, Repeats int
	// Elapsed is the time since the study started; Remaining the estimate for the rest.
	Elapsed, Remaining time.Duration
}

// NopObserver ignores everything; embed it to implement only some methods.
type NopObserver struct{}

// Info implements Observer.
func (NopObserver) Info(string) {}

// LoadProgress implements Observer.
func (NopObserver) LoadProgress(string) func(done, total int64) { return nil }

// RunStarted implements Observer.
func (NopObserver) RunStarted(*results.Run) {}

// Samples implements Observer.
func (NopObserver) Samples(*results.Run, []results.Sample) {}

// RunEnded implements Observer.
func (NopObserver) RunEnded(*results.Run) {}

// StudyStep implements Observer.
func (NopObserver) StudyStep(StudyStep) {}

// Observers returns an Observer that tells each of obs, in order.
func Observers(obs ...Observer) Observer { return multi(obs) }

type multi []Observer

func (m multi) Info(msg string) {
	for _, o := range m {
		o.Info(msg)
	}
}

func (m multi) LoadProgress(label string) func(done, total int64) {
	var fs []func(done, total int64)
	for _, o := range m {
		if f := o.LoadProgress(label); f != nil {
			fs = append(fs, f)
		}
	}
	return func(done, total int64) {
		for _, f := range fs {
			f(done, total)
		}
	}
}

func (m multi) RunStarted(run *results.Run) {
	for _, o := range m {
		o.RunStarted(run)
	}
}

func (m multi) Samples(run *results.Run, s []results.Sample) {
	for _, o := range m {
		o.Samples(run, s)
	}
}

func (m multi) RunEnded(run *results.Run) {
	for _, o := range m {
		o.RunEnded(run)
	}
}

func (m multi) StudyStep(s StudyStep) {
	for _, o := range m {
		o.StudyStep(s)
	}
}
