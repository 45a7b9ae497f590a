package tpcc

import (
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/workload"
)

func TestMixSpecViolation(t *testing.T) {
	if v := DefaultMix.SpecViolation(); v != "" {
		t.Errorf("default mix: %s", v)
	}
	// The card deck of §5.2.4.2: Payment 43.5 %, the small ones 4.3 % each.
	if v := (Mix{10, 10, 1, 1, 1}).SpecViolation(); v != "" {
		t.Errorf("10/10/1/1/1: %s", v)
	}
	if v := (Mix{50, 42, 4, 2, 2}).SpecViolation(); !strings.Contains(v, "payment is 42.0 %") {
		t.Errorf("payment short: %q", v)
	}
	if v := (Mix{NewOrder: 1}).SpecViolation(); v == "" {
		t.Error("new_order only passes")
	}
}

func TestNewValidates(t *testing.T) {
	tg := workload.Target{Engine: postgres.Engine{}}
	if _, err := New(tg, Config{Warehouses: -1}); err == nil {
		t.Error("negative warehouses accepted")
	}
	if _, err := New(tg, Config{Mix: Mix{-1, 2, 0, 0, 0}}); err == nil {
		t.Error("negative weight accepted")
	}
	if _, err := New(workload.Target{}, Config{}); err == nil {
		t.Error("no engine accepted")
	}
	w, err := New(tg, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != "tpcc" {
		t.Errorf("Name = %q", w.Name())
	}
	var names []string
	var total float64
	for _, tt := range w.TxTypes() {
		names = append(names, tt.Name)
		total += tt.Weight
	}
	if got := strings.Join(names, ","); got != "new_order,payment,order_status,delivery,stock_level" || total != 100 {
		t.Errorf("TxTypes = %s, weights sum to %g", got, total)
	}
}

// offline returns a workload that is prepared as if w warehouses were loaded, for tests of
// terminal input generation that need no database.
func offline(t *testing.T, w int, cfg Config) *Workload {
	t.Helper()
	wl, err := New(workload.Target{Engine: postgres.Engine{}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wl.w = w
	wl.c = newRunConstants(cfg.Seed, 100)
	wl.st = &statements{}
	return wl
}

// TestTerminalPlacement checks the home warehouse (§2.4.1.1) and the Stock-Level
// district, unique per (warehouse, district) over 10 terminals per warehouse (§2.8.1.1).
func TestTerminalPlacement(t *testing.T) {
	w := offline(t, 3, Config{Seed: 1})
	seen := map[[2]int]int{}
	for id := range 30 {
		term := w.NewTerminal(id).(*terminal)
		if want := id%3 + 1; term.wID != want {
			t.Errorf("terminal %d: home warehouse %d, want %d", id, term.wID, want)
		}
		key := [2]int{term.wID, term.slDistrict}
		if prev, dup := seen[key]; dup {
			t.Errorf("terminals %d and %d share Stock-Level district %v", prev, id, key)
		}
		seen[key] = id
	}
	if len(seen) != 30 {
		t.Errorf("%d distinct (warehouse, district) pairs, want 30", len(seen))
	}
}

// TestTerminalMix checks that Next follows the weights, that zero weights are never
// chosen, and that pauses appear only with Think on.
func TestTerminalMix(t *testing.T) {
	w := offline(t, 1, Config{Seed: 9})
	term := w.NewTerminal(0)
	var counts [numTxTypes]int
	const n = 200000
	for range n {
		typ, p := term.Next()
		if p != (workload.Pause{}) {
			t.Fatalf("pause %+v with Think off", p)
		}
		counts[typ]++
	}
	for i, c := range counts {
		want := DefaultMix.weights()[i] / 100
		if got := float64(c) / n; got < want-0.005 || got > want+0.005 {
			t.Errorf("%s chosen %.2f %% of the time, want %.0f %%", txNames[i], 100*got, 100*want)
		}
	}

	w = offline(t, 1, Config{Seed: 9, Mix: Mix{Payment: 1, StockLevel: 1}, Think: true})
	term = w.NewTerminal(5)
	for range 1000 {
		typ, p := term.Next()
		if typ != txPayment && typ != txStockLevel {
			t.Fatalf("chose %s with weight 0", txNames[typ])
		}
		if p.Keying != keyingTimes[typ] || p.Think <= 0 || p.Think > 10*thinkMeans[typ] {
			t.Fatalf("%s: pause %+v", txNames[typ], p)
		}
	}
}

// TestInputVariability generates many transaction inputs and checks them against the
// input-variability bounds of §5.5.1.5 / §9.2.2.5 and the input rules of §2.
func TestInputVariability(t *testing.T) {
	w := offline(t, 4, Config{Seed: 11})
	term := w.NewTerminal(2).(*terminal)
	const n = 200000
	var rbk, lines, remoteLines, remotePay, byNamePay, byNameOS int
	for range n {
		no := term.newOrderInput()
		if no.rbk {
			rbk++
			if last := no.lines[len(no.lines)-1]; last.iID != unusedItem {
				t.Fatalf("rollback order's last item is %d", last.iID)
			}
		}
		if len(no.lines) < 5 || len(no.lines) > 15 {
			t.Fatalf("ol_cnt %d", len(no.lines))
		}
		lines += len(no.lines)
		for i, l := range no.lines {
			if l.number != i+1 || l.quantity < 1 || l.quantity > 10 {
				t.Fatalf("line %+v", l)
			}
			if l.supplyWID != term.wID {
				remoteLines++
				if l.supplyWID < 1 || l.supplyWID > 4 {
					t.Fatalf("supply warehouse %d", l.supplyWID)
				}
			}
		}
		py := term.paymentInput()
		if py.cWID != term.wID {
			remotePay++
		} else if py.cDID != py.dID {
			t.Fatalf("home payment with customer district %d != %d", py.cDID, py.dID)
		}
		if py.byName {
			byNamePay++
		}
		if py.amount < 100 || py.amount > 500000 {
			t.Fatalf("H_AMOUNT %v", py.amount)
		}
		if term.orderStatusInput().byName {
			byNameOS++
		}
	}
	pct := func(k, of int) float64 { return 100 * float64(k) / float64(of) }
	for _, c := range []struct {
		what   string
		got    float64
		lo, hi float64
	}{
		{"New-Order rollbacks %", pct(rbk, n), 0.9, 1.1},
		{"order lines per order", float64(lines) / n, 9.5, 10.5},
		{"remote order lines %", pct(remoteLines, lines), 0.95, 1.05},
		{"remote payments %", pct(remotePay, n), 14, 16},
		{"payments by last name %", pct(byNamePay, n), 57, 63},
		{"order-status by last name %", pct(byNameOS, n), 57, 63},
	} {
		if c.got < c.lo || c.got > c.hi {
			t.Errorf("%s = %.3f, want %.2f..%.2f", c.what, c.got, c.lo, c.hi)
		}
	}
	// With one warehouse everything is local (§2.4.1.5, §2.5.1.2 Comments).
	term = offline(t, 1, Config{Seed: 11}).NewTerminal(0).(*terminal)
	for range 20000 {
		if in := term.paymentInput(); in.cWID != 1 {
			t.Fatalf("remote payment with one warehouse")
		}
		for _, l := range term.newOrderInput().lines {
			if l.supplyWID != 1 {
				t.Fatalf("remote line with one warehouse")
			}
		}
	}
}

// TestDeck: a terminal drawing from a deck holds the mix exactly in every deck's worth of
// transactions, the deck of the default mix has its 100 cards and §5.2.4.2's mix its 23, a
// mix of fractions is rounded to a deck with a card for each type it weighs (one card more
// than maxDeck where a tiny weight keeps its one), and the same seed draws the same
// sequence.
func TestDeck(t *testing.T) {
	for _, c := range []struct {
		mix  Mix
		size int
	}{{DefaultMix, 100}, {Mix{10, 10, 1, 1, 1}, 23}, {Mix{44.5, 43.5, 4, 4, 4}, maxDeck}, {Mix{99999, 1, 0, 0, 0}, maxDeck + 1}} {
		w := offline(t, 2, Config{Mix: c.mix, Deck: true, Seed: 7})
		term := w.newTerminal(0)
		if len(term.deck) != c.size {
			t.Errorf("mix %v: a deck of %d cards, want %d", c.mix, len(term.deck), c.size)
		}
		want := map[int]int{}
		for _, typ := range term.deck {
			want[typ]++
		}
		if c.mix.StockLevel == 0 && want[txStockLevel] > 0 || c.mix.Payment > 0 && want[txPayment] == 0 {
			t.Errorf("mix %v: deck %v", c.mix, want)
		}
		again := w.newTerminal(0)
		for round := range 3 {
			got := map[int]int{}
			for range c.size {
				typ, _ := term.Next()
				got[typ]++
				if other, _ := again.Next(); other != typ {
					t.Fatalf("mix %v: the same seed drew %d and %d", c.mix, typ, other)
				}
			}
			for typ, n := range want {
				if got[typ] != n {
					t.Errorf("mix %v, deck %d: %d of type %d, want %d", c.mix, round, got[typ], typ, n)
				}
			}
		}
	}
}
