package mariadb

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// OptionFileParam is the DSN parameter that names a MySQL option file to take the
// password from (and the user, when the DSN names none): the file a client is given with
// --defaults-extra-file, whose [client] group holds user= and password=. Managed servers'
// DSNs use it, so that they can be printed and stored; the parameter is dblat's, not the
// driver's, and ParseDSN removes it. A password in the DSN itself wins.
const OptionFileParam = "option_file"

// clientGroups are the option-file groups that MariaDB's clients read: what they share.
var clientGroups = map[string]bool{"client": true, "client-server": true, "client-mariadb": true}

// readOptionFile returns the user and password that the client groups of the MySQL option
// file at path give (the last one given wins, as for the clients). It follows the
// clients' syntax: [group] lines, key=value or a bare key, '#' and ';' comments, values
// in single or double quotes, and the escapes \b \t \n \r \\ \s. It does not follow
// !include and !includedir: the file must hold what it names.
func readOptionFile(path string) (user, password string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	group := ""
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '!':
			return "", "", fmt.Errorf("%s:%d: %s is not followed here: put the password in this file", path, n, strings.Fields(line)[0])
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "", "", fmt.Errorf("%s:%d: a group without its closing ]", path, n)
			}
			group = strings.ToLower(strings.TrimSpace(line[1:end]))
			continue
		}
		if !clientGroups[group] {
			continue
		}
		key, value, _ := strings.Cut(line, "=")
		switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(key)), "_", "-") {
		case "user":
			user = optionValue(value)
		case "password":
			password = optionValue(value)
		}
	}
	return user, password, sc.Err()
}

// optionValue reads the value of an option-file line: quoted, or up to a comment.
func optionValue(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return unescapeOption(v[1 : 1+end])
		}
	}
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return unescapeOption(v)
}

// unescapeOption replaces the escapes an option-file value may hold.
func unescapeOption(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 == len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		switch v[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 's':
			b.WriteByte(' ')
		default:
			b.WriteByte(v[i])
		}
	}
	return b.String()
}
