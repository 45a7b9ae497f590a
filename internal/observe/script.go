package observe

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/sqllex"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/words"
	"github.com/dblat/dblat/internal/workload/script"
)

// Bounds of the values a script draws from.
const (
	// maxCategories: a slot that took at most this many distinct values in the samples (and
	// each about twice or more) replays those values at their frequencies; more distinct
	// values are taken as a range, drawn uniformly between the least and the greatest.
	maxCategories = 16
	// fracSteps is the resolution of a uniformly drawn fractional value: pgbench's random()
	// draws integers, scaled into the range.
	fracSteps = 1_000_000
)

// ScriptInfo describes a recording for the script's header.
type ScriptInfo struct {
	// Upstream is the server the application talked to; Started when the recording began.
	Upstream string
	Started  time.Time
}

// Script writes what r recorded as a script in pgbench's language (package script reads
// it; `dblat run script -f FILE` runs it): one transaction per run of the script, a branch
// per recorded shape chosen at the shape's observed frequency (\set and \if), each branch
// its statements with their literals and parameters turned into variables. A variable
// replays the recorded values: one value always recorded is written as it was; a value that
// always equals an earlier one of the transaction reuses its variable; integers or decimals
// that took few distinct values are drawn from those at their recorded frequencies, more
// distinct ones uniformly between the least and the greatest recorded; text that varied
// replays its most frequent value (pgbench's expressions have no text). The values come from
// a uniform sample of each shape's transactions (samplesPerShape). Statements the client
// sent in one request without parameters stay in one request (\;).
//
// Shapes whose values the decoder could not read (Firebird messages without a known format,
// MySQL long data) are left out, with a comment. It returns how many shapes it wrote.
func (r *Recorder) Script(w io.Writer, info ScriptInfo) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	shapes := slices.Collect(maps.Values(r.shapes))
	slices.SortFunc(shapes, func(a, b *recShape) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		return cmp.Compare(a.hash, b.hash)
	})
	var head, body bytes.Buffer
	total := int64(0)
	for _, s := range shapes {
		total += s.count
	}
	fmt.Fprintf(&head, "-- Recorded by dblat proxy --record from %s of %s", words.Count(total, "transaction"), words.Count(int64(len(shapes)), "shape"))
	if r.proto != "" {
		fmt.Fprintf(&head, " (%s", r.proto)
		if info.Upstream != "" {
			fmt.Fprintf(&head, ", server %s", info.Upstream)
		}
		head.WriteString(")")
	}
	if !info.Started.IsZero() {
		fmt.Fprintf(&head, ", %s", info.Started.Format("2006-01-02 15:04"))
	}
	head.WriteString(".\n")
	head.WriteString("-- It holds literal and parameter values as the application sent them: they may be sensitive.\n")
	head.WriteString("-- Each run of the script is one transaction of one shape, chosen at the shape's recorded\n")
	head.WriteString("-- frequency, with values drawn from those recorded. Replay it with\n")
	head.WriteString("--   dblat run script -f FILE --target TARGET [--rtt D] [--terminals N]\n")
	type branch struct {
		weight int64
		text   string
	}
	var branches []branch
	var skipped []string
	for i, s := range shapes {
		label := fmt.Sprintf("s%d", i+1)
		text, why := r.branch(s, label)
		if why == "" {
			// What the script language cannot read is left out rather than written: SQL
			// the recording could not carry over (a lexer that reads quotes otherwise).
			if _, err := script.Parse(label, []byte(text)); err != nil {
				why = fmt.Sprintf("its SQL does not read as a script (%v)", err)
			}
		}
		if why != "" {
			skipped = append(skipped, fmt.Sprintf("-- shape %d (%s, %s) is not replayed: %s\n", i+1, words.Count(s.count, "transaction"), clip(s.text, 120), why))
			continue
		}
		branches = append(branches, branch{s.count, text})
	}
	if r.others > 0 {
		skipped = append(skipped, fmt.Sprintf("-- %s of shapes beyond the first %d are not replayed.\n", words.Count(r.others, "transaction"), maxRecordShapes))
	}
	for _, s := range skipped {
		head.WriteString(s)
	}
	if len(branches) == 0 {
		return 0, fmt.Errorf("nothing to replay: %s", strings.TrimSpace(strings.Join(append([]string{"no transaction was recorded"}, skipped...), " ")))
	}
	if len(branches) == 1 {
		body.WriteString(branches[0].text)
	} else {
		sum := int64(0)
		for _, b := range branches {
			sum += b.weight
		}
		fmt.Fprintf(&body, "\\set rec_shape random(1, %d)\n", sum)
		cum := int64(0)
		for i, b := range branches {
			cum += b.weight
			switch {
			case i == 0:
				fmt.Fprintf(&body, "\\if :rec_shape <= %d\n", cum)
			case i == len(branches)-1:
				body.WriteString("\\else\n")
			default:
				fmt.Fprintf(&body, "\\elif :rec_shape <= %d\n", cum)
			}
			body.WriteString(b.text)
		}
		body.WriteString("\\endif\n")
	}
	head.WriteString("\n")
	if _, err := w.Write(head.Bytes()); err != nil {
		return 0, err
	}
	_, err := w.Write(body.Bytes())
	return len(branches), err
}

// value is one recorded value of a slot.
type value struct {
	null bool
	text string // the literal as written, or the parameter's text
	kind valueKind
	i    int64
	f    float64
	lit  bool // a literal of the statement's text (text is SQL), not a parameter value
}

type valueKind uint8

const (
	vText valueKind = iota
	vInt
	vFloat
)

// sqlText returns the value as SQL text.
func (v value) sqlText() string {
	switch {
	case v.null:
		return "NULL"
	case v.lit || v.kind != vText:
		return v.text
	}
	return "'" + strings.ReplaceAll(v.text, "'", "''") + "'"
}

func parseValue(text string, null, lit bool) value {
	v := value{text: text, null: null, lit: lit}
	if null {
		return v
	}
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		v.kind, v.i, v.f = vInt, i, float64(i)
	} else if f, err := strconv.ParseFloat(text, 64); err == nil && isDecimal(text) {
		v.kind, v.f = vFloat, f
	}
	return v
}

// isDecimal reports whether s is a plain decimal number (what ParseFloat also accepts
// includes Inf, NaN, hexadecimal and underscores, which SQL does not write so).
func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E':
		case (c == '-' || c == '+') && (i == 0 || s[i-1] == 'e' || s[i-1] == 'E'):
		default:
			return false
		}
	}
	return true
}

// tmpl is one statement of a sample cut into SQL text and value slots.
type tmpl struct {
	parts []string // len(vals)+1 pieces of SQL around the slots
	vals  []value
	req   int64
	noArg bool // the statement has no parameter marker
}

// cut cuts a recorded statement at its literals and parameter markers.
func cut(s tapStmt, lx wire.Lexicon, spans []wire.Span) (tmpl, []wire.Span, string) {
	spans = wire.Spans(spans[:0], s.text, lx)
	t := tmpl{req: s.req, noArg: true}
	last, next := 0, 0
	for _, sp := range spans {
		t.parts = append(t.parts, escapeSQL(s.text[last:sp.Start]))
		last = sp.End
		tok := string(s.text[sp.Start:sp.End])
		switch sp.Kind {
		case wire.SpanParam:
			t.noArg = false
			idx := next
			if tok[0] == '$' {
				n, err := strconv.Atoi(tok[1:])
				if err != nil || n < 1 {
					return t, spans, "a parameter marker " + tok + " it could not number"
				}
				idx = n - 1
			} else {
				next++
			}
			if s.hidden {
				return t, spans, "the decoder could not read its parameter values"
			}
			if idx >= len(s.params) {
				return t, spans, fmt.Sprintf("marker %s with %d parameter values", tok, len(s.params))
			}
			p := s.params[idx]
			t.vals = append(t.vals, parseValue(string(p.Text), p.Null, false))
		case wire.SpanNumber:
			t.vals = append(t.vals, parseValue(tok, false, true))
		default:
			t.vals = append(t.vals, value{text: standardString(tok, lx), lit: true})
		}
	}
	// The script ends each statement itself: drop the client's own semicolon.
	tail := bytes.TrimRight(s.text[last:], " \t\r\n\f\v")
	tail = bytes.TrimRight(tail, ";")
	tail = bytes.TrimRight(tail, " \t\r\n\f\v")
	t.parts = append(t.parts, escapeSQL(tail))
	return t, spans, ""
}

// escapeSQL makes recorded SQL text (outside literals) safe in a script: a colon before a
// name would be read as a variable (\: is a colon), and a semicolon inside one statement
// (a compound statement's body: BEGIN NOT ATOMIC, EXECUTE BLOCK) would end it (\; keeps it
// in). Quoted identifiers and comments are left as they are: the script's lexer reads them
// as opaque, so an escape there would change them. The statement ends with the script's
// own semicolon.
func escapeSQL(b []byte) string {
	var out strings.Builder
	l := sqllex.New(b, script.Dialect)
	for t := l.Next(); t.Kind != sqllex.EOF; t = l.Next() {
		switch t.Kind {
		case sqllex.QuotedIdent, sqllex.String, sqllex.LineComment, sqllex.BlockComment:
			out.Write(b[t.Start:t.End])
			continue
		}
		for i := t.Start; i < t.End; i++ {
			c := b[i]
			switch {
			case c == ':' && i+1 < len(b) && isNameStart(b[i+1]) && (i == 0 || b[i-1] != ':'):
				out.WriteString(`\:`)
			case c == ';':
				out.WriteString(`\;`)
			default:
				out.WriteByte(c)
			}
		}
	}
	return out.String()
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// branch writes the script text of one shape.
func (r *Recorder) branch(s *recShape, label string) (string, string) {
	if len(s.samples) == 0 {
		if s.unreadable > 0 {
			return "", "its statements could not be matched to the decoder's reports"
		}
		return "", "no sample was kept (the recording's memory bound)"
	}
	kept, why := r.commonestCuts(s)
	if len(kept) == 0 {
		return "", why
	}
	first := kept[0].stmts
	// A COMMIT or ROLLBACK right after another has nothing left to end when replayed (the
	// Tracker joins a driver's second commit to the transaction): replay one.
	for len(first) > 1 && isControl(first[len(first)-1], r.lex) && isControl(first[len(first)-2], r.lex) {
		first = first[:len(first)-1]
	}
	// Likewise a START TRANSACTION right after another: a client that keeps two
	// transactions on one connection (isql-fb starts its DML and its metadata transaction
	// together, and commits both) replays as the one transaction the script runner has.
	for len(first) > 1 && isStart(first[0]) && isStart(first[1]) {
		first = first[1:]
		for k := range kept {
			kept[k].stmts = kept[k].stmts[1:]
		}
	}
	var b strings.Builder
	rtPart := ""
	if len(first) > 0 {
		rtPart = fmt.Sprintf(", %s", words.Count(int64(len(first)), "statement"))
	}
	fmt.Fprintf(&b, "-- %s: %s%s, values from %s: %s\n", label, words.Count(s.count, "transaction"), rtPart,
		words.Count(int64(len(kept)), "sample"), clip(s.text, 200))
	subst := substitutes(&b, label, first, kept)
	for i, st := range first {
		for j, part := range st.parts {
			b.WriteString(part)
			if j < len(st.vals) {
				b.WriteString(subst[slotRef{i, j}])
			}
		}
		// Statements sent together without parameters stay together.
		if i+1 < len(first) && first[i+1].req == st.req && st.noArg && first[i+1].noArg {
			b.WriteString(`\;`)
			b.WriteString("\n")
			continue
		}
		b.WriteString(";\n")
	}
	return b.String(), ""
}

// cutSample is one sample of a shape cut into statement templates, with the signature of
// its SQL text around the values.
type cutSample struct {
	stmts []tmpl
	sig   string
}

// commonestCuts cuts every sample of s and keeps those whose SQL text around the values
// is the most common (lists of different lengths normalise to one shape but cut
// differently); why says what kept none.
func (r *Recorder) commonestCuts(s *recShape) (kept []cutSample, why string) {
	var cuts []cutSample
	var spans []wire.Span
	for _, smp := range s.samples {
		cs := cutSample{}
		var sig strings.Builder
		ok := true
		for _, st := range smp.stmts {
			var t tmpl
			var w string
			t, spans, w = cut(st, r.lex, spans)
			if w != "" {
				why, ok = w, false
				break
			}
			cs.stmts = append(cs.stmts, t)
			sig.WriteString(strings.Join(t.parts, "\x00"))
			sig.WriteByte('\x01')
		}
		if ok {
			cs.sig = sig.String()
			cuts = append(cuts, cs)
		}
	}
	bySig := map[string]int{}
	for _, c := range cuts {
		bySig[c.sig]++
	}
	best := ""
	for sig, n := range bySig {
		if n > bySig[best] || n == bySig[best] && sig < best {
			best = sig
		}
	}
	for _, c := range cuts {
		if c.sig == best {
			kept = append(kept, c)
		}
	}
	return kept, why
}

// slotRef names a value of a statement of a shape: the statement's and the value's index.
type slotRef struct{ stmt, val int }

// substitutes decides what replaces each value of the statements first across the kept
// samples: one value always seen is written as it was; text, or numbers mixed with NULLs,
// replay their most frequent value (said in a comment); numbers become variables drawn
// from the recorded values (their \set written to b), a variable reused where a slot held
// the same values as an earlier one in every sample.
func substitutes(b *strings.Builder, label string, first []tmpl, kept []cutSample) map[slotRef]string {
	type variable struct {
		name string
		vs   []value
	}
	var vars []variable
	subst := map[slotRef]string{}
	for i, st := range first {
		for j := range st.vals {
			sl := slotRef{i, j}
			vs := make([]value, len(kept))
			for k, c := range kept {
				vs[k] = c.stmts[i].vals[j]
			}
			if allSame(vs) {
				subst[sl] = vs[0].sqlText()
				continue
			}
			if !numeric(vs) {
				top, distinct := mostFrequent(vs)
				subst[sl] = top.sqlText()
				fmt.Fprintf(b, "-- %s: value %d of statement %d took %d distinct values; replayed as its most frequent, %s\n",
					label, j+1, i+1, distinct, clip(top.sqlText(), 60))
				continue
			}
			if k := slices.IndexFunc(vars, func(v variable) bool { return equalValues(v.vs, vs) }); k >= 0 {
				subst[sl] = ":" + vars[k].name
				continue
			}
			v := variable{name: fmt.Sprintf("%s_v%d", label, len(vars)+1), vs: vs}
			vars = append(vars, v)
			subst[sl] = ":" + v.name
			b.WriteString(drawValue(v.name, vs))
		}
	}
	return subst
}

// numeric reports whether every value of vs is a number (none NULL, none text).
func numeric(vs []value) bool {
	for _, v := range vs {
		if v.null || v.kind == vText {
			return false
		}
	}
	return true
}

// drawValue writes the \set commands that draw a numeric variable from its recorded values.
func drawValue(name string, vs []value) string {
	counts := map[string]int{}
	floats := false
	lo, hi := vs[0], vs[0]
	for _, v := range vs {
		counts[v.text]++
		if v.kind == vFloat {
			floats = true
		}
		if v.f < lo.f {
			lo = v
		}
		if v.f > hi.f {
			hi = v
		}
	}
	if len(counts) <= maxCategories && 2*len(counts) <= len(vs) {
		// Few values, each seen about twice or more: those values at their frequencies.
		keys := slices.Collect(maps.Keys(counts))
		slices.SortFunc(keys, func(a, b string) int {
			if c := cmp.Compare(counts[b], counts[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		var b strings.Builder
		fmt.Fprintf(&b, "\\set %s_r random(1, %d)\n", name, len(vs))
		fmt.Fprintf(&b, "\\set %s CASE", name)
		cum := 0
		for i, k := range keys {
			cum += counts[k]
			if i == len(keys)-1 {
				fmt.Fprintf(&b, " ELSE %s END\n", exprConst(k, floats))
				break
			}
			fmt.Fprintf(&b, " WHEN :%s_r <= %d THEN %s", name, cum, exprConst(k, floats))
		}
		return b.String()
	}
	if !floats {
		return fmt.Sprintf("\\set %s random(%d, %d)\n", name, lo.i, hi.i)
	}
	return fmt.Sprintf("\\set %s %s + random(0, %d) * (%s - %s) / %d.0\n", name, exprConst(lo.text, true),
		fracSteps, exprConst(hi.text, true), exprConst(lo.text, true), fracSteps)
}

// exprConst writes a recorded number as a constant of pgbench's expressions: a double where
// the variable mixes integers and decimals (so that the variable has one type), in
// parentheses when negative (-5 is unary minus applied to 5, which pgbench accepts, but
// parenthesised it reads the same in any context).
func exprConst(text string, float bool) string {
	if float && !strings.ContainsAny(text, ".eE") {
		text += ".0"
	}
	if strings.HasPrefix(text, "-") {
		return "(" + text + ")"
	}
	return text
}

func allSame(vs []value) bool {
	for _, v := range vs[1:] {
		if v.null != vs[0].null || v.text != vs[0].text {
			return false
		}
	}
	return true
}

func equalValues(a, b []value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].kind == vText || b[i].kind == vText || a[i].f != b[i].f || a[i].kind != b[i].kind {
			return false
		}
	}
	return true
}

// mostFrequent returns the most frequent value (the first recorded among equals) and how
// many distinct values there were.
func mostFrequent(vs []value) (value, int) {
	counts := map[string]int{}
	key := func(v value) string {
		if v.null {
			return "\x00null"
		}
		return v.text
	}
	for _, v := range vs {
		counts[key(v)]++
	}
	best := vs[0]
	for _, v := range vs {
		if counts[key(v)] > counts[key(best)] {
			best = v
		}
	}
	return best, len(counts)
}

// clip shortens s to at most n bytes (at a rune boundary), with an ellipsis, on one line.
func clip(s string, n int) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// isStart reports whether a cut statement only starts a transaction (START TRANSACTION,
// Firebird's op_transaction as the Tracker names it, or BEGIN).
func isStart(t tmpl) bool {
	if len(t.vals) != 0 {
		return false
	}
	s := strings.ToUpper(strings.TrimSpace(strings.Join(t.parts, "")))
	return s == "BEGIN" || strings.HasPrefix(s, "START TRANSACTION")
}

// isControl reports whether a cut statement only ends a transaction (COMMIT, ROLLBACK).
func isControl(t tmpl, lx wire.Lexicon) bool {
	return len(t.vals) == 0 && wire.TxControl([]byte(strings.Join(t.parts, "")), lx) != wire.EndNone
}

// standardString rewrites a string literal whose quotes are escaped with a backslash
// (MySQL's 'it\'s', "it\"s") as the same string in single quotes, a quote inside written
// twice, which MySQL reads the same and the script language can delimit; its other escapes
// stay as they are. Other literals are returned unchanged.
func standardString(tok string, lx wire.Lexicon) string {
	q := strings.IndexAny(tok, `'"`)
	if !lx.BackslashEscapes || q < 0 || len(tok)-q < 2 || tok[len(tok)-1] != tok[q] {
		return tok
	}
	quote, body := tok[q], tok[q+1:len(tok)-1]
	var b strings.Builder
	b.WriteString(tok[:q])
	b.WriteByte('\'')
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			if n := body[i+1]; n == '\'' || n == '"' {
				if n == '\'' {
					b.WriteString("''")
				} else {
					b.WriteByte('"')
				}
			} else {
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
		case c == quote && i+1 < len(body) && body[i+1] == quote: // a doubled quote
			if c == '\'' {
				b.WriteString("''")
			} else {
				b.WriteByte('"')
			}
			i++
		case c == '\'':
			b.WriteString("''")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
