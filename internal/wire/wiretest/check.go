package wiretest

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/wire"
)

// strict is a Sink that checks the event contract: at most one EvCannotFollow, nothing
// after it, a reason on it, texts on statements.
type strict struct {
	Recorder
	t       testing.TB
	name    string
	stopped bool
	record  bool
}

func (s *strict) Event(e *wire.Event) {
	s.t.Helper()
	if s.stopped {
		s.t.Fatalf("%s: event %d after cannot-follow (%q)", s.name, e.Kind, s.CannotFollow())
	}
	switch e.Kind {
	case wire.EvCannotFollow:
		s.stopped = true
		if e.Reason == "" {
			s.t.Fatalf("%s: cannot-follow without a reason", s.name)
		}
	case wire.EvStatement:
		if len(e.Text) == 0 {
			s.t.Fatalf("%s: a statement without text", s.name)
		}
	case 0:
		s.t.Fatalf("%s: an event without a kind", s.name)
	}
	if s.record {
		s.Recorder.Event(e)
	} else if e.Kind == wire.EvCannotFollow {
		s.Recorder.Events = append(s.Recorder.Events, wire.Event{Kind: e.Kind, Reason: e.Reason})
	}
}

// Decode replays c into a new decoder of p and returns its events, failing the test if
// the decoder breaks the event contract.
func Decode(t testing.TB, p wire.Protocol, c Capture, name string) *Recorder {
	t.Helper()
	s := &strict{t: t, name: name, record: true}
	c.Replay(p.NewDecoder(s))
	return &s.Recorder
}

// Rechunk returns c with each run of consecutive chunks in one direction cut into pieces
// of size bytes (the last piece shorter): the same conversation as a proxy with a
// different read size would have received it.
func Rechunk(c Capture, size int) Capture {
	var out Capture
	for i := 0; i < len(c); {
		j := i
		var run []byte
		for j < len(c) && c[j].Dir == c[i].Dir {
			run = append(run, c[j].Data...)
			j++
		}
		for k := 0; k < len(run); k += size {
			out = append(out, Chunk{Dir: c[i].Dir, At: c[i].At, Data: run[k:min(k+size, len(run))]})
		}
		i = j
	}
	return out
}

// summary renders the events that must not depend on chunking.
func summary(r *Recorder) string {
	var b strings.Builder
	for _, e := range r.Events {
		fmt.Fprintf(&b, "%d %q %d %d %v %q|", e.Kind, e.Text, e.Status, e.End, e.Failed, e.Reason)
		for _, p := range e.Params {
			fmt.Fprintf(&b, "%v %q,", p.Null, p.Text)
		}
	}
	return b.String()
}

// CheckRobust runs the checks every decoder must pass on a capture it follows to the end:
//   - the capture decodes without cannot-follow, and the events are the same when the
//     conversation arrives in 1-byte and in 7-byte chunks;
//   - cut after chunk k, minus the chunk's last byte, for chunks in the middle of the
//     capture, the decoder reports cannot-follow (at Close at the latest);
//   - with 8 bytes of 0xFF inserted before a client chunk in the middle, it reports
//     cannot-follow;
//   - with random bytes changed, it does not panic and keeps the event contract.
func CheckRobust(t *testing.T, p wire.Protocol, c Capture) {
	t.Helper()
	whole := Decode(t, p, c, "whole capture")
	if r := whole.CannotFollow(); r != "" {
		t.Fatalf("whole capture: cannot follow: %s", r)
	}
	want := summary(whole)
	for _, size := range []int{1, 7} {
		if got := summary(Decode(t, p, Rechunk(c, size), fmt.Sprintf("%d-byte chunks", size))); got != want {
			t.Errorf("%d-byte chunks give other events than the capture's chunks:\n got %.600s\nwant %.600s", size, got, want)
		}
	}
	n := len(c)
	for _, k := range []int{n / 3, n / 2, 2 * n / 3, n - 2} {
		if k <= 0 || k >= n || len(c[k].Data) < 2 {
			continue
		}
		cut := append(Capture(nil), c[:k]...)
		cut = append(cut, Chunk{Dir: c[k].Dir, At: c[k].At, Data: c[k].Data[:len(c[k].Data)-1]})
		name := fmt.Sprintf("cut in chunk %d of %d (%s)", k, n, c[k].Dir)
		if Decode(t, p, cut, name).CannotFollow() == "" {
			t.Errorf("%s: no cannot-follow", name)
		}
	}
	for _, k := range []int{n / 3, n / 2, 2 * n / 3} {
		for k < n && c[k].Dir != wire.Client {
			k++
		}
		if k >= n {
			continue
		}
		bad := append(Capture(nil), c[:k]...)
		bad = append(bad, Chunk{Dir: wire.Client, At: c[k].At, Data: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}})
		bad = append(bad, c[k:]...)
		name := fmt.Sprintf("0xff×8 before chunk %d of %d", k, n)
		if Decode(t, p, bad, name).CannotFollow() == "" {
			t.Errorf("%s: no cannot-follow", name)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		bad := make(Capture, len(c))
		for j, ch := range c {
			bad[j] = Chunk{Dir: ch.Dir, At: ch.At, Data: append([]byte(nil), ch.Data...)}
		}
		for range 1 + i%4 {
			ch := &bad[rng.IntN(len(bad))]
			if len(ch.Data) > 0 {
				ch.Data[rng.IntN(len(ch.Data))] = byte(rng.Uint32())
			}
		}
		Decode(t, p, bad, fmt.Sprintf("random bytes changed (%d)", i))
		// Through a Tracker too: it must survive whatever the decoder reports.
		bad.Replay(wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{p}}))
	}
}

// FuzzReplay is the body of a decoder's fuzz target: data is a capture (Marshal), possibly
// mangled; whatever it holds, the decoder and a Tracker around it must not panic and the
// decoder must keep the event contract.
func FuzzReplay(t *testing.T, p wire.Protocol, data []byte) {
	c, _ := Unmarshal(data)
	if len(c) == 0 {
		return
	}
	c.Replay(p.NewDecoder(&strict{t: t, name: "fuzzed capture"}))
	c.Replay(wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{p}}))
}

// BenchReplay measures a decoder's steady state: it replays c[:skip] (the handshake) into
// one Tracker, then c[skip:] once per iteration, and reports the time and allocations per
// round trip of c[skip:]. c[skip:] must start and end between transactions, so that it can
// be replayed again and again on one connection.
func BenchReplay(b *testing.B, p wire.Protocol, c Capture, skip int) {
	body := c[skip:]
	rts := body.RoundTrips()
	if body[0].Dir == wire.Client && len(c[:skip]) > 0 && c[skip-1].Dir == wire.Server {
		rts++ // the body's first server chunk answers its first client chunk
	}
	if rts == 0 {
		b.Fatal("the capture's body has no round trips")
	}
	var txs int64
	tr := wire.NewTracker(wire.TrackerConfig{Protocols: []wire.Protocol{p}, OnTx: func(*wire.Tx) { txs++ }})
	at := int64(0)
	feed := func(cs Capture) {
		for _, ch := range cs {
			at += 1000
			if ch.Dir == wire.Client {
				tr.ClientData(ch.Data, at)
			} else {
				tr.ServerData(ch.Data, at)
			}
		}
	}
	feed(c[:skip])
	feed(body) // warm the caches
	if tr.Stopped() != "" {
		b.Fatalf("the decoder stopped: %s", tr.Stopped())
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		feed(body)
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	if tr.Stopped() != "" {
		b.Fatalf("the decoder stopped: %s", tr.Stopped())
	}
	n := float64(b.N) * float64(rts)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/roundtrip")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/roundtrip")
	b.ReportMetric(float64(rts), "roundtrips/op")
}
