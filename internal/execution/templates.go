package execution

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
)

// Templates: a study's first load of a data set on a managed server whose engine is an
// engine.Templater is kept in the state directory (STATE/templates/KEY), keyed by what
// determines the data's content, and a later study that needs the same data on a server of
// the same kind restores it instead of loading again (TemplateKey).

// templatesDir is where templates are kept.
const templatesDir = "templates"

// templateMeta is the file that describes a template, next to its data.
const templateMeta = "template.json"

// Template describes a kept template.
type Template struct {
	// Key identifies it: the first 16 hex digits of the SHA-256 of its Fields.
	Key string `json:"key"`
	// Fields are what determines the data's content: "engine", "dataset", "scale",
	// "seed", the loader's options as "load.NAME", and the engine's part
	// (engine.Templater.TemplateKey: version, page size, ...).
	Fields map[string]string `json:"fields"`
	// Source is the managed server it was saved from.
	Source  string    `json:"source"`
	Created time.Time `json:"created"`
	// Dir is where it is kept and Bytes its size there (filled in by Templates).
	Dir   string `json:"-"`
	Bytes int64  `json:"-"`
}

// TemplateKey is the key of a template with fields: the first 16 hex digits of the SHA-256
// of "dblat template v1" and each name=value line, sorted, values quoted.
func TemplateKey(fields map[string]string) string {
	h := sha256.New()
	h.Write([]byte("dblat template v1\n"))
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		h.Write([]byte(k + "=" + strconv.Quote(fields[k]) + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// templateRoot is the directory of the templates.
func (c *Core) templateRoot() string { return filepath.Join(c.launchConfig("").StateDir, templatesDir) }

// templateFields returns what determines the content of def's data at scale (seeded by
// seed, loaded with the loader's options lv) in the database dsn of t, and false when t's
// engine keeps no templates of it.
func (c *Core) templateFields(ctx context.Context, t *Target, dsn string, def *workload.Definition, scale int, seed int64, lv option.Values) (map[string]string, bool) {
	tp := engine.Caps(t.Engine).Templater
	if tp == nil || t.Server == nil {
		return nil, false
	}
	key, ok, err := tp.TemplateKey(ctx, dsn, t.Server)
	if err != nil || !ok {
		if err != nil {
			c.info("warning: no template of %s: %v", t.Label, err)
		}
		return nil, false
	}
	fields := map[string]string{}
	for k, v := range key {
		fields["engine."+k] = v
	}
	fields["engine"] = t.Engine.Name()
	fields["dataset"] = def.DataSet()
	fields["scale"] = strconv.Itoa(scale)
	fields["seed"] = strconv.FormatInt(seed, 10)
	for k, v := range lv {
		fields["load."+k] = v
	}
	return fields, true
}

// restoreTemplate makes dsn's database from the kept template with fields, if there is
// one; ok reports whether it did.
func (c *Core) restoreTemplate(ctx context.Context, t *Target, dsn string, fields map[string]string) (ok bool, err error) {
	key := TemplateKey(fields)
	dir := filepath.Join(c.templateRoot(), key)
	if _, err := os.Stat(filepath.Join(dir, templateMeta)); err != nil {
		return false, nil //nolint:nilerr // no template kept: load instead
	}
	start := time.Now()
	if err := engine.Caps(t.Engine).Templater.RestoreTemplate(ctx, dsn, dir); err != nil {
		return false, fmt.Errorf("restore template %s into %s: %w", key, t.Label, err)
	}
	c.info("restored %s of %s into %s from template %s in %.1f s (instead of loading; `dblat server templates` lists them)",
		scaleText(fields), fields["dataset"], t.Label, key, time.Since(start).Seconds())
	return true, nil
}

// saveTemplate keeps dsn's freshly loaded database as the template with fields (replacing
// none: a template already kept under the key stays).
func (c *Core) saveTemplate(ctx context.Context, t *Target, dsn string, fields map[string]string) error {
	key := TemplateKey(fields)
	root := c.templateRoot()
	dir := filepath.Join(root, key)
	if _, err := os.Stat(filepath.Join(dir, templateMeta)); err == nil {
		return nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(root, ".new-"+key+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The server's account writes some engines' copies (MariaDB's FLUSH … FOR EXPORT files
	// are read by this process, Firebird's file is copied by it); it must reach the
	// directory either way.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	start := time.Now()
	if err := engine.Caps(t.Engine).Templater.SaveTemplate(ctx, dsn, tmp); err != nil {
		return err
	}
	meta, err := json.MarshalIndent(Template{Key: key, Fields: fields, Source: t.Label, Created: time.Now().UTC()}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, templateMeta), append(meta, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if errors.Is(err, fs.ErrExist) || dirExists(dir) {
			return nil // another process kept it first
		}
		return err
	}
	c.info("kept the loaded data as template %s for later studies (%.1f s)", key, time.Since(start).Seconds())
	return nil
}

func dirExists(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

func scaleText(fields map[string]string) string {
	return "scale " + fields["scale"]
}

// Templates lists the kept templates by engine, then data set and scale.
func (c *Core) Templates() ([]Template, error) {
	root := c.templateRoot()
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Template
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, templateMeta))
		if err != nil {
			continue
		}
		var tp Template
		if err := json.Unmarshal(b, &tp); err != nil {
			continue
		}
		tp.Dir = dir
		_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if info, err := d.Info(); err == nil {
					tp.Bytes += info.Size()
				}
			}
			return nil
		})
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b Template) int {
		sa, _ := strconv.Atoi(a.Fields["scale"])
		sb, _ := strconv.Atoi(b.Fields["scale"])
		return cmpOr(strings.Compare(a.Fields["engine"], b.Fields["engine"]), strings.Compare(a.Fields["dataset"], b.Fields["dataset"]),
			sa-sb, strings.Compare(a.Key, b.Key))
	})
	return out, nil
}

func cmpOr(vs ...int) int {
	for _, v := range vs {
		if v != 0 {
			return v
		}
	}
	return 0
}

// RemoveTemplate removes the kept template key; a key no template has is an input error.
func (c *Core) RemoveTemplate(key string) error {
	if key == "" || strings.ContainsAny(key, "/.") {
		return Inputf("template %q: a key is what `dblat server templates` lists", key)
	}
	dir := filepath.Join(c.templateRoot(), key)
	if _, err := os.Stat(filepath.Join(dir, templateMeta)); err != nil {
		return Inputf("no template %s (`dblat server templates` lists them)", key)
	}
	return os.RemoveAll(dir)
}
