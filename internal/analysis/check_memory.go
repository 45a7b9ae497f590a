package analysis

import (
	"fmt"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// RuleDefaultCache: the server's own cache left at the engine's default while the
// database is larger than it.
const RuleDefaultCache = "default-cache"

var defaultCacheRule = rule{names: []string{RuleDefaultCache}, check: (*checker).defaultCache}

// RuleDataInRAM: the database fits in the memory of the machine the server shares with
// dblat: the runs measure a cached database, not the disk (seed 002 §1).
const RuleDataInRAM = "data-in-ram"

var dataInRAMRule = rule{names: []string{RuleDataInRAM, RuleStorageMemory}, check: (*checker).dataInRAM}

// RuleStorageMemory: the managed server kept its data directory in memory (server storage:
// memory): no write reached a disk, so the runs measured no durability.
const RuleStorageMemory = "storage-memory"

// defaultCache flags runs whose server cache is at the engine's default and smaller than
// the database, unless the cache is requested explicitly or is a factor.
func (c *checker) defaultCache() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		db := float64(r.Server.DatabaseBytes)
		if db <= 0 {
			continue
		}
		cacheOf := comparison(r.Server.Engine).Cache
		if cacheOf == nil {
			continue
		}
		name, size, isDefault, ok := cacheOf(r.Server.Settings)
		var cache float64
		if ok && isDefault {
			cache = size
		}
		if cache == 0 || cache >= db {
			continue
		}
		if _, asked := requested(r, name); asked || c.isFactor(results.SettingPrefix+name) {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d: %s %s (the default) for a %s database", r.ID, name, engine.FormatBytes(cache), engine.FormatBytes(db)))
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleDefaultCache, Severity: Warning,
		Message:  "the server's own cache was left at the engine's default and is smaller than the database: the figures depend on the OS page cache and describe an untuned server, not a cache-bound configuration (seed 002: misleading cache settings)",
		Evidence: listed(lines, 6), Runs: ids,
		Fix: "size the cache explicitly (shared_buffers, innodb_buffer_pool_size, DefaultDbCachePages) for the claim being made, or vary it as a factor"})
}

// dataInRAM notes runs on a managed (local) server whose database is smaller than the
// memory it had — its memory limit where it ran under one (results.Server.MemoryLimit),
// else the machine's — and runs whose server kept its data in memory.
func (c *checker) dataInRAM() {
	var inMemory []int64
	for _, r := range c.fin {
		if r.Params.Options[results.FactorStorage] == "memory" {
			inMemory = append(inMemory, r.ID)
		}
	}
	if len(inMemory) > 0 {
		c.add(Finding{Rule: RuleStorageMemory, Severity: Info,
			Message:  "the server kept its data directory in memory (server storage: memory): no commit waited for a disk, so these runs measure the network, the CPUs and the server's code, not durability; figures on disk are lower wherever commits wait for fsync",
			Evidence: fmt.Sprintf("%s in memory", words.Count(len(inMemory), "run")), Runs: inMemory,
			Fix: "for a claim about a production server's throughput, measure on disk too (storage: disk), and compare"})
	}
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		if r.Params.Options[results.FactorStorage] == "memory" {
			continue // said above
		}
		// A server under a memory limit has the limit, not the machine's memory, for its
		// cache and the page cache of its files.
		db, mem, of := r.Server.DatabaseBytes, r.Client.MemoryBytes, "of RAM"
		if r.Server.MemoryLimit > 0 {
			mem, of = r.Server.MemoryLimit, "memory limit of the server"
		}
		if !r.Server.Managed || db <= 0 || mem <= 0 || db >= mem {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d: %s database, %s %s", r.ID, engine.FormatBytes(float64(db)), engine.FormatBytes(float64(mem)), of))
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleDataInRAM, Severity: Info,
		Message:  "the database fits in the memory the server had (the machine's, or its memory limit): these runs measure a cached database, not the disk (seed 002: \"database size should be bigger than RAM\" for a disk test)",
		Evidence: listed(lines, 4), Runs: ids,
		Fix: "for a disk-bound claim use more warehouses than fit in its memory (seed 002: ~50 GB for 32 GB of RAM), or give the server less (server.memory: 512MB); for a latency study this is usually what is wanted"})
}
