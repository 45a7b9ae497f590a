package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Study is a study definition as stored: the file's text as last run and the factors it
// varies, so reports can be rebuilt from the store alone.
type Study struct {
	Name    string    `json:"name"`
	File    string    `json:"file"`
	Source  string    `json:"source"`
	Factors []string  `json:"factors"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// SaveStudy implements Store.SaveStudy.
func (s *sqlStore) SaveStudy(ctx context.Context, st Study) error {
	now := time.Now()
	st.Created, st.Updated = now, now
	if err := s.upsertStudy(ctx, s.db, st, false); err != nil {
		return fmt.Errorf("results: save study %s: %w", st.Name, err)
	}
	return nil
}

// execer is what upsertStudy needs of a *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// upsertStudy inserts st, or replaces the definition stored under its name: its file,
// source, factors and updated time (keeping created, unless keepOlder and st was created
// earlier).
func (s *sqlStore) upsertStudy(ctx context.Context, e execer, st Study, keepOlder bool) error {
	factors, err := json.Marshal(st.Factors)
	if err != nil {
		return err
	}
	created := "created = studies.created"
	if keepOlder {
		created = "created = CASE WHEN excluded.created < studies.created THEN excluded.created ELSE studies.created END"
	}
	_, err = e.ExecContext(ctx, s.d.q(`INSERT INTO studies (name, file, source, factors, created, updated)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET file = excluded.file, source = excluded.source,
			factors = excluded.factors, updated = excluded.updated, `+created),
		s.d.text(st.Name), s.d.text(st.File), s.d.text(st.Source), s.d.json(string(factors)),
		s.d.plainTime(st.Created), s.d.plainTime(st.Updated))
	return err
}

// Study implements Store.Study.
func (s *sqlStore) Study(ctx context.Context, name string) (*Study, error) {
	var st Study
	var factors string
	created, updated := s.d.plainTimeDest(), s.d.plainTimeDest()
	dest := append([]any{&st.Name, &st.File, &st.Source, &factors}, created.dests()...)
	dest = append(dest, updated.dests()...)
	err := s.db.QueryRowContext(ctx, s.d.q(`SELECT name, file, source, factors, created, updated FROM studies WHERE name = ?`),
		s.d.text(name)).Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(fmt.Sprintf("no study %q in %s (see `dblat study list`)", name, s.loc))
	}
	if err != nil {
		return nil, fmt.Errorf("results: study %s: %w", name, err)
	}
	if err := json.Unmarshal([]byte(factors), &st.Factors); err != nil {
		return nil, fmt.Errorf("study %s: column factors: %w", name, err)
	}
	if st.Created, err = created.value(); err != nil {
		return nil, fmt.Errorf("study %s: column created: %w", name, err)
	}
	if st.Updated, err = updated.value(); err != nil {
		return nil, fmt.Errorf("study %s: column updated: %w", name, err)
	}
	return &st, nil
}

// Studies implements Store.Studies.
func (s *sqlStore) Studies(ctx context.Context) ([]Study, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM studies`)
	if err != nil {
		return nil, fmt.Errorf("results: studies: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("results: studies: %w", err)
		}
		names = append(names, n)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("results: studies: %w", err)
	}
	slices.Sort(names) // byte order on both backends, whatever PostgreSQL's collation
	out := make([]Study, 0, len(names))
	for _, n := range names {
		st, err := s.Study(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, *st)
	}
	return out, nil
}

// CellCounts implements Store.CellCounts.
func (s *sqlStore) CellCounts(ctx context.Context, study string) (map[string]map[Status]int, error) {
	rows, err := s.db.QueryContext(ctx,
		s.d.q(`SELECT cell_key, status, count(*) FROM runs WHERE study = ? GROUP BY cell_key, status`), s.d.text(study))
	if err != nil {
		return nil, fmt.Errorf("results: cell counts of %s: %w", study, err)
	}
	out := map[string]map[Status]int{}
	for rows.Next() {
		var key, status string
		var n int
		if err := rows.Scan(&key, &status, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("results: cell counts of %s: %w", study, err)
		}
		if out[key] == nil {
			out[key] = map[Status]int{}
		}
		out[key][Status(status)] = n
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("results: cell counts of %s: %w", study, err)
	}
	return out, nil
}

// notFound is an error wrapping ErrNotFound that reads as itself alone, for a missing
// study (ErrNotFound's own text names a run).
type notFound string

func (e notFound) Error() string { return string(e) }
func (e notFound) Unwrap() error { return ErrNotFound }
