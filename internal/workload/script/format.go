package script

import (
	"io"
	"strconv"
	"strings"
)

// Format renders the script as script text that Parse reads back to the same commands:
// each SQL statement as written (with a \gset or \aset after it), each meta-command on a
// line of its own with its expression in canonical form (keywords in capitals, the
// parentheses the precedence needs, hash() and power() under their canonical names).
// Comments between commands are not kept.
func (s *Script) Format() string {
	var b strings.Builder
	for i := range s.cmds {
		c := &s.cmds[i]
		switch c.Kind {
		case CmdSQL:
			raw := strings.TrimRight(c.raw, " \t\r\n\f")
			b.WriteString(raw)
			if c.Capture != CaptureNone {
				// after a -- comment on the statement's last line, on a line of its own
				if strings.Contains(raw[strings.LastIndexAny(raw, "\n\r")+1:], "--") {
					b.WriteByte('\n')
				} else {
					b.WriteByte(' ')
				}
				b.WriteString(captureName(c.Capture))
				if c.Prefix != "" {
					b.WriteString(" " + c.Prefix)
				}
			}
		case CmdSet:
			b.WriteString(`\set ` + c.Var + " " + c.Expr)
		case CmdIf, CmdElif:
			b.WriteString(c.Kind.String() + " " + c.Expr)
		case CmdSleep:
			b.WriteString(`\sleep `)
			if c.AmountVar != "" {
				b.WriteString(":" + c.AmountVar)
			} else {
				b.WriteString(strconv.FormatInt(c.Amount, 10))
			}
			switch c.Unit {
			case Milliseconds:
				b.WriteString(" ms")
			case Microseconds:
				b.WriteString(" us")
			}
		default:
			b.WriteString(c.Kind.String())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// WriteTo writes Format's text to w.
func (s *Script) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, s.Format())
	return int64(n), err
}
