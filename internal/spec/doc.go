// Package spec is the one description of a run: what it runs (workload, scale, mix, options),
// how hard and how long (Drive: terminals, pool, window, open-loop rate, retries), where
// (target) and by which path (direct, through the latency link, or a Unix socket). The
// command line builds a Run from its flags and a study from each of its cells; the execution
// core runs it; the runner takes its Drive; the results store keeps its Params. Each of
// those is derived from the Run, never copied field by field.
//
// Every parameter a user can write is declared once, in Fields: its key (a study file's
// base.KEY, a factor KEY, the stored name), its command-line flag, its help, how its value
// is read and how it is written back in canonical form. A List field (the script
// workload's scripts) holds several values: a flag given again adds one, a study writes a
// list. A Scoped field belongs to the workloads that name it (workload.Definition.Fields);
// the others refuse it. A Run also carries the directory its files are named from and,
// once read, their text (Dir, Files), so that a run handed to agents runs what was read. Validate is the one check of a Run
// that needs no server, workload or engine; its errors are tagged with the path of the field
// they concern (FieldPath, OptionPath), so the command line names the flag and a study file
// the line and column, without reading the message.
//
// It knows no engine, workload, store or front end: it imports only package latency (for
// the link's configuration). Packages cli and study write Runs; execution, runner, agent and
// results read them.
package spec
