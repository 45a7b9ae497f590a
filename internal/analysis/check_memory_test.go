package analysis

import (
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/results"
)

// TestDataInRAMMemoryLimit: data-in-ram judges a run on a server under a memory limit
// against the limit, not the machine's memory: a database larger than the limit is not a
// cached database, one smaller still is.
func TestDataInRAMMemoryLimit(t *testing.T) {
	plant := func(limit int64) []results.Run {
		runs := cleanStudy()
		r := byID(runs, 4)
		r.Server.Managed = true
		r.Server.MemoryLimit = limit
		r.Params.Options[results.FactorMemory] = "any" // the same everywhere below
		for i := range runs {
			runs[i].Params.Options[results.FactorMemory] = "any"
		}
		return runs
	}
	if fs := only(Check(plant(512<<20), cleanOpt), RuleDataInRAM); len(fs) != 0 {
		t.Errorf("a 900 MiB database under a 512 MiB limit: %+v", fs)
	}
	fs := only(Check(plant(2<<30), cleanOpt), RuleDataInRAM)
	if len(fs) != 1 || !strings.Contains(fs[0].Evidence, "900 MiB database, 2.0 GiB memory limit of the server") {
		t.Errorf("a 900 MiB database under a 2 GiB limit: %+v", fs)
	}
}
