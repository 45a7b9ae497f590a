package script

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/option"
	"github.com/dblat/dblat/internal/workload"
)

// Per-engine variants. A script file FILE.sql may have, beside it, FILE.ENGINE.sql for an
// engine (its name as dblat spells it: postgres, mariadb, firebird): a run on that engine
// runs the variant instead, under the same transaction type (orders.sql and
// orders.firebird.sql are both "orders"), so that one study compares one transaction across
// engines written in each engine's SQL. A file named FILE.ENGINE.sql given itself is
// written for that engine only. A file without an extension takes the engine as one:
// tpcb, tpcb.firebird.

// builtins holds pgbench's built-in scripts as `pgbench --show-script` prints them
// (PostgreSQL 15), with their variants for the engines whose SQL differs.
//
//go:embed builtin/*.sql
var builtins embed.FS

// BuiltinNames lists the built-in scripts, pgbench's -b names.
var BuiltinNames = []string{"tpcb-like", "simple-update", "select-only"}

// builtinFiles reads the built-in scripts as a run's Files.
var builtinFiles = workload.Files{Read: func(path string) ([]byte, error) {
	return fs.ReadFile(builtins, "builtin/"+path)
}}

// source is a script file (or built-in script) resolved for one engine: the text that
// runs there.
type source struct {
	// name is the transaction type: the file's base name without its extensions.
	name string
	// path is the file that runs, as the run names it: FILE or its engine's variant.
	path string
	// where names the file where its user finds it (Files.Where), for messages.
	where string
	text  []byte
}

// variantPath returns path's variant for engine eng: ".ENGINE" before the extension.
func variantPath(path, eng string) string {
	ext := filepath.Ext(path)
	if ext == "" || strings.ContainsAny(ext, `/\`) {
		return path + "." + eng
	}
	return strings.TrimSuffix(path, ext) + "." + eng + ext
}

// writtenFor returns the engine path's name says it is written for ("orders.firebird.sql"
// is firebird's), or "" when it names none; stem is the file's name without the engine
// and its extension.
func writtenFor(path string) (eng, stem string) {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	stem = strings.TrimSuffix(base, ext)
	if slices.Contains(engine.Names(), strings.TrimPrefix(ext, ".")) {
		return strings.TrimPrefix(ext, "."), stem // "tpcb.firebird": no extension of its own
	}
	if e := strings.TrimPrefix(filepath.Ext(stem), "."); e != "" && slices.Contains(engine.Names(), e) {
		return e, strings.TrimSuffix(stem, "."+e)
	}
	return "", stem
}

// resolve reads the text of the file path (as a run names it) that runs on engine eng:
// its variant for eng when there is one, else the file itself. field names the run's
// parameter that names the file, for errors.
func resolve(files workload.Files, field, path, eng string) (source, error) {
	only, stem := writtenFor(path)
	src := source{name: stem, path: path, where: files.Where(path)}
	if only != "" && only != eng {
		return src, option.Errorf(field, "%s is written for %s, and this run is on %s: give %s (for every engine) or %s beside it",
			src.where, only, eng, files.Where(strings.Replace(path, "."+only, "", 1)), files.Where(variantPath(strings.Replace(path, "."+only, "", 1), eng)))
	}
	if only == "" {
		v := variantPath(path, eng)
		text, err := files.ReadFile(v)
		switch {
		case err == nil:
			src.path, src.where, src.text = v, files.Where(v), text
			return src, nil
		case !errors.Is(err, fs.ErrNotExist):
			return src, option.Errorf(field, "%v", err)
		}
	}
	text, err := files.ReadFile(path)
	if err == nil {
		src.text = text
		return src, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return src, option.Errorf(field, "%v", err)
	}
	// Name the variants there are, if any: the file may be written for other engines only.
	var others []string
	for _, e := range engine.Names() {
		if e == eng || only != "" {
			continue
		}
		if _, err := files.ReadFile(variantPath(path, e)); err == nil {
			others = append(others, files.Where(variantPath(path, e)))
		}
	}
	if len(others) > 0 {
		return src, option.Errorf(field, "%s has no variant for %s: write %s (or %s, for every engine); there are %s",
			src.where, eng, files.Where(variantPath(path, eng)), src.where, strings.Join(others, ", "))
	}
	return src, option.Errorf(field, "%s: no such file", src.where)
}

// resolveBuiltin returns built-in script name as it runs on engine eng.
func resolveBuiltin(name, eng string) (source, error) {
	if !slices.Contains(BuiltinNames, name) {
		msg := fmt.Sprintf("%q is not a built-in script (%s)", name, strings.Join(BuiltinNames, ", "))
		return source{}, option.Errorf("builtins", "%s", msg)
	}
	src, err := resolve(builtinFiles, "builtins", name+".sql", eng)
	src.name = name
	return src, err
}
