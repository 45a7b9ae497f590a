package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/dblat/dblat/internal/workload"
)

// Keying and mean think times per transaction type (§5.2.5.7), in the order of txNames.
var (
	keyingTimes = [numTxTypes]time.Duration{18 * time.Second, 3 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second}
	thinkMeans  = [numTxTypes]time.Duration{12 * time.Second, 12 * time.Second, 10 * time.Second, 5 * time.Second, 5 * time.Second}
)

// terminal is one emulated user (§4.2.2: 10 per warehouse at full scale). It implements
// workload.Terminal and is used by one goroutine at a time.
type terminal struct {
	w          *Workload
	r          *rand.Rand
	id         int
	wID        int // home warehouse (§2.4.1.1 and the like)
	slDistrict int // Stock-Level district (§2.8.1.1)
	cum        [numTxTypes]float64
	// deck is the terminal's deck of transaction types (Config.Deck), and next the index of
	// its next card; nil when types are drawn by weight.
	deck []int
	next int

	// The transaction the last Next drew: its type and its input (one of the five, by
	// type), which Run executes, as often as the runner retries it.
	typ int
	no  newOrderInput
	py  paymentInput
	os  orderStatusInput
	dl  deliveryInput
	sl  stockLevelInput
}

func (w *Workload) newTerminal(id int) *terminal {
	first, n := 1, w.w // home warehouses first … first+n-1
	if h := w.cfg.HomeWarehouses; h != [2]int{} {
		first, n = h[0], h[1]-h[0]+1
	}
	t := &terminal{
		w:          w,
		r:          workload.NewRand(w.cfg.Seed, "terminal", id),
		id:         id,
		wID:        first + id%n,
		slDistrict: (id/n)%districtsPerW + 1,
	}
	var sum float64
	for i, x := range w.mix {
		sum += x
		t.cum[i] = sum
	}
	if w.cfg.Deck {
		t.deck = deckOf(w.mix)
		t.next = len(t.deck) // shuffled before the first draw
	}
	return t
}

// maxDeck bounds a deck's cards: a mix whose weights are not whole numbers summing to at
// most this many is rounded to a deck of this many, each type with a weight keeping one
// card at least.
const maxDeck = 1000

// deckOf returns a deck of transaction types in the proportions of mix: the weights
// themselves as card counts when they are whole numbers summing to at most maxDeck (the
// default mix's deck has 100 cards: 45, 43, 4, 4, 4; §5.2.4.2's is the mix 10, 10, 1, 1,
// 1), else rounded to maxDeck cards.
func deckOf(mix [numTxTypes]float64) []int {
	var sum float64
	whole := true
	for _, x := range mix {
		sum += x
		whole = whole && x == math.Trunc(x)
	}
	scale := 1.0
	if !whole || sum > maxDeck {
		scale = maxDeck / sum
	}
	var deck []int
	for typ, x := range mix {
		n := int(math.Round(x * scale))
		if x > 0 {
			n = max(n, 1)
		}
		for range n {
			deck = append(deck, typ)
		}
	}
	return deck
}

// Next draws the next transaction: its type (draw: from the deck, or at random with the
// mix's weights),
// when Config.Think is on its keying time (constant, §5.2.5.2) and think time (negative
// exponential, §5.2.5.4), and then its input, fresh for every transaction (§2.4.1.4
// Comment: inputs are never reused), which Run executes. The draws come in that order, so
// a seed gives the same transactions as when Run drew the input.
func (t *terminal) Next() (int, workload.Pause) {
	typ := t.draw()
	var p workload.Pause
	if t.w.cfg.Think {
		p.Keying = keyingTimes[typ]
		p.Think = thinkTime(t.r, thinkMeans[typ])
	}
	t.typ = typ
	switch typ {
	case txNewOrder:
		t.no = t.newOrderInput()
	case txPayment:
		t.py = t.paymentInput()
	case txOrderStatus:
		t.os = t.orderStatusInput()
	case txDelivery:
		t.dl = t.deliveryInput()
	case txStockLevel:
		t.sl = t.stockLevelInput()
	}
	return typ, p
}

// draw chooses the next transaction's type: the deck's next card (shuffled anew once used
// up, §5.2.4.2), or at random with the mix's weights (§5.2.4.1).
func (t *terminal) draw() int {
	if t.deck != nil {
		if t.next == len(t.deck) {
			t.r.Shuffle(len(t.deck), func(i, j int) { t.deck[i], t.deck[j] = t.deck[j], t.deck[i] })
			t.next = 0
		}
		t.next++
		return t.deck[t.next-1]
	}
	x := t.r.Float64() * t.cum[numTxTypes-1]
	for i, c := range t.cum {
		if x < c {
			return i
		}
	}
	return numTxTypes - 1
}

// thinkTime is Tt = -ln(r) × μ with r uniform in (0, 1], truncated at 10 × μ as §5.2.5.4
// allows. Float64 returns [0, 1), so 1 - Float64 is in (0, 1].
func thinkTime(r *rand.Rand, mean time.Duration) time.Duration {
	f := -math.Log(1-r.Float64()) * float64(mean)
	return time.Duration(min(f, 10*float64(mean)))
}

// Run executes the transaction the last Next drew on conn, in the workload's mode, with the
// input Next drew; a retry runs the same input again (the inputs are values that no mode
// changes). It returns nil on commit, workload.ErrExpectedRollback for New-Order's designed
// rollback, or the error, after rolling back.
func (t *terminal) Run(ctx context.Context, conn *sql.Conn) error {
	var err error
	switch t.typ {
	case txNewOrder:
		_, err = t.w.runNewOrder(ctx, conn, t.no)
	case txPayment:
		_, err = t.w.runPayment(ctx, conn, t.py)
	case txOrderStatus:
		_, err = t.w.runOrderStatus(ctx, conn, t.os)
	case txDelivery:
		_, err = t.w.runDelivery(ctx, conn, t.dl)
	case txStockLevel:
		_, err = t.w.runStockLevel(ctx, conn, t.sl)
	default:
		err = fmt.Errorf("tpcc: no transaction type %d", t.typ)
	}
	return err
}

// district is D_ID = random within [1..10] (§2.4.1.2, §2.5.1.2, §2.6.1.2).
func (t *terminal) district() int { return randInt(t.r, 1, districtsPerW) }

// otherWarehouse picks a warehouse other than the home one, uniformly among the active
// ones (§2.4.1.5, §2.5.1.2). With one warehouse there is no other, and the home one is
// returned (the Comments of those clauses: everything is local then).
func (t *terminal) otherWarehouse() int {
	if t.w.w == 1 {
		return t.wID
	}
	o := randInt(t.r, 1, t.w.w-1)
	if o >= t.wID {
		o++
	}
	return o
}

// customerID is C_ID = NURand(1023, 1, 3000) (§2.4.1.2, §2.5.1.2, §2.6.1.2).
func (t *terminal) customerID() int { return nurand(t.r, aCID, t.w.c.cID, 1, customersPerDistrict) }

// customerLast is C_LAST from NURand(255, 0, 999) with C-Run (§2.5.1.2, §2.6.1.2).
func (t *terminal) customerLast() string {
	return lastName(nurand(t.r, aCLast, t.w.c.cLast, 0, 999))
}

// middle returns the customer at position ⌈n/2⌉ (1-based) of a list sorted by C_FIRST
// (§2.5.2.2, §2.6.2.2), which is index (n-1)/2.
func middle(n int) int { return (n - 1) / 2 }
