package cli

import "fmt"

// plural writes a count with its noun: "1 warning", "2 warnings". The noun is given in the
// singular and takes an "s"; nouns that do not are written out by the caller.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// studies writes a count of studies: "1 study", "2 studies".
func studies(n int) string {
	if n == 1 {
		return "1 study"
	}
	return fmt.Sprintf("%d studies", n)
}
