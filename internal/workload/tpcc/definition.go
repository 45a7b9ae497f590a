package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
)

// OptionMode is the run option that chooses the round-trip mode (Modes).
const OptionMode = "mode"

// OptionSelection is the run option that chooses how terminals draw transaction types:
// SelectionWeighted (the default) or SelectionDeck (Config.Deck).
const OptionSelection = "selection"

// The ways of drawing transaction types (§5.2.4).
const (
	SelectionWeighted = "weighted"
	SelectionDeck     = "deck"
)

// OptionHomeWarehouses is the run option that gives the terminals home warehouses in a
// range LO-HI of the active ones (Config.HomeWarehouses): how a run driven by several
// agents partitions the warehouses among them.
const OptionHomeWarehouses = "home-warehouses"

// Definition declares TPC-C to the execution core and the command line.
var Definition = &workload.Definition{
	Name:    "tpcc",
	Summary: "TPC-C: five order-entry transactions on warehouses of data (NOPM, round trips per transaction)",
	// 2 warehouses take 221 to 236 MiB on PostgreSQL 15 with their indexes.
	Scale: workload.Scale{Name: "warehouses", Usage: "about 100 MB each", Default: 1, Bytes: 120 << 20},
	// ORDER-LINE is the largest table (30 million rows at 100 warehouses, and growing); no
	// index of TPC-C's covers its item.
	Index:   &workload.Index{Table: "order_line", Columns: []string{"ol_i_id"}},
	TxTypes: txNames[:],
	DefaultMix: workload.Mix{txNames[txNewOrder]: DefaultMix.NewOrder, txNames[txPayment]: DefaultMix.Payment,
		txNames[txOrderStatus]: DefaultMix.OrderStatus, txNames[txDelivery]: DefaultMix.Delivery,
		txNames[txStockLevel]: DefaultMix.StockLevel},
	// §5.4.1: the reported throughput is New-Order transactions per minute.
	Metric: workload.Metric{Name: "NOPM", TxType: txNames[txNewOrder]},
	Options: option.Set{{
		Name: OptionMode, Kind: option.String, Default: ModeClient, Values: Modes,
		Usage: "TPC-C round-trip mode: client (one statement per round trip), batched (pipelines, multi-row reads, EXECUTE BLOCK) or procedure (one server-side call per transaction)",
	}, {
		Name: OptionSelection, Kind: option.String, Values: []string{SelectionWeighted, SelectionDeck},
		Usage: "how terminals draw transaction types: weighted (independently at random with the mix's weights, §5.2.4.1; the default) or deck (from a shuffled deck of cards in the mix's proportions, §5.2.4.2: each terminal's mix is exact every deck, so that a short window counts the mix it asks for)",
	}, {
		Name: OptionHomeWarehouses, Kind: option.String,
		Usage: "home warehouses of the terminals, LO-HI within the active ones (default: all of them); remote warehouses are drawn from all",
	}},
	Think:  true,
	Pauses: pauses(),
	// A run split among agents gives each a contiguous range of home warehouses and
	// terminals in proportion to it, so every warehouse's terminals run on one agent.
	Split: func(warehouses, n int) []workload.Partition {
		if warehouses < n {
			return nil
		}
		out := make([]workload.Partition, n)
		for k := range n {
			lo, hi := k*warehouses/n, (k+1)*warehouses/n
			out[k] = workload.Partition{Share: hi - lo, Options: map[string]string{OptionHomeWarehouses: fmt.Sprintf("%d-%d", lo+1, hi)}}
		}
		return out
	},
	SplitOptions: []string{OptionHomeWarehouses},
	RoundTripModes: &workload.RoundTripModes{Option: OptionMode, Title: "TPC-C", TxTitle: "New-Order",
		Hint: "dblat's TPC-C runs New-Order in 37, 2 or 1 round trips (dblat run tpcc --rtt 20ms --mode client|batched|procedure): compare them to see what fewer round trips buy on your server"},
	Load: func(ctx context.Context, t workload.Target, cfg workload.LoadConfig) error {
		return Load(ctx, t, LoadConfig{Warehouses: max(cfg.Scale, 1), Seed: cfg.Seed, Workers: cfg.Workers, Progress: cfg.Progress})
	},
	Loaded: func(ctx context.Context, t workload.Target, _ workload.Config) (int, error) {
		return LoadedWarehouses(ctx, t.DB)
	},
	New: func(t workload.Target, cfg workload.Config) (workload.Workload, error) {
		c := Config{Warehouses: cfg.Scale, Seed: cfg.Seed, Think: cfg.Think, Mode: cfg.Options.String(OptionMode, ""),
			Deck: cfg.Options.String(OptionSelection, SelectionWeighted) == SelectionDeck}
		if r := cfg.Options.String(OptionHomeWarehouses, ""); r != "" {
			lo, hi, err := ParseWarehouseRange(r)
			if err != nil {
				return nil, &option.Error{Name: OptionHomeWarehouses, Err: err}
			}
			c.HomeWarehouses = [2]int{lo, hi}
		}
		if cfg.Mix != nil {
			c.Mix = Mix{NewOrder: cfg.Mix[txNames[txNewOrder]], Payment: cfg.Mix[txNames[txPayment]],
				OrderStatus: cfg.Mix[txNames[txOrderStatus]], Delivery: cfg.Mix[txNames[txDelivery]],
				StockLevel: cfg.Mix[txNames[txStockLevel]]}
		}
		return New(t, c)
	},
	Check: Check,
}

func init() { workload.Register(Definition) }

// pauses are the keying and mean think times of §5.2.5.7 by transaction type.
func pauses() map[string]workload.Pause {
	m := make(map[string]workload.Pause, numTxTypes)
	for i, name := range txNames {
		m[name] = workload.Pause{Keying: keyingTimes[i], Think: thinkMeans[i]}
	}
	return m
}

// Describe implements workload.Describer: the round-trip mode the run used.
func (w *Workload) Describe() map[string]string { return map[string]string{OptionMode: w.Mode()} }

// ParseWarehouseRange parses a range of warehouses written LO-HI (or N for one), as
// OptionHomeWarehouses takes it.
func ParseWarehouseRange(s string) (lo, hi int, err error) {
	a, b, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		b = a
	}
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return 0, 0, fmt.Errorf("%q: write LO-HI with 1 ≤ LO ≤ HI, e.g. 1-10", s)
	}
	return lo, hi, nil
}
