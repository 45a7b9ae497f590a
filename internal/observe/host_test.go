package observe

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSessionSamplesTheHost: a session told to watch the host says, at every snapshot and
// at its stop, how busy the machine was meanwhile, and keeps the signals for its run.
func TestSessionSamplesTheHost(t *testing.T) {
	s := NewSession(SessionConfig{Host: true})
	time.Sleep(600 * time.Millisecond)
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if h := snap.Observation.Host; h == nil || h.CPUs < 1 {
		t.Errorf("snapshot: host %+v", h)
	}
	snap, err = s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	o := snap.Observation
	if o.Host == nil || len(o.Signals) == 0 {
		t.Fatalf("stop: host %+v, %d signals", o.Host, len(o.Signals))
	}
	r, err := o.Run("postgres", RunSourceOf(""))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Signals) != len(o.Signals) {
		t.Errorf("the run holds %d signals of %d", len(r.Signals), len(o.Signals))
	}
	if b, _ := json.Marshal(o); strings.Contains(string(b), `"signals"`) {
		t.Error("the observation's file holds its signals")
	}
	if none := NewSession(SessionConfig{}); none.sampler != nil {
		t.Error("a session not told to watch the host samples it")
	}
}
