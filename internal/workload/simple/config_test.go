package simple_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/workload"
	"github.com/dblat/dblat/internal/workload/simple"
)

// TestNewValidates checks New's and Load's argument checks, which need no server.
func TestNewValidates(t *testing.T) {
	pg := engines()[0]
	for _, tc := range []struct {
		e    workload.Target
		cfg  simple.Config
		want string // substring of the error; "" for success
	}{
		{workload.Target{Engine: pg}, simple.Config{Workload: "tpcb"}, ""},
		{workload.Target{Engine: pg}, simple.Config{Workload: "select-only", Protocol: "simple"}, ""},
		{workload.Target{Engine: pg}, simple.Config{Workload: "ping", Protocol: "extended"}, ""},
		{workload.Target{Engine: pg}, simple.Config{Workload: "blob", BlobWrite: true}, ""},
		{workload.Target{}, simple.Config{Workload: "tpcb"}, "no engine"},
		{workload.Target{Engine: pg}, simple.Config{Workload: "tpcc"}, `unknown simple workload "tpcc"`},
		{workload.Target{Engine: pg}, simple.Config{Workload: "tpcb", Scale: -1}, "scale must not be negative"},
		{workload.Target{Engine: pg}, simple.Config{Workload: "blob", BlobsPerTx: -2}, "must not be negative"},
		{workload.Target{Engine: pg}, simple.Config{Workload: "ping", Protocol: "binary"}, `"binary" is not a protocol`},
		{workload.Target{Engine: mariadb.Engine{}}, simple.Config{Workload: "ping", Protocol: "prepared"}, ""},
		{workload.Target{Engine: mariadb.Engine{}}, simple.Config{Workload: "ping", Protocol: "simple"}, "mariadb has one (statements are prepared once per connection)"},
	} {
		w, err := simple.New(tc.e, tc.cfg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("New(%+v): %v", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("New(%+v) error = %v, want one containing %q", tc.cfg, err, tc.want)
		case err == nil:
			if w.Name() != tc.cfg.Workload || len(w.TxTypes()) != 1 {
				t.Errorf("New(%+v): name %q, types %v", tc.cfg, w.Name(), w.TxTypes())
			}
		}
	}
	w, _ := simple.New(workload.Target{Engine: pg}, simple.Config{Workload: "blob", BlobWrite: true})
	if got := w.TxTypes()[0].Name; got != "blob_write" {
		t.Errorf("blob write transaction type %q", got)
	}
	if w.Protocol() != "prepared" {
		t.Errorf("default protocol %q", w.Protocol())
	}

	ctx := context.Background()
	tg := workload.Target{Engine: pg}
	for _, tc := range []struct {
		cfg  simple.LoadConfig
		want string
	}{
		{simple.LoadConfig{Workload: "tpcb"}, "scale must be 1 to 20000, got 0"},
		{simple.LoadConfig{Workload: "select-only", Scale: 20001}, "scale must be 1 to 20000"},
		{simple.LoadConfig{Workload: "blob", BlobRows: 1}, "blob size must be 1 to"},
		{simple.LoadConfig{Workload: "blob", BlobSize: simple.MaxBlobSize + 1, BlobRows: 1}, "blob size must be 1 to"},
		{simple.LoadConfig{Workload: "blob", BlobSize: 1}, "blob rows must be at least 1"},
		{simple.LoadConfig{Workload: "nope"}, "unknown simple workload"},
		{simple.LoadConfig{Workload: "tpcb", Scale: 1}, "no engine or database"},
	} {
		if err := simple.Load(ctx, tg, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	if err := simple.Load(ctx, tg, simple.LoadConfig{Workload: "ping"}); err != nil {
		t.Errorf("Load(ping) = %v", err)
	}
}
