package observe

import (
	"math/rand/v2"
	"testing"
)

// simulate fills a ring with 4 connections running transactions of 4 round trips of 1 ms
// each (server 0.5 ms, client 0.5 ms), back to back. With a lock taken at round trip 2 and
// held to the end, a transaction whose round trip 2 finds the lock held waits there until
// the holder ends.
func simulate(lock bool) *ring {
	r := newRing(4)
	rng := rand.New(rand.NewPCG(1, 1))
	const rt = int64(1_000_000)
	now := [4]int64{}
	for c := range now {
		now[c] = rng.Int64N(3 * rt)
	}
	free := int64(0) // when the lock is released
	for range 400 {
		// The connection whose next transaction starts first.
		c := 0
		for i := range now {
			if now[i] < now[c] {
				c = i
			}
		}
		start := now[c]
		t := start
		var rts []rtTimes
		for k := range 4 {
			sent := t
			answer := sent + rt/2 + rng.Int64N(rt/10)
			if lock && k == 1 && answer < free {
				answer = free + rt/10 // waits for the holder's commit
			}
			rts = append(rts, rtTimes{sent: sent, first: answer, last: answer})
			t = answer + rt/2
		}
		end := rts[3].last
		if lock {
			free = end
		}
		r.add(uint64(c), start, end, rts)
		now[c] = end + rt/5
	}
	return r
}

func TestSerialFound(t *testing.T) {
	server, s := simulate(true).analyse()
	if s == nil {
		t.Fatal("no serial section found in transactions serialised by a lock")
	}
	if s.FromRoundTrip != 2 || s.RoundTripsHeld != 2 {
		t.Errorf("section from round trip %d holding %d, want 2 and 2", s.FromRoundTrip, s.RoundTripsHeld)
	}
	if s.Overlap > 0.05 || s.TxOverlap < 1 || s.WaitMsMean <= 0.1 {
		t.Errorf("overlap %.3f, transactions %.3f, wait %.3f ms", s.Overlap, s.TxOverlap, s.WaitMsMean)
	}
	if len(server) != 4 || server[1] <= server[0] {
		t.Errorf("server ms per round trip %v: the waiting one should stand out", server)
	}
}

func TestSerialNotFound(t *testing.T) {
	if _, s := simulate(false).analyse(); s != nil {
		t.Errorf("independent transactions reported serial: %+v", s)
	}
	// One connection: nothing can overlap, so nothing can be told.
	r := newRing(2)
	for i := range int64(100) {
		at := i * 10
		r.add(0, at, at+8, []rtTimes{{at, at + 2, at + 3}, {at + 4, at + 7, at + 8}})
	}
	if _, s := r.analyse(); s != nil {
		t.Errorf("one connection reported serial: %+v", s)
	}
}

func TestOverlap(t *testing.T) {
	total, others := overlap([]interval{{0, 10, 0}, {5, 15, 1}, {20, 30, 2}})
	if total != 30 {
		t.Errorf("total %v, want 30", total)
	}
	// 10 of the 30 interval-time units have one other open.
	if others < 0.333 || others > 0.334 {
		t.Errorf("others %v, want 1/3", others)
	}
}
