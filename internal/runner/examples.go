package runner

import (
	"strings"
	"sync"

	"github.com/dblat/dblat/internal/engine"
)

// examplesPerClass bounds the distinct messages kept per error class: enough to tell
// apart the usual causes (a deadlock, a serialization failure, a lock time-out) without
// letting a run that fails on every transaction fill the store.
const examplesPerClass = 3

// errorExamples keeps the first distinct error messages of each class. Safe for concurrent use.
type errorExamples struct {
	mu sync.Mutex
	m  map[string][]string
}

func (e *errorExamples) add(class engine.ErrorClass, err error) {
	if class == engine.ClassCanceled {
		return
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	name := class.String()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string][]string{}
	}
	list := e.m[name]
	if len(list) >= examplesPerClass {
		return
	}
	for _, m := range list {
		if m == msg {
			return
		}
	}
	e.m[name] = append(list, msg)
}

func (e *errorExamples) snapshot() map[string][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) == 0 {
		return nil
	}
	out := make(map[string][]string, len(e.m))
	for k, v := range e.m {
		out[k] = append([]string(nil), v...)
	}
	return out
}
