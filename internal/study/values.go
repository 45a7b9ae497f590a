package study

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/option"
)

var (
	// validName is the rule of managed.CheckName: a study's name also names its managed
	// server and directory by default.
	validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)
	// validWord is an engine, workload or mode name.
	validWord = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,62}$`)
	// validSetting is a server setting or option name: PostgreSQL's (with dotted extension
	// settings such as auto_explain.log_min_duration), Firebird's CamelCase, MariaDB's.
	validSetting = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,62}$`)
	// passwordInDSN finds a key/value DSN's password ("password=secret").
	passwordInDSN = regexp.MustCompile(`(?i)(^|[\s?&;])password\s*=`)
	// userPassword finds a URL's or a Go driver DSN's user:password@ (postgres://u:pw@h,
	// u:pw@tcp(h)/db, sysdba:pw@host/path).
	userPassword = regexp.MustCompile(`(^|//)[^:/@\s]*:[^@\s/]+@`)
	validWeight  = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)
	// validVersion is a server version: "16", "10.11", "4.0.5"; the engine says which it runs.
	validVersion = regexp.MustCompile(`^[0-9][0-9A-Za-z._-]{0,31}$`)
)

// The checks below return errors that read after a label: "engine must be a lower-case
// name ...". They check text that names something (a word, a target, a version); values of a
// kind (numbers, durations, booleans) are package option's.

func checkWord(s string) (string, error) {
	if !validWord.MatchString(s) {
		return "", fmt.Errorf("must be a lower-case name (letters, digits, '_', '-'), got %q", s)
	}
	return s, nil
}

// checkValue accepts a setting or option value: not empty, one line, no control characters
// (values end up in server configuration files and on command lines).
func checkValue(s string) (string, error) {
	if s == "" {
		return "", errors.New("is empty")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("must not hold control characters or line breaks, got %q", s)
	}
	return s, nil
}

// checkMix accepts transaction weights ("45,43,4,4,4") and removes blanks; the workload
// checks how many there must be.
func checkMix(s string) (string, error) {
	m := strings.Join(strings.Fields(s), "")
	for _, w := range strings.Split(m, ",") {
		if !validWeight.MatchString(w) {
			return "", fmt.Errorf("must be weights separated by commas, like 45,43,4,4,4, got %q", s)
		}
	}
	return m, nil
}

// checkTarget accepts a managed server name or a DSN that holds no password: the study file
// is stored with the results, which never hold secrets.
func checkTarget(s string) (string, error) {
	if _, err := checkValue(s); err != nil {
		return "", err
	}
	if userPassword.MatchString(s) || passwordInDSN.MatchString(s) {
		return "", errors.New("holds a password, and study files are stored with the results: pass it through the environment (PGPASSWORD, ~/.pgpass, ...) or use a managed server")
	}
	return s, nil
}

// checkVersion accepts a server version ("16", "10.11"): it starts with a digit.
func checkVersion(s string) (string, error) {
	v := strings.TrimSpace(s)
	if !validVersion.MatchString(v) {
		return "", fmt.Errorf("must be a version number such as 16 or 10.11, got %q", s)
	}
	return v, nil
}

// checkMemory accepts a managed server's memory limit (managed.ParseMemory: "512MB", or
// none) in canonical form.
func checkMemory(s string) (string, error) {
	b, err := managed.ParseMemory(s)
	if err != nil {
		return "", err
	}
	return managed.FormatMemory(b), nil
}

// checkSwitch accepts on or off (any boolean's spelling) and writes it as on or off.
func checkSwitch(s string) (string, error) {
	b, err := option.ParseBool(s)
	if err != nil {
		return "", fmt.Errorf("must be on or off, got %q", s)
	}
	return map[bool]string{true: "on", false: "off"}[b], nil
}
