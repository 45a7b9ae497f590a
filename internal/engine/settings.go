package engine

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The helpers below read server settings as Inspect reports them, for engines' Comparison
// functions and for the credibility checks that compare requested and read-back values.

// LookupSetting returns settings[key] matching the key case-insensitively (Firebird's keys match
// that way; PostgreSQL's and MariaDB's are lower case anyway).
func LookupSetting(settings map[string]string, key string) (string, bool) {
	if v, ok := settings[key]; ok {
		return v, true
	}
	for k, v := range settings {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// value kinds for comparing a requested setting with its read-back.
const (
	kindString = iota
	kindBool
	kindBytes
	kindSeconds
	kindNumber
)

var (
	// "16384 8kB": PostgreSQL's read-back of a setting in pages.
	pagesRe = regexp.MustCompile(`^(\d+)\s+(\d+)\s*([kmgt]?i?b)$`)
	sizeRe  = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)$`)
	timeRe  = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*(us|ms|s|min|h|d)$`)
)

// sizeUnit is the multiplier of a size suffix: binary, as PostgreSQL's kB/MB/GB and
// MySQL's K/M/G are.
func sizeUnit(u string) (float64, bool) {
	u = strings.TrimSuffix(strings.TrimSuffix(u, "b"), "i")
	switch u {
	case "":
		return 1, true
	case "k":
		return 1 << 10, true
	case "m":
		return 1 << 20, true
	case "g":
		return 1 << 30, true
	case "t":
		return 1 << 40, true
	}
	return 0, false
}

// normalize reads a setting's value as a kind and a canonical form, so that "128MB" and
// "16384 8kB", "on" and "1", "5min" and "300 s" compare equal.
func normalize(v string) (int, string) {
	s := strings.ToLower(strings.TrimSpace(v))
	switch s {
	case "on", "true", "yes", "sync":
		return kindBool, "on"
	case "off", "false", "no", "async":
		return kindBool, "off"
	}
	if m := pagesRe.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		per, _ := strconv.ParseFloat(m[2], 64)
		if u, ok := sizeUnit(m[3]); ok {
			return kindBytes, fmtNum(n * per * u)
		}
	}
	if m := sizeRe.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		if u, ok := sizeUnit(m[2]); ok {
			return kindBytes, fmtNum(n * u)
		}
	}
	if m := timeRe.FindStringSubmatch(s); m != nil {
		n, _ := strconv.ParseFloat(m[1], 64)
		mult := map[string]float64{"us": 1e-6, "ms": 1e-3, "s": 1, "min": 60, "h": 3600, "d": 86400}[m[2]]
		return kindSeconds, fmtNum(n * mult)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return kindNumber, fmtNum(f)
	}
	return kindString, s
}

func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e18 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 12, 64)
}

// SameSetting compares a requested value with the value read back. comparable is false when
// they cannot be compared (different kinds: "16384" asked, "16384 8kB" read back; or a
// read-back that lists alternatives, "SuperClassic|Classic"). canonical, when not nil,
// gives the engine's canonical spelling of a value first (Comparison.Canonical).
func SameSetting(asked, got string, canonical func(string) (string, bool)) (same, comparable bool) {
	if strings.Contains(got, "|") {
		return false, false
	}
	if canonical != nil {
		if c, ok := canonical(asked); ok {
			asked = c
		}
		if c, ok := canonical(got); ok {
			got = c
		}
	}
	ka, a := normalize(asked)
	kg, b := normalize(got)
	// A bare 0/1 read back for an on/off setting (MariaDB's ON is 1 in some variables).
	if ka == kindBool && kg == kindNumber && (b == "0" || b == "1") {
		kg, b = kindBool, map[string]string{"0": "off", "1": "on"}[b]
	}
	if kg == kindBool && ka == kindNumber && (a == "0" || a == "1") {
		ka, a = kindBool, map[string]string{"0": "off", "1": "on"}[a]
	}
	// A bare number read back for a size asked with a unit: MariaDB reports sizes in bytes.
	// Not the other way round: a bare number asked may be in pages (PostgreSQL's
	// shared_buffers=16384 is "16384 8kB").
	if ka == kindBytes && kg == kindNumber {
		kg = kindBytes
	}
	if ka != kg {
		return false, false
	}
	return a == b, true
}

// SettingBytes reads a size setting ("16384 8kB", "128MB", "134217728") in bytes; false when
// it is not a size. multiplier scales a bare number (a page count, or 1 for bytes).
func SettingBytes(v string, multiplier float64) (float64, bool) {
	k, s := normalize(v)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	switch k {
	case kindBytes:
		return f, true
	case kindNumber:
		return f * multiplier, true
	}
	return 0, false
}

// FormatBytes writes a size with a binary unit: "1.5 GiB", "128 MiB", "8 KiB", "512 B".
func FormatBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return strconv.FormatFloat(b/(1<<30), 'f', 1, 64) + " GiB"
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 0, 64) + " MiB"
	case b >= 1<<10:
		return strconv.FormatFloat(b/(1<<10), 'f', 0, 64) + " KiB"
	}
	return strconv.FormatFloat(b, 'f', 0, 64) + " B"
}
