package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// ImportStats counts what Import did.
type ImportStats struct {
	// Runs were copied into the destination; RunsPresent were there already (same UID)
	// and left as they are; RunsSkipped were still running in the source and not copied.
	Runs, RunsPresent, RunsSkipped int
	// Studies were added to the destination, or updated there from a definition the source
	// saved later; StudiesPresent were there already, as in the source or newer.
	Studies, StudiesPresent int
}

// Import copies src's ended runs (finished, failed or aborted; with their Tx rows,
// Samples and, for runs that agents drove, their parts) and its studies into dst, which must be a Store opened by Open.
//
// Runs are identified by Run.UID in every store: a run whose UID dst already holds is left
// as it is, so importing twice adds nothing the second time, and a run recorded straight
// into dst is never duplicated by importing a store it was also copied to. Each run is
// copied in one transaction with its rows, oldest first, under a new ID in dst (the same
// IDs when dst was empty and nothing else writes to it). Runs still running in src are
// skipped: import again once they have ended. Studies are identified by name; dst keeps
// its own definition unless src saved a different one later.
//
// Import stops at the first error, leaving what it copied so far; running it again
// completes the copy.
func Import(ctx context.Context, dst, src Store) (ImportStats, error) {
	var stats ImportStats
	d, ok := dst.(*sqlStore)
	if !ok {
		return stats, fmt.Errorf("results: import into %s: not a store opened by results.Open", dst.Location())
	}
	runs, err := src.List(ctx, Filter{})
	if err != nil {
		return stats, fmt.Errorf("results: import from %s: %w", src.Location(), err)
	}
	slices.Reverse(runs) // oldest first
	for _, r := range runs {
		if r.Status == StatusRunning {
			stats.RunsSkipped++
			continue
		}
		if r.UID == "" {
			return stats, fmt.Errorf("results: import from %s: run %d has no UID", src.Location(), r.ID)
		}
		full, err := src.Get(ctx, r.ID, true)
		if err != nil {
			return stats, fmt.Errorf("results: import from %s: %w", src.Location(), err)
		}
		var parts []Part
		if full.Agents > 0 {
			if parts, err = src.Parts(ctx, r.ID); err != nil {
				return stats, fmt.Errorf("results: import from %s: %w", src.Location(), err)
			}
		}
		added, err := d.importRun(ctx, full, parts)
		if err != nil {
			return stats, fmt.Errorf("results: import run %d (%s) from %s into %s: %w", r.ID, r.UID, src.Location(), d.loc, err)
		}
		if added {
			stats.Runs++
		} else {
			stats.RunsPresent++
		}
	}

	studies, err := src.Studies(ctx)
	if err != nil {
		return stats, fmt.Errorf("results: import from %s: %w", src.Location(), err)
	}
	for _, st := range studies {
		have, err := d.Study(ctx, st.Name)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return stats, fmt.Errorf("results: import into %s: %w", d.loc, err)
		case sameStudy(have, &st) || !st.Updated.After(have.Updated):
			stats.StudiesPresent++
			continue
		}
		if err := d.upsertStudy(ctx, d.db, st, true); err != nil {
			return stats, fmt.Errorf("results: import study %s into %s: %w", st.Name, d.loc, err)
		}
		stats.Studies++
	}
	return stats, nil
}

// sameStudy reports whether a and b hold the same definition.
func sameStudy(a, b *Study) bool {
	return a.File == b.File && a.Source == b.Source && slices.Equal(a.Factors, b.Factors)
}

// importRun inserts the ended run r with its Tx rows, Samples, Signals and parts in one
// transaction, unless a run with its UID is stored; it reports whether it inserted it.
func (s *sqlStore) importRun(ctx context.Context, r *Run, parts []Part) (bool, error) {
	cols, err := runColumns(s.d, r)
	if err != nil {
		return false, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	id, err := s.insertRun(ctx, tx, cols, " ON CONFLICT (uid) DO NOTHING")
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := s.insertTx(ctx, tx, id, r.Tx); err != nil {
		return false, err
	}
	if err := s.insertScripts(ctx, tx, id, r.Scripts); err != nil {
		return false, err
	}
	if len(r.Samples) > 0 {
		if err := s.insertSamples(ctx, tx, id, r.Samples); err != nil {
			return false, fmt.Errorf("samples: %w", err)
		}
	}
	if err := s.insertSignals(ctx, tx, id, r.Signals); err != nil {
		return false, fmt.Errorf("signals: %w", err)
	}
	for _, p := range parts {
		var result any // NULL without one
		if p.Result != nil {
			b, err := partResultJSON(p.Result)
			if err != nil {
				return false, fmt.Errorf("part %d: %w", p.Index, err)
			}
			result = s.d.json(b)
		}
		if _, err := tx.ExecContext(ctx, s.d.q(`INSERT INTO run_parts (run_id, agent, ord, state, assignment, clock_offset_ns,
			start_at_ns, started_ns, reason, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			id, s.d.text(p.Agent), p.Index, string(p.State), s.d.json(p.Assignment), int64(p.ClockOffset),
			nanos(p.StartAt), nanos(p.Started), s.d.text(p.Reason), result); err != nil {
			return false, fmt.Errorf("part %d: %w", p.Index, err)
		}
	}
	return true, tx.Commit()
}
