package script

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a Value: pgbench's PGBT_* types, plus Text for a value that has not
// been interpreted yet.
type Kind uint8

// The kinds of values. The zero Value has kind KindNone: no value (a variable never set).
const (
	KindNone   Kind = iota
	KindNull        // SQL NULL
	KindBool        // true or false
	KindInt         // a 64-bit signed integer
	KindDouble      // a 64-bit float
	// KindText is text a -D option or a \gset/\aset result gave a variable. Like pgbench,
	// the interpreter keeps it as written (it is substituted into SQL unchanged) and reads
	// it as null, boolean, integer or double only when an expression uses it.
	KindText
)

func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindBool:
		return "boolean"
	case KindInt:
		return "int"
	case KindDouble:
		return "double"
	case KindText:
		return "text"
	}
	return "none"
}

// Value is a value of the script language: a constant, an expression's result, a variable's
// value or a statement's argument. It is small and passed by value; the zero Value is "no
// value".
type Value struct {
	kind Kind
	bits uint64 // KindBool: 0 or 1; KindInt: the int64; KindDouble: math.Float64bits
	s    string // KindText
}

// Int returns an integer Value.
func Int(i int64) Value { return Value{kind: KindInt, bits: uint64(i)} }

// Double returns a double Value.
func Double(f float64) Value { return Value{kind: KindDouble, bits: math.Float64bits(f)} }

// Bool returns a boolean Value.
func Bool(b bool) Value {
	if b {
		return Value{kind: KindBool, bits: 1}
	}
	return Value{kind: KindBool}
}

// Null returns the NULL Value.
func Null() Value { return Value{kind: KindNull} }

// Text returns an uninterpreted text Value (see KindText).
func Text(s string) Value { return Value{kind: KindText, s: s} }

// Kind returns v's kind.
func (v Value) Kind() Kind { return v.kind }

// AsInt returns v's integer; it is meaningful for KindInt only.
func (v Value) AsInt() int64 { return int64(v.bits) }

// AsDouble returns v's double; it is meaningful for KindDouble only.
func (v Value) AsDouble() float64 { return math.Float64frombits(v.bits) }

// AsBool returns v's boolean; it is meaningful for KindBool only.
func (v Value) AsBool() bool { return v.bits != 0 }

// AsText returns v's text; it is meaningful for KindText only.
func (v Value) AsText() string { return v.s }

// Any returns v as a database/sql argument: nil, bool, int64, float64 or string. KindNone
// gives nil too. (pgbench sends every argument as text, String's; a double whose
// parameter the server typed as an integer may need that text rather than a float64.)
func (v Value) Any() any {
	switch v.kind {
	case KindBool:
		return v.AsBool()
	case KindInt:
		return v.AsInt()
	case KindDouble:
		return v.AsDouble()
	case KindText:
		return v.s
	}
	return nil
}

// AppendArgs appends each value's Any to dst and returns the extended slice: the arguments
// an executor based on database/sql passes with a statement's placeholders.
func AppendArgs(dst []any, vals []Value) []any {
	for _, v := range vals {
		dst = append(dst, v.Any())
	}
	return dst
}

// String returns v as pgbench substitutes it into SQL (getVariable): text as it is,
// integers in decimal, doubles with 15 significant digits (C's "%.15g"), booleans as true
// or false, NULL as NULL.
func (v Value) String() string {
	if v.kind == KindText {
		return v.s
	}
	var b [32]byte
	return string(v.AppendText(b[:0]))
}

// AppendText appends v.String() to dst without allocating.
func (v Value) AppendText(dst []byte) []byte {
	switch v.kind {
	case KindText:
		return append(dst, v.s...)
	case KindInt:
		return strconv.AppendInt(dst, v.AsInt(), 10)
	case KindDouble:
		return appendDouble(dst, v.AsDouble())
	case KindBool:
		if v.AsBool() {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindNull:
		return append(dst, "NULL"...)
	}
	return dst
}

// appendDouble formats f as pgbench's printf("%.15g") does (DBL_DIG = 15 significant
// digits, trailing zeros dropped, an exponent of at least two digits when it is below -4
// or at least 15), which Go's 'g' format matches, and the special values as PostgreSQL's
// own printf (src/port/snprintf.c), which pgbench uses, names them.
func appendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 15, 64)
}

// errEmptyText is returned when an empty text value is read as a number.
var errEmptyText = errors.New("empty value")

// interpret reads text as pgbench's makeVariableValue does: "null" (any case) is NULL; a
// non-empty prefix of true or yes, or "on", is true; a prefix of false or no, "off" or "of"
// is false; an optionally signed run of digits is an integer (an error if it overflows);
// anything else must be a double as C's strtod reads it.
func interpret(s string) (Value, error) {
	n := len(s)
	switch {
	case n == 0:
		return Value{}, errEmptyText
	case strings.EqualFold(s, "null"):
		return Null(), nil
	case isPrefixFold(s, "true") || isPrefixFold(s, "yes") || strings.EqualFold(s, "on"):
		return Bool(true), nil
	case isPrefixFold(s, "false") || isPrefixFold(s, "no") || strings.EqualFold(s, "off") || strings.EqualFold(s, "of"):
		return Bool(false), nil
	}
	if isAnInt(s) {
		i, err := parseInt64(s)
		if err != nil {
			return Value{}, err
		}
		return Int(i), nil
	}
	f, err := parseDouble(s)
	if err != nil {
		return Value{}, err
	}
	return Double(f), nil
}

// isPrefixFold reports whether s is a prefix of word, ignoring ASCII case.
func isPrefixFold(s, word string) bool {
	return len(s) <= len(word) && strings.EqualFold(s, word[:len(s)])
}

// isCSpace is C's isspace in the C locale.
func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isAnInt reports whether s matches ^\s*[-+]?[0-9]+$ (pgbench's is_an_int; like it, a
// lone sign counts).
func isAnInt(s string) bool {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i < len(s) && !isDigit(s[i]) {
		return false
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i == len(s)
}

// parseInt64 reads an integer as pgbench's strtoint64: surrounding C spaces allowed, an
// optional sign, at least one digit, no overflow.
func parseInt64(s string) (int64, error) {
	t := strings.TrimRightFunc(strings.TrimLeftFunc(s, isCSpaceRune), isCSpaceRune)
	i, err := strconv.ParseInt(t, 10, 64)
	if err == nil {
		return i, nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("value %q is out of range for type bigint", s)
	}
	return 0, fmt.Errorf("invalid input syntax for type bigint: %q", s)
}

func isCSpaceRune(r rune) bool { return r < 0x80 && isCSpace(byte(r)) }

// parseDouble reads a double as C's strtod does for pgbench's strtodouble: leading C spaces
// allowed, nothing after the number; an overflow, or an underflow to below the smallest
// normal double, is an error (glibc sets ERANGE for both).
func parseDouble(s string) (float64, error) {
	t := strings.TrimLeftFunc(s, isCSpaceRune)
	if t == "" || strings.ContainsRune(t, '_') {
		return 0, fmt.Errorf("invalid input syntax for type double: %q", s)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("value %q is out of range for type double", s)
		}
		return 0, fmt.Errorf("invalid input syntax for type double: %q", s)
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 || f == 0 && hasNonZeroMantissa(t) {
		return 0, fmt.Errorf("value %q is out of range for type double", s)
	}
	return f, nil
}

// hasNonZeroMantissa reports whether a decimal number's digits before its exponent are not
// all zero (so that a result of 0 means it underflowed).
func hasNonZeroMantissa(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == 'e' || c == 'E' || c == 'p' || c == 'P' {
			return false
		}
		if c >= '1' && c <= '9' {
			return true
		}
		if c == 'x' || c == 'X' { // hex float: any non-zero hex digit counts
			for _, d := range t[i+1:] {
				if d == 'p' || d == 'P' {
					return false
				}
				if d != '0' && d != '.' {
					return true
				}
			}
			return false
		}
	}
	return false
}
