package tpcc

import (
	"context"

	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
)

// OptionMode is the run option that chooses the round-trip mode (Modes).
const OptionMode = "mode"

// Definition declares TPC-C to the execution core and the command line.
var Definition = &workload.Definition{
	Name:    "tpcc",
	Summary: "TPC-C: five order-entry transactions on warehouses of data (NOPM, round trips per transaction)",
	Scale:   workload.Scale{Name: "warehouses", Usage: "about 100 MB each", Default: 1},
	TxTypes: txNames[:],
	DefaultMix: workload.Mix{txNames[txNewOrder]: DefaultMix.NewOrder, txNames[txPayment]: DefaultMix.Payment,
		txNames[txOrderStatus]: DefaultMix.OrderStatus, txNames[txDelivery]: DefaultMix.Delivery,
		txNames[txStockLevel]: DefaultMix.StockLevel},
	// §5.4.1: the reported throughput is New-Order transactions per minute.
	Metric: workload.Metric{Name: "NOPM", TxType: txNames[txNewOrder]},
	Options: option.Set{{
		Name: OptionMode, Kind: option.String, Default: ModeClient, Values: Modes,
		Usage: "TPC-C round-trip mode: client (one statement per round trip), batched (pipelines, multi-row reads, EXECUTE BLOCK) or procedure (one server-side call per transaction)",
	}},
	Think: true,
	Load: func(ctx context.Context, t workload.Target, cfg workload.LoadConfig) error {
		return Load(ctx, t, LoadConfig{Warehouses: max(cfg.Scale, 1), Seed: cfg.Seed, Workers: cfg.Workers, Progress: cfg.Progress})
	},
	Loaded: func(ctx context.Context, t workload.Target) (int, error) { return LoadedWarehouses(ctx, t.DB) },
	New: func(t workload.Target, cfg workload.Config) (workload.Workload, error) {
		c := Config{Warehouses: cfg.Scale, Seed: cfg.Seed, Think: cfg.Think, Mode: cfg.Options.String(OptionMode, "")}
		if cfg.Mix != nil {
			c.Mix = Mix{NewOrder: cfg.Mix[txNames[txNewOrder]], Payment: cfg.Mix[txNames[txPayment]],
				OrderStatus: cfg.Mix[txNames[txOrderStatus]], Delivery: cfg.Mix[txNames[txDelivery]],
				StockLevel: cfg.Mix[txNames[txStockLevel]]}
		}
		return New(t, c)
	},
	Check: func(ctx context.Context, t workload.Target) ([]workload.CheckResult, error) {
		res, err := Check(ctx, t)
		out := make([]workload.CheckResult, len(res))
		for i, r := range res {
			out[i] = workload.CheckResult{Clause: r.Clause, Name: r.Name, OK: r.OK, Detail: r.Detail}
		}
		return out, err
	},
}

func init() { workload.Register(Definition) }

// Describe implements workload.Describer: the round-trip mode the run used.
func (w *Workload) Describe() map[string]string { return map[string]string{OptionMode: w.Mode()} }
