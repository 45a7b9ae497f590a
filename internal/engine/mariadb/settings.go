package mariadb

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/suggest"
)

// optionName is key in mariadbd's option spelling: lower case, '-' between words.
func optionName(key string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "_", "-")
}

// ownedOptions are set by the Launcher itself; a setting may not change them.
var ownedOptions = map[string]string{
	"datadir": "the instance directory", "port": "--port", "bind-address": "loopback only",
	"socket": "the instance directory", "pid-file": "the instance directory",
	"log-error": "the instance directory", "user": "--run-as", "skip-networking": "loopback TCP",
	"no-defaults": "always", "defaults-file": "--no-defaults", "defaults-extra-file": "--no-defaults",
	"defaults-group-suffix": "--no-defaults", "basedir": "--bin-dir",
	"init-file": "the accounts' passwords, set at every start", "skip-grant-tables": "password authentication",
}

// settingArgs turns settings into mariadbd arguments, sorted by key.
func settingArgs(settings map[string]string) []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		v := settings[k]
		if optionName(k) == "log-bin" {
			if on, ok := parseBool(v); ok {
				if on {
					args = append(args, "--log-bin")
				} else {
					args = append(args, "--skip-log-bin")
				}
				continue
			}
		}
		if v == "" {
			args = append(args, "--"+k)
		} else {
			args = append(args, "--"+k+"="+v)
		}
	}
	return args
}

// checkSettings rejects settings before the server starts: names mariadbd does not know
// (with the closest known name as a hint), options the Launcher owns, and values mariadbd
// refuses. Names come from the option table of `mariadbd --no-defaults --verbose --help`;
// values are tried by the same command with the settings on its command line, which parses
// every option as a start would (it runs as any user, also root, and starts nothing).
// Values that mariadbd accepts but adjusts are caught by the read-back after start.
func checkSettings(server string, settings map[string]string) error {
	if len(settings) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(settings))
	for _, k := range keys {
		if why, owned := ownedOptions[optionName(k)]; owned {
			return engine.SettingErrorf(k, "setting %q is managed by dblat (%s)", k, why)
		}
	}
	known, err := knownOptions(server)
	if err != nil {
		return nil //nolint:nilerr // cannot list them: mariadbd's own check at start still applies
	}
	for _, k := range keys {
		if knownOption(optionName(k), known) {
			continue
		}
		hint := ""
		if s := suggest.Closest(optionName(k), slices.Collect(maps.Keys(known)), 3); s != "" {
			if strings.Contains(k, "_") {
				s = strings.ReplaceAll(s, "-", "_")
			}
			hint = fmt.Sprintf(" (did you mean %s?)", s)
		}
		return engine.SettingErrorf(k, "unknown MariaDB setting %q%s", k, hint)
	}
	args := append([]string{"--no-defaults"}, settingArgs(settings)...)
	var stderr bytes.Buffer
	cmd := exec.Command(server, append(args, "--verbose", "--help")...)
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	if msg := firstError(strings.Split(stderr.String(), "\n")); msg != "" {
		return fmt.Errorf("MariaDB rejects the settings: %s", msg)
	}
	if runErr != nil {
		return fmt.Errorf("MariaDB rejects the settings: %v: %s", runErr, lastLines(stderr.String(), 2))
	}
	return nil
}

func knownOption(name string, known map[string]bool) bool {
	if known[name] || strings.HasPrefix(name, "loose-") {
		return true
	}
	for _, p := range []string{"skip-", "enable-", "disable-"} {
		if rest, ok := strings.CutPrefix(name, p); ok && known[rest] {
			return true
		}
	}
	return false
}

var (
	// optionLine is an option in the help text: "  --name[=...]" or "  -a, --name ...".
	optionLine = regexp.MustCompile(`^  (?:-\w, )?--([a-z0-9][a-z0-9_-]*)`)
	// tableLine is a row of the "Variables (--variable-name=value)" table: name, value.
	tableLine = regexp.MustCompile(`^([a-z0-9][a-z0-9_-]*)\s{2,}\S`)
)

// knownOptions lists mariadbd's option names (in '-' spelling): the options described in
// `mariadbd --no-defaults --verbose --help` and the rows of its variable table.
func knownOptions(server string) (map[string]bool, error) {
	out, err := exec.Command(server, "--no-defaults", "--verbose", "--help").Output()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	inTable := false
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Variables (--variable-name=value)") {
			inTable = true
			continue
		}
		if m := optionLine.FindStringSubmatch(line); m != nil {
			known[optionName(m[1])] = true
		} else if m := tableLine.FindStringSubmatch(line); inTable && m != nil {
			known[m[1]] = true
		}
	}
	if len(known) == 0 {
		return nil, fmt.Errorf("%s --help listed no options", server)
	}
	return known, nil
}

// Setting is one requested server setting next to the value the running server reports.
type Setting struct {
	// Name and Requested are the setting as given.
	Name      string `json:"name"`
	Requested string `json:"requested"`
	// Variable is the SHOW GLOBAL VARIABLES name it was read back from; "" when the
	// setting is an option without a variable of its own (Effective is then "" too).
	Variable  string `json:"variable,omitempty"`
	Effective string `json:"effective,omitempty"`
	// Changed says that the server runs with another value than the one requested: it
	// clamped it to a limit, rounded it, or derived it from other settings.
	Changed bool `json:"changed,omitempty"`
}

// String says what happened to the setting, in one line.
func (s Setting) String() string {
	switch {
	case s.Variable == "":
		return fmt.Sprintf("%s=%s: no variable to read it back from", s.Name, s.Requested)
	case s.Changed:
		return fmt.Sprintf("%s: requested %q, but the server runs with %s=%s", s.Name, s.Requested, s.Variable, s.Effective)
	}
	return fmt.Sprintf("%s=%s", s.Variable, s.Effective)
}

// readBack pairs each requested setting with its value in vars (SHOW GLOBAL VARIABLES),
// sorted by name.
func readBack(settings map[string]string, vars map[string]string) []Setting {
	var out []Setting
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		s := Setting{Name: k, Requested: settings[k]}
		name := strings.TrimPrefix(optionName(k), "loose-")
		want := s.Requested
		variable := strings.ReplaceAll(name, "-", "_")
		if _, ok := vars[variable]; !ok && variableAliases[variable] != "" {
			variable = variableAliases[variable]
		}
		if _, ok := vars[variable]; !ok {
			// A prefixed boolean option: skip-x, disable-x mean x=OFF, enable-x x=ON.
			for p, v := range map[string]string{"skip-": "OFF", "disable-": "OFF", "enable-": "ON"} {
				if rest, ok := strings.CutPrefix(name, p); ok {
					if _, ok := vars[strings.ReplaceAll(rest, "-", "_")]; ok {
						variable, want = strings.ReplaceAll(rest, "-", "_"), v
						if on, isBool := parseBool(s.Requested); isBool && !on && s.Requested != "" {
							want = map[string]string{"ON": "OFF", "OFF": "ON"}[v] // skip-x=0
						}
					}
				}
			}
		}
		eff, ok := vars[variable]
		if ok {
			s.Variable, s.Effective = variable, eff
			s.Changed = !sameValue(want, eff)
		}
		out = append(out, s)
	}
	return out
}

// variableAliases name the variable an option is shown as when that differs: MariaDB
// before 11.1 shows transaction_isolation as tx_isolation.
var variableAliases = map[string]string{
	"transaction_isolation": "tx_isolation",
	"transaction_read_only": "tx_read_only",
}

// sameValue reports whether a requested value and the server's rendering of it mean the
// same: case aside, a bare flag or a boolean in any spelling against ON/OFF, a size with a
// K/M/G/T/P/E suffix against bytes, numbers against numbers, and sets (sql_mode) in any order.
func sameValue(req, eff string) bool {
	req, eff = strings.TrimSpace(req), strings.TrimSpace(eff)
	if strings.EqualFold(req, eff) {
		return true
	}
	if effOn, ok := parseBool(eff); ok && (eff == "ON" || eff == "OFF") {
		if req == "" {
			return effOn
		}
		if reqOn, ok := parseBool(req); ok {
			return reqOn == effOn
		}
	}
	if r, ok := parseSize(req); ok {
		if e, ok := parseSize(eff); ok {
			return r == e || math.Abs(r-e) <= 1e-9*math.Max(math.Abs(r), math.Abs(e))
		}
	}
	if strings.Contains(req, ",") || strings.Contains(eff, ",") {
		rs, es := strings.Split(strings.ToUpper(req), ","), strings.Split(strings.ToUpper(eff), ",")
		slices.Sort(rs)
		slices.Sort(es)
		return slices.Equal(rs, es)
	}
	return false
}

// parseBool reads the spellings mariadbd takes for a boolean option.
func parseBool(s string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "on", "true", "yes":
		return true, true
	case "0", "off", "false", "no":
		return false, true
	}
	return false, false
}

// parseSize reads a number with an optional K, M, G, T, P or E suffix (powers of 1024, as
// mariadbd reads them).
func parseSize(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	mult := 1.0
	if i := strings.IndexByte("KMGTPE", strings.ToUpper(s[len(s)-1:])[0]); i >= 0 {
		mult = math.Pow(1024, float64(i+1))
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f * mult, true
}
