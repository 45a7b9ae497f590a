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

// TestEncryptionFactor: the levels of an encryption factor run on servers of their own
// with the settings encryption sets: neither the servers nor those settings differing is a
// mixed comparison; another setting differing still is.
func TestEncryptionFactor(t *testing.T) {
	plant := func() []results.Run {
		runs := cleanStudy()
		for i := range runs {
			r := &runs[i]
			r.Server.Engine, r.Server.Version = "mariadb", "10.11.19-MariaDB"
			r.Server.Settings = map[string]string{"innodb_buffer_pool_size": "1073741824", "innodb_encrypt_tables": "OFF", "innodb_encrypt_log": "OFF"}
			r.Params.Options = map[string]string{results.FactorEncryption: "off"}
			if r.ID%2 == 0 {
				r.Server.Target = r.Server.Target + "-encrypted"
				r.Server.Settings["innodb_encrypt_tables"], r.Server.Settings["innodb_encrypt_log"] = "ON", "ON"
				r.Params.Options[results.FactorEncryption] = "on"
			}
		}
		return runs
	}
	opt := CheckOptions{Factors: append(factorsRT, results.FactorEncryption)}
	fs := Check(plant(), opt)
	for _, rule := range []string{RuleMixedServer, RuleMixedSettings, RuleMixedParams} {
		if got := only(fs, rule); len(got) != 0 {
			t.Errorf("%s: %+v", rule, got)
		}
	}
	runs := plant()
	runs[0].Server.Settings["innodb_buffer_pool_size"] = "134217728"
	if got := only(Check(runs, opt), RuleMixedSettings); len(got) != 1 || !strings.Contains(got[0].Message, "innodb_buffer_pool_size") {
		t.Errorf("another setting differing: %+v", got)
	}
}
