// Package spec is the one description of a run: what it runs (workload, scale, mix, options),
// how hard and how long (Drive: terminals, pool, window, open-loop rate, retries), where
// (target) and by which path (direct, through the latency link, or a Unix socket). The
// command line builds a Run from its flags and a study from each of its cells; the execution
// core runs it; the runner takes its Drive; the results store keeps its Params. Each of
// those is derived from the Run, never copied field by field.
//
// Every parameter a user can write is declared once, in Fields: a Field is an
// option.Option (its name, a study file's base.NAME, a factor NAME and the stored name; its
// kind, and so package option's reader of it; its default, range and flag) with what a run
// adds (whether a study may vary it, what a difference in it does to a comparison). Set
// reads a value into Params, Value writes it back in canonical form. Defaults is every
// field at its Default, where the front ends start from. A List field (the script
// workload's scripts) holds several values: a flag given again adds one, a study writes a
// list. A Scoped field belongs to the workloads that name it (workload.Definition.Fields;
// their values are ScriptParams, which package workload's configurations embed); the
// others refuse it. An Incidental field (the connect timeout) changes how dblat reaches
// the server, not what a run measures. A Run also carries the directory its files are
// named from and, once read, their text (Dir, Files), so that a run handed to agents runs
// what was read.
//
// The latency link's shape is fields too (Field.Link, LinkKeys: rtt, up, down, jitter,
// distribution, bandwidth, loss, profile): dblat run's, dblat proxy's and dblat
// calibrate's flags and a study's keys of the same names, stored with every run. A Run's
// Link says that it goes through the link and how the link runs (connection set-up
// delayed, queue limit); Resolve gives it the fields' shape (LinkConfig). A Profile is a
// named set of the link fields' values (Profiles: the built-in networks, each with the
// source of its figures; a study file may declare its own), which Apply writes into a
// run's fields, those given beside it excepted.
//
// Resolve fills in what zero values stand for (Drive.Pool, Drive.Tries read them the same
// way) and Validate is the one check of a Run that needs no server, workload or engine:
// each field against its declared range, and the fields that exclude or need each other.
// The front ends validate what they build, the execution core validates every run it is
// handed, and the runner takes a Drive that passed and checks nothing again. Its errors are
// tagged with the path of the field they concern (FieldPath, OptionPath), so the command
// line names the flag and a study file the line and column, without reading the message.
//
// It knows no engine, workload, store or front end: it imports only package option (the
// vocabulary its fields are declared in) and package latency (for the link's
// configuration). Packages cli and study write Runs; execution, runner, agent and results
// read them.
package spec
