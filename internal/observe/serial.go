package observe

import (
	"cmp"
	"slices"
)

// ring keeps the timelines of a shape's most recent transactions that took rts round trips,
// for the serial analysis: per transaction its connection, start and end, and per round trip
// when its request was sent and the first and last chunk of its answer arrived.
type ring struct {
	rts   int
	n     int // entries filled, up to ringTxs
	next  int
	conns []uint64
	times []int64 // ringTxs × stride: start, end, then (sent, first, last) per round trip
}

func newRing(rts int) *ring {
	return &ring{rts: rts, conns: make([]uint64, ringTxs), times: make([]int64, ringTxs*(2+3*rts))}
}

func (r *ring) stride() int { return 2 + 3*r.rts }

// ringSize is the memory of a ring of transactions of rts round trips, in bytes.
func ringSize(rts int) int { return ringTxs * (8 + 8*(2+3*rts)) }

func (r *ring) add(conn uint64, start, end int64, rts []rtTimes) {
	i := r.next
	r.next = (r.next + 1) % ringTxs
	r.n = min(r.n+1, ringTxs)
	r.conns[i] = conn
	e := r.times[i*r.stride() : (i+1)*r.stride()]
	e[0], e[1] = start, end
	for k, t := range rts {
		e[2+3*k], e[3+3*k], e[4+3*k] = t.sent, t.first, t.last
	}
}

// entry returns the i-th kept transaction's times.
func (r *ring) entry(i int) []int64 { return r.times[i*r.stride() : (i+1)*r.stride()] }

// Thresholds of the serial analysis.
const (
	// minSerialTxs: fewer kept transactions say nothing about overlap.
	minSerialTxs = 20
	// A section is serial when transactions overlap in it at most serialShare of what
	// independent transactions of the same utilisation would (U·(n−1)/n others on average,
	// n connections): a lock lets a second holder in only at the edges, where the next
	// transaction's answer arrives just before the holder's commit answer. Independent
	// clients overlap in proportion to the section's share of their time; one fifth of
	// that leaves a wide margin on either side.
	serialShare = 0.2
	// minSerialUtil: a section busy less than a tenth of the time holds nobody up much, and
	// its overlap is too rare to measure.
	minSerialUtil = 0.1
	// minTxOverlap: the whole transactions must have run concurrently (on average at
	// least this many others during one): otherwise nothing could have overlapped anyway.
	minTxOverlap = 0.3
)

// analyse returns the mean server time of each round trip and the shape's serial section,
// if it has one (see Serial).
func (r *ring) analyse() ([]float64, *Serial) {
	if r.n < minSerialTxs {
		return nil, nil
	}
	server := make([]float64, r.rts)
	conns := map[uint64]bool{}
	lo, hi := r.entry(0)[0], r.entry(0)[1]
	for i := range r.n {
		e := r.entry(i)
		conns[r.conns[i]] = true
		lo, hi = min(lo, e[0]), max(hi, e[1])
		for k := range r.rts {
			server[k] += float64(e[4+3*k] - e[2+3*k])
		}
	}
	for k := range server {
		server[k] = server[k] / float64(r.n) / 1e6
	}
	span := float64(hi - lo)
	if span <= 0 || len(conns) < 2 {
		return server, nil
	}
	ivs := make([]interval, r.n)
	for i := range r.n {
		e := r.entry(i)
		ivs[i] = interval{e[0], e[1], i}
	}
	_, txOverlap := overlap(ivs)
	if txOverlap < minTxOverlap {
		return server, nil
	}
	nc := float64(len(conns))
	// The last round trip's section is only its answer's transfer: no round trip is held.
	for k := 0; k < r.rts-1; k++ {
		for i := range r.n {
			e := r.entry(i)
			ivs[i] = interval{e[3+3*k], e[1], i}
		}
		busy, ov := overlap(ivs)
		util := busy / span
		if util < minSerialUtil || ov > serialShare*util*(nc-1)/nc {
			continue
		}
		s := &Serial{FromRoundTrip: k + 1, RoundTripsHeld: r.rts - 1 - k, Overlap: ov, TxOverlap: txOverlap,
			Utilisation: util, HeldMsMean: busy / float64(r.n) / 1e6}
		s.WaitMsMean = r.wait(k, ivs)
		return server, s
	}
	return server, nil
}

// wait returns the mean wait in round trip k beyond its time when no other transaction held
// the section that starts there: its mean server time minus the mean over the transactions
// whose request found the section free. ivs are the sections, by entry.
func (r *ring) wait(k int, ivs []interval) float64 {
	sorted := slices.Clone(ivs)
	slices.SortFunc(sorted, func(a, b interval) int { return cmp.Compare(a.from, b.from) })
	var all, free float64
	nFree := 0
	for i := range r.n {
		e := r.entry(i)
		sent, st := e[2+3*k], float64(e[4+3*k]-e[2+3*k])
		all += st
		// The section that started last before the request: with sections one at a time,
		// the only one that can hold it.
		j, _ := slices.BinarySearchFunc(sorted, sent, func(iv interval, t int64) int { return cmp.Compare(iv.from, t) })
		held := false
		for m := j - 1; m >= 0 && m >= j-2; m-- {
			if iv := sorted[m]; iv.to > sent && r.conns[iv.id] != r.conns[i] {
				held = true
			}
		}
		if !held {
			free += st
			nFree++
		}
	}
	if nFree == 0 || nFree == r.n {
		return 0
	}
	return max(0, all/float64(r.n)-free/float64(nFree)) / 1e6
}

type interval struct {
	from, to int64
	id       int
}

// overlap returns the total length of the intervals and the mean number of others open
// during one (∫k(k−1) / ∫k over time, k the number open).
func overlap(ivs []interval) (total, others float64) {
	type ev struct {
		t int64
		d int
	}
	evs := make([]ev, 0, 2*len(ivs))
	for _, iv := range ivs {
		if iv.to > iv.from {
			evs = append(evs, ev{iv.from, 1}, ev{iv.to, -1})
		}
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(a.d, b.d) // ends before starts at the same instant
	})
	var k int
	var prev int64
	var pairs float64
	for _, e := range evs {
		if k > 0 {
			dt := float64(e.t - prev)
			total += float64(k) * dt
			pairs += float64(k*(k-1)) * dt
		}
		k += e.d
		prev = e.t
	}
	if total == 0 {
		return 0, 0
	}
	return total, pairs / total
}
