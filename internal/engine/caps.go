package engine

import "reflect"

// Capabilities are an engine's optional capabilities (capabilities.go, scripts.go,
// engine.go), each resolved from the Engine value once: a field holds the engine as that
// interface, or nil when the engine lacks it. This is the one place that asks an engine
// which interfaces it implements; the execution core, the workloads, the CLI, the reports
// and the credibility checks read these fields (Caps) instead of asserting the interfaces
// themselves.
//
// Fields whose interface is documented as a capability of another (Installer and
// SettingsChecker of Manager, Templater of Restorer) are resolved from the Engine like
// the others, independently: callers check the one they use.
type Capabilities struct {
	Manager         Manager
	Installer       Installer
	SettingsChecker SettingsChecker
	Sockets         Sockets
	RunHooks        RunHooks
	Restorer        Restorer
	Templater       Templater
	Databases       Databases
	LoadSession     LoadSession
	Signaler        Signaler
	Settler         Settler
	Comparer        Comparer
	BulkLoader      BulkLoader
	Batcher         Batcher
	QueryProtocols  QueryProtocols
	RowQuerier      RowQuerier
	TxOnly          TxOnly
	ScriptConns     ScriptConns
	TxStatements    TxStatements
	WireProtocol    WireProtocol
	CacheSizer      CacheSizer
	Encrypter       Encrypter
	Operator        Operator
}

// resolve asks e for each optional capability. A nil e has none.
func resolve(e Engine) Capabilities {
	var c Capabilities
	if e == nil {
		return c
	}
	c.Manager, _ = e.(Manager)
	c.Installer, _ = e.(Installer)
	c.SettingsChecker, _ = e.(SettingsChecker)
	c.Sockets, _ = e.(Sockets)
	c.RunHooks, _ = e.(RunHooks)
	c.Restorer, _ = e.(Restorer)
	c.Templater, _ = e.(Templater)
	c.Databases, _ = e.(Databases)
	c.LoadSession, _ = e.(LoadSession)
	c.Signaler, _ = e.(Signaler)
	c.Settler, _ = e.(Settler)
	c.Comparer, _ = e.(Comparer)
	c.BulkLoader, _ = e.(BulkLoader)
	c.Batcher, _ = e.(Batcher)
	c.QueryProtocols, _ = e.(QueryProtocols)
	c.RowQuerier, _ = e.(RowQuerier)
	c.TxOnly, _ = e.(TxOnly)
	c.ScriptConns, _ = e.(ScriptConns)
	c.TxStatements, _ = e.(TxStatements)
	c.WireProtocol, _ = e.(WireProtocol)
	c.CacheSizer, _ = e.(CacheSizer)
	c.Encrypter, _ = e.(Encrypter)
	c.Operator, _ = e.(Operator)
	return c
}

// Caps returns e's capabilities: those Register resolved when e is the registered engine
// of its name, else (an engine a test wraps or builds without registering it) resolved
// now. A nil e has none. Safe for concurrent use.
func Caps(e Engine) Capabilities {
	if e == nil {
		return Capabilities{}
	}
	mu.RLock()
	r, ok := registry[e.Name()]
	mu.RUnlock()
	if ok && same(r.e, e) {
		return r.caps
	}
	return resolve(e)
}

// same reports whether a and b are one engine value: of one dynamic type, comparable, and
// equal. Engines of a type that cannot be compared are never the same, which costs only a
// resolve per Caps call.
func same(a, b Engine) bool {
	t := reflect.TypeOf(a)
	return t == reflect.TypeOf(b) && t.Comparable() && a == b
}
