// Package results is dblat's results store: a local SQLite database (pure Go driver
// modernc.org/sqlite) holding every measured run, its per-transaction-type summaries with
// HDR histograms, and its per-interval samples.
//
// The runner and the CLI write to it: Begin when measurement starts, AddSamples every few
// seconds, Finish once when the run ends. Reports and the CLI read from it with List and Get,
// and Export dumps runs as JSON or CSV. The store does no reporting, comparison or statistics
// of its own: it keeps runs faithfully so that those can be (re)computed later, which is why
// the HDR histograms are kept and EncodeHist/DecodeHist live here.
//
// A run is visible as StatusRunning from Begin on. If the process that began it dies, the
// next Open on the same host marks it StatusAborted, so a crash never leaves a run looking
// live. Opening a store never discards data; the schema is upgraded in place by ordered
// migrations, and a database written by a newer dblat is refused rather than touched.
//
// Nothing secret is stored: the model has no password fields and Server.Target holds a
// redacted DSN.
package results
