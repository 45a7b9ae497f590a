package results

import (
	"context"
	"database/sql"
	"fmt"
)

// Scripts are stored in two tables (schema step 8): script_texts keeps each text once, by
// its SHA-256, and run_scripts says which texts a run ran, in order, under which kind,
// transaction type, path and weight. A study's hundreds of runs of the same scripts thus
// store their texts once.

// insertScripts stores the scripts of run id, computing the hashes a script lacks.
func (s *sqlStore) insertScripts(ctx context.Context, tx *sql.Tx, id int64, scripts []Script) error {
	if len(scripts) == 0 {
		return nil
	}
	rows := make([][]any, len(scripts))
	for i := range scripts {
		sc := &scripts[i]
		if sc.SHA256 == "" {
			sc.SHA256 = ScriptSum(sc.Text)
		}
		if _, err := tx.ExecContext(ctx, s.d.q("INSERT INTO script_texts (sha256, text) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING"),
			sc.SHA256, s.d.text(sc.Text)); err != nil {
			return fmt.Errorf("script %s: %w", sc.Path, err)
		}
		rows[i] = []any{id, i, sc.Kind, s.d.text(sc.Name), s.d.text(sc.Path), finite(sc.Weight), sc.SHA256}
	}
	return s.insertRows(ctx, tx, "run_scripts", []string{"run_id", "ord", "kind", "name", "path", "weight", "sha256"}, rows)
}

// readScripts adds their scripts to runs, found by id through index, for the runs whose
// ids the subquery ids selects (with args).
func (s *sqlStore) readScripts(ctx context.Context, tx *sql.Tx, runs []Run, index map[int64]int, ids string, args ...any) error {
	rows, err := tx.QueryContext(ctx, s.d.q(`SELECT rs.run_id, rs.kind, rs.name, rs.path, rs.weight, rs.sha256, t.text
		FROM run_scripts rs JOIN script_texts t ON t.sha256 = rs.sha256
		WHERE rs.run_id IN (`+ids+`) ORDER BY rs.run_id, rs.ord`), args...)
	if err != nil {
		return fmt.Errorf("scripts: %w", err)
	}
	texts := map[string]string{} // one string per text, however many runs ran it
	for rows.Next() {
		var id int64
		var sc Script
		if err := rows.Scan(&id, &sc.Kind, &sc.Name, &sc.Path, &sc.Weight, &sc.SHA256, &sc.Text); err != nil {
			rows.Close()
			return fmt.Errorf("scripts: %w", err)
		}
		if t, ok := texts[sc.SHA256]; ok {
			sc.Text = t
		} else {
			texts[sc.SHA256] = sc.Text
		}
		if i, ok := index[id]; ok {
			runs[i].Scripts = append(runs[i].Scripts, sc)
		}
	}
	return closeRows(rows)
}
