package simple

import (
	"context"
	"errors"
	"strconv"

	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
)

// Run and load options of the simple workloads.
const (
	OptionProtocol   = "protocol"
	OptionBlobsPerTx = "blobs_per_tx"
	OptionBlobWrite  = "blob_write"
	OptionBlobSize   = "blob_size"
	OptionBlobRows   = "blob_rows"
)

var (
	protocolOption = option.Option{Name: OptionProtocol, Kind: option.String, Default: "prepared", Values: Protocols,
		Usage: "PostgreSQL: prepared, simple or extended (pgbench -M); other engines prepare every statement once per connection"}
	blobRunOptions = option.Set{protocolOption,
		{Name: OptionBlobsPerTx, Kind: option.Int, Min: 1, Default: "1", Usage: "blobs read or written per transaction"},
		{Name: OptionBlobWrite, Kind: option.Bool, Default: "false", Usage: "write the blobs instead of reading them"},
	}
	blobLoadOptions = option.Set{
		{Name: OptionBlobSize, Kind: option.Int, Min: 1, Default: "40000", Usage: "bytes per blob"},
		{Name: OptionBlobRows, Kind: option.Int, Min: 1, Default: "1000", Usage: "rows of blobs"},
	}
	// pgbench's scale 1 takes 15 MiB with its indexes on PostgreSQL 15 (pgbench -i -s 1).
	pgbenchScale = workload.Scale{Name: "scale", Usage: "pgbench's scale: 100,000 accounts each", Default: 1, Bytes: 16 << 20}
	tps          = workload.Metric{Name: "TPS"}
	// accountsIndex is what an index build during a run indexes: pgbench's largest table,
	// on its balance, which no index covers.
	accountsIndex = &workload.Index{Table: "pgbench_accounts", Columns: []string{"abalance"}}
)

// Definitions declare the four simple workloads to the execution core and the command line.
var Definitions = []*workload.Definition{
	{
		Name: "tpcb", Summary: "pgbench's TPC-B-like script: three updates, a select and an insert", Group: "simple",
		Scale: pgbenchScale, TxTypes: []string{"tpcb"}, Metric: tps, Options: option.Set{protocolOption}, Data: dsPgbench,
		Index: accountsIndex,
	},
	{
		Name: "select-only", Summary: "pgbench -S: one primary-key select per transaction", Group: "simple",
		Scale: pgbenchScale, TxTypes: []string{"select"}, Metric: tps, Options: option.Set{protocolOption}, Data: dsPgbench,
		ReadOnly: true, Index: accountsIndex,
	},
	{
		Name: "blob", Summary: "reads (or writes) blobs: each costs Firebird extra round trips (seed 000)", Group: "simple",
		TxTypes: []string{"blob_read", "blob_write"}, Metric: tps, Options: blobRunOptions, LoadOptions: blobLoadOptions,
		Data: dsBlob,
	},
	{
		Name: "ping", Summary: "SELECT 1: the floor of a round trip", Group: "simple", TxTypes: []string{"ping"},
		Metric: tps, Options: option.Set{protocolOption}, ReadOnly: true, Data: "ping",
	},
}

func init() {
	for _, d := range Definitions {
		d.Load = func(ctx context.Context, t workload.Target, cfg workload.LoadConfig) error {
			lc := LoadConfig{Workload: d.Name, Scale: cfg.Scale, Seed: cfg.Seed, Workers: cfg.Workers, Progress: cfg.Progress,
				BlobSize: cfg.Options.Int(OptionBlobSize, 40000), BlobRows: cfg.Options.Int(OptionBlobRows, 1000)}
			if lc.Scale == 0 {
				lc.Scale = max(d.Scale.Default, 1)
			}
			return Load(ctx, t, lc)
		}
		d.Loaded = func(ctx context.Context, t workload.Target, _ workload.Config) (int, error) {
			info, err := Loaded(ctx, t.DB, d.Name)
			return info.Scale, err
		}
		d.New = func(t workload.Target, cfg workload.Config) (workload.Workload, error) {
			if cfg.Think {
				return nil, errors.New("simple: pgbench-style workloads have no think times")
			}
			return New(t, Config{Workload: d.Name, Scale: cfg.Scale, Seed: cfg.Seed,
				Protocol: cfg.Options.String(OptionProtocol, ""), BlobsPerTx: cfg.Options.Int(OptionBlobsPerTx, 1),
				BlobWrite: cfg.Options.Bool(OptionBlobWrite)})
		}
		workload.Register(d)
	}
}

// Describe implements workload.Describer: the protocol, whether single statements ran in an
// explicit transaction, and for blob the blob size loaded and what each transaction did.
func (w *Workload) Describe() map[string]string {
	d := map[string]string{OptionProtocol: w.Protocol(), "explicit_tx": strconv.FormatBool(w.ExplicitTx())}
	if w.cfg.Workload == "blob" {
		d[OptionBlobSize] = strconv.Itoa(w.blobSize)
		d[OptionBlobsPerTx] = strconv.Itoa(w.cfg.BlobsPerTx)
		d[OptionBlobWrite] = strconv.FormatBool(w.cfg.BlobWrite)
	}
	return d
}
