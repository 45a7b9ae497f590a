package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
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

// SaveStudy records st, replacing the definition stored under its name (the cells already
// run keep their runs: cell keys, not definitions, tie runs to cells). Safe for concurrent use.
func (s *Store) SaveStudy(ctx context.Context, st Study) error {
	factors, err := json.Marshal(st.Factors)
	if err != nil {
		return err
	}
	now := formatTime(time.Now())
	_, err = s.db.ExecContext(ctx, `INSERT INTO studies (name, file, source, factors, created, updated)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET file = excluded.file, source = excluded.source,
			factors = excluded.factors, updated = excluded.updated`,
		st.Name, st.File, st.Source, string(factors), now, now)
	if err != nil {
		return fmt.Errorf("results: save study %s: %w", st.Name, err)
	}
	return nil
}

// Study returns the study stored under name, or an error wrapping ErrNotFound.
func (s *Store) Study(ctx context.Context, name string) (*Study, error) {
	var st Study
	var factors, created, updated string
	err := s.db.QueryRowContext(ctx, `SELECT name, file, source, factors, created, updated FROM studies WHERE name = ?`, name).
		Scan(&st.Name, &st.File, &st.Source, &factors, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no study %q in %s (see `dblat study list`)", ErrNotFound, name, s.path)
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(factors), &st.Factors); err != nil {
		return nil, fmt.Errorf("study %s: column factors: %w", name, err)
	}
	if st.Created, err = parseTime(created); err != nil {
		return nil, err
	}
	if st.Updated, err = parseTime(updated); err != nil {
		return nil, err
	}
	return &st, nil
}

// Studies lists the stored studies by name.
func (s *Store) Studies(ctx context.Context) ([]Study, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM studies ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
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

// CellCounts returns, for each cell key of study, how many of its runs ended in each status.
func (s *Store) CellCounts(ctx context.Context, study string) (map[string]map[Status]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT cell_key, status, count(*) FROM runs WHERE study = ? GROUP BY cell_key, status`, study)
	if err != nil {
		return nil, err
	}
	out := map[string]map[Status]int{}
	for rows.Next() {
		var key, status string
		var n int
		if err := rows.Scan(&key, &status, &n); err != nil {
			rows.Close()
			return nil, err
		}
		if out[key] == nil {
			out[key] = map[Status]int{}
		}
		out[key][Status(status)] = n
	}
	return out, closeRows(rows)
}
