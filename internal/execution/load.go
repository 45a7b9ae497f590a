package execution

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// LoadSpec says what to load.
type LoadSpec struct {
	// Workload names a registered workload; its data set is loaded.
	Workload string
	// Scale is the size of the data (Definition.Scale); 0 means the workload's default.
	Scale int
	// Seed seeds the data: the same seed loads the same data.
	Seed int64
	// Workers is the number of parallel loader connections; 0 means the loader's default.
	Workers int
	// Options are the workload's load options and the engine's database options (which
	// database of a managed server to load), as given.
	Options map[string]string
	// ScriptParams are the load's parameters for a workload that takes them
	// (Definition.LoadFields: the script workload's init script, its variables, the
	// built-in scripts whose tables to load), as a run holds them. Dir is the directory
	// their relative paths are taken from ("" the working directory); Files, when set,
	// holds the files' texts as a run read them (spec.Run.Files).
	spec.ScriptParams
	Dir   string
	Files map[string]string
}

// params returns ls's load parameters as a run's.
func (ls *LoadSpec) params() spec.Params {
	return spec.Params{ScriptParams: ls.ScriptParams}
}

// checkLoad checks ls against its workload and engine e and splits its options into the
// loader's and the database's.
func checkLoad(ls *LoadSpec, e engine.Engine, managed bool) (*workload.Definition, option.Values, option.Values, error) {
	def, err := workload.Lookup(ls.Workload)
	if err != nil {
		return nil, nil, nil, asInput(err)
	}
	if ls.Scale < 0 {
		return nil, nil, nil, Inputf("%s must not be negative, got %d", scaleName(def), ls.Scale)
	}
	p := ls.params()
	for _, f := range spec.Fields {
		if f.Scoped && f.Value(&p) != "" && !slices.Contains(def.LoadFields, f.Name) {
			return nil, nil, nil, Inputf("loading %s takes no %s", def.Name, f.Name)
		}
	}
	var dbSet option.Set
	if d := engine.Caps(e).Databases; d != nil {
		dbSet = d.DatabaseOptions()
	}
	loadVals, dbVals := map[string]string{}, map[string]string{}
	for k, v := range ls.Options {
		if _, ok := dbSet.Lookup(k); ok {
			if !managed {
				return nil, nil, nil, Inputf("option %s fixes how a database is created: it needs a managed server", k)
			}
			dbVals[k] = v
		} else {
			loadVals[k] = v
		}
	}
	lv, err := def.LoadOptions.Check(loadVals)
	if err != nil {
		return nil, nil, nil, asInput(fmt.Errorf("load %s: %w", def.Name, err))
	}
	dv, err := dbSet.Check(dbVals)
	if err != nil {
		return nil, nil, nil, asInput(err)
	}
	return def, lv, dv, nil
}

// Load creates the workload's schema in the target and loads its data, replacing an
// earlier load of the same data set.
func (c *Core) Load(ctx context.Context, target string, ls LoadSpec) error {
	t, err := c.Resolve(target)
	if err != nil {
		return err
	}
	def, lv, dv, err := checkLoad(&ls, t.Engine, t.Server != nil)
	if err != nil {
		return err
	}
	if t.Server != nil && t.Server.StorageOf() == managed.StorageMemory {
		if err := fitsInMemory(def, ls.Scale); err != nil {
			return Inputf("server %s keeps its data in memory: %v", t.Label, err)
		}
	}
	dsn := t.DSN
	if len(dv) > 0 {
		if dsn, err = engine.Caps(t.Engine).Databases.Database(ctx, t.Server, dv); err != nil {
			return fmt.Errorf("database with %s: %w", fmtValues(dv), err)
		}
	}
	return c.load(ctx, t, dsn, def, ls, lv)
}

// memorySlack is what a server in memory needs beyond twice its data (the data and the
// pristine copy runs restore from): its logs (InnoDB's redo log, PostgreSQL's WAL between
// checkpoints), temporary files and catalogs.
const memorySlack = 512 << 20

// fitsInMemory says why scale units of def's data (its default scale for 0) cannot live in
// memory (managed.MemoryRoom), or nil when they can or their size is not known.
func fitsInMemory(def *workload.Definition, scale int) error {
	if def.Scale.Bytes <= 0 {
		return nil
	}
	if scale <= 0 {
		scale = max(def.Scale.Default, 1)
	}
	room, avail, err := managed.MemoryRoom()
	if err != nil {
		return err
	}
	data := int64(scale) * def.Scale.Bytes
	if need := 2*data + memorySlack; need > room {
		return fmt.Errorf("%d %s of %s take about %s, %s with the pristine copy and the logs, more than the %s it may take (the free space of %s, at most half of the %s of memory available): use storage: disk or a smaller scale",
			scale, scaleName(def), def.Name, engine.FormatBytes(float64(data)), engine.FormatBytes(float64(need)), engine.FormatBytes(float64(room)), managed.MemoryRoot, engine.FormatBytes(float64(avail)))
	}
	return nil
}

func (c *Core) load(ctx context.Context, t *Target, dsn string, def *workload.Definition, ls LoadSpec, lv option.Values) error {
	wt, err := t.Open(ctx, dsn, engine.OpenOptions{})
	if err != nil {
		return err
	}
	defer closeDB(wt)
	scale := ls.Scale
	if scale == 0 {
		scale = def.Scale.Default
	}
	label := "loading " + def.DataSet()
	if def.Scale.Name != "" {
		label = fmt.Sprintf("loading %d %s of %s", scale, def.Scale.Name, def.DataSet())
	}
	start := time.Now()
	rs := spec.Run{Dir: ls.Dir, Files: ls.Files}
	err = def.Load(ctx, wt, workload.LoadConfig{Scale: scale, Seed: ls.Seed, Workers: ls.Workers, Options: lv,
		Progress: c.obs().LoadProgress(label), ScriptParams: ls.ScriptParams, Files: runFiles(&rs)})
	if err != nil {
		var oe *option.Error
		if errors.As(err, &oe) {
			return workloadInput(err)
		}
		var pe positioned
		if errors.As(err, &pe) {
			return asInput(err)
		}
		return fmt.Errorf("load %s into %s: %w", def.Name, t.Label, err)
	}
	el := time.Since(start)
	msg := fmt.Sprintf("loaded %s into %s in %.1f s", def.DataSet(), t.Label, el.Seconds())
	if def.Scale.Name != "" && el > 0 {
		msg = fmt.Sprintf("loaded %d %s of %s into %s in %.1f s (%.1f %s/min)", scale, def.Scale.Name, def.DataSet(), t.Label,
			el.Seconds(), float64(scale)/el.Minutes(), def.Scale.Name)
	}
	c.info("%s", msg)
	return nil
}

// Check runs the workload's consistency checks on the target's data.
func (c *Core) Check(ctx context.Context, target, workloadName string) ([]workload.CheckResult, string, error) {
	t, err := c.Resolve(target)
	if err != nil {
		return nil, "", err
	}
	def, err := workload.Lookup(workloadName)
	if err != nil {
		return nil, "", asInput(err)
	}
	if def.Check == nil {
		return nil, "", Inputf("workload %s has no consistency checks", def.Name)
	}
	wt, err := t.Open(ctx, "", engine.OpenOptions{})
	if err != nil {
		return nil, "", err
	}
	defer closeDB(wt)
	res, err := def.Check(ctx, wt)
	return res, t.Label, err
}
