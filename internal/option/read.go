package option

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/suggest"
)

// The readers below are the one way dblat reads a value that a user wrote, whatever wrote it
// (a flag, a study file, a stored run): each trims blanks, checks syntax only, and returns an
// error that reads after the value's name ("must be a whole number, got \"x\""). Ranges are
// an Option's (Option.Check); a reader never refuses a value for its size.

// ParseBool reads a boolean: true, yes, on, 1 or t, and false, no, off, 0 or f, in any case
// (strconv.ParseBool's spellings, which pflag's boolean flags take, and the words YAML 1.1
// and configuration files use).
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1", "t":
		return true, nil
	case "false", "no", "off", "0", "f":
		return false, nil
	}
	return false, fmt.Errorf("must be true or false, got %q", s)
}

// ParseInt reads a whole number.
func ParseInt(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 0)
	if err != nil {
		return 0, fmt.Errorf("must be a whole number, got %q", s)
	}
	return int(n), nil
}

// ParseDuration reads a duration: a Go duration ("1.5ms", "100µs", "20s", "2m") or a bare
// 0. A number without a unit is refused with the two readings it may have meant.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if f, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			if f == 0 {
				return 0, nil // "0.0"
			}
			return 0, fmt.Errorf("needs a unit: %sms or %ss?", s, s)
		}
		return 0, fmt.Errorf("is not a duration: %q (write 1.5ms, 100µs, 20s, 2m)", s)
	}
	return d, nil
}

// ParseRate reads a rate in transactions per second: a number ("1000", "2.5", "1e3"),
// optionally followed by "/s".
func ParseRate(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	r, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("must be transactions per second, like 1000 or 2.5, got %q", s)
	}
	return r, nil
}

// ParsePair reads one NAME=VALUE pair: NAME is trimmed and not empty, VALUE is any text.
func ParsePair(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("%q is not NAME=VALUE", s)
	}
	return name, value, nil
}

// OneOf checks that s is one of values: "must be a, b or c, got \"x\" (did you mean a?)".
func OneOf(s string, values []string) error {
	for _, v := range values {
		if s == v {
			return nil
		}
	}
	list := strings.Join(values, " or ")
	if len(values) > 2 {
		list = strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
	}
	msg := fmt.Sprintf("must be %s, got %q", list, s)
	if c := suggest.Closest(s, values, 2); c != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", c)
	}
	return errors.New(msg)
}

// FormatDuration writes d compactly and exactly, as ParseDuration reads it back: "0",
// "100µs", "1.5ms", "20ms", "2s", "1m30s".
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d%time.Second == 0 || d >= time.Second || d <= -time.Second:
		return d.String()
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d >= time.Millisecond || d <= -time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64) + "µs"
	}
}

// ParseSize reads a size in bytes: a whole number with a unit, B, kB (or K, KB, KiB), MB
// (M, MiB), GB (G, GiB) or TB (T, TiB), in any case, each 1024 times the one before, as
// PostgreSQL's and MariaDB's settings read them ("512MB" is 512 MiB); a bare 0. A number
// without a unit is refused: bytes or megabytes?
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "0" {
		return 0, nil
	}
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		if i < 0 && t != "" {
			return 0, fmt.Errorf("needs a unit: %sMB or %sGB?", t, t)
		}
		return 0, fmt.Errorf("is not a size: %q (write 512MB, 2GB)", s)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	shift, ok := map[string]uint{"b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20,
		"g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("is not a size: %q (write 512MB, 2GB)", s)
	}
	b := f * float64(uint64(1)<<shift)
	if b != math.Trunc(b) || b >= 1<<62 {
		return 0, fmt.Errorf("is not a whole number of bytes: %q", s)
	}
	return int64(b), nil
}

// FormatSize writes a size as ParseSize reads it back, in the largest unit that divides
// it: "512MB", "2GB", "1536MB", "0".
func FormatSize(b int64) string {
	if b == 0 {
		return "0"
	}
	for _, u := range []struct {
		name  string
		shift uint
	}{{"TB", 40}, {"GB", 30}, {"MB", 20}, {"kB", 10}} {
		if b%(1<<u.shift) == 0 {
			return strconv.FormatInt(b>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}

// FormatRate writes a rate in transactions per second as ParseRate reads it back: "1000",
// "2.5", "0".
func FormatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
